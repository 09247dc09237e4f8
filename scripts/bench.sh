#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# make bench: rslub against the kernel's kmem_cache, and the seed experiments, under QEMU
# -icount (instructions, not seconds). Three boots: CPUS (4) CPUs on 2 nodes for the
# side-by-side tables and seeds 000-002, then 4 nodes and 1 node for seed 003; then three
# boots without icount for the wall-clock ratio. Writes
# Documentation/benchmarks/results.{json,csv}, the SVG plots, and the tables of
# Documentation/benchmarks.rst.
set -euo pipefail
. "$(dirname "$0")/env.sh"

CPUS=${CPUS:-4}
out=$RSLUB_CACHE/bench-results
rm -rf "$out"
mkdir -p "$out"
start=$(date +%s)
ACCEL=tcg NODES=2 BENCH_PARAMS="suite=0" "$RSLUB_TOP/scripts/vm.sh" bench "$out/nodes2.jsonl"
ACCEL=tcg NODES=4 BENCH_PARAMS="suite=1" "$RSLUB_TOP/scripts/vm.sh" bench "$out/nodes4.jsonl"
ACCEL=tcg NODES=1 BENCH_PARAMS="suite=1" "$RSLUB_TOP/scripts/vm.sh" bench "$out/nodes1.jsonl"
# The secondary figure: wall clock, rslub and the kernel interleaved, in three boots.
for i in 1 2 3; do
	ACCEL=tcg NODES=2 WALLCLOCK=1 BENCH_PARAMS="suite=2" "$RSLUB_TOP/scripts/vm.sh" bench \
		"$out/wall$i.jsonl"
done
log "benchmarks ran in $(( $(date +%s) - start )) s; writing the report"
python3 "$RSLUB_TOP/scripts/bench_report.py" --cpus "$CPUS" \
	--command "make bench CPUS=$CPUS" --out "$RSLUB_TOP/Documentation" \
	"$out/nodes2.jsonl" "$out/nodes4.jsonl" "$out/nodes1.jsonl" \
	"$out/wall1.jsonl" "$out/wall2.jsonl" "$out/wall3.jsonl"
