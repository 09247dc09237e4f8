# SPDX-License-Identifier: GPL-2.0
"""Documentation/benchmarks_whole.rst and Documentation/benchmarks/whole.json, from the
boots of scripts/bench/whole.sh: RESULT lines (OUT.jsonl), the counting plugin's marks
(OUT.jsonl.count) and the console (OUT.jsonl.log).

    whole_report.py RUNDIR DOCDIR
"""

import json
import os
import re
import sys

from common import (ALLOC, COLUMNS, KERNEL_SEEDS, SLAB, WORK, allocator_code, build_runs,
                    build_seeds, denoise, hook_cost, fidelity_groups, find, heading, kernel_spread,
                    load_run, load_slab_functions, marginal, micro_result, page_title, pct, per,
                    read_meta, report_commit, rslub_code, series, table)


def clamp_summary(recs):
    """The page's sentence on what the subtraction's clamp at zero kept (denoise_group())."""
    parts = [(v, r["boot"], r["exp"], k) for r in recs for k, v in r.get("clamped", {}).items()]
    if not parts:
        return "No part of a run counted less than its boot's run of nothing.\n"
    v, boot, exp, k = max(parts)
    return (f"In {len({(p[1], p[2]) for p in parts})} runs, {len(parts)} counters of a cache "
            f"(or of the caches not listed) counted less than in the run of nothing, by "
            f"{sum(p[0] for p in parts)} events in all, the most {v} ({k}, {exp} on boot "
            f"{boot}): the run of nothing is not the same from run to run to within a few "
            f"dozen events of a counter, the scale below which the counters say nothing "
            f"(``clamped`` in the records).\n")


def rs(r, *names):
    return sum(r.get("rslub", {}).get(n, 0) for n in names)


def held_kib(r):
    # rslub's slab pages are in Slab: (accounted as 6.12 accounts slabs), and so is its
    # slab metadata, objects of a kernel cache (rslub_meta).
    return r["slab_kib"]


def label(r):
    s = "classic SLUB 6.12" if series(r) == "6.12" else ALLOC[r["alloc"]]
    if r["params"]:
        s += " " + r["params"]
    return s


STATS = {}


def stats_rec(r, boot=None):
    """The same run in the boot of the same kernel with SLUB_STATS (boot stats-BOOT, BOOT
    the run's own unless given)."""
    if r["alloc"] != "kernel":
        return None
    return STATS.get((boot or r["boot"], r["exp"], r.get("defer")))


def slub_of(r):
    """SLUB's counters, summed over its caches, for a kernel run (from stats_rec)."""
    s = stats_rec(r)
    return s.get("slub") if s else None


def row(r, base):
    ops = rs(r, "alloc_fastpath", "alloc_slowpath", "free_fastpath", "free_slowpath")
    out = [label(r), f"{per(r, r['insns']):.0f}",
           f"{r['insns'] / base['insns']:.3f}" if base else "-",
           f"{per(r, r['kinsns']):.0f}",
           f"{r['kinsns'] / base['kinsns']:.3f}" if base else "-",
           f"{per(r, r['ns']):.0f}"]
    if r["alloc"] == "rslub" and r["exp"] == "kfree_rcu":
        # The module's cache, and rslub's counters of it, are gone by the run's end.
        out += ["-", "-", "-", "-"]
    elif r["alloc"] == "rslub":
        out += [pct(rs(r, 'alloc_slowpath', 'free_slowpath'), ops),
                f"{per(r, rs(r, 'node_lock'), 1000):.1f}",
                f"{per(r, rs(r, 'node_lock_contended'), 1000):.2f}",
                f"{per(r, rs(r, 'alloc_slab') + rs(r, 'free_slab'), 1000):.1f}"]
    elif slub_of(r) and r["exp"] != "kfree_rcu":
        k = slub_of(r)
        kops = sum(k.get(n, 0) for n in ("alloc_fastpath", "alloc_slowpath", "free_fastpath",
                                          "free_slowpath"))
        out += [pct(k.get('alloc_slowpath', 0) + k.get('free_slowpath', 0), kops), "-", "-",
                f"{per(r, k.get('alloc_slab', 0) + k.get('free_slab', 0), 1000):.1f}"]
    else:
        out += ["-", "-", "-", "-"]
    out += [f"{per(r, r['pgalloc'], 1000):.1f}", str(held_kib(r))]
    return out


HEAD = ["allocator", "instructions / unit", "vs kernel", "kernel-mode instructions / unit",
        "kernel-mode vs kernel", "guest clock ns / unit", "slow paths %", "node locks / 1000 units",
        "waits / 1000 units", "slab page calls / 1000 units", "pages allocated / 1000 units",
        "slab KiB after"]


def caches_table(r):
    body = []
    for name, c in sorted(r.get("caches", {}).items(),
                          key=lambda kv: -(kv[1]["alloc_fastpath"] + kv[1]["alloc_slowpath"])):
        a = c["alloc_fastpath"] + c["alloc_slowpath"]
        f = c["free_fastpath"] + c["free_slowpath"]
        body.append([name, c.get("size", "-"), c.get("order", "-"), c.get("objects_per_slab", "-"),
                     f"{a / r['units']:.2f}", pct(c['alloc_slowpath'], a),
                     pct(c['free_slowpath'], f),
                     f"{1000.0 * c['node_lock'] / r['units']:.1f}",
                     f"{1000.0 * (c['alloc_slab'] + c['free_slab']) / r['units']:.1f}"])
    return table(["cache", "size", "order", "objects / slab", "allocations / unit",
                  "alloc slow %", "free slow %", "node locks / 1000 units",
                  "slab page calls / 1000 units"], body)


# The counters classic SLUB 6.12 and rslub share (whole_guest.sh's FSTATS), in the
# order of mm/slub.c's enum stat_item.
FIDELITY = ("alloc_fastpath", "alloc_slowpath", "free_fastpath", "free_slowpath",
            "free_frozen", "free_add_partial", "free_remove_partial", "alloc_from_partial",
            "alloc_slab", "alloc_refill", "alloc_node_mismatch", "free_slab", "cpuslab_flush",
            "deactivate_full", "deactivate_empty", "deactivate_to_head", "deactivate_to_tail",
            "deactivate_remote_frees", "deactivate_bypass", "order_fallback",
            "cpu_partial_alloc", "cpu_partial_free", "cpu_partial_node", "cpu_partial_drain")
# A ratio of rslub's (classic profile) to 6.12's per unit outside this band is a finding,
# explained in Documentation/design.rst ("Fidelity to classic SLUB").
BAND = (0.9, 1.1)


