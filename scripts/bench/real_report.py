# SPDX-License-Identifier: GPL-2.0
"""The "Real workloads" section of Documentation/benchmarks.rst, from the RESULT lines of
scripts/bench/real_guest.sh (one JSON-lines file per boot: real_cpus4.jsonl,
real_cpus2.jsonl, real_cpus1.jsonl for the icount boots, realwall*.jsonl for the wall-clock
ones), loaded by scripts/bench/side_report.py, which imports this.
"""

from common import ALLOC, counter, heading, pct, range_cells, table

SKB = ["skbuff_head_cache", "skbuff_fclone_cache", "skbuff_small_head"]


def caches(r):
    return [r[c] for c in SKB if c in r]


def total(r, *stats):
    """rslub's counters @stats summed over the skb caches (0 where a cache lacks one)."""
    return sum(counter(c, s, 0) for c in caches(r) for s in stats)


def label(r):
    if r["variant"] != "rslub":
        return ALLOC[r["variant"]]
    parts = [f"{k}={r[k]}" for k in ("max_order", "min_objects", "min_partial") if k in r]
    return "rslub " + (" ".join(parts) if parts else "(defaults)")


def seed001(recs, doc):
    boots = sorted({r["boot"] for r in recs if r["exp"] == "seed001"},
                   key=lambda b: -max(r["cpus"] for r in recs if r["boot"] == b))
    for boot in boots:
        rs = [r for r in recs if r["boot"] == boot and r["exp"] == "seed001"]
        k = [r["ns"] / r["messages"] for r in rs if r["variant"] == "kernel"]
        base = sum(k) / len(k)
        r0 = rs[0]
        doc.append(f"**{r0['cpus']} vCPU(s), {r0['nodes']} node(s)**, {r0['messages']} messages a run.\n")
        body = []
        for r in rs:
            per = r["ns"] / r["messages"]
            row = [label(r), f"{per:.0f}", f"{per / base:.3f}"]
            if r["variant"] == "rslub":
                ops = total(r, "alloc_fastpath", "alloc_slowpath", "free_fastpath", "free_slowpath")
                h = r.get("skbuff_head_cache", {})
                row += [pct(total(r, "alloc_slowpath", "free_slowpath"), ops),
                        f"{1000.0 * total(r, 'node_lock') / r['messages']:.0f}",
                        f"{1000.0 * total(r, 'node_lock_contended') / r['messages']:.1f}",
                        f"{h.get('order', '-')}/{h.get('objects_per_slab', '-')}"]
            else:
                row += ["-", "-", "-", "-"]
            body.append(row)
        doc.append(table(["allocator", "guest ns / message", "vs kernel",
                          "slow paths %", "node locks / 1000 msgs", "waits / 1000 msgs",
                          "skbuff_head_cache order/objects"], body))
        if len(k) > 1:
            drift = 100.0 * (max(k) - min(k)) / min(k)
            doc.append(f"The kernel's runs before and after the sweep differ by {drift:.1f}%: "
                       "hackbench's processes are\nscheduled differently from run to run, so "
                       "differences of that size between rows are the\nworkload's, not the "
                       "allocator's.\n")


def seed002(recs, doc):
    rs = [r for r in recs if r["exp"] == "seed002"]
    if not rs:
        return
    r0 = rs[0]
    doc.append(f"{r0['cpus']} vCPUs on {r0['nodes']} nodes; client on CPU {r0['client_cpu']}, "
               f"server on CPU {r0['server_cpu']}; {r0['round_trips']} round trips of 64 bytes.\n")
    body = []
    for defer in ("on", "off"):
        d = [r for r in rs if r.get("defer") == defer]
        base = next((r["ns"] / r["round_trips"] for r in d if r["variant"] == "kernel"), None)
        for r in d:
            per = r["ns"] / r["round_trips"]
            row = [defer, label(r), f"{per:.0f}", f"{per / base:.3f}" if base else "-"]
            if r["variant"] == "rslub":
                a = total(r, "alloc_fastpath", "alloc_slowpath")
                f = total(r, "free_fastpath", "free_slowpath")
                row += [pct(total(r, "alloc_fastpath"), a), pct(total(r, "free_fastpath"), f),
                        str(total(r, "free_slowpath")), str(total(r, "alloc_node_mismatch"))]
            else:
                row += ["-", "-", "-", "-"]
            body.append(row)
    doc.append(table(["deferred skb frees", "allocator", "guest ns / round trip",
                      "vs kernel", "alloc fast %", "free fast %", "remote (slow) frees",
                      "node mismatches"], body))


def seed000(recs, doc):
    rs = [r for r in recs if r["exp"] == "seed000"]
    if not rs:
        return
    r0 = rs[0]
    doc.append(f"{r0['cpus']} vCPUs on {r0['nodes']} nodes; {r0['mib']} MiB in 64 KiB writes "
               "from a CPU of node 0 to one of the last node.\n")
    k = [r["ns"] / (r["mib"] * 1024) for r in rs if r["variant"] == "kernel"]
    base = sum(k) / len(k)
    body = []
    for r in rs:
        per = r["ns"] / (r["mib"] * 1024)
        row = [label(r), f"{per:.0f}", f"{per / base:.3f}"]
        if r["variant"] == "rslub":
            held = sum(c["slabs"] * (4 << c["order"]) for c in caches(r))
            mp = "/".join(str(c.get("min_partial_now", "-")) for c in caches(r))
            row += [mp, str(total(r, "alloc_slab") + total(r, "free_slab")),
                    str(total(r, "slabs")), str(held)]
        else:
            row += ["-", "-", "-", "-"]
        body.append(row)
    doc.append(table(["allocator", "guest ns / KiB", "vs kernel",
                      "min_partial (head/fclone/small)", "page allocator calls",
                      "slabs held after", "KiB held after"], body))


