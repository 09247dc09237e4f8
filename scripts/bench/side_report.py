#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Turns the RESULT lines of `make bench` into results.json, results.csv, SVG plots and
Documentation/benchmarks.rst.

Input: one JSON-lines file per boot (nodes2.jsonl, nodes4.jsonl, nodes1.jsonl, wall*.jsonl),
each line one figure printed by the rslub_bench module, and with --repeat a second boot of
nodes2 to compare with. Figures are instructions per operation in QEMU -icount (one guest
nanosecond per guest instruction), counts, or percentages.
"""

import argparse
import csv
import datetime
import json
import os

from common import (counter, heading, hook_cost, load, page_title, plot, range_cells, ratio,
                    report_commit, table)

SIDE_BY_SIDE = [
    ("pair", "alloc+free pair on one CPU"),
    ("fast_alloc", "one allocation on the fast path, timed around one call"),
    ("fast_free", "one free on the fast path, timed around one call"),
    ("batch", "alloc N then free N (N = 4 slabs' worth, 128..2048)"),
    ("bulk16", "bulk alloc + bulk free of 16, per object"),
    ("bulk128", "bulk alloc + bulk free of 128, per object"),
    ("node_local", "alloc_node(local) + free"),
    ("node_remote", "alloc_node(remote node) + free"),
    ("xcpu_alloc", "producer/consumer: allocations on CPU 0"),
    ("xcpu_free", "producer/consumer: frees on CPU 1 (objects of CPU 0)"),
    ("all_cpus", "all CPUs alloc+free at once (per pair, all CPUs; floor: the loop alone)"),
]


KEYS = ("exp", "size", "policy", "walk", "nodes")
# Fields that describe a row rather than measure it.
LABELS = {"size", "nodes", "node", "order", "objects_per_slab", "objs_per_slab", "min_partial",
          "min_partial_tuned", "cpu_partial", "cpu_partial_slabs"}


def repeatability(first, second):
    """Compares every figure of every record of two boots: (figures, within 0.1%, worst
    [(rel, what)]). A record is keyed by all its labels (text fields, KEYS and LABELS)
    and, among records with the same labels, by its place in the boot; a record missing
    from the second boot counts each of its figures as differing."""
    def labels(r):
        return tuple(sorted((k, v) for k, v in r.items()
                            if k != "boot" and (k in KEYS or k in LABELS or isinstance(v, str))))

    def index(rs):
        seen, out = {}, {}
        for r in rs:
            lab = labels(r)
            seen[lab] = seen.get(lab, 0) + 1
            out[lab + (("#", seen[lab]),)] = r
        return out

    def figures(r):
        for field, v in r.items():
            if field in LABELS or field in KEYS or field == "boot":
                continue
            if isinstance(v, dict):
                for sub, w in v.items():
                    if isinstance(w, (int, float)) and not isinstance(w, bool):
                        yield f"{field}.{sub}", w
            elif isinstance(v, (int, float)) and not isinstance(v, bool):
                yield field, v

    def get(r, field):
        if r is None:
            return None
        if "." in field:
            head, sub = field.split(".", 1)
            d = r.get(head)
            return d.get(sub) if isinstance(d, dict) else None
        return r.get(field)

    a, b = index(first), index(second)
    n, same, diffs = 0, 0, []
    for key, r in a.items():
        for field, v in figures(r):
            w = get(b.get(key), field)
            n += 1
            rel = abs(v - w) / max(abs(v), 1e-9) if isinstance(w, (int, float)) else float("inf")
            if rel <= 0.001:
                same += 1
            else:
                what = " ".join(f"{k}={x}" for k, x in key) + f" {field}: {v} / {w}"
                diffs.append((rel, what))
    diffs.sort(reverse=True)
    return n, same, diffs


def why_section(rows):
    """The side-by-side rows whose measurement left rslub's fast paths, and every row where
    rslub runs more instructions than the kernel, under each profile, with what rslub's
    counters did during the measurement (per 100 allocations)."""
    names = [e for e, _ in SIDE_BY_SIDE]
    if not any("why" in r for r in rows):
        return ""
    partial = ("cpu_partial_alloc", "cpu_partial_free", "cpu_partial_node", "cpu_partial_drain")

    def shares(w):
        allocs = max(counter(w, "alloc_fastpath") + counter(w, "alloc_slowpath"), 1)
        frees = max(counter(w, "free_fastpath") + counter(w, "free_slowpath"), 1)
        return counter(w, "alloc_slowpath") * 100 / allocs, counter(w, "free_slowpath") * 100 / frees, allocs

    def shown(r, value, w):
        alloc_slow, free_slow, _ = shares(w)
        return (value > r["kernel"] or alloc_slow >= 0.5 or free_slow >= 0.5
                or any(w.get(k, 0) for k in partial))

    side = [r for r in rows if r.get("exp") in names and "why" in r and r["kernel"] > 0]
    side.sort(key=lambda r: (names.index(r["exp"]), r["size"]))
    # Each row once per profile: the classic one ("rslub", the default) and, where the
    # boot measured it, the tuned one.
    runs = [(r, "classic", r["rslub"], r["why"]) for r in side]
    runs += [(r, "tuned", r["tuned"], r["why_tuned"]) for r in side if "why_tuned" in r]
    runs.sort(key=lambda x: (names.index(x[0]["exp"]), x[0]["size"], x[1]))
    losing = lambda profile: [f'{r["exp"]} {r["size"]}' for r, p, v, _ in runs
                              if p == profile and v > r["kernel"]]
    tuned = any(p == "tuned" for _, p, _, _ in runs)
    out = [heading("The slow paths and the per-CPU partial lists") + "\n"
           "Every side-by-side row whose measurement left rslub's fast paths (at least one\n"
           "allocation or free in 200 on a slow path, or any per-CPU partial list activity),\n"
           "and every row above the kernel, with rslub's counters over that measurement, per\n"
           "100 allocations: the share of allocations and frees that took the slow path,\n"
           "node-lock acquisitions, new slabs, and the per-CPU partial lists' counters (an\n"
           "active slab taken from the CPU's list; a free that put a slab there; a node refill\n"
           "that put one there; the list going back to the nodes). A row whose frees are\n"
           "nearly all slow pays a ``lock cmpxchg16b`` on the slab per object, which the\n"
           "kernel's sheaves do not (they keep the object in the freeing CPU's array); node\n"
           "locks and new slabs say how often the work left the per-CPU state altogether.\n\n"]
    if tuned:
        out.append(
            "Each row under both profiles, measured in the same boot on two caches of the same\n"
            "size: *classic* (the default, classic SLUB 6.12's behaviour) is the classic\n"
            "design's figure, and a row of it above the kernel is a finding about that design,\n"
            "whose cause the counters show (see Documentation/design.rst, \"Fidelity to classic\n"
            "SLUB\"); *tuned* (rslub's choices: ``min_partial`` by size, the remote walk over\n"
            "each node once) aims at no row above the kernel; a row of it that is above is a\n"
            "finding about rslub's own choices.\n\n"
            "Rows above the kernel under the classic profile: "
            + (", ".join(losing("classic")) or "none") + ".\n"
            "Rows above the kernel under the tuned profile: "
            + (", ".join(losing("tuned")) or "none") + ".\n\n")
    else:
        out.append("Rows where rslub runs more instructions than the kernel: "
                   + (", ".join(losing("classic")) or "none") + ".\n\n")
    body = []
    for r, profile, value, w in runs:
        if not shown(r, value, w):
            continue
        alloc_slow, free_slow, allocs = shares(w)
        per = lambda k: f'{counter(w, k) * 100 / allocs:.2f}'
        body.append([r["exp"], r["size"]] + ([profile] if tuned else [])
                    + [ratio(value, r["kernel"]), f"{alloc_slow:.2f}",
                       f"{free_slow:.2f}", per("node_lock"), per("alloc_slab"),
                       *(per(k) for k in partial)])
    if body:
        out.append(table(["experiment", "size"] + (["profile"] if tuned else [])
                         + ["ratio", "alloc slow %", "free slow %",
                            "node locks", "new slabs", "cpu partial alloc", "cpu partial free",
                            "cpu partial node", "cpu partial drain"], body))
    return "".join(out)


def min_partial_section(rows):
    """bulk128 under the two profiles where their `min_partial` differs, beside the
    kernel: what the node reserve saves in page-allocator round trips. Both are measured
    in one boot (bench/bench.rs, side_by_side)."""
    rule = {r["size"]: r for r in rows if r.get("exp") == "bulk128_rule"}
    bulk = {r["size"]: r for r in rows if r.get("exp") == "bulk128" and "why_tuned" in r}

    def per_round(w):
        rounds = max((counter(w, "alloc_fastpath") + counter(w, "alloc_slowpath")) / 128, 1)
        return f'{counter(w, "alloc_slab") / rounds:.2f}'

    body = []
    for size in sorted(bulk):
        ru, r = rule.get(size), bulk[size]
        if not ru or "min_partial_tuned" not in ru or ru["min_partial"] == ru["min_partial_tuned"]:
            continue
        body.append([size, ru["objs_per_slab"], f'{ru["cpu_partial"]} ({ru["cpu_partial_slabs"]})',
                     ru["min_partial"], per_round(r["why"]), f'{r["rslub"]:.2f}',
                     ratio(r["rslub"], r["kernel"]), ru["min_partial_tuned"],
                     per_round(r["why_tuned"]), f'{r["tuned"]:.2f}',
                     ratio(r["tuned"], r["kernel"]), f'{r["kernel"]:.2f}'])
    if not body:
        return ""
    # Both rules' values at every size measured, from the records.
    classic = sorted({r["min_partial"] for r in rule.values()})
    tuned = sorted({r["min_partial_tuned"] for r in rule.values() if "min_partial_tuned" in r})
    span = lambda v: " to ".join(str(x) for x in (v[0], v[-1])) if len(v) > 1 else str(v[0])
    return (heading("bulk128 and ``min_partial``") + "\n"
            "bulk128 frees 128 objects, several slabs' worth, in every round. Between two\n"
            "rounds a CPU keeps its active slab and its partial list (at most ``cpu_partial``\n"
            "objects' worth, counted as half-free slabs, given back whole to the node when a\n"
            "free finds it full), and a node ``min_partial`` partial slabs, empty or not; the\n"
            "empty slabs beyond go back to the page allocator, and the next round allocates\n"
            "them anew. Under the classic profile ``min_partial`` is SLUB 6.12's\n"
            "``clamp(ilog2(size) / 2, 5, 10)``; under the tuned one it grows by one per\n"
            "doubling of the object size (``min_partial_for`` in ``rust/layout.rs``). Over the\n"
            f"{len(rule)} sizes measured, the classic rule's runs from {span(classic)}, the tuned\n"
            f"one's from {span(tuned)}; the profiles differ too in whether an emptied slab\n"
            "counts itself against it (classic: yes, as 6.12). The sizes where ``min_partial``\n"
            "differs, from the side-by-side boot's two caches; new slabs are per round of 128\n"
            "objects.\n\n"
            + table(["size", "objects per slab", "cpu_partial (slabs)", "classic min_partial",
                     "new slabs", "rslub classic", "ratio", "tuned min_partial", "new slabs",
                     "rslub tuned", "ratio", "kernel"], body))


def memory_section(rows):
    """Bytes per live object and the memory held once everything is freed, rslub beside
    the kernel."""
    mem = sorted((r for r in rows if r.get("exp") == "memory"), key=lambda r: r["size"])
    if not mem:
        return ""
    out = [heading("Memory") + "\n"
           "Every size: ``objects`` live objects allocated on one CPU (a million, or 64 MiB\n"
           "worth where a million would not fit the guest), then all freed, without a\n"
           "shrink. rslub's bytes are its slabs' pages plus the metadata it keeps for each\n"
           "slab outside it (a ``Slab`` from ``kmalloc``, counted at its size class); the\n"
           "kernel's are its slabs' pages as SLUB accounts them in\n"
           "``/sys/kernel/slab/<cache>/`` (``slabs`` times the pages of ``order``: what\n"
           "``/proc/slabinfo`` prints; its slab descriptor lives in ``struct page``). Idle:\n"
           "what each still holds once every object is freed (rslub: the active slab, the\n"
           "CPU's partial list, and up to ``min_partial`` empty slabs a node keeps; the\n"
           "kernel: its sheaves' objects and the slabs they and its partial lists hold).\n\n"]
    body = []
    for r in mem:
        body.append([r["size"], r["objects"], f'{r["rslub_per_object"]:.2f}',
                     f'{r["kernel_per_object"]:.2f}',
                     ratio(r["rslub_per_object"], r["kernel_per_object"]),
                     f'{r["rslub_meta"] * 100 / max(r["rslub_pages"] + r["rslub_meta"], 1):.2f}',
                     f'{(r["rslub_idle_pages"] + r["rslub_idle_meta"]) / 1024:.1f}',
                     r["rslub_idle_slabs"], f'{r["kernel_idle_bytes"] / 1024:.1f}'])
    out.append(table(["size", "objects", "rslub bytes/object", "kernel bytes/object",
                      "ratio", "rslub metadata %", "rslub idle KiB", "rslub idle slabs",
                      "kernel idle KiB"], body))
    return "".join(out)


def unhardened_section(main_boot, plain):
    """The fast paths and the pair of the build with plain free pointers
    (``make RSLUB_HARDENED=n``), beside the hardened build's, both against the kernel."""
    if not plain:
        return ""
    out = [heading("Free pointers hardened and plain") + "\n"
           "rslub is built with hardened free pointers (stored mixed with a per-cache random\n"
           "value and their own address, and checked to stay in their slab on the allocation\n"
           "fast path; :doc:`reliability`). One more boot measures the build of ``make\n"
           "RSLUB_HARDENED=n``, which stores them plain and does not check them, on the same\n"
           "kernel (``kernel`` is the kernel's figure of that boot).\n\n"]
    body = []
    for exp in ("pair", "fast_alloc", "fast_free"):
        for r in sorted((r for r in plain if r.get("exp") == exp), key=lambda r: r["size"]):
            h = next((m for m in main_boot if m.get("exp") == exp and m["size"] == r["size"]), None)
            body.append([exp, r["size"], f'{h["rslub"]:.2f}' if h else "",
                         ratio(h["rslub"], h["kernel"]) if h else "", f'{r["rslub"]:.2f}',
                         f'{r["kernel"]:.2f}', ratio(r["rslub"], r["kernel"])])
    out.append(table(["experiment", "size", "hardened", "ratio", "plain", "kernel",
                      "ratio (plain)"], body))
    return "".join(out)