def profile_section(recs, rows=12):
    """Where each workload's kernel-mode instructions go, by symbol, per unit of work: the
    @rows symbols whose count differs most between sheaves and rslub (either profile),
    from the profiled boots' runs (count.c's map=); rslub's functions are "rslub: NAME"
    (module_names())."""
    out = []
    # The builds' runs per topology, in the columns' order (no tuned build).
    builds = [(f"{n} node{'s' if n > 1 else ''}: ", *build_runs(recs, n), None) for n in (4, 1)]
    for exp in ("hackbench", "pingpong", "fio", "fork", "execve", "kfree_rcu", "build"):
        groups = builds if exp == "build" else fidelity_groups(recs, exp)
        for prefix, *runs in groups:
            k7 = runs[0]
            if not k7 or "prof" not in k7:
                continue
            cols = [(r, name) for r, (_, name) in zip(runs, COLUMNS) if r and "prof" in r]
            rsl = [r for r, _ in cols if r["alloc"] == "rslub"]
            rsl_names = [name for r, name in cols if r["alloc"] == "rslub"]
            if not rsl:
                continue

            def pu(r, sym):
                return r["prof"].get(sym, 0) / r["units"]
            syms = k7["prof"].keys() | {k for r in rsl for k in r["prof"]}
            top = sorted(syms, key=lambda k: (-max(abs(pu(r, k) - pu(k7, k)) for r in rsl),
                                              k))[:rows]
            body = []
            for sym in top:
                body.append([f"``{sym}``"] + [f"{pu(r, sym):.0f}" for r, _ in cols]
                            + [f"{pu(r, sym) - pu(k7, sym):+.0f}" for r in rsl])
            total = ["all kernel-mode"] + [f"{per(r, r['kinsns']):.0f}" for r, _ in cols] \
                + [f"{per(r, r['kinsns']) - per(k7, k7['kinsns']):+.0f}" for r in rsl]
            mine = ["rslub's functions, all"] + [f"{rslub_code(r) / r['units']:.0f}"
                                                  for r, _ in cols] \
                + [f"{rslub_code(r) / r['units']:+.0f}" for r in rsl]
            alloc = {id(r): allocator_code(r) for r, _ in cols}
            code = ["allocator code, all"] + [
                f"{alloc[id(r)] / r['units']:.0f}" if alloc[id(r)] is not None else "-"
                for r, _ in cols] + [
                f"{(alloc[id(r)] - alloc[id(k7)]) / r['units']:+.0f}"
                if alloc[id(r)] is not None and alloc[id(k7)] is not None else "-"
                for r in rsl]
            shown = ["the rows above"] + [f"{sum(pu(r, k) for k in top):.0f}" for r, _ in cols] \
                + [f"{sum(pu(r, k) - pu(k7, k) for k in top):+.0f}" for r in rsl]
            title = f"{exp}{' (' + prefix.rstrip(': ') + ')' if prefix else ''}, per {WORK[exp][0]}"
            out.append(heading(title, "-"))
            out.append(table(["symbol"] + [name for _, name in cols]
                             + [f"{name} - sheaves" for name in rsl_names], body + [shown, mine, code, total]))
            # Where the difference is not the allocators' own code: the rest, and its
            # largest symbol.
            slab = SLAB.get(series(k7))
            notes = []
            for r, name in zip(rsl, rsl_names):
                if alloc[id(r)] is None or alloc[id(k7)] is None or slab is None:
                    continue
                d_all = per(r, r["kinsns"]) - per(k7, k7["kinsns"])
                d_code = (alloc[id(r)] - alloc[id(k7)]) / r["units"]
                rest = [k for k in syms if not k.startswith("rslub: ") and k not in slab]
                big = max(rest, key=lambda k: (abs(pu(r, k) - pu(k7, k)), k))
                notes.append(f"{name}: {d_all:+.0f} in all, {d_code:+.0f} in allocator code, "
                             f"{d_all - d_code:+.0f} outside it, where the largest single "
                             f"difference is ``{big}``'s, {pu(r, big) - pu(k7, big):+.0f}")
            if notes:
                out.append("Against sheaves, per " + WORK[exp][0] + ": " + "; ".join(notes)
                           + ".\n")
    if out:
        out.insert(0, heading("Where the instructions go"))
        out.insert(1, "Each workload's kernel-mode instructions per unit of work by the symbol "
                   "they ran in, from\nthe boots of the side-by-side table (the counting "
                   "plugin with the kernel's ``System.map``,\n``PROFILE=1``; a block of "
                   "instructions counts to the symbol its first address is in): the\n"
                   f"{rows} symbols whose count differs most between sheaves and rslub. "
                   "rslub's functions are\n``rslub: NAME`` (by the module the boot loaded "
                   "and where the guest said its text is),\nthe trampolines and replacements "
                   "of its hooks among them; ``[modules, other]`` is\nanother module's text or "
                   "ftrace's. *Allocator code* sums the functions of each kernel's ``mm/slub.c`` "
                   "and\n``mm/slab_common.c`` (its build's objects) and rslub's: what the "
                   "allocators themselves run,\nwithout what they ask of the page allocator "
                   "(6.12's ``kvfree_call_rcu()`` batching is in\n``kernel/rcu/tree.c``, "
                   "outside it, where 7.3 has it in ``mm/slab_common.c``). "
                   "6.12 is another kernel: its symbols are its own,\ncompare it by the "
                   "totals. The marginal runs (the larger run less the smaller)\n"
                   "have their profiles subtracted too, so a symbol can count below zero.\n"
                   + ("The builds' boots are not profiled by ``make bench`` (a profiled build "
                      "boot takes\nfour times as long): where their tables stand below, their "
                      "boots were run again with\nthe run's command and ``PROFILE=1``, which "
                      "counts the same instructions (the report checks\nevery mark against "
                      "the first boot's), and put in the run's folder.\n"
                      if any(r["exp"] == "build" and "prof" in r for r in recs) else ""))
    return out


