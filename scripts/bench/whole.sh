#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# The whole-system section of make bench (issue: the whole kernel on rslub): the seeds'
# workloads and the 2026 sheaves regressions, on the kernel's allocator and on the whole
# kernel served by rslub (rslub.back=all), A/B in icount boots that differ only in the
# allocator (scripts/bench/whole_guest.sh is their /init). make bench runs it last;
# `make bench PART=whole` runs it alone. Writes Documentation/benchmarks_whole.rst and
# Documentation/benchmarks/whole.json (scripts/bench/whole_report.py).
#
# Boots (icount): the hooks' cost per call (rslub_bench suite=5); then, with the
# instruction-counting plugin scripts/bench/qemu/count.c and 1 GiB of memory unless said:
#   CPUS vCPUs, 2 nodes: kernel, hooks, rslub, each running hackbench, fio, pingpong,
#     fork, execve and kfree_rcu; rslub min_partial=5 running fio (seed 000);
#   the kernel's again with QEMU's -seed 2 and -seed 3 and the initramfs padded (how much
#   boots differ);
#   hackbench alone for rslub's max_order 0..3 x min_objects 4 and 32 (seed 001: small
#     slabs and the largest each max_order allows; the defaults, 3 x 16 on 4 CPUs, are
#     the 2-node boots'; SWEEP=0 skips them), and on classic
#     SLUB 6.12 with the same slub_max_order and slub_min_objects, and on the kernel's
#     allocator once, in boots whose initramfs holds no other workload;
#   CPUS vCPUs on 4 nodes and on 1, 2 GiB in all: kernel, rslub and classic SLUB 6.12
#     running the build (seed 003), and the kernel's again twice on each, as above;
#   the kernel's 2-node boot again on the kernel with SLUB_STATS (VARIANT=stats), for the
#   kernel allocator's counters;
#   classic SLUB: the same 2-node boot on Linux 6.12 (RSLUB_KSERIES=6.12, built once and
#   cached as the others), and again on its SLUB_STATS build for its counters; rslub's
#   2-node boot again with profile=tuned (the rslub boot above has the default, classic).
#   The report sets them side by side: sheaves 7.3, classic SLUB 6.12, rslub on 7.3 under
#   each profile, and the ratio of rslub's classic counters to 6.12's.
# Variables: CPUS (4), SWEEP (1), TIMEOUT (per boot, 1800 s), FIDELITY=1 (only the boots
# of the side-by-side tables: make bench PART=fidelity), HEADLINE=1 (only the headline's
# six boots: make bench PART=headline), WORKLOADS (those of the 2-node
# boots, all by default), and the workloads' sizes (HB_GROUPS, HB_LOOPS, FIO_MIB,
# PP_TRIPS, FORKS, EXECS, RCU_OBJECTS: whole_guest.sh).
set -euo pipefail
. "$(dirname "$0")/../env.sh"

CPUS=${CPUS:-4}
# One build of rslub's modules per kernel for the whole run (scripts/modules.sh): not one
# a boot.
export RSLUB_BUILD_ONCE=${RSLUB_BUILD_ONCE:-bench.$$.$(date +%s)}
export CPUS VARIANT=default TIMEOUT=${TIMEOUT:-1800} REAL=1 WHOLE=1

# What the guest runs, from Debian's archive: hackbench (rt-tests), fio, perf 6.12 (its
# `bench syscall` has fork and execve; bookworm's perf 6.1 has only `basic`), gcc and
# make; and to build the plugin, glib's headers and QEMU's source package (for its
# qemu-plugin.h, of the QEMU installed).
need=()
for p in rt-tests fio gcc make libglib2.0-dev xz-utils; do
	dpkg-query -W -f='${Status}\n' "$p" 2>/dev/null | grep -q '^install ok installed' || need+=("$p")
done
if [ ${#need[@]} -gt 0 ]; then
	log "installing ${need[*]} for the whole-system benchmarks"
	as_root env DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends \
		"${need[@]}" >/dev/null
fi
case "$(perf --version 2>/dev/null)" in
"perf version 6."[1-9][0-9]*) ;;
*)
	log "installing linux-perf from bookworm-backports (perf bench syscall fork/execve)"
	as_root env DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends \
		-t bookworm-backports linux-perf >/dev/null
	;;
esac

