# SPDX-License-Identifier: GPL-2.0
"""Documentation/benchmarks_whole.rst and Documentation/benchmarks/whole.json, from the
boots of scripts/bench_whole.sh: RESULT lines (OUT.jsonl), the counting plugin's marks
(OUT.jsonl.count) and the console (OUT.jsonl.log).

    bench_whole_report.py RUNDIR DOCDIR
"""

import glob
import json
import os
import re
import sys

from bench_common import table

# Each workload: its unit of work, and what a run does (from one of its records).
WORK = {
    "hackbench": ("message", lambda r: f"``hackbench -g {r['groups']} -l {r['loops']}``: unix "
                  f"sockets, 100-byte messages, {r['units']} messages a run (seed 001)"),
    "fio": ("4 KiB block", lambda r: "fio's ``net`` engine over TCP loopback, a receiver and "
            f"a sender of 4 KiB blocks, {r['units'] // 256} MiB and {r['units'] // 128} MiB (the "
            "shape of fio's ``examples/netio``, seed 000)"),
    "pingpong": ("round trip", lambda r: "TCP request/response of 64 bytes between CPU "
                 f"{r['client_cpu']} (node 0) and CPU {r['server_cpu']} (the last node), "
                 f"{r['units']} round trips (seed 002), with the kernel's deferred skb frees "
                 "(``defer on``, the reader hands each skb back to the CPU that allocated it) "
                 "and without (``skb_defer_max=0``)"),
    "fork": ("fork", lambda r: f"``perf bench syscall fork -l {r['units']}`` and ``-l "
             f"{2 * r['units']}`` (Debian's perf 6.12): fork, the child exits, wait"),
    "execve": ("execve", lambda r: f"``perf bench syscall execve -l {r['units']}`` and ``-l "
               f"{2 * r['units']}``: fork, execve of ``/bin/true`` (busybox), wait"),
    "kfree_rcu": ("object", lambda r: f"``bench/kfree_rcu.c``: {r['units']} objects of 64 "
                  "bytes from a cache of its own, each freed by ``kfree_rcu()`` as soon as "
                  "allocated, then the cache destroyed, which waits for them all"),
    "build": ("file", lambda r: f"``make -j{r['jobs']}`` of {r['units']} C files of Linux "
              "7.3's host tools with the guest's ``gcc -O2`` (``scripts/workloads/build.mk``; "
              "seed 003)"),
}
ALLOC = {"kernel": "kernel (SLUB with sheaves)", "hooks": "kernel + rslub's hooks",
         "rslub": "rslub, whole kernel"}


def load(rundir):
    recs = []
    for path in sorted(glob.glob(os.path.join(rundir, "*.jsonl"))):
        boot = os.path.basename(path)[:-len(".jsonl")]
        marks = {}
        with open(path + ".count") as f:
            for line in f:
                m = re.match(r"mark (\d+) insns (\d+) kernel (\d+)", line)
                if m:
                    marks[int(m.group(1))] = (int(m.group(2)), int(m.group(3)))
        served = None
        with open(path + ".log") as f:
            for line in f:
                m = re.search(r"rslub_bench: SERVED (\d+) (\d+)", line)
                if m:
                    served = (int(m.group(1)), int(m.group(2)))
        with open(path) as f:
            for line in f:
                if not line.strip():
                    continue
                r = json.loads(line)
                r["boot"] = boot
                a, b = marks.get(r["mark0"]), marks.get(r["mark1"])
                if a is None or b is None:
                    sys.exit(f"{path}: marks {r['mark0']}/{r['mark1']} not in the plugin's log")
                r["insns"] = b[0] - a[0]
                r["kinsns"] = b[1] - a[1]
                r["served"] = served
                recs.append(r)
    return recs


