# SPDX-License-Identifier: GPL-2.0
"""Documentation/results.rst: the headline of the benchmarks, which allocator serves the
whole kernel in fewer instructions, where and by how much, from the boots of
scripts/bench/whole.sh (the full run's, or the six of make bench PART=headline); the fast
paths of the same boots; and the seeds' experiments from the side-by-side boots of
scripts/bench/bench.sh (--side, their folder; the page says so where it holds none). It
reads the records as whole_report.py and side_report.py do and draws its plots, both with
common.py, each with a sentence computed from its figures; the long tables stay on the
pages it links. With --readme, it also rewrites README.md's block between README_BEGIN and
README_END: the whole kernel's ratios and the fast-path pair.

    headline.py RUNDIR DOCDIR [--side DIR] [--readme README] [--command CMD] [--seconds N]
"""

import argparse
import os
import sys
import textwrap

from common import (COLUMNS, WORK, allocator_code, build_runs, build_seeds, denoise,
                    fidelity_groups, heading, kernel_spread, load, load_run,
                    load_slab_functions, marginal, micro_result, page_title, per, plot, ratio,
                    read_meta, report_commit, table)

# The issue's goals (kernel-mode instructions per unit, as a fraction of sheaves').
GOAL_CLASSIC, GOAL_TUNED = 1.0, 0.97
# One colour per allocator in every plot of the page (rslub in whole-kernel mode runs the
# classic profile).
COLORS = {"sheaves 7.3": "#7f7f7f", "classic SLUB 6.12": "#1f77b4", "rslub classic": "#d62728",
          "rslub tuned": "#2ca02c", "rslub, C API": "#9467bd", "rslub, back=NAME": "#ff7f0e",
          "rslub, whole kernel": "#d62728"}


def verdict(ratio, goal, spread):
    """Met or missed, and a tie where the difference from sheaves is within the spread;
    said to have no spread where none was measured."""
    if spread is not None and abs(ratio - 1) <= spread:
        return "tie"
    return ("met" if ratio <= goal else "missed") + (", no spread" if spread is None else "")


def workload_rows(recs):
    """(label, per-unit kernel-mode instructions of each column, spread) per workload run."""
    rows = []
    for exp in ("hackbench", "pingpong", "fio", "fork", "execve", "kfree_rcu"):
        for prefix, k7, k6, rc, rt in fidelity_groups(recs, exp):
            if not k7 or not (rc or rt):
                continue
            spread = kernel_spread(recs, exp, k7.get("defer"))
            label = f"{exp} ({prefix.rstrip(': ')}), per {WORK[exp][0]}" if prefix \
                else f"{exp}, per {WORK[exp][0]}"
            rows.append((label, [per(r, r["kinsns"]) if r else None for r in (k7, k6, rc, rt)],
                         spread, [share(k7), share(rt)]))
    # The build (seed 003), on 4 nodes and on 1 in 2 GiB, under rslub's classic profile
    # only; its spread is the 4-node kernel build's own boots (-seed 1, 2, 3).
    for n in (4, 1):
        k7, k6, rc = build_runs(recs, n)
        if not k7 or not rc:
            continue
        spread = kernel_spread(recs, "build", None, build_seeds(n))
        rows.append((f"build on {n} node{'s' if n > 1 else ''}, per {WORK['build'][0]}",
                     [per(r, r["kinsns"]) if r else None for r in (k7, k6, rc, None)], spread,
                     [None, None]))
    return rows


def share(r):
    """Run @r's allocator code (common.allocator_code()) over its kernel-mode
    instructions; None without a profile."""
    code = allocator_code(r) if r else None
    return code / r["kinsns"] if code is not None else None


def cell(v):
    return f"{v:.0f}" if v is not None else "-"