# The plugin, built once per QEMU version.
qver=$(dpkg-query -W -f='${Version}' qemu-system-x86)
pdir=$RSLUB_TOOLS/qemu-count/${qver//[^A-Za-z0-9.+-]/_}
plugin=$pdir/libcount.so
if [ ! -f "$plugin" ] || [ "$plugin" -ot "$RSLUB_TOP/scripts/bench/qemu/count.c" ]; then
	mkdir -p "$pdir"
	if [ ! -f "$pdir/qemu-plugin.h" ]; then
		log "fetching qemu-plugin.h from Debian's qemu $qver source package"
		# Only the upstream tarball is needed; apt-get fails when another file of the
		# source package is missing from the mirror (seen: the .debian.tar.xz).
		(cd "$pdir" && apt-get source --download-only -q "qemu=$qver" >/dev/null 2>&1) || true
		ls "$pdir"/qemu_*.orig.tar.xz >/dev/null 2>&1 ||
			die "cannot download Debian's qemu $qver source (for qemu-plugin.h)"
		tar -xJf "$pdir"/qemu_*.orig.tar.xz -C "$pdir" --wildcards --strip-components=3 \
			'*/include/qemu/qemu-plugin.h'
		rm -f "$pdir"/qemu_*
	fi
	# shellcheck disable=SC2046 # glib's flags
	gcc -O2 -shared -fPIC -Wall -Wno-unused-parameter -I "$pdir" $(pkg-config --cflags glib-2.0) \
		-o "$plugin" "$RSLUB_TOP/scripts/bench/qemu/count.c"
fi
export COUNT_PLUGIN=$plugin
# The workloads' sizes, when set, reach the guest's /init as its environment (the kernel
# passes it the command line's NAME=VALUE words).
sizes=""
for v in HB_GROUPS HB_LOOPS FIO_MIB PP_TRIPS FORKS EXECS RCU_OBJECTS; do
	[ -z "${!v:-}" ] || sizes+=" $v=${!v}"
done
export KERNEL_ARGS="${sizes# }"

commit=$(git -C "$RSLUB_TOP" rev-parse --short HEAD 2>/dev/null || echo unknown)
if [ "$commit" != unknown ] && ! git -C "$RSLUB_TOP" diff --quiet HEAD -- rust bench scripts include Kbuild 2>/dev/null; then
	commit="$commit (with uncommitted changes)"
fi
out=$RSLUB_CACHE/bench-whole
[ "${TRACE:-0}" = 1 ] && out=$RSLUB_CACHE/bench-trace
[ "${HEADLINE:-0}" = 1 ] && out=$RSLUB_CACHE/bench-headline
rm -rf "$out"
mkdir -p "$out"
printf '%s\n' "$commit" "$(date -u +%F)" "$(basename "$("$RSLUB_TOP/scripts/kernel.sh")")" \
	"$(qemu-system-x86_64 --version | head -1)" "$CPUS" \
	"$(basename "$(RSLUB_KSERIES=6.12 "$RSLUB_TOP/scripts/kernel.sh")")" > "$out/meta"
# Classic SLUB's counters come from its SLUB_STATS build: built before the first boot.
RSLUB_KSERIES=6.12 VARIANT=stats "$RSLUB_TOP/scripts/kernel.sh" >/dev/null
# boot OUT ARGS...: one boot (its variables set by the caller, 1 GiB of memory unless
# MEM_PER_NODE says otherwise); a workload that failed, a kernel report, rslub's hooks
# without their direct calls, or an rslub boot that served nothing fails the benchmark.
boot() {
	MEM_PER_NODE=${MEM_PER_NODE:-$((1024 / NODES))} "$RSLUB_TOP/scripts/bench/vm.sh" "$@"
	grep -q 'rslub_bench: failed 0' "$1.log" ||
		die "a workload failed in $1.log: $(grep -m3 'failed\|fatal' "$1.log")"
	# Reports fail the boot in scripts/bench/vm.sh (scripts/test/reports.py); here also what
	# is no report but makes the figures wrong: a hook without its direct call, a refused
	# backing.
	local bad='hooked without direct calls|rslub: cannot'
	! grep -qE "$bad" "$1.log" ||
		die "rslub fell back or refused in $1.log: $(grep -m3 -E "$bad" "$1.log")"
	case " $* " in
	*" alloc=rslub "* | *" alloc=hooks "*)
		grep -q 'rslub_bench: SERVED [1-9]' "$1.log" || die "rslub served no cache in $1.log" ;;
	esac
}
start=$(date +%s)
# TRACE=1 (make bench PART=trace): the kind of sequence rslub_fidelity replays, recorded
# on classic SLUB 6.12's SLUB_STATS build (hackbench with skbuff_head_cache's kmem
# events), with 6.12's counters over the run; then the same on 7.3's own allocator, with
# its scheduler feature HRTICK and without. Written to the cache folder (out), with the
# sequences compared (trace_ops.py --stats; Documentation/design.rst, "Counters per unit
# of work"). The test takes a new recording when it is copied over
# tests-kunit/data/hackbench-6.12.ops and the counters printed into its table; a 7.3 one
# copied there instead is replayed (the counters it prints) but fails the comparison.
if [ "${TRACE:-0}" = 1 ]; then
	RSLUB_KSERIES=6.12 VARIANT=stats NODES=2 boot "$out/trace-classic.jsonl" alloc=kernel hbtrace
	python3 "$RSLUB_TOP/scripts/bench/trace_ops.py" "$out/trace-classic.jsonl.log" \
		"$out/hackbench-6.12.ops" "$out/trace-classic.jsonl"
	NODES=2 boot "$out/trace-7.3.jsonl" alloc=kernel hbtrace
	python3 "$RSLUB_TOP/scripts/bench/trace_ops.py" "$out/trace-7.3.jsonl.log" "$out/hackbench-7.3.ops"
	NODES=2 KERNEL_ARGS="${KERNEL_ARGS:+$KERNEL_ARGS }SCHED_FEATURES=NO_HRTICK" \
		boot "$out/trace-7.3-nohrtick.jsonl" alloc=kernel hbtrace
	python3 "$RSLUB_TOP/scripts/bench/trace_ops.py" "$out/trace-7.3-nohrtick.jsonl.log" \
		"$out/hackbench-7.3-nohrtick.ops"
	python3 "$RSLUB_TOP/scripts/bench/trace_ops.py" --stats \
		"$RSLUB_TOP/tests-kunit/data/hackbench-6.12.ops" "$out"/hackbench-*.ops
	exit 0
