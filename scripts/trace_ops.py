#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Turns the kmem events of a hbtrace run (scripts/bench_whole_guest.sh: "rslub_bench:
TRACE CPU A|F ADDRESS" lines in a boot's console log) into the operations the replay of
tests-kunit/fidelity_tests.rs reads: one little-endian u32 per allocation or free, in
order, bit 31 set for a free, bits 28-30 the CPU, bits 0-27 the allocation's number (the
n-th allocation of the trace). Frees of objects allocated before the trace began are left
out; objects still allocated at its end stay so (the replay frees them afterwards).

    trace_ops.py LOG OUT [JSONL]

With the boot's RESULT lines (JSONL), it also prints the kernel's counters of
skbuff_head_cache over the traced run (SLUB_STATS builds), as the test lists them.
"""
import json
import re
import struct
import sys

log, out = sys.argv[1], sys.argv[2]
live = {}
ops = []
n = 0
for line in open(log, errors="replace"):
    m = re.search(r"rslub_bench: TRACE (\d+) ([AF]) ([0-9a-f]+)$", line.rstrip())
    if not m:
        continue
    cpu, op, addr = int(m.group(1)), m.group(2), m.group(3)
    if cpu > 7:
        sys.exit(f"CPU {cpu}: the format holds CPUs 0 to 7")
    if op == "A":
        if addr in live:
            sys.exit(f"{addr} allocated twice without a free")
        live[addr] = n
        ops.append(cpu << 28 | n)
        n += 1
    elif addr in live:
        ops.append(1 << 31 | cpu << 28 | live.pop(addr))
if n >= 1 << 28:
    sys.exit("too many allocations")
with open(out, "wb") as f:
    f.write(b"".join(struct.pack("<I", o) for o in ops))
print(f"{len(ops)} operations: {n} allocations, {n - len(live)} freed in the trace, "
      f"{len(live)} left allocated")
if len(sys.argv) > 3:
    with open(sys.argv[3]) as f:
        run = next((json.loads(line) for line in f if '"exp":"hbtrace"' in line), None)
    c = (run or {}).get("slub_caches", {}).get("skbuff_head_cache")
    if not c:
        sys.exit("no skbuff_head_cache counters in the hbtrace run (a SLUB_STATS kernel?)")
    print(f"skbuff_head_cache: {c.pop('size')} bytes, order {c.pop('order')}, "
          f"{c.pop('objects_per_slab')} objects a slab; counters over the run:")
    for k, v in c.items():
        print(f'        ("{k}", {v}),')