def main():
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--out", required=True, help="the Documentation folder")
    ap.add_argument("--cpus", required=True)
    ap.add_argument("--command", required=True)
    ap.add_argument("--repeat", help="a second boot of nodes2, compared figure by figure")
    ap.add_argument("--provenance", default="",
                    help="what was measured: commit, kernel build, QEMU version")
    ap.add_argument("--real", nargs="*", default=[],
                    help="the real-workload boots (scripts/bench/real_guest.sh)")
    ap.add_argument("inputs", nargs="+")
    a = ap.parse_args()

    recs = load(a.inputs)
    main_boot = [r for r in recs if r["boot"] == "nodes2"]
    rep = None
    if a.repeat:
        n, same, diffs = repeatability(main_boot, load([a.repeat]))
        rep = (n, same, diffs)
        print(f"repeatability: {same} of {n} figures of the second boot within 0.1% of the first")
        for rel, what in diffs[:10]:
            print(f"  differs by {rel * 100:.2f}%: {what}")
    figdir = os.path.join(a.out, "benchmarks")
    os.makedirs(figdir, exist_ok=True)
    with open(os.path.join(figdir, "results.json"), "w") as f:
        json.dump(recs, f, indent=1)
    if a.repeat:
        with open(os.path.join(figdir, "repeat.json"), "w") as f:
            json.dump(load([a.repeat]), f, indent=1)
    # The CSV has one column per rslub counter of a side-by-side row (why_<counter>).
    flat = [{**{k: v for k, v in r.items() if k not in ("why", "why_tuned")},
             **{f"why_{k}": v for k, v in r.get("why", {}).items()},
             **{f"why_tuned_{k}": v for k, v in r.get("why_tuned", {}).items()}} for r in recs]
    keys = sorted({k for r in flat for k in r})
    with open(os.path.join(figdir, "results.csv"), "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=["boot"] + [k for k in keys if k != "boot"])
        w.writeheader()
        for r in flat:
            w.writerow(r)

    doc = []
    doc.append(page_title("Benchmarks"))
    doc.append(
        "rslub against the kernel's own ``kmem_cache`` (SLUB with sheaves, Linux 7.3,\n"
        "``SLAB_NO_MERGE``) and an array floor, in the same boot, plus the four seed\n"
        "experiments. This page is written by ``make bench``; do not edit the figures.\n"
    )
    doc.append(
        f"Made by ``{a.command}`` on {datetime.date.today().isoformat()}: "
        f"{a.cpus} vCPUs, QEMU TCG with ``-icount shift=0,align=off,sleep=off``; "
        "the side-by-side tables and seeds 000 to 002 on 2 NUMA nodes, seed 003 on 4 and 1.\n"
        + (f"Measured: {a.provenance}; report at commit {report_commit()}.\n"
           if a.provenance else "")
        + "Raw figures: ``benchmarks/results.json`` and ``benchmarks/results.csv``; the second\n"
        "boot of the side-by-side tables, for the repeatability check below:\n"
        "``benchmarks/repeat.json``.\n"
    )
    doc.append("\n" + heading("Method") + "\n" + METHOD)
    if rep:
        n, same, diffs = rep
        doc.append("Repeatability, this run: the side-by-side boot ran twice; "
                   f"**{same} of {n}** figures of the second boot are within 0.1% of the first"
                   + (", and these are not:\n" if diffs else ".\n"))
        for rel, what in diffs:
            doc.append(f"- ``{what}`` ({rel * 100:.2f}%)")
        doc.append("")

    doc.append(heading("Side by side"))
    doc.append(
        "Instructions per operation (an alloc+free pair counts as one operation where the\n"
        "table says pair). rslub runs each experiment on two caches of the size in the same\n"
        "boot, one per profile: *classic* (the default: classic SLUB 6.12's behaviour) and\n"
        "*tuned* (``profile=tuned``: rslub's choices). ``ratio`` is rslub / kernel: below 1,\n"
        "rslub runs fewer instructions. The rows where rslub runs more than the kernel are\n"
        "listed after the tables with rslub's counters over their measurement, which say\n"
        "where the work went.\n"
    )
    for exp, title in SIDE_BY_SIDE:
        rows = [r for r in main_boot if r.get("exp") == exp]
        if not rows:
            continue
        rows.sort(key=lambda r: r["size"])
        has_floor = any("floor" in r for r in rows)
        has_tuned = any("tuned" in r for r in rows)
        header = (["size", "rslub classic", "rslub tuned"] if has_tuned else ["size", "rslub"])
        header += ["kernel"] + (["floor"] if has_floor else [])
        header += ["ratio classic", "ratio tuned"] if has_tuned else ["ratio"]
        body = []
        for r in rows:
            line = [r["size"], f'{r["rslub"]:.2f}']
            if has_tuned:
                line.append(f'{r["tuned"]:.2f}' if "tuned" in r else "-")
            line.append(f'{r["kernel"]:.2f}')
            if has_floor:
                line.append(f'{r["floor"]:.2f}' if "floor" in r else "-")
            line.append(ratio(r["rslub"], r["kernel"]))
            if has_tuned:
                line.append(ratio(r.get("tuned"), r["kernel"]))
            body.append(line)
        doc.append(heading(title, "-"))
        doc.append(table(header, body))
        series = ["rslub"] + (["tuned"] if has_tuned else []) + ["kernel"] + (["floor"] if has_floor else [])
        names = {"rslub": "rslub classic" if has_tuned else "rslub", "tuned": "rslub tuned"}
        doc.append(plot(figdir, exp, title, "instructions per operation",
                        [r["size"] for r in rows], [names.get(s, s) for s in series],
                        [[r.get(s) for r in rows] for s in series]))

    doc.append(
        "``fast_alloc`` and ``fast_free`` time a region around one call with the TSC (which\n"
        "under ``-icount`` advances once per instruction; ``ktime_get()`` reads the HPET here,\n"
        "in steps of 10) and subtract an empty region (the counter's own reads): the call,\n"
        "its arguments and whatever the caller's\n"
        "code does differently around it, which moves such a figure by a few instructions\n"
        "from one build of the benchmark to the next (the disassembly of rslub's functions\n"
        "is the exact count, see Documentation/design.rst); both allocators are timed the\n"
        "same way in the same build.\n\n"
    )
    doc.append(why_section(main_boot))
    doc.append(min_partial_section(main_boot))
    doc.append(memory_section(main_boot))
    doc.append(unhardened_section(main_boot, [r for r in recs if r["boot"] == "unhardened"]))

    s0 = [r for r in recs if r.get("exp") == "seed000"]
    if s0:
        doc.append(heading("Seed 000: near-page-size objects under churn"))
        doc.append(
            "Waves of ``burst`` allocations freed in a scrambled order, 200 waves per row\n"
            "(instructions per operation: the mean over all waves, which differ by design).\n"
            "``min_partial`` fixed at 5 against the per-size value (``min_partial_for`` in\n"
            "``rust/layout.rs``, the ``min_partial`` column). Page allocator calls are slabs\n"
            "allocated plus slabs freed; idle is what the cache holds once the last wave is\n"
            "freed, without a shrink (slabs, and their pages and metadata in KiB): the price of\n"
            "the calls saved. ``kernel`` is the\n"
            "kernel's cache, the same waves (its idle bytes: SLUB's own account of its slabs;\n"
            "it counts no page allocator calls).\n"
        )
        s0.sort(key=lambda r: (r["size"], r.get("burst", 0), r["policy"]))
        body = [[r["size"], r.get("burst", ""), r["policy"], r.get("min_partial", "-"),
                 r.get("new_slab", "-"), r.get("slab_freed", "-"),
                 r["new_slab"] + r["slab_freed"] if "new_slab" in r else "-",
                 f'{r["insn_per_op"]:.2f}', r.get("idle_slabs", "-"),
                 f'{r["idle_bytes"] / 1024:.1f}' if "idle_bytes" in r else "-"] for r in s0]
        doc.append(table(["size", "burst", "policy", "min_partial", "new slabs", "slabs freed",
                          "page allocator calls", "insn/op", "idle slabs", "idle KiB"], body))
        groups = sorted({(r["size"], r.get("burst", 0)) for r in s0})
        pol = ["fixed5", "dynamic"]
        vals = [[next((r["new_slab"] + r["slab_freed"] for r in s0
                       if (r["size"], r.get("burst", 0)) == g and r["policy"] == p), None)
                 for g in groups] for p in pol]
        doc.append(plot(figdir, "seed000", "Seed 000: page allocator calls",
                        "slabs allocated + freed", [f"{sz}/{b}" for sz, b in groups],
                        ["min_partial 5", "dynamic"], vals))

    s1 = [r for r in recs if r.get("exp") == "seed001"]
    if s1:
        doc.append(heading("Seed 001: hackbench-like, objects freed on other CPUs"))
        doc.append(
            "Every CPU allocates 512-byte objects in batches of 16 and hands them to the next\n"
            "CPU, which frees them: every free is remote. The CPUs take turns, 400 rounds: in\n"
            "its turn a CPU allocates a batch for the next one and frees the batch the previous\n"
            "one left it, interrupts off, timed. So the figures hold every slow path and remote\n"
            "free of the pattern and no waiting on locks (the parallel runs below have those).\n"
            "The three policies give slabs of different sizes (the order and objects per slab\n"
            "columns; the default scales ``min_objects`` with the CPU count).\n"
        )
        pct = lambda r, k: f'{r[k]:.2f}' if k in r else "-"
        body = [[r["policy"], r["order"], r["objects_per_slab"], pct(r, "alloc_slow_pct"),
                 pct(r, "free_slow_pct"), pct(r, "slow_pct"), r.get("new_slab", "-"),
                 f'{r["insn_per_op"]:.2f}'] for r in s1]
        doc.append("The last row is the kernel's cache (its own order and objects per slab), the\n"
                   "same turns; it counts nothing else.\n")
        doc.append(table(["policy", "order", "objects/slab", "alloc slow %", "free slow %",
                          "slow path %", "new slabs", "insn/op"], body))
        doc.append(plot(figdir, "seed001", "Seed 001: instructions per operation",
                        "instructions per operation", [r["policy"] for r in s1], ["insn/op"],
                        [[r["insn_per_op"] for r in s1]]))

    sp = sorted((r for r in recs if r.get("exp") == "seed001_parallel"),
                key=lambda r: (r["cpus"], r["order"]))
    if sp:
        doc.append(
            "On all CPUs at once, the same ring (every CPU allocating 512-byte objects in\n"
            "batches of 16 and passing them to the next CPU, which frees them; a CPU waiting\n"
            "for room in the next mailbox frees what its own holds), in boots of 1, 2, 4 and\n"
            "as many vCPUs as the host has cores, one NUMA node, without icount: QEMU runs\n"
            "the vCPUs as parallel host threads, so CPUs meet on the node lock. Wall-clock\n"
            "nanoseconds per operation (the best of three runs; the host's cores, not the\n"
            "vCPUs, bound how many run at once), the kernel's cache beside, and rslub's\n"
            "node-lock acquisitions, waits and time waited in that run (``wait %``: of all\n"
            "CPUs' time).\n"
        )
        body = [[r["cpus"], r["policy"], r["order"], r["objects_per_slab"],
                 f'{r["rslub_ns_per_op"]:.2f}', f'{r["kernel_ns_per_op"]:.2f}',
                 ratio(r["rslub_ns_per_op"], r["kernel_ns_per_op"]),
                 f'{r["free_slow_pct"]:.2f}', r["node_lock"], r["node_lock_contended"],
                 f'{r["node_locks_per_1000_ops"]:.2f}', f'{r["node_lock_wait_ns"] / 1000:.1f}',
                 f'{r["wait_pct"]:.2f}', r["new_slab"]] for r in sp]
        doc.append(table(["vCPUs", "policy", "order", "objects/slab", "rslub ns/op",
                          "kernel ns/op", "ratio", "free slow %", "node locks", "waited",
                          "locks per 1000 ops", "wait µs", "wait %", "new slabs"], body))

    s2 = [r for r in recs if r.get("exp") == "seed002"]
    if s2:
        doc.append(heading("Seed 002: allocations for a remote node"))
        doc.append(
            "``alloc_node(remote)`` + free on CPU 0 of node 0. rslub switches its active slab\n"
            "to the remote node on the first call and stays on the fast path afterwards.\n"
        )
        body = [[r["size"], r["node"], f'{r["rslub"]:.2f}', f'{r["kernel"]:.2f}',
                 ratio(r["rslub"], r["kernel"]), f'{r["rslub_fast_pct"]:.2f}'] for r in s2]
        doc.append(table(["size", "node", "rslub", "kernel", "ratio", "rslub fast path %"], body))
        doc.append(plot(figdir, "seed002", "Seed 002: alloc_node(remote) + free",
                        "instructions per operation", [r["size"] for r in s2], ["rslub", "kernel"],
                        [[r["rslub"] for r in s2], [r["kernel"] for r in s2]]))
        plain = [r for r in recs if r.get("exp") == "seed002_plain"]
        if plain:
            doc.append(
                "The seed's point: after an ``alloc_node(remote)``, allocations that ask for no\n"
                "node. Rounds of one ``alloc_node(remote)`` then ``plain`` / 200 allocations with\n"
                "no node, all freed at the end of the round; how many of those came from the\n"
                "remote node's memory (the object's page), and, for rslub, the share served on\n"
                "the fast path and the active slabs given back for a node mismatch.\n"
            )
            body = [[r["size"], r["plain"], r["rslub_remote"], r["kernel_remote"],
                     f'{r["rslub_fast_pct"]:.2f}', r["rslub_node_mismatch"]] for r in plain]
            doc.append(table(["size", "plain allocations", "rslub: remote", "kernel: remote",
                              "rslub fast path %", "rslub node mismatches"], body))
        mixed = [r for r in recs if r.get("exp") == "seed002_mixed"]
        if mixed:
            doc.append(
                "Mixed ``alloc_node`` requests, each object freed at once: one for the remote\n"
                "node in every ``remote_every``, the others for the local node (instructions per\n"
                "request; rslub's node mismatches per 100 requests and new slabs).\n"
            )
            body = [[r["size"], r["remote_every"], f'{r["rslub"]:.2f}', f'{r["kernel"]:.2f}',
                     ratio(r["rslub"], r["kernel"]), f'{r["rslub_node_mismatch_pct"]:.2f}',
                     r["rslub_new_slab"]] for r in mixed]
            doc.append(table(["size", "remote every", "rslub", "kernel", "ratio",
                              "rslub mismatches %", "rslub new slabs"], body))

    s3 = [r for r in recs if r.get("exp") == "seed003"]
    if s3:
        doc.append(heading("Seed 003: get_any_partial, each node once"))
        doc.append(
            "A CPU of node 0 allocates until the partial slabs run out. On several nodes only\n"
            "the other nodes have partial slabs, ten each, so every refill walks and the\n"
            "nearest nodes run dry first (the boots give the nodes distances that differ, on a\n"
            "ring: ``scripts/bench/vm.sh``); on one node the local list has them, then runs\n"
            "dry. ``nodes_once`` is rslub's walk (nearest first, each node once, none on one\n"
            "node); ``zonelist`` is SLUB's walk before the 2018 fix, zone by zone\n"
            "(``remote_walk`` = 1). Nodes tried count every remote node list looked at. Each\n"
            "walk runs twice, in the order A B B A (``run``), with ``min_partial`` 0 and every\n"
            "refill walking (``walk_always``), and with the defaults (``min_partial`` from the\n"
            "size, which the walk leaves on each node; ``remote_node_defrag_ratio`` 1000, a\n"
            "random share of refills skips the walk).\n"
        )
        body = [[r["nodes"], r.get("tunables", ""), r.get("run", ""), r["walk"],
                 r.get("min_partial", ""), r["get_partial"], r["remote_walks"],
                 r.get("remote_walks_skipped", ""), r["remote_nodes_tried"], r["remote_success"],
                 f'{r["tried_per_success"]:.2f}' if r["remote_success"] else "-",
                 f'{r["tried_per_walk"]:.2f}' if r["remote_walks"] else "-",
                 f'{r["insn_per_alloc"]:.2f}']
                for r in sorted(s3, key=lambda r: (-r["nodes"], r.get("tunables", ""),
                                                   r.get("run", 0)))]
        doc.append(table(["nodes", "tunables", "run", "walk", "min_partial", "get_partial",
                          "remote walks", "walks skipped", "nodes tried", "successes",
                          "tried per success", "tried per walk", "insn/alloc"], body))
        k3 = [r for r in recs if r.get("exp") == "seed003_kernel"]
        if k3:
            doc.append(
                "The kernel's cache in the same scenario (its sheaves shrunk back into the slabs\n"
                "first). Its search counts nothing without ``CONFIG_SLUB_STATS``, so only its\n"
                "instructions per allocation compare, beside rslub's mean over the runs:\n"
            )
            body = []
            for r in sorted(k3, key=lambda r: -r["nodes"]):
                mine = [x for x in s3 if x["nodes"] == r["nodes"]]
                row = [r["nodes"], f'{r["insn_per_alloc"]:.2f}']
                for t in ("walk_always", "defaults"):
                    for w in ("nodes_once", "zonelist"):
                        v = [x["insn_per_alloc"] for x in mine
                             if x.get("tunables") == t and x["walk"] == w]
                        row.append(f"{sum(v) / len(v):.2f}" if v else "-")
                body.append(row)
            doc.append(table(["nodes", "kernel insn/alloc", "rslub nodes_once (walk_always)",
                              "rslub zonelist (walk_always)", "rslub nodes_once (defaults)",
                              "rslub zonelist (defaults)"], body))
        first = [r for r in s3 if r.get("tunables", "walk_always") == "walk_always"
                 and r.get("run", 1) in (1, 2)]
        groups = sorted({r["nodes"] for r in first}, reverse=True)
        vals = [[next((r["remote_nodes_tried"] for r in first
                       if r["nodes"] == g and r["walk"] == w), None) for g in groups]
                for w in ("nodes_once", "zonelist")]
        doc.append(plot(figdir, "seed003", "Seed 003: remote nodes looked at",
                        "nodes looked at", [f"{g} nodes" for g in groups],
                        ["each node once", "zonelist (old SLUB)"], vals))

    # The hooks' cost (rslub_bench's hook_cost) in the side-by-side boot.
    hook = next((r for r in recs if r.get("exp") == "hook_cost" and r["boot"] == "nodes2"), None)
    if hook:
        doc.append(heading("Cost of the backing hooks for caches that are not backed"))
        doc.append(
            "While rslub backs any kernel cache (Documentation/backing.rst), every call of a\n"
            "hooked function goes through rslub's hooks. In instructions per operation: a kernel\n"
            f"cache of {hook['size']} bytes that is *not* backed (alloc+free pairs, bulk 16) and a\n"
            "kernel ``kmalloc(64)`` with its ``kfree()`` (only ``kfree`` is hooked), without the\n"
            "hooks, with them registered (another cache backed) through ftrace's ``IPMODIFY``\n"
            "handler alone (``direct=0``), with the direct calls of ``rust/back/direct.S``"
            + ("" if hook.get("direct", True) else " (**not in use**: this kernel has none)")
            + ",\nand without them again after unbacking. *added* is per operation: a pair and a\n"
            "kmalloc+kfree make two calls, of which one (kfree) or both (the pair) are hooked.\n"
        )
        body = []
        for what, key in (("alloc+free pair", "pair"), ("bulk 16, per object", "bulk16"),
                          ("kmalloc+kfree pair", "kfree")):
            costs = hook_cost(hook, key)
            if costs is None:
                continue
            off, hnd, on, again = costs
            body.append([what, off, hnd, on, again, f"{hnd - off:.2f}", f"{on - off:.2f}"])
        doc.append(table(["operation", "no hooks", "handler", "direct calls", "no hooks again",
                          "added (handler)", "added (direct)"], body))

    wall = [r for r in recs if r.get("exp") == "wall_pair"]
    if wall:
        doc.append(heading("Wall clock (secondary)"))
        boots = sorted({r["boot"] for r in wall})
        doc.append(
            f"alloc+free pairs timed in nanoseconds under multi-threaded TCG (no icount), rslub\n"
            f"and the kernel interleaved chunk by chunk (interrupts off), fastest chunk of each, in {len(boots)}\n"
            "boots. Only the ratio means something, and only as a range: TCG's speed is not a\n"
            "CPU's.\n"
        )
        body = []
        for size in sorted({r["size"] for r in wall}):
            body.append([size] + range_cells(r["ratio"] for r in wall if r["size"] == size))
        doc.append(table(["size", "ratio min", "ratio median", "ratio max", "boots"], body))

    if a.real:
        import real_report
        if hook:
            hook_line = (
                "The hooks' cost on a kernel cache that is not backed, from the section above: "
                f"{hook['pair_on'] - hook['pair_off']:.0f}\ninstructions per alloc+free pair "
                f"({hook['pair_off']:.0f} without them, {hook['pair_on']:.0f} with them"
                + (f"; {hook['pair_handler']:.0f} through the handler alone, direct=0"
                   if "pair_handler" in hook else "") + ").")
        else:
            hook_line = ""
        real = load(a.real)
        text = real_report.section(real, hook_line)
        doc.append(text)
        with open(os.path.join(figdir, "real.json"), "w") as f:
            json.dump(real, f, indent=1)

    with open(os.path.join(a.out, "benchmarks.rst"), "w") as f:
        f.write("\n".join(doc))
    print(f"wrote {os.path.join(a.out, 'benchmarks.rst')} and {figdir}/")


METHOD = """QEMU here runs TCG only (no usable KVM), so wall-clock nanoseconds say little: they
vary from boot to boot (the wall-clock section at the end shows by how much, in this
run). Under ``-icount shift=0`` the guest clock instead advances
exactly one nanosecond per guest instruction, of whichever vCPU runs it (QEMU then runs
the vCPUs in turn on one host thread), so a ``ktime_get()`` difference is an instruction
count, to the resolution of the guest's clocksource: the HPET (the kernel finds QEMU's
TCG TSCs unsynchronised), 100 MHz, so 10 instructions, a 0.005 of an operation in a run
of 2000. The one-call tables read the TSC instead, which advances once per instruction.

The guest is not a virtme-ng one (``scripts/bench/vm.sh``): its root file system is a
small initramfs (busybox, the module, an ``/init`` that loads it and powers off), it
reads nothing from the host after boot, its random numbers come from QEMU's ``-seed`` and
its real-time clock from the instruction count. A host file read completes at a guest
instant that depends on the host, and the page allocator's free lists, whose state
decides how many instructions each page allocation takes, would differ from boot to
boot; without one, two boots execute the same instructions. The same holds from one
``make bench`` to the next on one build. Another build is another guest: a module of
another size moves the page allocator's state too, and figures that allocate pages in
their runs (``batch``, ``bulk128`` or ``xcpu_*`` with few objects a slab, seed 000) move
by a few tenths of a percent; compare figures of one build only.

A measurement on one CPU: a sleep of 1.5 s first (the vmstat worker folds the CPU's
page counter deltas; idle time costs nothing under ``-icount sleep=off``), one run to
warm up, then 60 runs of the same operations with interrupts off (no tick, no
preemption inside a run; so both allocators get ``GFP_NOWAIT``, never needing direct
reclaim here). The figure is the median run divided by the operations in a run: runs
differ only when something else ran, such as an idle CPU waking up (idle CPUs take no
tick, ``CONFIG_NO_HZ_IDLE``). Work across CPUs is timed one CPU at a time: the benchmark
thread moves between CPUs, and sleeps briefly before each run so that every CPU is idle
when it starts. ``all_cpus`` instead runs one loop on every CPU at once, interrupts off;
CPU 0 reads the clock and every CPU's pair count at both ends of five windows, and the
figure is the median window's clock advance over the pairs all CPUs completed in it. It
includes the loop's own bookkeeping, which the floor column (the same loop, no
allocator) shows. rslub is called through its exported C API and the kernel through
``kmem_cache_alloc_noprof()``: one direct call each. The floor is a bare array pop and
push, with the same loop around it. rslub's caches here have
``remote_node_defrag_ratio`` 1024 (always walk the other nodes when the local one has
nothing) instead of SLUB's 1000, whose random draw would otherwise enter the figures.

What the figures do not say: icount counts instructions, not cycles. It ignores cache
misses, the latency of atomic and locked instructions, and the cost of switching the
interrupt flag. rslub's fast path uses an unlocked ``cmpxchg16b`` (a multi-µop
instruction, but without a bus lock; a locked ``CMPXCHG`` measures about 19 cycles of
throughput on Alder Lake-P at uops.info), the kernel's sheaves a per-CPU local lock;
their real cost on hardware differs from their instruction count, and this project has
not measured them on hardware. A ``rep``-prefixed string instruction counts once per
iteration: the kernel's ``memset()`` and ``memcpy()`` are ``rep stosb`` and ``rep movsb``
on QEMU's ``-cpu max`` (which has FSRS and FSRM), so zeroing an object (``__GFP_ZERO``,
``init_on_alloc``) counts a byte as an instruction, the same for both allocators, and
the kernel's bulk paths count their ``memcpy()`` of the pointer array by the byte
(:doc:`benchmarks_distro` measures a CPU model without them). Nor do the icount figures
show contention: CPUs that
take turns never wait for each other's locks, and ``all_cpus`` shares nothing between
CPUs. The parallel runs of seed 001 and the wall-clock table at the end, from truly
parallel vCPUs, do; they are ranges by design.
"""

if __name__ == "__main__":
    main()