fi
all=${WORKLOADS:-hackbench fio pingpong fork execve kfree_rcu micro}
# The three columns: sheaves 7.3, classic SLUB 6.12, rslub on 7.3 (each profile); each
# kernel's counters from its SLUB_STATS build.
# In the full run these four boots profile each run by symbol too (PROFILE=1: the page's
# "Where the instructions go"), which the counts do not see: the plugin counts outside
# the guest. PART=fidelity shows no profile.
# The fast paths (micro) only where a page shows them: the kernel's, 6.12's and the
# whole kernel on rslub's classic profile.
fidelity() {
	local prof=1
	[ "${FIDELITY:-0}" != 1 ] || prof=0
	PROFILE=$prof NODES=2 boot "$out/n2-kernel.jsonl" alloc=kernel $all
	PROFILE=$prof NODES=2 boot "$out/n2-rslub.jsonl" alloc=rslub $all
	PROFILE=$prof NODES=2 boot "$out/n2-rslub-tuned.jsonl" alloc=rslub rslub:profile=tuned ${all/micro/}
	RSLUB_KSERIES=6.12 PROFILE=$prof NODES=2 boot "$out/n2-classic.jsonl" alloc=kernel $all
	VARIANT=stats NODES=2 boot "$out/stats-n2-kernel.jsonl" alloc=kernel ${all/micro/}
	RSLUB_KSERIES=6.12 VARIANT=stats NODES=2 boot "$out/stats-n2-classic.jsonl" alloc=kernel ${all/micro/}
	# How far the counters of hackbench and the ping-pong move between two boots of one
	# allocator (QEMU's -seed 2): the scale of a difference between the allocators that
	# says nothing.
	NODES=2 SEED=2 boot "$out/n2-rslub-seed2.jsonl" alloc=rslub hackbench pingpong
	# And with every hook through ftrace's handler (direct=0): rslub's code the same, only
	# the hooks' instructions more, which moves hackbench's counters as timing does.
	NODES=2 boot "$out/n2-rslub-direct0.jsonl" alloc=rslub rslub:direct=0 hackbench
	# And with 7.3's scheduler feature HRTICK off, as 6.12 has it (Documentation/design.rst,
	# "Counters per unit of work").
	NODES=2 KERNEL_ARGS="${KERNEL_ARGS:+$KERNEL_ARGS }SCHED_FEATURES=NO_HRTICK" \
		boot "$out/n2-rslub-nohrtick.jsonl" alloc=rslub hackbench pingpong
	RSLUB_KSERIES=6.12 VARIANT=stats NODES=2 SEED=2 boot "$out/stats-n2-classic-seed2.jsonl" \
		alloc=kernel hackbench pingpong
}
# HEADLINE=1 (make bench PART=headline): Documentation/results.rst alone, in boots of
# its own (scripts/bench/headline.sh); the full run writes the same page from its boots
# (below).
if [ "${HEADLINE:-0}" = 1 ]; then
	. "$RSLUB_TOP/scripts/bench/headline.sh"
	exit 0
fi
if [ "${FIDELITY:-0}" = 1 ]; then
	fidelity
	log "side-by-side benchmarks ran in $(( $(date +%s) - start )) s; writing the report"
	python3 "$RSLUB_TOP/scripts/bench/whole_report.py" "$out" "$RSLUB_TOP/Documentation" --fidelity
	exit 0
fi
# The hooks' cost per call (rslub_bench suite=5, as make bench's side-by-side boot has it):
# no hooks, the IPMODIFY handler alone (direct=0), the direct calls, no hooks again.
REAL=0 WHOLE=0 COUNT_PLUGIN="" MEM_PER_NODE=256 NODES=2 "$RSLUB_TOP/scripts/bench/vm.sh" \
	"$out/hook_cost.res" suite=5