def micro_table(micro):
    """The fast paths in instructions (bench/kmem_micro.c) on each kernel."""
    cols = [micro_result(micro, "n2-kernel", "kernel"), micro_result(micro, "n2-classic", "kernel"),
            micro_result(micro, "n2-kernel", "rslub")]
    if not any(cols):
        return []
    body = [[what] + [f"{c[key]:.2f}" if c else "-" for c in cols]
            for what, key in (("alloc+free pair", "pair"), ("bulk 16, per object", "bulk16"))]
    return [heading("Fast paths", "-"),
            "``bench/kmem_micro.c``, a module built for each kernel, in instructions per "
            "operation (the\nfastest of 50 chunks of 1000, timed by the guest clock, which "
            "counts instructions under\n``-icount``): a 64-byte ``kmem_cache`` "
            "(``SLAB_NO_MERGE``) on 7.3 and on 6.12, and the same\nloops over an rslub cache "
            "through rslub's C API (``include/rslub.h``) on 7.3, with rslub\nloaded backing "
            "nothing. ``kmem_cache_alloc_bulk`` returns a count on 6.12 and a bool on 7.3.\n",
            table(["operation", "sheaves 7.3", "classic SLUB 6.12", "rslub (7.3, C API)"], body)]


def api_table(micro):
    """A module's own kmem_cache served by rslub through the kernel's API (the hooks, then
    rslub), against the kernel's allocator on the same kind of cache (bench/kmem_micro.c)."""
    kernel, back, whole = (micro_result(micro, "n2-kernel", "kernel"),
                           micro_result(micro, "n2-kernel", "rslub_back"),
                           micro_result(micro, "n2-rslub", "rslub_whole"))
    capi = micro_result(micro, "n2-kernel", "rslub")
    if not kernel or not (back or whole):
        return []
    body = []
    for what, key, goal in (("alloc+free pair", "pair", 0.6), ("bulk 16, per object", "bulk16", 1.0)):
        row = [what, f"{kernel[key]:.2f}"]
        for c in (back, whole):
            row += [f"{c[key]:.2f}", f"{c[key] / kernel[key]:.2f}"] if c else ["-", "-"]
        row += [f"{capi[key]:.2f}" if capi else "-", f"{goal:.1f}"]
        body.append(row)
    why = []
    served = back or whole
    if capi and served["pair"] > 0.6 * kernel["pair"]:
        # Where the goal is missed: what it leaves the hooks, against what they take.
        why = [f"The pair's goal leaves the hooks {0.6 * kernel['pair'] - capi['pair']:.0f} "
               "instructions over rslub's own pair (its C API's); they take "
               f"{served['pair'] - capi['pair']:.0f}.\nA served allocation's trampoline probes "
               "the index of backed caches and hands the slot\nto the fast path (13 "
               "instructions, ``rust/back/direct.S``, and the jump into it); a free's\n"
               "decides the object's owner from its page, the page's type and the slab's "
               "cache (20, and\nthe jump), then rslub finds the object's slab and cache and "
               "checks that the pointer\nstarts an object, which the C API, given the cache "
               "by its caller, does not need (the\nkernel's own free looks at the page "
               "first too). For 0.6, the kernel's pair would have to\nbe "
               f"{served['pair'] / 0.6 - kernel['pair']:.0f} instructions longer.\n"]
    return [heading("A module's cache through the kernel's API", "-"),
            "The kernel's own loops of ``bench/kmem_micro.c`` (a 64-byte ``kmem_cache`` it "
            "creates, ``SLAB_NO_MERGE``;\ninstructions per operation, the fastest of 50 "
            "chunks of 1000) on the kernel's allocator, then\nin the same boot with rslub "
            "serving that cache, backed by its name through the ``back``\nfile, and in the "
            "whole-kernel boot, where rslub backs it when it first allocates: what a\nmodule "
            "that calls ``kmem_cache_alloc()`` and ``kmem_cache_free()`` pays for rslub, hooks "
            "included.\nBeside them rslub's C API (``include/rslub.h``, no hooks), and the "
            "issue's goal for the ratio.\n",
            table(["operation", "kernel (sheaves)", "rslub, back=NAME", "vs kernel",
                   "rslub, whole kernel", "vs kernel", "rslub's C API", "goal"], body)] + why