def sub(b, a):
    """What run @b did beyond run @a, of the same workload at half its size: every number
    of @b minus @a's, counters included (the program's start-up and exit drop out)."""
    out = dict(b)
    for key, v in b.items():
        if key in ("mark0", "mark1", "cpus", "nodes", "scale"):
            continue
        if isinstance(v, (int, float)) and not isinstance(v, bool) and isinstance(a.get(key), (int, float)):
            out[key] = v - a[key]
        elif isinstance(v, dict) and isinstance(a.get(key), dict):
            out[key] = sub(v, a[key])
    if "slab_kib" in b:
        # Memory held is a level, not a count: the larger run's.
        out["slab_kib"] = b["slab_kib"]
        out["free_kib"] = b["free_kib"]
        out["rslub_page_bytes"] = b.get("rslub_page_bytes", 0)
        out["rslub_meta_bytes"] = b.get("rslub_meta_bytes", 0)
    return out


def marginal(recs):
    """Workloads run at two sizes (scale 1 and 2, bench_whole_guest.sh's thrice()) become
    one record each: the larger run minus the smaller."""
    out = []
    for r in recs:
        if r.get("scale") == 2:
            a = next(x for x in recs if x["boot"] == r["boot"] and x["exp"] == r["exp"]
                     and x.get("scale") == 1)
            m = sub(r, a)
            m["marginal"] = True
            out.append(m)
        elif r.get("scale") != 1:
            out.append(r)
    return out


def rs(r, *names):
    return sum(r.get("rslub", {}).get(n, 0) for n in names)


def per(r, v, scale=1):
    return scale * v / r["units"]


def held_kib(r):
    # rslub's slab metadata comes from a kernel cache (rslub_meta): already in Slab:.
    return r["slab_kib"] + r.get("rslub_page_bytes", 0) // 1024


def label(r):
    s = ALLOC[r["alloc"]]
    if r["params"]:
        s += " " + r["params"]
    return s


STATS = {}


def slub_of(r):
    """SLUB's counters for a kernel run: those of the same run in the boot of the kernel
    with SLUB_STATS (boots stats-*)."""
    if r["alloc"] != "kernel":
        return None
    s = STATS.get((r["exp"], r.get("defer"), r["nodes"]))
    return s.get("slub") if s else None


def row(r, base):
    ops = rs(r, "alloc_fastpath", "alloc_slowpath", "free_fastpath", "free_slowpath")
    out = [label(r), f"{per(r, r['insns']):.0f}",
           f"{r['insns'] / base['insns']:.3f}" if base else "-",
           f"{per(r, r['kinsns']):.0f}", f"{per(r, r['ns']):.0f}"]
    if r["alloc"] == "rslub" and r["exp"] == "kfree_rcu":
        # The module's cache, and rslub's counters of it, are gone by the run's end.
        out += ["-", "-", "-", "-"]
    elif r["alloc"] == "rslub":
        out += [f"{100.0 * rs(r, 'alloc_slowpath', 'free_slowpath') / ops:.1f}" if ops else "-",
                f"{per(r, rs(r, 'node_lock'), 1000):.1f}",
                f"{per(r, rs(r, 'node_lock_contended'), 1000):.2f}",
                f"{per(r, rs(r, 'alloc_slab') + rs(r, 'free_slab'), 1000):.1f}"]
    elif slub_of(r):
        k = slub_of(r)
        kops = sum(k.get(n, 0) for n in ("alloc_fastpath", "alloc_slowpath", "free_fastpath",
                                          "free_slowpath"))
        out += [f"{100.0 * (k.get('alloc_slowpath', 0) + k.get('free_slowpath', 0)) / kops:.1f}"
                if kops else "-", "-", "-",
                f"{per(r, k.get('alloc_slab', 0) + k.get('free_slab', 0), 1000):.1f}"]
    else:
        out += ["-", "-", "-", "-"]
    out += [f"{per(r, r['pgalloc'], 1000):.1f}", str(held_kib(r))]
    return out


HEAD = ["allocator", "instructions / unit", "vs kernel", "kernel-mode instructions / unit",
        "guest clock ns / unit", "slow paths %", "node locks / 1000 units",
        "waits / 1000 units", "slab page calls / 1000 units", "pages allocated / 1000 units",
        "slab KiB after"]