def wall(recs, doc):
    rs = [r for r in recs if r["exp"] == "seed001" and r["boot"].startswith("realwall")]
    if not rs:
        return
    ratios = []
    for boot in sorted({r["boot"] for r in rs}):
        b = [r for r in rs if r["boot"] == boot]
        k = [r["ns"] for r in b if r["variant"] == "kernel"]
        s = [r["ns"] for r in b if r["variant"] == "rslub"]
        ratios += [x / y for x, y in zip(s, k)]
    r0 = rs[0]
    doc.append(f"hackbench as above (rslub with its defaults), wall-clock time under multi-threaded\n"
               f"TCG, {r0['cpus']} vCPUs: rslub's time over the kernel's, each rslub run against\n"
               f"the kernel run just before it, {len(ratios)} pairs in "
               f"{len({r['boot'] for r in rs})} boots.\n")
    doc.append(table(["ratio min", "ratio median", "ratio max", "pairs"],
                     [range_cells(ratios)]))


def section(recs, hook_line):
    """The section's reStructuredText, from the records of common.load()."""
    icount = [r for r in recs if not r["boot"].startswith("realwall")]
    doc = [heading("Real workloads")]
    doc.append(
        "The seed threads' workloads, run in the guest on the kernel's allocator and on rslub\n"
        "backing ``skbuff_head_cache``, ``skbuff_fclone_cache`` and ``skbuff_small_head``\n"
        "(Documentation/backing.rst), A/B in one boot: the allocator behind those caches is\n"
        "the only difference. ``scripts/bench/real_guest.sh`` is the guest's ``/init``; its\n"
        "user space is busybox, Debian's ``hackbench`` (rt-tests) and\n"
        "``scripts/bench/workloads/pingpong.c`` (a TCP ping-pong in the manner of sockperf and a\n"
        "TCP stream in the manner of iperf3, both checking every byte), all in the initramfs,\n"
        "so the icount boots are deterministic as above. Figures are guest-clock nanoseconds per\n"
        "unit of work under ``-icount shift=0`` (the clock advances one nanosecond per\n"
        "instruction of the vCPU that runs, and jumps over time when every vCPU idles: it is\n"
        "not the sum of all vCPUs' instructions, which the counting plugin gives on\n"
        ":doc:`benchmarks_whole`), from the clock around each run; each run starts from a\n"
        "fresh ``insmod`` and ends with unbacking, draining and ``rmmod``. *kernel + rslub's\n"
        "hooks* has rslub loaded backing only ``names_cache``, which these workloads do not\n"
        "allocate from: the hooks' own cost on the workload. rslub's columns sum its counters\n"
        "over the three caches. A warm-up run precedes each experiment and is not shown.\n"
        "Checked once by hand: two boots of ``REAL=1 CPUS=1 NODES=1 scripts/bench/vm.sh OUT\n"
        "seed001`` gave the same 19 figures to the instruction.\n"
        "The whole kernel on rslub (kmalloc and every cache it can serve, ``back=all``) against\n"
        "the kernel's allocator, with fio, perf's fork and execve, kfree_rcu and a build besides:\n"
        ":doc:`benchmarks_whole`.\n"
    )
    doc.append(hook_line + "\n")
    doc.append(heading("Seed 001: hackbench, max_order x min_objects", "-"))
    doc.append(
        "``hackbench -g 2 -l 100`` (unix sockets, 100-byte messages: each message is an skb\n"
        "from ``skbuff_head_cache`` and a head from ``skbuff_small_head``), for ``max_order``\n"
        "0..3 x ``min_objects`` 4 and 32, the kernel run before and after them. *slow paths*:\n"
        "allocations and frees that left the per-CPU fast path; *node locks*: node-lock\n"
        "acquisitions, and *waits* those that found another CPU holding the lock.\n"
    )
    seed001(icount, doc)
    doc.append(heading("Seed 002: TCP ping-pong across nodes", "-"))
    doc.append(
        "Request/response over TCP loopback between a CPU of the first node and one of the\n"
        "last. With the kernel's deferred skb frees (``net.core.skb_defer_max``, on by\n"
        "default) the reader hands each skb back to the CPU that allocated it; with them off\n"
        "(``skb_defer_max=0``), as in the seed thread's days, the reader frees it on the other\n"
        "node: rslub's remote frees.\n"
    )
    seed002(icount, doc)
    doc.append(heading("Seed 000: TCP streaming, min_partial 5 against the dynamic rule", "-"))
    doc.append(
        "A TCP stream over loopback in 64 KiB writes. The payload travels in page fragments,\n"
        "and kmalloc caches cannot be backed (Documentation/backing.rst): rslub serves the\n"
        "skb metadata and small heads only, so this is the seed's setting, not its large\n"
        "objects. *page allocator calls*: new slabs plus slabs given back; *held after*: the\n"
        "slabs the three caches keep once the stream is over (nearly all empty).\n"
    )
    seed000(icount, doc)
    doc.append(heading("Wall clock (secondary)", "-"))
    wall(recs, doc)
    return "\n".join(doc)
