#!/bin/busybox sh
# SPDX-License-Identifier: GPL-2.0
#
# /init of the real-workload benchmark guest (scripts/bench/vm.sh REAL=1): the seed
# experiments' workloads on the kernel's allocator and on rslub backing the skb caches,
# A/B in one boot, each run printed as a RESULT line (JSON). Its arguments (after "--" on
# the kernel command line) name the experiments: seed001, seed002, seed000.
#
# Variants of each run:
#   kernel   nothing loaded: the kernel's own allocator (SLUB with sheaves)
#   hooks    rslub loaded, hooks registered, backing only names_cache (which the
#            workloads do not allocate from): the cost of the hooks alone
#   rslub    rslub backing skbuff_head_cache, skbuff_fclone_cache and skbuff_small_head
#            with the run's parameters
# The guest clock counts instructions under -icount, so a time difference is an
# instruction count (scripts/bench/vm.sh); /proc/timer_list gives it in nanoseconds
# (now_ns).
# shellcheck source=scripts/bench/guest_init.sh
. /guest_init.sh

SKB=skbuff_head_cache,skbuff_fclone_cache,skbuff_small_head
topology

# names_cache allocates on a path lookup.
look_up() { ls / > /dev/null; }

# load VARIANT PARAMS...: sets up the allocator of a run.
load() {
	v=$1
	shift
	case "$v" in
	kernel | warmup) ;;
	hooks)
		# names_cache is found when it allocates: look paths up meanwhile.
		load_sighting look_up back=names_cache "$@" || say "insmod failed: $v $*"
		rm -f /tmp/stop
		;;
	rslub) insmod /rslub.ko back=$SKB "$@" || say "insmod failed: $v $*" ;;
	esac
}

# stats CACHE: rslub's counters of CACHE as JSON members (rslub runs only).
stats() {
	[ -r "$D/$1/stats" ] || return 0
	awk '{printf ",\"%s\":%s", $1, $2}' "$D/$1/stats"
	awk 'NR > 1 {s += $2} END {printf ",\"slabs\":%d", s}' "$D/$1/nodes"
	awk '$1 == "order" {printf ",\"order\":%s", $2} $1 == "objects_per_slab" {printf ",\"objects_per_slab\":%s", $2}' "$D/$1/layout"
	printf ',"min_partial_now":%s' "$(cat "$D/$1/min_partial")"
}

# unload VARIANT: unbacks, drains (a loopback datagram from each CPU flushes the skbs
# TCP deferred to it), unloads.
unload() {
	[ -e "$D/back" ] || return 0
	for c in $(awk '{print $1}' "$D/back"); do echo "-$c" > "$D/back"; done
	i=0
	while [ $i -lt 100 ]; do
		echo drain > "$D/back"
		[ -z "$(cat "$D/back")" ] && break
		/bin/pingpong kick
		i=$((i + 1))
	done
	[ -z "$(cat "$D/back")" ] || say "still draining: $(cat "$D/back")"
	rmmod rslub || say "rmmod failed"
}