# The most telling first: the allocators side by side (the kernel's counters from the
# VARIANT=stats boots: the report takes each kernel's counters from that boot, its
# instructions from the other), the hooks alone, the build, the boot-to-boot spread, and
# the sweep last.
fidelity
NODES=2 boot "$out/n2-hooks.jsonl" alloc=hooks ${all/micro/}
NODES=2 boot "$out/n2-rslub-mp5.jsonl" alloc=rslub rslub:min_partial=5 fio
# The build: 2 GiB in all on either topology.
# Its boots carry the compiler alone (scripts/bench/vm.sh, WHOLE_FILES), as they compare
# with each other only.
for n in 4 1; do
	WHOLE_FILES=build NODES=$n MEM_PER_NODE=$((2048 / n)) boot "$out/n$n-kernel-build.jsonl" alloc=kernel build
	WHOLE_FILES=build NODES=$n MEM_PER_NODE=$((2048 / n)) boot "$out/n$n-rslub-build.jsonl" alloc=rslub build
	WHOLE_FILES=build RSLUB_KSERIES=6.12 NODES=$n MEM_PER_NODE=$((2048 / n)) \
		boot "$out/n$n-build-classic.jsonl" alloc=kernel build
done
# The kernel's boots again, each with other random numbers (QEMU's -seed) and another
# memory layout (PAD, scripts/bench/vm.sh: the initramfs 1 or 2.5 MiB longer moves where
# the kernel puts it, and all that comes after): how much boots of one allocator differ,
# the scale below which a difference between allocators says nothing. A layout moved by
# 1-2.5 MiB moved the kernel's 4-node build by 0.4-0.6%, the seed alone by 0.07% (the
# cache folder's notes/records/s9/pad.txt); rslub's boots lay memory out differently from
# the kernel's anyway, as rslub's own module's size moves them all. First the build's own
# spread on either topology (the 2-node boots' below is of other workloads), then the
# 2-node boots, with the first's command line exactly (its micro too).
for n in 4 1; do
	WHOLE_FILES=build NODES=$n MEM_PER_NODE=$((2048 / n)) SEED=2 PAD=1024 \
		boot "$out/n$n-kernel-build-seed2.jsonl" alloc=kernel build
	WHOLE_FILES=build NODES=$n MEM_PER_NODE=$((2048 / n)) SEED=3 PAD=2560 \
		boot "$out/n$n-kernel-build-seed3.jsonl" alloc=kernel build
done
NODES=2 SEED=2 PAD=1024 boot "$out/n2-kernel-seed2.jsonl" alloc=kernel $all
NODES=2 SEED=3 PAD=2560 boot "$out/n2-kernel-seed3.jsonl" alloc=kernel $all
# The sweep's boots carry hackbench alone (WHOLE_FILES empty: an initramfs a sixth the
# size, half the boot's time), and so does its kernel row's boot.
if [ "${SWEEP:-1}" = 1 ]; then
	WHOLE_FILES="" NODES=2 boot "$out/sweep-kernel.jsonl" alloc=kernel hackbench
	for o in 0 1 2 3; do
		# Two points of min_objects, not four: the sweep's 16 points moved by 5-8% from
		# one to the next without a pattern (hackbench's boot-to-boot spread is some
		# percent), and its best point was the luckiest of 16 draws as much as a setting.
		for m in 4 32; do
			WHOLE_FILES="" NODES=2 boot "$out/sweep-o$o-m$m.jsonl" alloc=rslub \
				rslub:max_order=$o rslub:min_objects=$m hackbench
			# Classic SLUB with the same two limits, on its command line.
			WHOLE_FILES="" RSLUB_KSERIES=6.12 NODES=2 \
				KERNEL_ARGS="${KERNEL_ARGS:+$KERNEL_ARGS }slub_max_order=$o slub_min_objects=$m" \
				boot "$out/sweep-o$o-m$m-classic.jsonl" alloc=kernel hackbench
		done
	done
fi
log "whole-system benchmarks ran in $(( $(date +%s) - start )) s; writing the report"
python3 "$RSLUB_TOP/scripts/bench/whole_report.py" "$out" "$RSLUB_TOP/Documentation"
# The headline (Documentation/results.rst, and README.md's block that quotes it) from the
# same boots, with the seeds' experiments of the side-by-side boots (scripts/bench/bench.sh's
# records: this run's, or with PART=whole the last run's, if any).
python3 "$RSLUB_TOP/scripts/bench/headline.py" "$out" "$RSLUB_TOP/Documentation" \
	--command "make bench" --side "$RSLUB_CACHE/bench-results" --readme "$RSLUB_TOP/README.md"