def fidelity_section(recs, micro):
    doc = []
    if not any(r["boot"] == "n2-classic" for r in recs):
        return doc
    doc.append(heading("Side by side, 2 nodes"))
    doc.append(
        "The same 2-node boots on three kernels' allocators: *sheaves 7.3* (the kernel's SLUB "
        "of\n7.3.4), *classic SLUB 6.12* (Linux 6.12.117 from Debian's ``linux-source-6.12``, "
        "built by\n``scripts/kernel.sh`` with ``RSLUB_KSERIES=6.12``: the base fragment where "
        "6.12 has the option,\nno Rust, ``PREEMPT`` where 7.3's test kernel has ``PREEMPT_LAZY``, "
        "``SLUB_CPU_PARTIAL``), and\n*rslub* serving the whole 7.3 kernel under its two "
        "profiles (``profile=classic``, the\ndefault, and ``profile=tuned``; one boot each, as "
        "whole-kernel mode cannot be unloaded).\nThe kernels differ elsewhere too (scheduler, "
        "networking, the user-space-visible code paths\nof four years): the instruction "
        "columns compare whole systems, the counters compare the\nallocators. Each kernel's "
        "counters come from a boot of its ``SLUB_STATS`` build running the\nsame workloads "
        "(instructions from the build without, as counting adds instructions).\n")
    doc.extend(micro_table(micro))
    for exp in ("hackbench", "pingpong", "fio", "fork", "execve", "kfree_rcu"):
        groups = [g for g in fidelity_groups(recs, exp) if g[2]]
        if not groups:
            continue
        unit = WORK[exp][0]
        doc.append(heading(f"{exp}: per {unit}", "-"))
        body = []
        for prefix, k7, k6, rc, rt in groups:
            for what, key in (("instructions", "insns"), ("kernel-mode instructions", "kinsns")):
                cells = [f"{per(r, r[key]):.0f}" if r else "-" for r in (k7, k6, rc, rt)]
                ratio = f"{rc[key] / rc['units'] / (k6[key] / k6['units']):.3f}" if rc else "-"
                body.append([prefix + what] + cells + [ratio])
            # The scheduler's share: how often the run switched tasks (/proc/stat's ctxt),
            # which sets how many objects are in flight between an allocation and its free.
            if all(r is None or "ctxt" in r for r in (k7, k6, rc, rt)):
                cells = [f"{per(r, r['ctxt'], 1000):.1f}" if r else "-" for r in (k7, k6, rc, rt)]
                ratio = f"{rc['ctxt'] / rc['units'] / (k6['ctxt'] / k6['units']):.3f}" if rc and k6["ctxt"] else "-"
                body.append([prefix + "context switches per 1000"] + cells + [ratio])
        doc.append(table(["run", "sheaves 7.3", "classic SLUB 6.12", "rslub classic (7.3)",
                          "rslub tuned (7.3)", "rslub classic / 6.12"], body))
        if exp == "kfree_rcu":
            doc.append("The module's cache, and every allocator's counters of it, are gone "
                       "by the run's end.\n")
            continue
        for prefix, k7, k6, rc, rt in groups:
            k6s = stats_rec(k6)
            s7 = (slub_of(k7) or {}) if k7 else {}
            if not k6s or not rc:
                continue
            # The workload's caches: those that served at least 2% of the run's allocations
            # on both 6.12 and rslub (the snapshots' own caches drop out: on 6.12's
            # SLUB_STATS kernel they are large, on rslub small).
            both = sorted(set(k6s.get("slub_caches", {})) & set(rc.get("caches", {})))
            s6 = {n: sum(k6s["slub_caches"][c].get(n, 0) for c in both) for n in FIDELITY}
            rcs = {n: sum(rc["caches"][c].get(n, 0) for c in both) for n in FIDELITY}
            doc.append(f"{prefix}the allocator's counters per 1000 {unit}s in the caches "
                       f"of the workload ({', '.join(both) or 'none'}: the\ncaches that served "
                       "at least 2% of the run's allocations on both); the ratio is rslub\n"
                       "classic's over 6.12's. *sheaves 7.3* and *rslub tuned* are summed over "
                       "all caches:\n")
            # The same allocators in a second boot each (QEMU's -seed 2): how far a
            # counter moves between two boots of one allocator.
            defer = k6.get("defer")
            k6b = STATS.get(("n2-classic-seed2", exp, defer))
            rcb = find(recs, "n2-rslub-seed2", exp, defer)
            seeds = k6b is not None and rcb is not None
            # rslub with every hook through ftrace's handler (direct=0): the allocator's
            # code the same, only the hooks' instructions more.
            rcd = find(recs, "n2-rslub-direct0", exp, defer)
            # rslub with 7.3's scheduler feature HRTICK off, as 6.12 runs (design.rst,
            # "Counters per unit of work"), and its ratio to 6.12.
            rcn = find(recs, "n2-rslub-nohrtick", exp, defer)

            def in_both(r, n, group="caches"):
                """Run @r's counter @n summed over the caches of both, per 1000 units."""
                return per(r, sum(r.get(group, {}).get(c, {}).get(n, 0) for c in both), 1000)

            def against_612(v, v6):
                """@v over 6.12's @v6, marked (!) outside BAND."""
                ratio = f"{v / v6:.2f}" if v6 else ("-" if not v else "new")
                return ratio + ("" if not v6 or BAND[0] <= v / v6 <= BAND[1] else " (!)")
            body = []
            for n in FIDELITY:
                v6 = per(k6, s6.get(n, 0), 1000)
                vc = per(rc, rcs.get(n, 0), 1000)
                line = [n, f"{per(k7, s7[n], 1000):.1f}" if k7 and n in s7 else "-",
                        f"{v6:.1f}", f"{vc:.1f}",
                        f"{per(rt, rs(rt, n), 1000):.1f}" if rt else "-", against_612(vc, v6)]
                if seeds:
                    line += [f"{in_both(k6b, n, 'slub_caches'):.1f}", f"{in_both(rcb, n):.1f}"]
                if rcd:
                    line.append(f"{in_both(rcd, n):.1f}")
                if rcn:
                    vn = in_both(rcn, n)
                    line += [f"{vn:.1f}", against_612(vn, v6)]
                body.append(line)
            doc.append(table(["counter", "sheaves 7.3", "classic SLUB 6.12", "rslub classic",
                              "rslub tuned", "ratio"]
                             + (["6.12, -seed 2", "rslub classic, -seed 2"] if seeds else [])
                             + (["rslub classic, direct=0"] if rcd else [])
                             + (["rslub classic, NO_HRTICK", "ratio, NO_HRTICK"] if rcn else []),
                             body))
            doc.append("(!): outside 0.9-1.1, explained in Documentation/design.rst, "
                       "\"Fidelity to classic SLUB\". Sheaves\ncount some of these "
                       "differently (``alloc_fastpath`` from a sheaf) and lack the others.\n")
            if rcn:
                doc.append("*NO_HRTICK*: rslub's classic boot again with 7.3's scheduler "
                           "feature ``HRTICK`` off\n(``/sys/kernel/debug/sched/features``), "
                           "as 6.12 runs by default; its ratio is to 6.12's\ncounters too. "
                           "Documentation/design.rst (\"Counters per unit of work\") says "
                           "what the\nfeature does to the workload's sequence of "
                           "allocations and frees.\n")
            doc.append(f"{prefix}per cache (those that served at least 2% of the run's "
                       "allocations), per 1000 units, with\nthe layouts, which can differ "
                       "between the kernels:\n")
            doc.append(fidelity_caches(stats_rec(k6), rc))
    return doc


def fidelity_caches(k6, rc):
    names = ("alloc_fastpath", "alloc_slowpath", "free_fastpath", "free_slowpath", "free_frozen",
             "cpu_partial_alloc", "cpu_partial_free", "cpu_partial_node", "cpu_partial_drain",
             "free_add_partial", "free_remove_partial", "alloc_slab", "free_slab")
    body = []
    for who, r, caches in (("6.12", k6, k6.get("slub_caches", {}) if k6 else {}),
                           ("rslub", rc, rc.get("caches", {}))):
        for name, c in sorted(caches.items(), key=lambda kv: kv[0]):
            body.append([name, who, c.get("size", "-"), c.get("order", "-"),
                         c.get("objects_per_slab", "-")] +
                        [f"{per(r, c.get(n, 0), 1000):.1f}" for n in names])
    body.sort(key=lambda row: (row[0], row[1]))
    return table(["cache", "allocator", "size", "order", "objects / slab"] + list(names), body)