def headline_table(rows):
    body = []
    for label, (k7, k6, rc, rt), spread, shares in rows:
        line = [label] + [cell(v) for v in (k7, k6, rc, rt)]
        for v, goal in ((rc, GOAL_CLASSIC), (rt, GOAL_TUNED)):
            line.append(f"{v / k7:.3f} ({verdict(v / k7, goal, spread)})" if v else "-")
        line.append(f"{100 * spread:.2f}%" if spread is not None else "-")
        line.append(" / ".join(f"{100 * x:.1f}%" if x is not None else "-" for x in shares)
                    if any(x is not None for x in shares) else "-")
        body.append(line)
    head = ["workload", "sheaves 7.3", "classic SLUB 6.12", "rslub classic", "rslub tuned",
            f"rslub classic / sheaves (goal {GOAL_CLASSIC})",
            f"rslub tuned / sheaves (goal {GOAL_TUNED})", "spread",
            "allocator code, sheaves / rslub tuned"]
    # No profile taken (make bench PART=headline): no share column.
    if not any(x is not None for *_, shares in rows for x in shares):
        head.pop()
        body = [line[:-1] for line in body]
    return table(head, body)


# The fast paths' columns: the boot and the allocator of bench/kmem_micro.c's record, the
# table's header, the plot's legend (short enough for it) and the sentence's name.
FAST = (("n2-kernel", "kernel", "sheaves 7.3", "sheaves 7.3", "sheaves 7.3"),
        ("n2-classic", "kernel", "classic SLUB 6.12", "classic SLUB 6.12",
         "classic SLUB 6.12"),
        ("n2-kernel", "rslub", "rslub, C API", "rslub, C API", "rslub's C API"),
        ("n2-kernel", "rslub_back", "rslub via kmem_cache_*, back=NAME", "rslub, back=NAME",
         "rslub through ``kmem_cache_*`` (``back=NAME``)"),
        ("n2-rslub", "rslub_whole", "rslub via kmem_cache_*, whole kernel",
         "rslub, whole kernel", "rslub through ``kmem_cache_*`` (whole kernel)"))
# The operations (the table's label, the record's key, the sentences' name) and the goal of
# rslub through kmem_cache_* over sheaves for each.
FAST_OPS = (("alloc+free pair", "pair", "the alloc+free pair", 0.6),
            ("bulk 16, per object", "bulk16", "bulk 16", 1.0))


def micro_cols(micro):
    """bench/kmem_micro.c's figures per FAST column (None where not measured), or None
    without the kernel's own."""
    cols = [micro_result(micro, boot, who) for boot, who, *_ in FAST]
    return cols if cols[0] else None


def via_api(cols, key):
    """The better of rslub's two figures through kmem_cache_* (by name, whole kernel)."""
    return min((c[key] for c in cols[3:] if c), default=None)


def micro_table(cols):
    body = []
    for what, key, _, _ in FAST_OPS:
        line = [what] + [f"{c[key]:.2f}" if c else "-" for c in cols]
        best = via_api(cols, key)
        line.append(f"{best / cols[0][key]:.2f}" if best else "-")
        body.append(line)
    return table(["operation"] + [head for _, _, head, _, _ in FAST]
                 + ["rslub via kmem_cache_* / sheaves"], body)


def micro_sentence(cols):
    """Per operation: which allocator runs the fewest instructions and how it stands to
    sheaves'; and rslub through kmem_cache_* against its goal."""
    out = []
    for _, key, what, goal in FAST_OPS:
        base = cols[0][key]
        low, who = min((c[key], name) for c, (*_, name) in zip(cols, FAST) if c)
        text = f"On {what}, {who} runs the fewest instructions, {low:.2f}"
        if who != FAST[0][4]:
            text += f", {low / base:.2f} of sheaves' {base:.2f}"
        best = via_api(cols, key)
        if best is not None:
            text += (f"; through ``kmem_cache_*`` rslub runs {best:.2f}, {best / base:.2f} of "
                     f"sheaves' (goal {goal}: {'met' if best / base <= goal else 'missed'})")
        out.append(text + ".")
    return wrap(" ".join(out))


