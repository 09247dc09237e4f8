#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Turns the kmem events of a hbtrace run (scripts/bench/whole_guest.sh: "rslub_bench:
TRACE CPU A|F ADDRESS" lines in a boot's console log) into the operations the replay of
tests-kunit/fidelity_tests.rs reads: one little-endian u32 per allocation or free, in
order, bit 31 set for a free, bits 28-30 the CPU, bits 0-27 the allocation's number (the
n-th allocation of the trace). Frees of objects allocated before the trace began are left
out; objects still allocated at its end stay so (the replay frees them afterwards).

    trace_ops.py LOG OUT [JSONL]
    trace_ops.py --stats OPS...

With the boot's RESULT lines (JSONL), it also prints the kernel's counters of
skbuff_head_cache over the traced run (SLUB_STATS builds), as the test lists them. With
--stats it prints, for each file of operations, what of the sequence decides how often a
free lands in its CPU's active slab, whatever the allocator: how finely the CPUs'
operations interleave (changes of CPU per 1000 operations, in the trace's order), the
share of frees on the allocating CPU, and how many allocations that CPU made between an
object's allocation and its free (at most 16, a slab of skbuff_head_cache: the object's
slab is likely still that CPU's active slab).
"""
import json
import os
import re
import struct
import sys

if len(sys.argv) < 3:
    sys.exit(__doc__)
if sys.argv[1] == "--stats":
    for path in sys.argv[2:]:
        with open(path, "rb") as f:
            b = f.read()
        ops = struct.unpack(f"<{len(b) // 4}I", b)
        if not ops:
            sys.exit(f"{path}: empty")
        cpu_of, nth, made = {}, {}, {}
        changes, last, same, dist = 0, None, 0, []
        for w in ops:
            cpu, i = w >> 28 & 7, w & ((1 << 28) - 1)
            changes += cpu != last
            last = cpu
            if w >> 31 == 0:
                cpu_of[i], nth[i] = cpu, made.get(cpu, 0)
                made[cpu] = nth[i] + 1
            else:
                same += cpu_of[i] == cpu
                dist.append(made[cpu_of[i]] - nth[i])
        dist.sort()
        n = len(dist)
        print(f"{path}: {len(ops)} operations; {1000 * changes / len(ops):.1f} changes of CPU "
              f"per 1000; frees on the allocating CPU {100 * same / n:.1f}%; allocations of "
              f"that CPU between an object's allocation and its free: median {dist[n // 2]}, "
              f"at most 16 for {100 * sum(d <= 16 for d in dist) / n:.1f}% of the frees")
    sys.exit(0)
log, out = sys.argv[1], sys.argv[2]
live = {}
ops = []
n = frees = 0
with open(log, errors="replace") as f:
    for line in f:
        m = re.search(r"rslub_bench: TRACE (\d+) ([AF]) ([0-9a-f]+)$", line.rstrip())
        if not m:
            continue
        cpu, op, addr = int(m.group(1)), m.group(2), m.group(3)
        if cpu > 7:
            sys.exit(f"CPU {cpu}: the format holds CPUs 0 to 7")
        if op == "A":
            if addr in live:
                sys.exit(f"{addr} allocated twice without a free: an event is missing")
            live[addr] = n
            ops.append(cpu << 28 | n)
            n += 1
        else:
            frees += 1
            if addr in live:
                ops.append(1 << 31 | cpu << 28 | live.pop(addr))
if not n:
    sys.exit(f"{log}: no TRACE lines")
if n >= 1 << 28:
    sys.exit("too many allocations")
dropped = frees - (n - len(live))
print(f"{len(ops)} operations: {n} allocations, {n - len(live)} freed in the trace, "
      f"{len(live)} left allocated; {dropped} frees of objects allocated before it left out")
if len(sys.argv) > 3:
    with open(sys.argv[3]) as f:
        run = next((json.loads(line) for line in f if '"exp":"hbtrace"' in line), None)
    c = (run or {}).get("slub_caches", {}).get("skbuff_head_cache")
    if not c:
        sys.exit("no skbuff_head_cache counters in the hbtrace run (a SLUB_STATS kernel?)")
    # Every allocation and free the kernel counted must be in the trace: an allocation
    # site the event filter misses, or a free with no event (the bulk frees), would
    # leave the sequence short of what the counters say.
    if (n, frees) != (c["alloc_fastpath"] + c["alloc_slowpath"],
                      c["free_fastpath"] + c["free_slowpath"]):
        sys.exit(f"the trace has {n} allocations and {frees} frees, the kernel counted "
                 f"{c['alloc_fastpath'] + c['alloc_slowpath']} and "
                 f"{c['free_fastpath'] + c['free_slowpath']}: nothing written")
    print(f"skbuff_head_cache: {c.pop('size')} bytes, order {c.pop('order')}, "
          f"{c.pop('objects_per_slab')} objects a slab; counters over the run:")
    for k, v in c.items():
        print(f'        ("{k}", {v}),')
with open(out + ".tmp", "wb") as f:
    f.write(b"".join(struct.pack("<I", o) for o in ops))
os.replace(out + ".tmp", out)
print(f"written: {out}")
