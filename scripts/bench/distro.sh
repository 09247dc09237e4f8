#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# make bench VARIANT=distro: the side-by-side tables (rslub_bench suite=0: fast paths,
# pairs, batches, bulk, cross-CPU frees) on the distribution-like kernel, under -icount,
# in two boots: as QEMU's CPU model boots it (the kernel finds the CPU not vulnerable
# and patches the retpolines and return thunks out), and with the mitigations forced on
# a CPU model that needs them (Skylake: retpolines, and call depth tracking for
# retbleed, "stuff"). Each boot prints which mitigations are live
# (/sys/devices/system/cpu/vulnerabilities); the report prints both boots' figures and
# their ratio (scripts/bench/distro_report.py), and writes
# Documentation/benchmarks/distro.json and Documentation/benchmarks_distro.rst.
set -euo pipefail
. "$(dirname "$0")/../env.sh"
# One build of rslub's modules per kernel for the whole run (scripts/modules.sh): not one
# a boot.
export RSLUB_BUILD_ONCE=${RSLUB_BUILD_ONCE:-bench.$$.$(date +%s)}

#
# Both boots have init_on_alloc=0, unless INIT_ON_ALLOC=1: under -icount every iteration
# of a `rep stosb` counts as an instruction, and the kernel's memset() uses one only on a
# CPU with fast short rep stos (FSRS: -cpu max has it, Skylake not), so the zeroing of
# every object (the distribution's INIT_ON_ALLOC_DEFAULT_ON) would count a byte as an
# instruction in one boot and not in the other, hiding what the mitigations add.
# INIT_ON_ALLOC=1 boots as the distribution does (42 minutes for the two boots here),
# into a folder of its own; the report shows that run's per-boot ratios too.
export VARIANT=distro CPUS=${CPUS:-4} NODES=2 TIMEOUT=${TIMEOUT:-3000}
case ${INIT_ON_ALLOC:-0} in
0) out=$RSLUB_CACHE/bench-distro common=init_on_alloc=0 ;;
1) out=$RSLUB_CACHE/bench-distro-init common= ;;
*) die "INIT_ON_ALLOC=$INIT_ON_ALLOC: must be 0 or 1" ;;
esac
rm -rf "$out"
mkdir -p "$out"
commit=$(git -C "$RSLUB_TOP" rev-parse --short HEAD)
git -C "$RSLUB_TOP" diff --quiet HEAD -- rust bench include || commit="$commit plus uncommitted changes"
printf '%s\n' "$commit" "$(date -u +%F)" "${common:-as booted}" > "$out/meta"
vm=$RSLUB_TOP/scripts/bench/vm.sh
forced=${FORCED:-spectre_v2=retpoline,generic retbleed=stuff}
forced_cpu=${FORCED_CPU:-Skylake-Client-v4}
KERNEL_ARGS="$common" "$vm" "$out/default.jsonl" suite=0
QEMU_CPU=$forced_cpu KERNEL_ARGS="$forced${common:+ $common}" "$vm" "$out/forced.jsonl" suite=0
[ "${INIT_ON_ALLOC:-0}" = 0 ] || { log "bench: written $out; make bench VARIANT=distro reports it"; exit 0; }
kernel=$(basename "$("$RSLUB_TOP/scripts/kernel.sh")")
python3 "$RSLUB_TOP/scripts/bench/distro_report.py" "$out" "$RSLUB_TOP" "$forced" "$forced_cpu" \
	"$commit" "$kernel" "$(qemu-system-x86_64 --version | head -1)" "$RSLUB_CACHE/bench-distro-init"