def wrap(text):
    """A paragraph of @text in lines of at most 90 characters (as the pages' own)."""
    return textwrap.fill(text, 90, break_on_hyphens=False, break_long_words=False) + "\n"


# The seeds' experiments (bench/bench.rs, make bench's side-by-side boots): the boots
# whose records hold them.
SIDE_BOOTS = ("nodes2", "nodes4", "nodes1")


def load_side(side):
    """The side-by-side run's records in folder @side (scripts/bench/bench.sh's), and its
    meta (commit, date, kernel build, QEMU, vCPUs; [] where the run wrote none); ([], [])
    without the folder."""
    paths = [os.path.join(side, f"{b}.jsonl") for b in SIDE_BOOTS] if side else []
    recs = load([p for p in paths if os.path.exists(p)])
    meta = read_meta(side) if recs and os.path.exists(os.path.join(side, "meta")) else []
    return recs, meta


def mean(v):
    v = list(v)
    return sum(v) / len(v) if v else None


def seed_rows(side):
    """One row per seed experiment measured: (experiment, key figure, sheaves 7.3,
    rslub under its defaults, the classic profile, and a sentence on the seed's own
    change, measured on rslub)."""
    rows = []
    s0 = [r for r in side if r.get("exp") == "seed000"]
    k0 = [r["insn_per_op"] for r in s0 if r["policy"] == "kernel"]
    r0 = [r["insn_per_op"] for r in s0 if r["policy"] == "dynamic"]
    if k0 and r0:
        calls = {p: sum(r["new_slab"] + r["slab_freed"] for r in s0 if r["policy"] == p)
                 for p in ("fixed5", "dynamic")}
        idle = {(r["size"], r["burst"]): r["idle_bytes"] for r in s0 if r["policy"] == "fixed5"}
        more = max((r["idle_bytes"] - idle[(r["size"], r["burst"])] for r in s0
                    if r["policy"] == "dynamic" and (r["size"], r["burst"]) in idle), default=0)
        sizes = sorted({r["size"] for r in s0})
        bursts = sorted({r["burst"] for r in s0})
        by_size = sorted({r["min_partial"] for r in s0 if r["policy"] == "dynamic"})
        note = (f"``min_partial`` by object size ({' to '.join(map(str, by_size))} here, "
                f"classic SLUB's rule since) rather than fixed at 5: "
                f"{calls['dynamic']} page allocator calls over the waves rather than "
                f"{calls['fixed5']}, {100 * (1 - calls['dynamic'] / calls['fixed5']):.1f}% "
                f"fewer, for at most {more / 1024:.1f} KiB more held once idle.") \
            if all(calls.values()) else ""
        rows.append(("seed 000: objects near a page under churn",
                     f"instructions per operation, mean of {len(r0)} runs ({sizes[0]} to "
                     f"{sizes[-1]} bytes, waves of {bursts[0]} to {bursts[-1]})", mean(k0),
                     mean(r0), note))
    s1 = [r for r in side if r.get("exp") == "seed001"]
    k1 = next((r for r in s1 if r["policy"] == "kernel"), None)
    r1 = next((r for r in s1 if r["policy"].startswith("default")), None)
    if k1 and r1:
        mine = sorted((r for r in s1 if r["policy"] != "kernel"),
                      key=lambda r: r["objects_per_slab"])
        small, big = mine[0], mine[-1]
        note = (f"larger slabs, as the thread proposed: from ``{small['policy']}`` "
                f"({small['objects_per_slab']} objects a slab) to ``{big['policy']}`` "
                f"({big['objects_per_slab']}), rslub runs {big['insn_per_op']:.2f} "
                f"instructions per operation rather than {small['insn_per_op']:.2f}, "
                f"{100 * (1 - big['insn_per_op'] / small['insn_per_op']):.1f}% fewer.") \
            if big is not small else ""
        rows.append(("seed 001: objects freed on other CPUs",
                     "instructions per operation (512 bytes, batches of 16)",
                     k1["insn_per_op"], r1["insn_per_op"], note))
    s2 = [r for r in side if r.get("exp") == "seed002"]
    if s2:
        plain = [r for r in side if r.get("exp") == "seed002_plain"]
        note = (f"rslub serves at least {min(r['rslub_fast_pct'] for r in s2):.2f}% of its "
                "``alloc_node(remote)`` allocations on its fast path, its active slab moved "
                "to the remote node"
                + (f"; of the {sum(r['plain'] for r in plain)} allocations asking for no "
                   "node after an ``alloc_node(remote)``, "
                   f"{sum(r['rslub_remote'] for r in plain)} on rslub and "
                   f"{sum(r['kernel_remote'] for r in plain)} on the kernel come from the "
                   "remote node's memory" if plain else "")
                + ".")
        rows.append(("seed 002: allocations for a remote node",
                     f"instructions per ``alloc_node(remote)`` + free, mean of {len(s2)} "
                     "sizes", mean(r["kernel"] for r in s2), mean(r["rslub"] for r in s2),
                     note))
    s3 = [r for r in side if r.get("exp") == "seed003"]
    k3 = max((r for r in side if r.get("exp") == "seed003_kernel"), key=lambda r: r["nodes"],
             default=None)
    if s3 and k3:
        n = k3["nodes"]
        at = lambda t, w, k: mean(r[k] for r in s3 if r["nodes"] == n
                                  and r.get("tunables") == t and r["walk"] == w)
        classic = at("defaults", "zonelist", "insn_per_alloc")
        once = at("defaults", "nodes_once", "insn_per_alloc")
        tried = [at("walk_always", w, "tried_per_success") for w in ("zonelist", "nodes_once")]
        note = (f"the walk over each other node once, nearest first (the tuned profile's), "
                f"rather than zone by zone: {tried[1]:.2f} node lists looked at per refill "
                f"that finds a slab rather than {tried[0]:.2f} (every refill walking), and "
                f"{once:.2f} instructions per allocation rather than {classic:.2f} with the "
                "defaults.") if None not in tried and once else ""
        if classic:
            rows.append(("seed 003: refills from other nodes' partial slabs",
                         f"instructions per allocation, partial slabs on the other nodes "
                         f"({n} nodes)", k3["insn_per_alloc"], classic, note))
    return rows