def main():
    rundir, docdir = sys.argv[1], sys.argv[2]
    # --fidelity: only the side-by-side boots ran (make bench PART=fidelity): only
    # benchmarks_fidelity.rst and benchmarks/fidelity.json are written.
    only_fidelity = sys.argv[3:] == ["--fidelity"]
    every = denoise(marginal(load_run(rundir)))
    load_slab_functions(rundir)
    os.makedirs(os.path.join(docdir, "benchmarks"), exist_ok=True)
    fid_boots = ("n2-kernel", "n2-classic", "n2-rslub", "n2-rslub-tuned", "n2-rslub-seed2",
                 "n2-rslub-nohrtick",
                 "n2-rslub-direct0",
                 "stats-n2-kernel", "stats-n2-classic", "stats-n2-classic-seed2")
    outs = [("fidelity.json", [r for r in every if r["boot"] in fid_boots])]
    if not only_fidelity:
        outs.append(("whole.json", every))
    for name, rs_ in outs:
        with open(os.path.join(docdir, "benchmarks", name), "w") as f:
            # Not the profiles: a thousand symbols a run (the page has their tops).
            json.dump([{k: v for k, v in r.items() if k != "prof"} for r in rs_], f,
                      indent=0, sort_keys=True)
            f.write("\n")
    micro = [r for r in every if r["exp"] == "micro"]
    recs = [r for r in every if r.get("table", True) and r["exp"] != "micro"]
    for r in recs:
        if r["boot"].startswith("stats-"):
            STATS[(r["boot"][len("stats-"):], r["exp"], r.get("defer"))] = r
    recs = [r for r in recs if not r["boot"].startswith("stats-")]
    meta = read_meta(rundir)
    commit, date, kbuild, qemu, cpus = meta[:5]
    classic_build = meta[5] if len(meta) > 5 else None
    provenance = (f"Made on {date} from commit {commit}, kernel build {kbuild}"
                  + (f" (classic SLUB: {classic_build})" if classic_build else "")
                  + f", {qemu}; {cpus} vCPUs; figures computed by the report at commit "
                  + f"{report_commit()}.\n")
    fid = [page_title("Benchmarks: classic SLUB 6.12 beside rslub", 47),
           "Written by ``make bench`` (or ``make bench PART=fidelity`` alone, "
           "``scripts/bench/whole.sh``);\ndo not edit the figures. The boots, the guest, "
           "the instruction counts and the counters'\nwindows are those of "
           ":doc:`benchmarks_whole` (\"Method\"); Documentation/design.rst\n(\"Fidelity to "
           "classic SLUB\") lists every behaviour where rslub and 6.12 differ and explains\n"
           "the ratios this page flags.\n", provenance]
    fid.extend(fidelity_section(recs, micro))
    with open(os.path.join(docdir, "benchmarks_fidelity.rst"), "w") as f:
        f.write("\n".join(fid))
    if only_fidelity:
        return

    doc = [page_title("Benchmarks: the whole kernel", 29),
           "The seed threads compared allocators for the whole kernel; this page does the same "
           "for\nrslub. It is written by ``make bench`` (or ``make bench PART=whole`` alone, "
           "``scripts/bench/whole.sh``; ``PART=fidelity``: only the side-by-side boots); do not "
           "edit the figures.\n",
           provenance,
           heading("Method"),
           "Each boot has one allocator for all of its life, since whole-kernel mode cannot be "
           "unloaded:\nthe boots differ only in their first argument "
           "(``scripts/bench/whole_guest.sh``, the guest's\n``/init``). *kernel*: nothing "
           "loaded, the kernel's SLUB with sheaves. *kernel + rslub's hooks*:\nrslub loaded "
           "backing only ``nsproxy``, which no workload allocates (the guest allocates one\n"
           "through ``unshare()`` while rslub finds it): the hooks that backing a cache "
           "registers\n(``kfree``, ``kmem_cache_free``, ``kmem_cache_alloc_noprof`` and "
           "``kmem_cache_alloc_node_noprof`` by\ndirect call, the other ``kmem_cache`` entry "
           "points by the ``IPMODIFY`` handler), on every call\nof the workload. kmalloc's entry "
           "points are hooked in whole-kernel mode only, through the\nhandler: the *rslub* rows "
           "pay that too, which the hooks row does not show. "
           "*rslub, whole kernel*: ``insmod\nrslub.ko back=all`` as the first command, so rslub "
           "serves kmalloc and every cache it can\nfrom then on (Documentation/backing.rst, "
           "\"Whole-kernel mode\"); its own parameters, if any, follow.\n",
           "The guests are the benchmark guests of ``make bench`` (busybox in an initramfs, "
           "reading\nnothing from the host, QEMU TCG with ``-icount shift=0,align=off,sleep=off``"
           "), with 1 GiB\nof memory (2 GiB for the build, on 4 nodes and on 1) and the workloads' "
           "programs in the\ninitramfs with their libraries: Debian's ``hackbench``, ``fio``, "
           "``perf`` 6.12, ``gcc`` 12 and\n``make``, ``scripts/bench/workloads/pingpong.c`` "
           "and the module ``bench/kfree_rcu.c``. Each\nworkload runs once to warm up, then measured "
           "(at two sizes for some, below).\n",
           "*Instructions* are counted by a QEMU plugin (``scripts/bench/qemu/count.c``): every "
           "instruction\nany vCPU executes, the kernel's (upper-half addresses) also apart, "
           "read at a marker\ninstruction that the guest executes just before and just after "
           "a run (``/bin/mark``; the\nkfree_rcu module executes it itself). The guest clock "
           "under ``-icount`` counts instructions\ntoo, but it jumps to the next timer when "
           "every vCPU is idle: *guest clock ns* holds the\nidle time of a run as well "
           "(grace periods, a process waiting for another, timers), which\nthe plugin's count "
           "does not. All vCPUs' instructions count, whichever CPU ran them; user\nspace's too "
           "(hackbench's and fio's loops, gcc's compiling): the *kernel-mode* column is the\n"
           "part the allocators can change. A mark's own fork and exec (a static program of "
           "four\ninstructions) are inside the window, the same in every run. A translation block "
           "adds its\nlength when it starts: one cut short by a fault counts whole, and its rest "
           "again when it\nresumes, so a fault can add up to a block's length (a few tens of "
           "instructions at most\nin the kernel's code); the page faults of each run are in "
           "``benchmarks/whole.json``.\n",
           "Before each measured run the guest rests (a second of idle, which costs no "
           "instructions\nunder ``-icount sleep=off``, and in whole-kernel mode until no cache "
           "has been newly backed\nfor a second), so that the grace periods and deferred work "
           "of what ran before, and the\nbacking of caches the warm-up sighted, fall outside "
           "the run. *fio*, *fork* and *execve* run\nmeasured at two sizes, N and 2N units, and "
           "the figures are the larger run's minus the\nsmaller's (marked *marginal*): fio and "
           "perf start by mapping tens of MiB of libraries,\nwhich would otherwise be spread "
           "over the units. The kfree_rcu module times its own loop\nand destroy (the guest "
           "clock column); its cache, and either allocator's counters of it,\nare gone by the "
           "end of the run, hence the dashes in its counter columns.\n",
           "rslub's columns sum its counters over every cache it serves, kmalloc's size "
           "classes\nincluded: *slow paths*, allocations and frees that left the per-CPU fast "
           "path; *node\nlocks*, node-lock acquisitions, and *waits* those that found the lock "
           "held; *slab page\ncalls*, slabs allocated and given back. The kernel's figures in those "
           "columns are SLUB's own\ncounters (``alloc_fastpath``: from a per-CPU sheaf, "
           "``alloc_slowpath``: from a slab; the same\nfor frees; ``alloc_slab``, "
           "``free_slab``), summed over its caches, from the same runs in a boot of\na kernel "
           "built with ``SLUB_STATS`` (``VARIANT=stats``, the 2-node workloads only: the "
           "build's\nkernel rows have none), since counting adds instructions; SLUB counts no "
           "node-lock\nacquisitions. For both: *pages allocated*, the page allocator's "
           "``pgalloc_*`` over the run,\nfor the whole kernel (page cache, page tables, socket "
           "buffers' pages, slabs); *slab KiB\nafter*, ``Slab:`` of ``/proc/meminfo`` after the "
           "run, which counts rslub's slabs as the kernel's\n(their pages as slab memory of "
           "their node, and their metadata, objects of the kernel cache\n``rslub_meta``).\n",
           "The counters are read by a snapshot before the rest that precedes a run and by one "
           "after it,\nso they also count what the rest and the snapshots themselves allocate "
           "(a few hundred\nobjects, thousands in the ``SLUB_STATS`` boots, whose snapshots open "
           "every cache's\ncounter files). Each boot first measures a run of nothing the same "
           "way, and its counters\nare subtracted from every run's of the boot (in the "
           "*marginal* rows it cancels anyway),\ncache by cache for the caches listed and "
           "together for the others, none below zero (a\nslab the run of nothing made is not "
           "made again by the run after it).\nThe instruction counts have none of it: the "
           "marks are taken after the rest and before\nthe second snapshot.\n",
           clamp_summary(every),
           ]

    hook_file = os.path.join(rundir, "hook_cost.res")
    hook, hook_ops = [], []
    if os.path.exists(hook_file):
        with open(hook_file) as f:
            for line in f:
                if '"hook_cost_op"' in line:
                    hook_ops.append(json.loads(line))
                elif '"hook_cost"' in line:
                    hook.append(json.loads(line))
    # Each entry point's operation: its label and the hooked calls it makes (bulk: per
    # object, an alloc_bulk and a free_bulk of 16).
    HOOK_OPS = {
        "pair": ("kmem_cache_alloc + kmem_cache_free", 2),
        "node": ("kmem_cache_alloc_node + kmem_cache_free", 2),
        "lru": ("kmem_cache_alloc_lru + kmem_cache_free", 2),
        "bulk16": ("kmem_cache_alloc_bulk + kmem_cache_free_bulk of 16, per object", 2 / 16),
        "kfree": ("kmalloc(64) + kfree", 1),
        "kfree8k": ("kmalloc(8192) + kfree (most on a slab's tail pages)", 1),
        "ksize": ("ksize", 1),
        "krealloc": ("krealloc to the same size (in place)", 1),
        "kvfree": ("kvmalloc(64) + kvfree", 1),
    }
    if hook:
        r = hook[0]
        doc.append(heading("What a hooked call costs"))
        doc.append(
            "Before the whole-system figures, the hooks alone (``rslub_bench suite=5``, a boot "
            "of its own,\nwithout the plugin): in instructions per operation, on a kernel cache "
            f"of {r['size']} bytes that\nrslub does *not* back and on the kernel's kmalloc "
            "objects, without the hooks, with them\nregistered (another cache backed) through "
            "ftrace's ``IPMODIFY`` handler alone (``direct=0``:\nbefore the direct calls), with "
            "the direct calls of ``rust/back/direct.S`` (after), and\nwithout the hooks again. "
            "*Per hooked call*: the difference divided by the hooked calls\nthe operation makes "
            "(a pair two; a bulk pair of 16 two, one eighth of a call per object;\nkmalloc's "
            "entry points are hooked in whole-kernel mode only, so kmalloc+kfree makes one).\n"
            "Without the direct calls ``kvfree`` is not hooked itself: its ``kfree`` is.\n")
        body = []
        whole_ops = [o for o in hook_ops if o.get("whole")]
        hook_ops = [o for o in hook_ops if not o.get("whole")]
        if hook_ops:
            rows = [(HOOK_OPS.get(o["op"], (o["op"], 1)), o["off"], o["handler"], o["on"],
                     o["off_again"]) for o in hook_ops]
        else:
            rows = [((what, calls), *hook_cost(r, key))
                    for key, (what, calls) in HOOK_OPS.items() if hook_cost(r, key)]
        for (what, calls), off, hnd, on, again in rows:
            body.append([what, f"{off:.2f}", f"{hnd:.2f}", f"{on:.2f}", f"{again:.2f}",
                         f"{(hnd - off) / calls:.1f}", f"{(on - off) / calls:.1f}"])
        doc.append(table(["operation", "no hooks", "handler (before)", "direct calls (after)",
                          "no hooks again", "per hooked call, before", "per hooked call, after"],
                         body))
        cost = {what: (on - off) / calls for (what, calls), off, hnd, on, again in rows}
        over = [(what, c) for what, c in cost.items() if c > 12]
        head, tail = (HOOK_OPS[k][0] for k in ("kfree", "kfree8k"))
        if over:
            doc.append(
                "Over the goal of 12 instructions a hooked call: "
                + "; ".join(f"{what}, {c:.1f}" for what, c in over) + "."
                + (" An object on a slab's tail page (most of an order-3 slab's objects of 8 "
                   "KiB) costs\nthe owner's test one more load and its tests: the tail page's "
                   "word at offset 8 is its\n``compound_info``, so the trampoline reads the head "
                   "page's too (``rust/back/direct.S``,\n``RSLUB_OWN_SLAB``), "
                   f"{cost[tail] - cost[head]:.0f} instructions more than an object on a slab's "
                   "first page (the\nrow above it). The kernel's ``kfree()`` makes the same "
                   "load itself (``virt_to_slab()``,\n``compound_head()``), which the trampoline "
                   "cannot hand on to it: it jumps back into the\nfunction's start."
                   if tail in dict(over) and head in cost else "") + "\n")
        if whole_ops:
            doc.append(
                "kmalloc's entry points, last in the same boot: ``kmalloc(64)`` with its "
                "``kfree()``, through\nthe variable-size entry point (``__kmalloc_noprof``) "
                "and the constant-size one\n(``__kmalloc_cache_noprof``), without the hooks "
                "and then in whole-kernel mode (``back=all``,\ndirect calls). There rslub "
                "serves the ordinary requests (the difference is rslub's pair\nagainst the "
                "kernel's, hooks included), and the ``GFP_DMA`` ones stay the kernel's: two "
                "hooked\ncalls the kernel serves, a kmalloc and a kfree.\n")
            WHOLE_OPS = {
                "kmalloc": ("kmalloc(n) + kfree, served by rslub", None),
                "kmalloc_cache": ("kmalloc(64) + kfree, served by rslub", None),
                "kmalloc_dma": ("kmalloc(n, GFP_DMA) + kfree, the kernel's", 2),
                "kmalloc_cache_dma": ("kmalloc(64, GFP_DMA) + kfree, the kernel's", 2),
            }
            body = []
            for o in whole_ops:
                what, calls = WHOLE_OPS.get(o["op"], (o["op"], None))
                body.append([what, f"{o['off']:.2f}", f"{o['on']:.2f}",
                             f"{(o['on'] - o['off']) / calls:.1f}" if calls else "-"])
            doc.append(table(["operation", "no hooks", "whole-kernel mode", "per hooked call"],
                             body))

    doc.extend(api_table(micro))

    rank = {"kernel": 0, "hooks": 1, "rslub": 2}
    main_recs = sorted((r for r in recs if r["boot"] in ("n2-kernel", "n2-hooks", "n2-rslub")),
                       key=lambda r: rank[r["alloc"]])
    served = next((r["served"] for r in main_recs if r["alloc"] == "rslub" and r["served"]), None)
    if served:
        doc.append(f"In the rslub boot, rslub served {served[0]} caches and size classes at the "
                   f"end, and refused {served[1]}\n(each with its reason in the ``back`` file; "
                   "the console log has the list).\n")
    seeds = [r for r in recs if r["boot"] in KERNEL_SEEDS[1:]]
    if seeds:
        doc.append(heading("How much boots differ"))
        doc.append("The kernel's boot again with other random numbers (QEMU's ``-seed 2`` and "
                   "``-seed 3``)\nand another memory layout (the initramfs 1 and 2.5 MiB longer, "
                   "which moves where the\nkernel puts it and what comes after): the same "
                   "allocator, the same workloads. Each boot\nruns the same instructions every "
                   "time, but another boot lays memory out and schedules\ndifferently, as "
                   "rslub's boots do anyway. The *spread* is the range of the boots'\n"
                   "kernel-mode instructions per unit over the first's: a difference between "
                   "allocators\nwithin it says nothing (the headline calls it a tie). A layout "
                   "moved by 1-2.5 MiB moved\nthe kernel's 4-node build by 0.4-0.6%, the seed "
                   "alone by 0.07% (the cache folder's\n``notes/records/s9/pad.txt``). "
                   f"{1 + len({r['boot'] for r in seeds})} boots are still\nfew: more would "
                   "show a wider range, so a ratio just outside it is no strong result "
                   "either.\n")
        body = []
        for r1 in (r for r in main_recs if r["alloc"] == "kernel"):
            others = [find(seeds, b, r1["exp"], r1.get("defer")) for b in KERNEL_SEEDS[1:]]
            if not any(others):
                continue
            name = r1["exp"] + (f" (defer {r1['defer']})" if "defer" in r1 else "")
            sp = kernel_spread(recs, r1["exp"], r1.get("defer"))
            body.append([name, f"{per(r1, r1['kinsns']):.0f}"]
                        + [f"{per(r, r['kinsns']):.0f}" if r else "-" for r in others]
                        + [f"{100.0 * sp:.2f}%" if sp is not None else "-",
                           f"{max(0.0, per(r1, r1['pgfault'])):.1f}" if "pgfault" in r1 else "-"])
        doc.append(table(["workload", "kernel-mode instructions / unit, seed 1", "seed 2",
                          "seed 3", "spread", "page faults / unit, seed 1"], body))
    doc.append(heading("Side by side, 2 nodes"))
    hook_share = []
    for exp in ("hackbench", "fio", "pingpong", "fork", "execve", "kfree_rcu"):
        unit, what = WORK[exp]
        groups = [("", [r for r in main_recs if r["exp"] == exp])]
        if not groups[0][1]:
            continue
        doc.append(heading(f"{exp}: instructions per {unit}", "-"))
        doc.append(what(groups[0][1][0]) + ".\n")
        if exp == "pingpong":
            groups = [(f"defer {d}: ", [r for r in main_recs if r["exp"] == exp and r["defer"] == d])
                      for d in ("on", "off")]
        if exp == "fio":
            groups[0][1].extend(r for r in recs if r["boot"] == "n2-rslub-mp5")
        body = []
        for prefix, g in groups:
            base = next((r for r in g if r["alloc"] == "kernel" and series(r) == "7.3"), None)
            for r in g:
                line = row(r, base)
                line[0] = prefix + line[0]
                body.append(line)
            hk = next((r for r in g if r["alloc"] == "hooks"), None)
            rw = next((r for r in g if r["alloc"] == "rslub" and not r["params"]), None)
            if base and hk and rw:
                hook_share.append((prefix + exp, hk["insns"] / base["insns"] - 1,
                                   rw["insns"] / base["insns"] - 1))
        doc.append(table(HEAD, body))
        if any(r.get("marginal") for _, g in groups for r in g):
            doc.append(f"*marginal*: the run of 2N {unit}s minus the run of N.\n")
        ks = [(prefix, slub_of(r)) for prefix, g in groups for r in g
              if slub_of(r) and exp != "kfree_rcu"]
        if ks:
            doc.append("SLUB's own counters in the kernel's run, per 1000 units: objects "
                       "(``sheaf_refill``,\n``sheaf_flush``: objects moved into a per-CPU sheaf "
                       "from the slabs, and out of one back to\nthem) and whole sheaves "
                       "(``barn_get``, ``barn_put``: full or empty sheaves taken from or\ngiven "
                       "to the node's barn), as mm/slub.c counts them:\n")
            unit_of = next(r for _, g in groups for r in g if r["alloc"] == "kernel")
            names = ["alloc_fastpath", "alloc_slowpath", "free_fastpath", "free_slowpath",
                     "sheaf_refill", "sheaf_flush", "barn_get", "barn_get_fail", "barn_put",
                     "barn_put_fail", "free_rcu_sheaf", "free_rcu_sheaf_fail", "alloc_slab",
                     "free_slab"]
            doc.append(table(["run"] + names,
                             [[(p or "kernel").rstrip(": ")] +
                              [f"{per(unit_of, k.get(n, 0), 1000):.1f}" for n in names]
                              for p, k in ks]))
        top = next((r for g in groups for r in g[1] if r["alloc"] == "rslub" and not r["params"]), None)
        if top and top.get("caches") and exp != "kfree_rcu":
            doc.append(f"rslub's caches that served at least 2% of the run's allocations "
                       f"({label(top)}):\n")
            doc.append(caches_table(top))
    if hook_share:
        doc.append(heading("The hooks' share", "-"))
        doc.append("Instructions of *kernel + rslub's hooks* over the kernel's, minus one: what "
                   "the hooks cost\na workload while rslub backs nothing it uses; beside it the "
                   "whole kernel on rslub, which pays\nthose hooks, kmalloc's (through the "
                   "handler) and rslub's own paths.\n")
        doc.append(table(["workload", "hooks alone", "whole kernel on rslub"],
                         [[w, f"{100.0 * h:+.2f}%", f"{100.0 * x:+.2f}%"]
                          for w, h, x in hook_share]))

    doc.extend(profile_section(recs))

    if any(r["boot"] == "n2-classic" for r in recs):
        doc.append(heading("Classic SLUB 6.12"))
        doc.append("The same boots on classic SLUB (Linux 6.12) and rslub under each profile, "
                   "side by side,\nwith each allocator's counters: :doc:`benchmarks_fidelity`.\n")

    sweep = sorted((r for r in recs if r["boot"].startswith("sweep-o") and series(r) == "7.3"),
                   key=lambda r: [int(x) for x in re.findall(r"\d+", r["params"])])
    # Classic SLUB 6.12 with the same limits (slub_max_order, slub_min_objects): its boot
    # is the rslub boot's name with -classic.
    classic = {r["boot"][:-len("-classic")]: r for r in recs
               if r["boot"].startswith("sweep-") and series(r) == "6.12" and r["exp"] == "hackbench"}
    if sweep:
        doc.append(heading("Seed 001: hackbench, max_order x min_objects, kmalloc served"))
        own_base = any(r["boot"] == "sweep-kernel" for r in recs)
        doc.append("hackbench as above, in a boot of its own for each pair of rslub's "
                   "``max_order`` and\n``min_objects`` (whole-kernel mode takes its "
                   "parameters at load); the kernel's row is "
                   + ("a boot of\nthe kernel's allocator like them (hackbench alone in "
                      "the initramfs)." if own_base else "the\nkernel boot's.")
                   + " The seed "
                   "thread's \"kmalloc-512 is the key\" was 2008's skb heads; on 7.3\n"
                   "hackbench's messages go to ``skbuff_small_head`` and ``skbuff_head_cache``: "
                   "the last column\nnames the cache that served most allocations, with its "
                   "order and objects a slab.\n")
        if classic:
            doc.append("Classic SLUB 6.12 ran each pair too, as ``slub_max_order`` and "
                       "``slub_min_objects`` on its\ncommand line: its instructions per "
                       "message, and rslub's over them (the kernels differ\nelsewhere too: "
                       "the 2-node rows of :doc:`benchmarks_fidelity` give the scale).\n")
        # The kernel's row from a boot like the sweep's (hackbench alone in the initramfs,
        # scripts/bench/vm.sh WHOLE_FILES), where the run has one; else the kernel boot's.
        base = find(recs, "sweep-kernel", "hackbench") or next(
            r for r in main_recs if r["exp"] == "hackbench" and r["alloc"] == "kernel")
        body = [row(base, base) + ["-"] + (["-", "-"] if classic else [])]
        for r in sweep:
            c = r.get("caches", {})
            busiest = max(c, key=lambda n: c[n]["alloc_fastpath"] + c[n]["alloc_slowpath"],
                          default=None)
            line = row(r, base) + [f"{busiest} {c[busiest]['order']}/"
                                   f"{c[busiest]['objects_per_slab']}" if busiest else "-"]
            if classic:
                k6 = classic.get(r["boot"])
                line += [f"{per(k6, k6['insns']):.0f}", f"{r['insns'] / r['units'] / (k6['insns'] / k6['units']):.3f}"] if k6 else ["-", "-"]
            body.append(line)
        doc.append(table(HEAD + ["busiest cache: order/objects"]
                         + (["classic SLUB 6.12: instructions / unit", "rslub / 6.12"] if classic else []),
                         body))

    build = [r for r in recs if r["exp"] == "build"
             and not r["boot"].endswith(("-seed2", "-seed3"))]
    if build:
        doc.append(heading("Seed 003: a build on 4 nodes and on 1", width=38))
        doc.append(WORK["build"][1](build[0]) + ". The seed thread counted how many nodes "
                   "``get_any_partial()`` tried\nper success; rslub's counters here: "
                   "*remote walks* (refills that looked at other nodes),\n*nodes tried* (the "
                   "other nodes those walks looked at), *remote refills* (walks that found\na "
                   "slab), and *walks skipped* (one node: no walk at all).\n")
        body = []
        for n in sorted({r["nodes"] for r in build}, reverse=True):
            g = [r for r in build if r["nodes"] == n]
            base = next((r for r in g if r["alloc"] == "kernel" and series(r) == "7.3"), None)
            for r in g:
                line = row(r, base)
                line[0] = f"{n} node(s): {line[0]}"
                if r["alloc"] == "rslub":
                    line += [str(rs(r, "remote_walks")), str(rs(r, "remote_nodes_tried")),
                             str(rs(r, "refill_remote_partial")), str(rs(r, "remote_walk_skipped"))]
                else:
                    line += ["-"] * 4
                body.append(line)
        doc.append(table(HEAD + ["remote walks", "nodes tried", "remote refills",
                                 "walks skipped"], body))
        for n in sorted({r["nodes"] for r in build}, reverse=True):
            bs = [find(recs, b, "build") for b in build_seeds(n)]
            sp = kernel_spread(recs, "build", None, build_seeds(n))
            nodes = f"{n}-node"
            if all(bs) and sp is not None:
                doc.append(f"The kernel's {nodes} build again with QEMU's ``-seed 2`` and "
                           "``-seed 3``, the initramfs 1 and\n2.5 MiB longer (as the 2-node "
                           "boots above): "
                           + ", ".join(f"{per(r, r['kinsns']):.0f}" for r in bs)
                           + " kernel-mode instructions a file: the\nbuild's boot-to-boot "
                           f"spread, {100.0 * sp:.2f}%, within which a difference between "
                           f"allocators on {n} node{'s' if n > 1 else ''}\nis a tie.\n")
            else:
                doc.append(f"The {nodes} build has no boot-to-boot spread measured.\n")

    with open(os.path.join(docdir, "benchmarks_whole.rst"), "w") as f:
        f.write("\n".join(doc))


if __name__ == "__main__":
    main()