# result EXP VARIANT JSON-MEMBERS: one RESULT line with rslub's counters per cache (a
# warm-up run prints none).
result() {
	[ "$2" = warmup ] && return 0
	line="{\"exp\":\"$1\",\"variant\":\"$2\",\"cpus\":$CPUS,\"nodes\":$NODES$3"
	if [ "$2" = rslub ]; then
		for c in ${SKB//,/ }; do
			line="$line,\"$c\":{\"cache\":\"$c\"$(stats "$c")}"
		done
	fi
	say "RESULT $line}"
}

# json_params NAME=NUMBER...: the run's module parameters, as JSON members.
json_params() {
	echo "$*" | awk '{for (i = 1; i <= NF; i++) {split($i, kv, "="); printf ",\"%s\":%s", kv[1], kv[2]}}'
}

# tcp_run "SERVER-MODE PORT" CLIENT-MODE ARGS...: pingpong's receiving half on a CPU of the
# last node, its sending half on a CPU of the first; sets out (the sender's line) and ns.
tcp_run() {
	# shellcheck disable=SC2086 # mode and port
	taskset -c "$CPU_B" /bin/pingpong $1 &
	srv=$!
	shift
	sleep 1
	t0=$(now_ns)
	out=$(taskset -c "$CPU_A" /bin/pingpong "$@" 2>&1)
	t1=$(now_ns)
	wait "$srv"
	ns=$((t1 - t0))
}

# seed 001: hackbench (unix sockets, 100-byte messages), for max_order 0..3 x
# min_objects 4 and 32 (small slabs and the largest each max_order allows; the make bench
# whole-system sweep takes the same points), against the kernel and the hooks alone.
HB_GROUPS=${HB_GROUPS:-2} HB_LOOPS=${HB_LOOPS:-100}
hackbench_run() {
	v=$1
	shift
	load "$v" "$@"
	t0=$(now_ns)
	out=$(hackbench -g "$HB_GROUPS" -l "$HB_LOOPS" 2>&1)
	t1=$(now_ns)
	# Every sender writes each message to every receiver of its group: 20 x 20 a group.
	msgs=$((HB_GROUPS * 400 * HB_LOOPS))
	result seed001 "$v" ",\"messages\":$msgs,\"ns\":$((t1 - t0)),\"hackbench\":\"$(echo "$out" | awk '/^Time:/ {print $2}')\"$(json_params "$@")"
	unload "$v"
}
seed001() {
	hackbench_run warmup
	hackbench_run kernel
	hackbench_run hooks
	for o in 0 1 2 3; do
		for m in 4 32; do
			hackbench_run rslub max_order=$o min_objects=$m
		done
	done
	hackbench_run kernel
}

# seed 002: TCP request/response over loopback between a CPU of the first node and one of
# the last, 64-byte messages, for a fixed number of round trips. Twice: with the kernel's
# deferred skb frees (net.core.skb_defer_max, default: the reader hands each skb back to
# the CPU that allocated it), and without (skb_defer_max=0: the reader frees it, on the
# other node, as in the seed thread's days).
PP_TRIPS=${PP_TRIPS:-5000}
pingpong_run() {
	v=$1
	shift
	load "$v" "$@"
	tcp_run "server 7001" client 7001 "$PP_TRIPS" 64
	result seed002 "$v" ",\"defer\":\"$DEFER\",\"round_trips\":$PP_TRIPS,\"ns\":$ns,\"client_cpu\":$CPU_A,\"server_cpu\":$CPU_B,\"check\":\"$out\""
	unload "$v"
}
seed002() {
	f=/proc/sys/net/core/skb_defer_max
	max=$(cat $f)
	pingpong_run warmup
	for DEFER in on off; do
		[ $DEFER = on ] && echo "$max" > $f || echo 0 > $f
		pingpong_run kernel
		pingpong_run hooks
		pingpong_run rslub
	done
	echo "$max" > $f
}

# seed 000: TCP streaming over loopback in 64 KiB writes (large skbs), min_partial fixed
# at 5 against the dynamic rule.
ST_MIB=${ST_MIB:-64}
stream_run() {
	v=$1
	shift
	load "$v" "$@"
	tcp_run "sink 7002" stream 7002 "$ST_MIB"
	result seed000 "$v" ",\"mib\":$ST_MIB,\"ns\":$ns,\"check\":\"$out\"$(json_params "$@")"
	unload "$v"
}
seed000() {
	stream_run warmup
	stream_run kernel
	stream_run hooks
	stream_run rslub min_partial=5
	stream_run rslub
	stream_run kernel
}

# wall: hackbench on the kernel and on rslub (default parameters) in turn, three times:
# wall-clock nanoseconds, for boots with every vCPU in a host thread of its own.
wall() {
	hackbench_run warmup
	for i in 1 2 3; do
		hackbench_run kernel
		hackbench_run rslub
	done
}

say "progress: real workloads on $CPUS CPUs, $NODES node(s): $*"
for e in "$@"; do
	case "$e" in
	seed000 | seed001 | seed002 | wall) say "progress: $e"; "$e" ;;
	*=*) export "${e?}" ;;
	*) say "unknown experiment $e" ;;
	esac
done
say done
poweroff -f