def seeds_section(rows, meta, figdir):
    if not rows:
        return [heading("The seeds' experiments"),
                wrap("This run has no records of the seeds' experiments (the side-by-side "
                     "boots of ``make bench``, in the cache folder's ``bench-results``): "
                     ":doc:`benchmarks` has them from its own run.")]
    doc = [heading("The seeds' experiments"),
           wrap("The four experiments this project grew from, the mailing-list threads of "
                "2008 to 2018 that ``bench/bench.rs`` reproduces: rslub's caches under their "
                "defaults (the classic profile) beside the kernel's own cache (SLUB with "
                "sheaves, 7.3) in the same boot, instructions per operation under "
                "``-icount``, from the side-by-side boots of ``make bench``"
                + (f" made on {meta[1]} from commit {meta[0]}" if meta else "")
                + ". :doc:`benchmarks` has each in full, with every size and setting; "
                "classic SLUB 6.12 and the tuned profile do not run them, but the whole "
                "kernel's table above runs their workloads (hackbench, fio, the ping-pong, "
                "the build) on all four.")]
    doc.append(table(["experiment", "figure", "sheaves 7.3", "rslub classic",
                      "rslub classic / sheaves 7.3"],
                     [[what, fig, f"{k:.2f}", f"{r:.2f}", ratio(r, k)]
                      for what, fig, k, r, _ in rows]))
    doc.append(plot(figdir, "results_seeds", "The seeds' experiments: instructions per operation",
                    "instructions per operation", [what.split(":")[0] for what, *_ in rows],
                    ["sheaves 7.3", "rslub classic"],
                    [[k for _, _, k, _, _ in rows], [r for _, _, _, r, _ in rows]],
                    [COLORS["sheaves 7.3"], COLORS["rslub classic"]]))
    fewer = [(r / k, what.split(":")[0]) for what, _, k, r, _ in rows if r < k]
    more = [what.split(":")[0] for what, _, k, r, _ in rows if r >= k]
    text = ("rslub runs fewer instructions than sheaves in "
            + (f"all {len(rows)}" if len(fewer) == len(rows) else
               f"{len(fewer)} of the {len(rows)}")
            + (f", from {min(fewer)[0]:.2f} of sheaves' ({min(fewer)[1]}) to "
               f"{max(fewer)[0]:.2f} ({max(fewer)[1]})" if len(fewer) > 1 else
               f", {fewer[0][0]:.2f} of sheaves' ({fewer[0][1]})" if fewer else "")
            + (f"; as many or more in {', '.join(more)}" if more else "") + ".")
    doc.append(wrap(text))
    doc.append("What each seed's own point comes to, within rslub:\n")
    doc.append("\n".join(wrap(f"- {what.split(':')[0].capitalize()}: {note}").rstrip("\n")
                         .replace("\n", "\n  ") for what, _, _, _, note in rows if note) + "\n")
    return doc


