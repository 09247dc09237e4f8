#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# make bench: rslub against the kernel's kmem_cache, and the seed experiments, under QEMU
# -icount (instructions, not seconds), in guests that do the same from boot to boot
# (scripts/bench/vm.sh). Boots: CPUS (4) CPUs on 2 nodes for the side-by-side tables and
# seeds 000-002, twice, the second to check that the figures repeat; the build with
# RSLUB_HARDENED=n for its fast paths; 4 nodes and 1 node for seed 003; seed 001 on all
# CPUs at once on 1, 2, 4 and nproc vCPUs; three boots without icount for the wall-clock
# ratio; then the real
# workloads (scripts/bench/real_guest.sh), on CPUS, 2 and 1 vCPUs and in three wall-clock
# boots; last the whole-system workloads (scripts/bench/whole.sh, alone with PART=whole,
# left out with PART=side; Documentation/benchmarks_whole.rst). Writes
# Documentation/benchmarks/results.{json,csv}, the SVG plots, and the tables of
# Documentation/benchmarks.rst.
set -euo pipefail
. "$(dirname "$0")/../env.sh"

CPUS=${CPUS:-4}
export CPUS
# One build of rslub's modules per kernel for the whole run (scripts/modules.sh): not one
# a boot.
export RSLUB_BUILD_ONCE=${RSLUB_BUILD_ONCE:-bench.$$.$(date +%s)}
# The figures are the default kernel's: the debug one (KASAN, lockdep) would measure its
# checks, not the allocators. VARIANT=distro measures what the hooks and both fast paths
# cost with the speculation mitigations in the path (scripts/bench/distro.sh).
# PART=whole: only the whole-system workloads (scripts/bench/whole.sh, on the default
# kernel), which the full run does last; PART=fidelity: only their side-by-side boots
# (sheaves 7.3, classic SLUB 6.12, rslub under each profile); PART=trace: records on 6.12
# and 7.3 the kind of hackbench sequence that rslub_fidelity replays (into the cache folder);
# PART=side: only the boots before the whole-system part (Documentation/benchmarks.rst);
# PART=headline: only the headline's six boots (Documentation/results.rst,
# scripts/bench/headline.sh).
case ${PART:-all} in
all | side) ;;
whole) exec "$RSLUB_TOP/scripts/bench/whole.sh" ;;
fidelity) FIDELITY=1 exec "$RSLUB_TOP/scripts/bench/whole.sh" ;;
headline) HEADLINE=1 exec "$RSLUB_TOP/scripts/bench/whole.sh" ;;
trace) TRACE=1 exec "$RSLUB_TOP/scripts/bench/whole.sh" ;;
*) die "PART=$PART: must be all, side, whole, fidelity, headline or trace" ;;
esac
if [ "${VARIANT:-default}" = distro ]; then
	exec "$RSLUB_TOP/scripts/bench/distro.sh"
fi
[ "${VARIANT:-default}" = default ] || log "bench: VARIANT=$VARIANT ignored, the default kernel is measured"
VARIANT=default
export VARIANT
# Provenance, printed on the page: the commit measured, the kernel build (its folder name
# ends in a hash of its configuration) and QEMU's version.
commit=$(git -C "$RSLUB_TOP" rev-parse --short HEAD 2>/dev/null || echo unknown)
if [ "$commit" != unknown ] && ! git -C "$RSLUB_TOP" diff --quiet HEAD -- rust bench tests-kunit scripts include Kbuild 2>/dev/null; then
	commit="$commit (with uncommitted changes)"
fi
kbuild=$(basename "$("$RSLUB_TOP/scripts/kernel.sh")")
qemu_version=$(qemu-system-x86_64 --version | head -1)
out=$RSLUB_CACHE/bench-results
rm -rf "$out"
mkdir -p "$out"
# The run's provenance beside its records, as whole.sh's meta (Documentation/results.rst
# names it for the seeds' experiments it takes from here).
printf '%s\n' "$commit" "$(date -u +%F)" "$kbuild" "$qemu_version" "$CPUS" > "$out/meta"
start=$(date +%s)
vm=$RSLUB_TOP/scripts/bench/vm.sh
NODES=2 "$vm" "$out/nodes2.jsonl" suite=0
NODES=2 "$vm" "$out/repeat.jsonl" suite=0
# The build with plain free pointers (Kbuild: RSLUB_HARDENED=n): fast paths and pair.
NODES=2 RSLUB_HARDENED=n "$vm" "$out/unhardened.jsonl" suite=3
NODES=4 "$vm" "$out/nodes4.jsonl" suite=1
NODES=1 "$vm" "$out/nodes1.jsonl" suite=1
# Seed 001 on all CPUs at once (wall clock: QEMU runs the vCPUs in parallel threads), on
# 1, 2, 4 and as many vCPUs as this host has cores, one node (one node lock for all).
par_cpus="1 2 4"
case " $par_cpus " in *" $(nproc) "*) ;; *) par_cpus+=" $(nproc)" ;; esac
par_files=()
for n in $par_cpus; do
	CPUS=$n NODES=1 WALLCLOCK=1 "$vm" "$out/parallel$n.jsonl" suite=4
	par_files+=("$out/parallel$n.jsonl")
done
# The secondary figure: wall clock, rslub and the kernel interleaved, in three boots.
for i in 1 2 3; do
	NODES=2 WALLCLOCK=1 "$vm" "$out/wall$i.jsonl" suite=2
done
# The real workloads (scripts/bench/real_guest.sh): seeds 001, 002 and 000 on CPUS vCPUs,
# seed 001 also on 2 and 1; then hackbench under wall clock, in three boots.
if ! command -v hackbench >/dev/null; then
	log "installing rt-tests (hackbench) for the real workloads"
	as_root env DEBIAN_FRONTEND=noninteractive apt-get install -y -q \
		--no-install-recommends rt-tests >/dev/null
fi
NODES=2 REAL=1 "$vm" "$out/real_cpus$CPUS.jsonl" seed001 seed002 seed000
CPUS=2 NODES=2 REAL=1 "$vm" "$out/real_cpus2.jsonl" seed001
CPUS=1 NODES=1 REAL=1 "$vm" "$out/real_cpus1.jsonl" seed001
for i in 1 2 3; do
	NODES=2 REAL=1 WALLCLOCK=1 "$vm" "$out/realwall$i.jsonl" wall
done
log "benchmarks ran in $(( $(date +%s) - start )) s; writing the report"
python3 "$RSLUB_TOP/scripts/bench/side_report.py" --cpus "$CPUS" \
	--command "make bench CPUS=$CPUS" --out "$RSLUB_TOP/Documentation" \
	--provenance "commit $commit, kernel build $kbuild, $qemu_version" \
	--repeat "$out/repeat.jsonl" \
	"$out/nodes2.jsonl" "$out/unhardened.jsonl" "$out/nodes4.jsonl" "$out/nodes1.jsonl" \
	"$out/wall1.jsonl" "$out/wall2.jsonl" "$out/wall3.jsonl" "${par_files[@]}" \
	--real "$out/real_cpus$CPUS.jsonl" "$out/real_cpus2.jsonl" "$out/real_cpus1.jsonl" \
	"$out/realwall1.jsonl" "$out/realwall2.jsonl" "$out/realwall3.jsonl"
# The whole kernel on rslub against the kernel's allocator, in boots of their own.
[ "${PART:-all}" = side ] || "$RSLUB_TOP/scripts/bench/whole.sh"
