# SPDX-License-Identifier: GPL-2.0
"""Documentation/results.rst: the headline of the benchmarks, which allocator serves the
whole kernel in fewer instructions, where and by how much, from the boots of
scripts/bench/whole.sh (the full run's, or the six of make bench PART=headline). It reads
the records as whole_report.py does and draws its plot, both with common.py; the long
tables stay on the pages it links.

    headline.py RUNDIR DOCDIR [--command CMD] [--seconds N]
"""

import argparse
import os

from common import (COLUMNS, WORK, allocator_code, build_runs, build_seeds, denoise,
                    fidelity_groups, heading, kernel_spread, load_run, load_slab_functions,
                    marginal, micro_result, page_title, per, plot, read_meta, report_commit,
                    table)

# The issue's goals (kernel-mode instructions per unit, as a fraction of sheaves').
GOAL_CLASSIC, GOAL_TUNED = 1.0, 0.97


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


def micro_rows(micro):
    cols = [micro_result(micro, boot, who) for boot, who in
            (("n2-kernel", "kernel"), ("n2-classic", "kernel"), ("n2-kernel", "rslub"),
             ("n2-kernel", "rslub_back"), ("n2-rslub", "rslub_whole"))]
    if not cols[0]:
        return None
    body = []
    for what, key in (("alloc+free pair", "pair"), ("bulk 16, per object", "bulk16")):
        line = [what] + [f"{c[key]:.2f}" if c else "-" for c in cols]
        best = min(c[key] for c in cols[3:] if c) if any(cols[3:]) else None
        line.append(f"{best / cols[0][key]:.2f}" if best else "-")
        body.append(line)
    return table(["operation", "sheaves 7.3", "classic SLUB 6.12", "rslub, C API",
                  "rslub via kmem_cache_*, back=NAME", "rslub via kmem_cache_*, whole kernel",
                  "rslub via kmem_cache_* / sheaves"], body)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("rundir")
    ap.add_argument("docdir")
    ap.add_argument("--command", default="make bench")
    ap.add_argument("--seconds", type=int)
    a = ap.parse_args()
    every = denoise(marginal(load_run(a.rundir)))
    load_slab_functions(a.rundir)
    micro = [r for r in every if r["exp"] == "micro"]
    recs = [r for r in every if r.get("table", True) and r["exp"] != "micro"
            and not r["boot"].startswith("stats-")]
    commit, date, kbuild, qemu, cpus = read_meta(a.rundir)[:5]
    rows = workload_rows(recs)
    took = f" in {a.seconds // 60} min {a.seconds % 60} s" if a.seconds else ""
    doc = [page_title("Results at a glance", 21),
           f"Written by ``{a.command}``{took} (``scripts/bench/headline.py``); do not edit the "
           "figures.\n"
           f"Made on {date} from commit {commit}, kernel build {kbuild}, {qemu}; {cpus} vCPUs "
           f"on 2 nodes;\nfigures computed by the report at commit {report_commit()}.\n",
           "Which allocator runs the whole kernel in fewer instructions: the kernel's own SLUB "
           "with\nsheaves (7.3), classic SLUB (Linux 6.12), and rslub serving the whole 7.3 "
           "kernel\n(``back=all``) under its two profiles. Kernel-mode instructions per unit of "
           "work, counted\nby the QEMU plugin in one boot per allocator "
           "(:doc:`benchmarks_whole`, \"Method\"); 6.12 is a\nwhole other kernel, so its column "
           "compares systems, and :doc:`benchmarks_fidelity` compares\nits allocator with "
           "rslub's by their counters. A ratio within the spread (the range of the\nkernel's own "
           "boots with QEMU's ``-seed`` 1, 2 and 3, the last two with another memory\nlayout; "
           "for the builds, the same on each topology) is a tie; a ratio with no spread\nmeasured "
           "says so.\n"]
    if rows:
        doc.append(heading("The whole kernel"))
        doc.append(headline_table(rows))
        figdir = os.path.join(a.docdir, "benchmarks")
        os.makedirs(figdir, exist_ok=True)
        doc.append(plot(figdir, "results", "Kernel-mode instructions per unit, % of sheaves 7.3",
                        "% of sheaves 7.3", [label.split(",")[0] for label, _, _, _ in rows],
                        [name for _, name in COLUMNS[1:]],
                        [[100 * v[i] / v[0] if v[i] else None for _, v, _, _ in rows]
                         for i in range(1, 4)]))
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
    mt = micro_rows(micro)
    if mt:
        doc.append(heading("Fast paths"))
        doc.append("``bench/kmem_micro.c`` (a 64-byte cache of its own; instructions per "
                   "operation, the fastest\nof 50 chunks of 1000): the kernel's allocator on "
                   "7.3 and 6.12, rslub's C API, and the\nkernel's API on a cache that rslub "
                   "serves (its hooks included), by name and in whole-kernel\nmode. The "
                   "last column is the better of the two over sheaves' (goals: 0.6 for the "
                   "pair, 1.0\nfor bulk).\n")
        doc.append(mt)
    with open(os.path.join(a.docdir, "results.rst"), "w") as f:
        f.write("\n".join(doc))


if __name__ == "__main__":
    main()