def lowest_sentence(rows):
    """Which allocator runs each workload in the fewest kernel-mode instructions, grouped
    by allocator, with how far the lowest is below sheaves'."""
    names = [name for _, name in COLUMNS]
    won = {}
    for label, v, _, _ in rows:
        low = min(range(4), key=lambda i: v[i] if v[i] is not None else float("inf"))
        won.setdefault(low, []).append((label.split(",")[0], 1 - v[low] / v[0]))
    parts = []
    for i in sorted(won, key=lambda i: (-len(won[i]), i)):
        loads = won[i]
        below = sorted(d for _, d in loads)
        by = "" if i == 0 else (
            f": {100 * below[0]:.1f}% fewer than sheaves" if len(below) == 1 else
            f": {100 * below[0]:.1f}% to {100 * below[-1]:.1f}% fewer than sheaves")
        parts.append(f"{names[i]} on {len(loads)} ({', '.join(w for w, _ in loads)}{by})")
    return wrap("Fewest instructions, workload by workload: " + "; ".join(parts)
                + ". Within the spread a difference is a tie (the ratios' verdicts).")


# README.md's block, which this report rewrites between these markers on each run.
README_BEGIN = "<!-- results: written by scripts/bench/headline.py -->"
README_END = "<!-- /results -->"


def readme_block(rows, cols, command, commit, date):
    """The README's quote of the page (Markdown): the whole kernel's ratios and the
    fast-path pair."""
    out = [wrap("Kernel-mode instructions of the whole kernel per unit of work, rslub "
                "(``back=all``) under each profile over the kernel's own SLUB with sheaves "
                "(7.3); a ratio within the kernel's boot-to-boot spread is a tie. From "
                f"`{command}` on {date} at commit {commit}, report at commit "
                f"{report_commit()}; the plots, classic SLUB 6.12 and the seeds' experiments "
                "are in [Documentation/results.rst](Documentation/results.rst).")
           .replace("``", "`")]
    if rows:
        lines = [f"| workload | rslub classic / sheaves 7.3 (goal {GOAL_CLASSIC}) "
                 f"| rslub tuned / sheaves 7.3 (goal {GOAL_TUNED}) |", "| --- | --- | --- |"]
        for label, (k7, _, rc, rt), spread, _ in rows:
            lines.append(f"| {label} | " + " | ".join(
                f"{v / k7:.3f} ({verdict(v / k7, goal, spread)})" if v else "-"
                for v, goal in ((rc, GOAL_CLASSIC), (rt, GOAL_TUNED))) + " |")
        out.append("\n".join(lines) + "\n")
    if cols:
        _, key, what, goal = FAST_OPS[0]
        best = via_api(cols, key)
        out.append(wrap(
            f"Fast path, {what} (`bench/kmem_micro.c`, instructions): sheaves 7.3 "
            f"{cols[0][key]:.2f}"
            + (f", classic SLUB 6.12 {cols[1][key]:.2f}" if cols[1] else "")
            + (f", rslub {best:.2f} through `kmem_cache_*` ({best / cols[0][key]:.2f} of "
               f"sheaves'; goal {goal}, {'met' if best / cols[0][key] <= goal else 'missed'})"
               if best is not None else "")
            + (f" and {cols[2][key]:.2f} through its C API" if cols[2] else "") + "."))
    return "\n".join(out)