def caches_table(r):
    body = []
    for name, c in sorted(r.get("caches", {}).items(),
                          key=lambda kv: -(kv[1]["alloc_fastpath"] + kv[1]["alloc_slowpath"])):
        a = c["alloc_fastpath"] + c["alloc_slowpath"]
        f = c["free_fastpath"] + c["free_slowpath"]
        body.append([name, c.get("size", "-"), c.get("order", "-"), c.get("objects_per_slab", "-"),
                     f"{a / r['units']:.2f}", f"{100.0 * c['alloc_slowpath'] / a:.1f}" if a else "-",
                     f"{100.0 * c['free_slowpath'] / f:.1f}" if f else "-",
                     f"{1000.0 * c['node_lock'] / r['units']:.1f}",
                     f"{1000.0 * (c['alloc_slab'] + c['free_slab']) / r['units']:.1f}"])
    return table(["cache", "size", "order", "objects / slab", "allocations / unit",
                  "alloc slow %", "free slow %", "node locks / 1000 units",
                  "slab page calls / 1000 units"], body)


def main():
    rundir, docdir = sys.argv[1], sys.argv[2]
    recs = marginal(load(rundir))
    for r in recs:
        if r["boot"].startswith("stats-"):
            STATS[(r["exp"], r.get("defer"), r["nodes"])] = r
    recs = [r for r in recs if not r["boot"].startswith("stats-")]
    with open(os.path.join(rundir, "meta")) as f:
        commit, date, kbuild, qemu, cpus = [line.rstrip("\n") for line in f][:5]
    os.makedirs(os.path.join(docdir, "benchmarks"), exist_ok=True)
    with open(os.path.join(docdir, "benchmarks", "whole.json"), "w") as f:
        json.dump(recs, f, indent=0, sort_keys=True)
        f.write("\n")

    doc = [".. SPDX-License-Identifier: GPL-2.0\n",
           "=============================", "Benchmarks: the whole kernel",
           "=============================\n",
           "The seed threads compared allocators for the whole kernel; this page does the same "
           "for\nrslub. It is written by ``make bench`` (or ``make bench PART=whole`` alone, "
           "``scripts/bench_whole.sh``); do not edit the figures.\n",
           f"Made on {date} from commit {commit}, kernel build {kbuild}, {qemu}; "
           f"{cpus} vCPUs.\n",
           "Method\n======\n",
           "Each boot has one allocator for all of its life, since whole-kernel mode cannot be "
           "unloaded:\nthe boots differ only in their first argument "
           "(``scripts/bench_whole_guest.sh``, the guest's\n``/init``). *kernel*: nothing "
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
           "), with 512 MiB\na node and the workloads' programs in the initramfs with their "
           "libraries: Debian's\n``hackbench``, ``fio``, ``perf`` 6.12, ``gcc`` 12 and "
           "``make``, ``scripts/workloads/pingpong.c``\nand the module ``bench/kfree_rcu.c``. "
           "Each workload runs once to warm up, then once measured.\n",
           "*Instructions* are counted by a QEMU plugin (``scripts/qemu/count.c``): every "
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
           "clock column); its cache and rslub's counters of it are gone by\nthe end of the "
           "run, hence the dashes in the rslub row.\n",
           "rslub's columns sum its counters over every cache it serves, kmalloc's size "
           "classes\nincluded: *slow paths*, allocations and frees that left the per-CPU fast "
           "path; *node\nlocks*, node-lock acquisitions, and *waits* those that found the lock "
           "held; *slab page\ncalls*, slabs allocated and given back. The kernel's figures in those "
           "columns are SLUB's own\ncounters (``alloc_fastpath``: from a per-CPU sheaf, "
           "``alloc_slowpath``: from a slab; the same\nfor frees; ``alloc_slab``, "
           "``free_slab``), summed over its caches, from the same runs in boots of\na kernel "
           "built with ``SLUB_STATS`` (``VARIANT=stats``), since counting adds instructions; "
           "SLUB\ncounts no node-lock acquisitions. For both: *pages allocated*,\nthe page allocator's ``pgalloc_*`` over the run, for "
           "the whole kernel (page cache, page\ntables, socket buffers' pages, slabs); *slab "
           "KiB after*, ``Slab:`` of ``/proc/meminfo``\nafter the run, plus the pages and "
           "metadata of rslub's slabs (rslub's slabs are not\naccounted as slab memory: "
           "Documentation/design.rst).\n",
           ]

    hook_file = os.path.join(rundir, "hook_cost.res")
    hook = []
    if os.path.exists(hook_file):
        with open(hook_file) as f:
            hook = [json.loads(line) for line in f if '"hook_cost"' in line]
    if hook:
        r = hook[0]
        doc.append("What a hooked call costs\n========================\n")
        doc.append(
            "Before the whole-system figures, the hooks alone (``rslub_bench suite=5``, a boot "
            "of its own,\nwithout the plugin): in instructions per operation, a kernel cache "
            f"of {r['size']} bytes that\nrslub does *not* back (alloc+free pairs, bulk 16) and a "
            "kernel ``kmalloc(64)`` with its\n``kfree()``, without the hooks, with them "
            "registered (another cache backed) through\nftrace's ``IPMODIFY`` handler alone "
            "(``direct=0``: before the direct calls), with the direct\ncalls of "
            "``rust/back/direct.S`` (after), and without the hooks again. *Per hooked call*:\n"
            "a pair makes two hooked calls (alloc and free), kmalloc+kfree one (kfree; kmalloc's "
            "entry\npoints are hooked in whole-kernel mode only), bulk 16 one per object "
            "(the bulk functions\nstay on the handler).\n")
        body = []
        for what, key, calls in (("alloc+free pair", "pair", 2), ("bulk 16, per object", "bulk16", 1),
                                 ("kmalloc+kfree pair", "kfree", 1)):
            if f"{key}_off" not in r:
                continue
            off, on = r[f"{key}_off"], r[f"{key}_on"]
            hnd = r.get(f"{key}_handler", on)
            body.append([what, f"{off:.2f}", f"{hnd:.2f}", f"{on:.2f}", f"{r[key + '_off_again']:.2f}",
                         f"{(hnd - off) / calls:.1f}", f"{(on - off) / calls:.1f}"])
        doc.append(table(["operation", "no hooks", "handler (before)", "direct calls (after)",
                          "no hooks again", "per hooked call, before", "per hooked call, after"],
                         body))

    main_recs = [r for r in recs if r["boot"] in ("n2-kernel", "n2-hooks", "n2-rslub")]
    served = next((r["served"] for r in main_recs if r["alloc"] == "rslub" and r["served"]), None)
    if served:
        doc.append(f"In the rslub boot, rslub served {served[0]} caches and size classes at the "
                   f"end, and refused {served[1]}\n(each with its reason in the ``back`` file; "
                   "the console log has the list).\n")
    seed2 = [r for r in recs if r["boot"] == "n2-kernel-seed2"]
    if seed2:
        doc.append("How much two boots differ\n=========================\n")
        doc.append("The kernel's boot again with other random numbers (QEMU's ``-seed 2``): "
                   "the same\nallocator, the same workloads. Each boot runs the same "
                   "instructions every time, but\nanother boot lays memory out and schedules "
                   "differently: a difference between\nallocators of the order shown here says "
                   "nothing.\n")
        body = []
        for r2 in seed2:
            r1 = next((r for r in main_recs if r["alloc"] == "kernel" and r["exp"] == r2["exp"]
                       and r.get("defer") == r2.get("defer")), None)
            if not r1:
                continue
            name = r2["exp"] + (f" (defer {r2['defer']})" if "defer" in r2 else "")
            body.append([name, f"{per(r1, r1['insns']):.0f}", f"{per(r2, r2['insns']):.0f}",
                         f"{100.0 * (r2['insns'] / r1['insns'] - 1):+.2f}%",
                         f"{per(r1, r1['pgfault']):.1f}" if "pgfault" in r1 else "-"])
        doc.append(table(["workload", "instructions / unit, seed 1", "seed 2", "difference",
                          "page faults / unit"], body))
    doc.append("Side by side, 2 nodes\n=====================\n")
    hook_share = []
    for exp in ("hackbench", "fio", "pingpong", "fork", "execve", "kfree_rcu"):
        unit, what = WORK[exp]
        title = f"{exp}: instructions per {unit}"
        groups = [("", [r for r in main_recs if r["exp"] == exp])]
        if not groups[0][1]:
            continue
        doc.append(f"{title}\n{'-' * len(title)}\n")
        doc.append(what(groups[0][1][0]) + ".\n")
        if exp == "pingpong":
            groups = [(f"defer {d}: ", [r for r in main_recs if r["exp"] == exp and r["defer"] == d])
                      for d in ("on", "off")]
        if exp == "fio":
            groups[0][1].extend(r for r in recs if r["boot"] == "n2-rslub-mp5")
        body = []
        for prefix, g in groups:
            base = next((r for r in g if r["alloc"] == "kernel"), None)
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
        ks = [(prefix, slub_of(r)) for prefix, g in groups for r in g if slub_of(r)]
        if ks:
            doc.append("SLUB's own counters in the kernel's run, per 1000 units (sheaves: a "
                       "*refill* fills a\nper-CPU sheaf from the barn or the slabs, a *flush* "
                       "empties one; the barn holds a\nnode's full and empty sheaves; "
                       "*rcu sheaf* frees are ``kfree_rcu()``'s):\n")
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
        doc.append("The hooks' share\n----------------\n")
        doc.append("Instructions of *kernel + rslub's hooks* over the kernel's, minus one: what "
                   "the hooks cost\na workload while rslub backs nothing it uses; beside it the "
                   "whole kernel on rslub, which pays\nthose hooks, kmalloc's (through the "
                   "handler) and rslub's own paths.\n")
        doc.append(table(["workload", "hooks alone", "whole kernel on rslub"],
                         [[w, f"{100.0 * h:+.2f}%", f"{100.0 * x:+.2f}%"]
                          for w, h, x in hook_share]))

    sweep = sorted((r for r in recs if r["boot"].startswith("sweep-")),
                   key=lambda r: [int(x) for x in re.findall(r"\d+", r["params"])])
    if sweep:
        doc.append("Seed 001: hackbench, max_order x min_objects, kmalloc served\n"
                   "============================================================\n")
        doc.append("hackbench as above, in a boot of its own for each pair of rslub's "
                   "``max_order`` and\n``min_objects`` (whole-kernel mode takes its "
                   "parameters at load); the kernel's row is the\nkernel boot's. "
                   "*kmalloc-512*: that class's order and objects a slab (\"kmalloc-512 is "
                   "the\nkey\", the seed thread said).\n")
        base = next(r for r in main_recs if r["exp"] == "hackbench" and r["alloc"] == "kernel")
        body = [row(base, base) + ["-"]]
        for r in sweep:
            k = r.get("caches", {}).get("kmalloc-512")
            body.append(row(r, base) + [f"{k['order']}/{k['objects_per_slab']}" if k else "-"])
        doc.append(table(HEAD + ["kmalloc-512 order/objects"], body))

    build = [r for r in recs if r["exp"] == "build"]
    if build:
        doc.append("Seed 003: a build on 4 nodes and on 1\n"
                   "======================================\n")
        doc.append(WORK["build"][1](build[0]) + ". The seed thread counted how many nodes "
                   "``get_any_partial()`` tried\nper success; rslub's counters here: "
                   "*remote walks* (refills that looked at other nodes),\n*nodes tried* (the "
                   "other nodes those walks looked at), *remote refills* (walks that found\na "
                   "slab), and *walks skipped* (one node: no walk at all).\n")
        body = []
        for n in sorted({r["nodes"] for r in build}, reverse=True):
            g = [r for r in build if r["nodes"] == n]
            base = next((r for r in g if r["alloc"] == "kernel"), None)
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

    with open(os.path.join(docdir, "benchmarks_whole.rst"), "w") as f:
        f.write("\n".join(doc))


if __name__ == "__main__":
    main()