def write_readme(path, block):
    """Puts @block between README_BEGIN and README_END in @path; a file without them is
    left as it is, said on stderr."""
    with open(path) as f:
        text = f.read()
    begin, end = text.find(README_BEGIN), text.find(README_END)
    if begin < 0 or end < begin:
        print(f"headline.py: {path} has no {README_BEGIN} ... {README_END}: left as it is",
              file=sys.stderr)
        return
    text = text[:begin + len(README_BEGIN)] + "\n" + block + text[end:]
    with open(path, "w") as f:
        f.write(text)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("rundir")
    ap.add_argument("docdir")
    ap.add_argument("--command", default="make bench")
    ap.add_argument("--seconds", type=int)
    ap.add_argument("--side", help="the side-by-side run's records (scripts/bench/bench.sh's "
                    "folder), for the seeds' experiments")
    ap.add_argument("--readme", help="README.md, whose results block is rewritten")
    a = ap.parse_args()
    every = denoise(marginal(load_run(a.rundir)))
    load_slab_functions(a.rundir)
    micro = [r for r in every if r["exp"] == "micro"]
    recs = [r for r in every if r.get("table", True) and r["exp"] != "micro"
            and not r["boot"].startswith("stats-")]
    commit, date, kbuild, qemu, cpus = read_meta(a.rundir)[:5]
    rows = workload_rows(recs)
    side, side_meta = load_side(a.side)
    seeds = seed_rows(side)
    took = f" in {a.seconds // 60} min {a.seconds % 60} s" if a.seconds else ""
    doc = [page_title("Results at a glance", 21),
           f"Written by ``{a.command}``{took} (``scripts/bench/headline.py``); do not edit the "
           "figures.\n"
           f"Made on {date} from commit {commit}, kernel build {kbuild}, {qemu}; {cpus} vCPUs "
           f"on 2 nodes;\n"
           + (f"the seeds' experiments from the side-by-side boots made on {side_meta[1]} from "
              f"commit {side_meta[0]};\n" if seeds and side_meta else "")
           + f"figures computed by the report at commit {report_commit()}.\n",
           "Which allocator runs the whole kernel in fewer instructions: the kernel's own SLUB "
           "with\nsheaves (7.3), classic SLUB (Linux 6.12), and rslub serving the whole 7.3 "
           "kernel\n(``back=all``) under its two profiles. Kernel-mode instructions per unit of "
           "work, counted\nby the QEMU plugin in one boot per allocator "
           "(:doc:`benchmarks_whole`, \"Method\"); 6.12 is a\nwhole other kernel, so its column "
           "compares systems, and :doc:`benchmarks_fidelity` compares\nits allocator with "
           "rslub's by their counters. A ratio within the spread (the range of the\nkernel's own "
           "boots with QEMU's ``-seed`` 1, 2 and 3, the last two with another memory\nlayout; "
           "for the builds, the same on each topology) is a tie; a ratio with no spread\nmeasured "
           "says so.\n",
           "Then the fast paths and the seeds' experiments, each with a plot; the long tables "
           "stay on\n:doc:`benchmarks` (every size and pattern, the seeds' experiments in full), "
           ":doc:`benchmarks_whole`\nand :doc:`benchmarks_fidelity`.\n"]
    figdir = os.path.join(a.docdir, "benchmarks")
    os.makedirs(figdir, exist_ok=True)
    if rows:
        doc.append(heading("The whole kernel"))
        doc.append(headline_table(rows))
        doc.append(plot(figdir, "results", "Kernel-mode instructions per unit, % of sheaves 7.3",
                        "% of sheaves 7.3", [label.split(",")[0] for label, _, _, _ in rows],
                        [name for _, name in COLUMNS[1:]],
                        [[100 * v[i] / v[0] if v[i] else None for _, v, _, _ in rows]
                         for i in range(1, 4)],
                        [COLORS[name] for _, name in COLUMNS[1:]], (100, "sheaves 7.3")))
        doc.append(lowest_sentence(rows))
        won = [label.split(",")[0] for label, v, s, _ in rows
               if v[3] and verdict(v[3] / v[0], GOAL_TUNED, s).startswith("met")]
        tuned = sum(1 for _, v, _, _ in rows if v[3])
        builds = any(label.startswith("build") for label, _, _, _ in rows)
        doc.append(f"rslub's tuned profile meets its goal on {len(won)} of the {tuned} "
                   f"workloads it ran{': ' + ', '.join(won) if won else ''}"
                   + (" (the builds, on 4 nodes and on 1 in 2 GiB, ran under\nthe classic "
                      "profile only)" if builds else "") + ". Where rslub is "
                   "behind, :doc:`benchmarks_whole` and :doc:`benchmarks_fidelity` show its "
                   "counters,\nthe hooks' share and, by symbol, where its instructions go.\n")
        small = [label.split(",")[0] for label, _, _, sh in rows
                 if sh[0] is not None and sh[0] < 1 - GOAL_TUNED]
        if any(sh[0] is not None for _, _, _, sh in rows):
            doc.append("The last column is the share of each boot's kernel-mode instructions "
                       "that ran in allocator\ncode: the kernel's ``mm/slub.c`` and "
                       "``mm/slab_common.c`` functions, and rslub's (the profiles\nof "
                       ":doc:`benchmarks_whole`, \"Where the instructions go\"; not the page "
                       "allocator's work they\ncause). A ratio of "
                       f"{GOAL_TUNED} asks for {100 * (1 - GOAL_TUNED):.0f}% of sheaves' "
                       "instructions fewer"
                       + (f": on {' and '.join(small)}, sheaves' allocator code is less than "
                          "that, so\nan allocator that cost nothing would not get there alone; "
                          "what decides is the rest of\nthe kernel's work, which moves with the "
                          "allocator's timing (in these profiles mostly the\nscheduler's) and "
                          "from boot to boot" if small else "")
                       + ".\n")
    cols = micro_cols(micro)
    if cols:
        doc.append(heading("Fast paths"))
        doc.append(wrap("``bench/kmem_micro.c`` (a 64-byte cache of its own; instructions per "
                        "operation, the fastest of 50 chunks of 1000): the kernel's allocator "
                        "on 7.3 and 6.12, rslub's C API, and the kernel's API on a cache that "
                        "rslub serves (its hooks included), by name and in whole-kernel mode. "
                        "The last column is the better of the two over sheaves' (goals: "
                        + " and ".join(f"{goal} for {what}" for _, _, what, goal in FAST_OPS)
                        + "). :doc:`benchmarks` has every size and pattern, rslub's C API "
                        "beside the kernel's cache."))
        doc.append(micro_table(cols))
        doc.append(plot(figdir, "results_fast", "Fast paths: instructions per operation",
                        "instructions per operation", [what for what, *_ in FAST_OPS],
                        [legend for _, _, _, legend, _ in FAST],
                        [[c[key] if c else None for _, key, *_ in FAST_OPS] for c in cols],
                        [COLORS[legend] for _, _, _, legend, _ in FAST]))
        doc.append(micro_sentence(cols))
    doc += seeds_section(seeds, side_meta, figdir)
    with open(os.path.join(a.docdir, "results.rst"), "w") as f:
        f.write("\n".join(doc))
    if a.readme:
        write_readme(a.readme, readme_block(rows, cols, a.command, commit, date))


if __name__ == "__main__":
    main()
