#!/bin/busybox sh
# SPDX-License-Identifier: GPL-2.0
#
# /init of the whole-system benchmark guest (WHOLE=1 scripts/bench/vm.sh, run by
# scripts/bench/whole.sh): one allocator for the whole boot, then the seeds' whole-system
# workloads, each a warm-up run and a measured one, printed as RESULT lines (JSON).
# Whole-kernel mode cannot be unloaded, so the A/B is between boots that differ only in
# their first argument:
#
#   alloc=kernel   nothing loaded: the kernel's own allocator (SLUB with sheaves)
#   alloc=hooks    rslub loaded backing only nsproxy (allocated by unshare(), which no
#                  workload calls): the cost of the hooks that backing a cache registers
#   alloc=rslub    rslub loaded with back=all by the first command: every cache it can
#                  serve, and kmalloc, from then on (Documentation/backing.rst)
#
# Then rslub's parameters as rslub:NAME=VALUE, and the workloads: hackbench fio pingpong
# build fork execve kfree_rcu (Documentation/benchmarks_whole.rst says what each does).
#
# Each measured run is bracketed by two marks (/bin/mark, or the kfree_rcu module itself):
# the QEMU plugin scripts/bench/qemu/count.c logs the instructions executed so far at each,
# all vCPUs together and the kernel's apart, and the RESULT line names its two marks by
# number. The guest clock (/proc/timer_list) is read too: under -icount it counts
# instructions, plus the time every vCPU spent idle.
# shellcheck source=scripts/bench/guest_init.sh
. /guest_init.sh
export PATH=/usr/bin:/bin:/usr/sbin:/sbin

# A failure that leaves the boot's figures meaningless: no "done" line, which fails the
# benchmark on the host.
fatal() {
	say "fatal: $*"
	poweroff -f
}

# SCHED_FEATURES=A,B (from the kernel's command line): scheduler features to set first,
# as /sys/kernel/debug/sched/features takes them (NO_HRTICK: 7.3's slice-end timer off);
# the features in force are printed.
if [ -n "${SCHED_FEATURES:-}" ]; then
	for f in $(echo "$SCHED_FEATURES" | tr , ' '); do
		echo "$f" > /sys/kernel/debug/sched/features || fatal "cannot set scheduler feature $f"
	done
	say "scheduler features: $(cat /sys/kernel/debug/sched/features)"
fi

ALLOC=kernel PARAMS="" EXPS="" SCALE=1 DIV=1
for a in "$@"; do
	case "$a" in
	alloc=*) ALLOC=${a#alloc=} ;;
	rslub:*) PARAMS="$PARAMS ${a#rslub:}" ;;
	*=*) ;;
	*) EXPS="$EXPS $a" ;;
	esac
done

# The allocator, first: in whole-kernel mode rslub serves every cache from its first
# allocation after this.
case "$ALLOC" in
kernel) ;;
hooks)
	# nsproxy is found when it allocates: unshare() allocates one (and frees it: this
	# kernel has no namespaces) meanwhile.
	unshare_one() { unshare -u true 2>/dev/null; }
	# shellcheck disable=SC2086 # parameters
	load_sighting unshare_one back=nsproxy $PARAMS || fatal "insmod failed: alloc=hooks$PARAMS"
	;;
rslub)
	# shellcheck disable=SC2086 # parameters
	insmod /rslub.ko back=all $PARAMS || fatal "insmod failed: alloc=rslub$PARAMS"
	;;
*) fatal "unknown allocator $ALLOC" ;;
esac
# Where rslub's text is, for a profiled boot's report (its blocks past the kernel's text
# by their module's symbols: scripts/bench/qemu/count.c); not its init text, freed by now.
for s in /sys/module/rslub/sections/.text /sys/module/rslub/sections/.*.text; do
	case "${s##*/}" in .init.*) continue ;; esac
	[ ! -r "$s" ] || say "section rslub ${s##*/} $(cat "$s")"
done
# Whether the hooks' hottest functions are direct calls (rslub's direct= parameter; a
# site that is not where direct.S expects it is hooked by the handler instead, with a
# warning that the host looks for in the console).
DIRECT=$(cat /sys/module/rslub/parameters/direct 2>/dev/null || echo -)

topology
MARKS=0

# SLUB's counters that the report reads (mm/slub.c, enum stat_item), summed over the
# caches; sheaves' exist on 7.3 only, the CPU partial lists' on 6.12 only.
KSTATS="alloc_fastpath alloc_slowpath free_fastpath free_slowpath alloc_slab free_slab sheaf_refill sheaf_flush barn_get barn_get_fail barn_put barn_put_fail free_rcu_sheaf free_rcu_sheaf_fail"
# The counters classic SLUB and rslub share (rslub's files bear SLUB's names), per cache:
# the report compares rslub's under the classic profile with 6.12's.
FSTATS="alloc_fastpath alloc_slowpath free_fastpath free_slowpath free_frozen free_add_partial free_remove_partial alloc_refill alloc_from_partial alloc_slab free_slab alloc_node_mismatch cpuslab_flush deactivate_full deactivate_empty deactivate_to_head deactivate_to_tail deactivate_remote_frees deactivate_bypass order_fallback cpu_partial_alloc cpu_partial_free cpu_partial_node cpu_partial_drain"

mark() { /bin/mark; MARKS=$((MARKS + 1)); }

# snap FILE: the kernel's page and slab figures and its context switches ("-" lines),
# rslub's counters and slab bytes of every cache ("CACHE COUNTER VALUE" lines), and
# SLUB's counters summed over its caches where the kernel has them ("-k" lines, VARIANT=
# stats) and per cache ("-s" lines): scripts/bench/workloads/snapshot.c, one process in
# every boot (a snapshot's own process is work the next run must not inherit unevenly: its
# exit frees objects, some after a grace period).
snap() {
	/bin/snapshot -r "$D" -k "$KSTATS" "$FSTATS" > "$1" || fatal "snapshot failed"
}

# settle: before a run's first mark, the system at rest: a second of idle (free under
# -icount sleep=off) for the grace periods and deferred work of what ran before, and in
# whole-kernel mode until no cache has been newly backed for a second (up to ten).
settle() {
	sleep 1
	[ "$ALLOC" = rslub ] || return 0
	i=0
	n=$(grep -c . "$D/back")
	while [ $i -lt 10 ]; do
		sleep 1
		m=$(grep -c . "$D/back")
		[ "$m" = "$n" ] && break
		n=$m
		i=$((i + 1))
	done
}

# delta BEFORE AFTER: JSON members: the kernel's figures, SLUB's counters summed over its
# caches where it has them ("slub":{...}) and per cache for those that served at least 2%
# of the run's allocations ("slub_caches":{NAME:{...}}, with their layouts), rslub's
# summed over its caches ("rslub":{...}) and per cache likewise ("caches":{NAME:{...}}).
# Numbers are printed with %.0f: busybox awk's %d stops at 2^31.
delta() {
	awk -v d="$D" -v fstats="$FSTATS" '
	FNR == NR { before[$1 " " $2] += $3; next }
	{ after[$1 " " $2] += $3; if ($1 != "-" && $1 != "-k" && $1 != "-s") names[$1] = 1 }
	END {
		nf = split(fstats, l, " ")
		for (key in after) {
			split(key, w, " ")
			v = after[key] - before[key]
			if (w[1] == "-") k[w[2]] = (w[2] ~ /_kib$/) ? after[key] : v
			else if (w[1] == "-k") ks[w[2]] = v
			else if (w[1] == "-s") {
				split(w[2], cs, "/"); sc[cs[1], cs[2]] = v; snames[cs[1]] = 1
				if (cs[2] == "alloc_fastpath" || cs[2] == "alloc_slowpath") { sa[cs[1]] += v; sall += v }
			}
			else if (w[2] == "page_bytes" || w[2] == "meta_bytes") held[w[2]] += after[key]
			else {
				t[w[2]] += v; c[w[1], w[2]] = v
				if (w[2] == "alloc_fastpath" || w[2] == "alloc_slowpath") a[w[1]] += v
			}
		}
		printf ",\"pgalloc\":%.0f,\"pgfree\":%.0f,\"pgfault\":%.0f,\"ctxt\":%.0f,\"slab_kib\":%.0f,\"free_kib\":%.0f", k["pgalloc"], k["pgfree"], k["pgfault"], k["ctxt"], k["slab_kib"], k["free_kib"]
		if (length(ks)) {
			printf ",\"slub\":{"
			sep = ""
			for (x in ks) { printf "%s\"%s\":%.0f", sep, x, ks[x]; sep = "," }
			printf "}"
		}
		if (length(snames)) {
			printf ",\"slub_caches\":{"
			sep = ""
			for (n in snames) {
				if (sall == 0 || sa[n] * 50 < sall) continue
				printf "%s\"%s\":{", sep, n; sep = ","
				for (i = 1; i <= nf; i++) printf "%s\"%s\":%.0f", (i > 1 ? "," : ""), l[i], sc[n, l[i]]
				split("slab_size order objs_per_slab", lf, " ")
				split("size order objects_per_slab", ln, " ")
				for (i = 1; i <= 3; i++) {
					f = "/sys/kernel/slab/" n "/" lf[i]
					if ((getline line < f) > 0) printf ",\"%s\":%s", ln[i], line + 0
					close(f)
				}
				printf "}"
			}
			printf "}"
		}
		if (!length(names)) exit
		printf ",\"rslub_page_bytes\":%.0f,\"rslub_meta_bytes\":%.0f,\"rslub\":{", held["page_bytes"], held["meta_bytes"]
		sep = ""
		for (x in t) { printf "%s\"%s\":%.0f", sep, x, t[x]; sep = "," }
		printf "},\"caches\":{"
		all = t["alloc_fastpath"] + t["alloc_slowpath"]; sep = ""
		nf = split(fstats " node_lock node_lock_contended", l, " ")
		for (n in names) {
			if (all == 0 || a[n] * 50 < all) continue
			printf "%s\"%s\":{", sep, n; sep = ","
			for (i = 1; i <= nf; i++) printf "%s\"%s\":%.0f", (i > 1 ? "," : ""), l[i], c[n, l[i]]
			f = d "/" n "/layout"
			while ((getline line < f) > 0) {
				split(line, w, " ")
				if (w[1] == "size" || w[1] == "order" || w[1] == "objects_per_slab") printf ",\"%s\":%s", w[1], w[2]
			}
			close(f)
			printf "}"
		}
		printf "}"
	}' "$1" "$2"
}

# result EXP UNITS JSON M0 T0 T1 RC: the RESULT line of a run between marks M0 and M0 + 1.
result() {
	say "RESULT {\"exp\":\"$1\",\"alloc\":\"$ALLOC\",\"params\":\"${PARAMS# }\",\"direct\":\"$DIRECT\",\"cpus\":$CPUS,\"nodes\":$NODES,\"units\":$2,\"mark0\":$4,\"mark1\":$(($4 + 1)),\"ns\":$(($6 - $5)),\"rc\":$7$3$(delta /tmp/before /tmp/after)}"
}

# measure EXP UNITS JSON COMMAND...: a run of COMMAND between two marks; WARM=1 for the
# warm-up run (no line). UNITS is the run's count of its unit of work.
measure() {
	exp=$1 units=$2 extra=$3
	shift 3
	# A warm-up run reports nothing: no snapshots (the settle before every run's first
	# mark lets their work end before the next run's).
	[ "${WARM:-0}" = 1 ] || snap /tmp/before
	settle
	m0=$MARKS
	t0=$(now_ns)
	mark
	"$@" > /tmp/out 2>&1
	rc=$?
	mark
	t1=$(now_ns)
	[ "${WARM:-0}" = 1 ] || snap /tmp/after
	[ "$rc" -eq 0 ] || { say "$exp failed ($rc): $(grep -m 3 -i -e error -e fail /tmp/out || tail -n 3 /tmp/out)"; FAILED=1; }
	# A warm-up run's deferred work (grace periods, exits) ends before the next run's
	# first snapshot, as a snapshot used to end it (idle costs no instructions).
	[ "${WARM:-0}" = 1 ] && { settle; return 0; }
	result "$exp" "$units" "$extra" "$m0" "$t0" "$t1" "$rc"
}

# Each workload: a warm-up run (caches sighted and backed, page cache filled), then the
# measured one.
twice() {
	WARM=1
	"$@"
	WARM=0
	"$@"
}

# Workloads whose program starts up at length (perf and fio map tens of MiB of libraries)
# run measured at two sizes, N and 2N: the report takes the difference as the work of N
# units without the start-up ("scale" 1 and 2). Their warm-up run does a quarter of N
# (DIV): enough to sight and back their caches and fill the page cache, at a fraction of
# the boot's time.
thrice() {
	WARM=1 SCALE=1 DIV=4
	"$@"
	WARM=0 DIV=1
	"$@"
	SCALE=2
	"$@"
	SCALE=1
}

# seed 001: hackbench, unix sockets, 100-byte messages; every sender writes each message
# to every receiver of its group: 20 x 20 a group.
HB_GROUPS=${HB_GROUPS:-2} HB_LOOPS=${HB_LOOPS:-100}
hackbench_run() { measure hackbench $((HB_GROUPS * 400 * HB_LOOPS)) ",\"groups\":$HB_GROUPS,\"loops\":$HB_LOOPS" hackbench -g "$HB_GROUPS" -l "$HB_LOOPS"; }

# seed 000: fio's net engine over TCP loopback, the shape of fio's examples/netio (a
# receiver and a sender of 4 KiB blocks); the receiver listens before the run starts.
FIO_MIB=${FIO_MIB:-32}
fio_pair() {
	fio --output=/tmp/fio.send --name=sender --ioengine=net --protocol=tcp --port=8888 \
		--hostname=127.0.0.1 --bs=4k --size="${mib}m" --rw=write --cpus_allowed="$CPU_A" || return 1
	wait "$FIO_RECV" || return 1
	grep -q "err= 0" /tmp/fio.send && grep -q "err= 0" /tmp/fio.recv
}
fio_run() {
	mib=$((FIO_MIB * SCALE / DIV))
	# The receiver is told twice the size, and ends when the sender closes: told the same
	# size, it sometimes closed with data unread (its count runs ahead of what it took in),
	# and the sender's next write died of SIGPIPE.
	# Each on a CPU of its own, as the ping-pong's: the first CPU of node 0 sends, the
	# last of the last node receives. Left to the scheduler, where each ran moved the counts
	# from boot to boot by more than the allocators differ.
	fio --output=/tmp/fio.recv --name=receiver --ioengine=net --protocol=tcp --port=8888 \
		--listen --bs=4k --size="$((2 * mib))m" --rw=read --cpus_allowed="$CPU_B" &
	FIO_RECV=$!
	i=0
	while ! netstat -ltn 2>/dev/null | grep -q ':8888 ' && [ $i -lt 100 ]; do sleep 0.1; i=$((i + 1)); done
	measure fio $((mib * 256)) ",\"mib\":$mib,\"bs\":4096,\"scale\":$SCALE,\"sender_cpu\":$CPU_A,\"receiver_cpu\":$CPU_B" fio_pair
}

# seed 002: TCP request/response of 64 bytes between a CPU of the first node and one of
# the last, with the kernel's deferred skb frees and without.
PP_TRIPS=${PP_TRIPS:-5000}
pp_pair() {
	taskset -c "$CPU_A" /bin/pingpong client 7001 "$PP_TRIPS" 64 || return 1
	wait "$PP_SRV"
}
pingpong_run() {
	taskset -c "$CPU_B" /bin/pingpong server 7001 > /tmp/pp.srv 2>&1 &
	PP_SRV=$!
	sleep 1
	measure pingpong "$PP_TRIPS" ",\"defer\":\"$DEFER\",\"client_cpu\":$CPU_A,\"server_cpu\":$CPU_B" pp_pair
}
pingpong_both() {
	f=/proc/sys/net/core/skb_defer_max
	max=$(cat $f)
	for DEFER in on off; do
		[ $DEFER = on ] && echo "$max" > $f || echo 0 > $f
		twice pingpong_run
	done
	echo "$max" > $f
}

# seed 003: a build of a fixed set of C files (scripts/bench/workloads/build.mk) with the
# guest's gcc, make -j CPUS; the warm-up run builds two of them (the target warm).
build_run() {
	make -s -C /build -f build.mk clean
	target=all
	[ "${WARM:-0}" = 1 ] && target=warm
	measure build "$(make -s -C /build -f build.mk count)" ",\"jobs\":$CPUS" \
		make -s -C /build -f build.mk -j"$CPUS" $target
}

# The 2026 sheaves regressions: perf bench syscall fork and execve (Debian's perf 6.12).
FORKS=${FORKS:-250} EXECS=${EXECS:-250}
fork_run() { measure fork $((FORKS * SCALE / DIV)) ",\"scale\":$SCALE" perf bench syscall fork -l $((FORKS * SCALE / DIV)); }
execve_run() { measure execve $((EXECS * SCALE / DIV)) ",\"scale\":$SCALE" perf bench syscall execve -l $((EXECS * SCALE / DIV)); }

# kfree_rcu() over a cache of the module's own (bench/kfree_rcu.c): the module marks its
# own start and end, around the loop and the cache's destroy, and times them itself. The
# cache is gone by the end of the run, and rslub's counters with it: only the kernel's
# figures are kept. In whole-kernel mode rslub must have backed the cache before the loop
# (its message comes before the module's last).
RCU_OBJECTS=${RCU_OBJECTS:-100000}
kfree_rcu_run() {
	[ "${WARM:-0}" = 1 ] || snap /tmp/before
	settle
	m0=$MARKS
	before=$(dmesg | grep -c "rslub_kfree_rcu: done")
	insmod /rslub_kfree_rcu.ko objects="$RCU_OBJECTS" > /tmp/out 2>&1
	rc=$?
	[ "${WARM:-0}" = 1 ] || snap /tmp/after
	rmmod rslub_kfree_rcu 2>/dev/null
	# The marks it made are unknown if it failed: no later run could be matched.
	[ "$rc" -eq 0 ] && [ "$(dmesg | grep -c "rslub_kfree_rcu: done")" -gt "$before" ] ||
		fatal "kfree_rcu failed ($rc): $(cat /tmp/out) $(dmesg | grep rslub_kfree_rcu | tail -n 3)"
	if [ "$ALLOC" = rslub ]; then
		dmesg | grep -E "rslub: backing rslub_kfree_rcu|rslub_kfree_rcu: done" | tail -n 2 |
			head -n 1 | grep -q "backing" || fatal "whole-kernel mode did not back rslub_kfree_rcu"
	fi
	MARKS=$((MARKS + 2))
	[ "${WARM:-0}" = 1 ] && { settle; return 0; }
	ns=$(dmesg | grep "rslub_kfree_rcu: done" | tail -n 1)
	ns=${ns##* ns=}
	result kfree_rcu "$RCU_OBJECTS" ",\"module\":1" "$m0" 0 "$ns" 0
}

# The fast paths in instructions (bench/kmem_micro.c): a kernel cache, on whichever kernel
# this is; in a kernel boot on a Rust-enabled kernel also an rslub cache through rslub's C
# API (rslub.ko loaded for it, backing nothing), and the kernel API's cache served by rslub,
# backed by its name (the back file); in a whole-kernel boot the kernel API's cache, which
# rslub backs when it sights it. No marks: the module times itself by the guest clock,
# which counts instructions. The last workload of the boot.
micro_run() {
	if [ "$ALLOC" = rslub ]; then
		micro_backed rslub_whole || return 0
	else
		insmod /rslub_kmem_micro.ko || { say "micro failed: kernel"; FAILED=1; return 0; }
		rmmod rslub_kmem_micro
	fi
	if [ "$ALLOC" = kernel ] && [ -f /rslub_kmem_micro_api.ko ]; then
		{ insmod /rslub.ko && insmod /rslub_kmem_micro_api.ko; } ||
			{ say "micro failed: rslub"; FAILED=1; rmmod rslub 2>/dev/null; return 0; }
		rmmod rslub_kmem_micro_api
		micro_backed rslub_back || { rmmod rslub 2>/dev/null; return 0; }
		rmmod rslub
	fi
	dmesg | sed -n 's/.*rslub_kmem_micro: RESULT {\(.*\)}$/\1/p' | while read -r r; do
		say "RESULT {\"exp\":\"micro\",\"alloc\":\"$ALLOC\",\"cpus\":$CPUS,\"nodes\":$NODES,\"units\":1,\"module\":{$r}}"
	done
}

# micro_backed WHO: the kernel API's micro cache while rslub serves it (rslub loaded):
# WHO rslub_back backs it by name through the back file, rslub_whole waits for
# whole-kernel mode to back it. Either way the back file lists it as backed before the
# module says it measures, or the figure would be the kernel's: a failure.
micro_backed() {
	n0=$(dmesg | grep -c 'rslub_kmem_micro: measuring')
	insmod /rslub_kmem_micro.ko who="$1" settle_ms=3000 &
	pid=$!
	if [ "$1" = rslub_back ]; then
		echo rslub_kmem_micro > "$D/back" || say "micro failed: back=rslub_kmem_micro"
	fi
	i=0
	until grep -q '^rslub_kmem_micro backed' "$D/back" || [ $i -ge 30 ]; do
		sleep 0.1
		i=$((i + 1))
	done
	ok=1
	grep -q '^rslub_kmem_micro backed' "$D/back" || ok=0
	[ "$(dmesg | grep -c 'rslub_kmem_micro: measuring')" = "$n0" ] || ok=0
	wait "$pid" || ok=0
	rmmod rslub_kmem_micro 2>/dev/null
	if [ $ok = 0 ]; then
		say "micro failed: $1: rslub_kmem_micro not backed before it measured"
		FAILED=1
		return 1
	fi
}

# hbtrace: hackbench (HB_GROUPS groups, TRACE_LOOPS loops) with the kernel's kmem events
# of skbuff_head_cache on (its allocations in __alloc_skb, its frees by name), measured as
# a run of its own; then the events in order, one "rslub_bench: TRACE CPU A|F ADDRESS" line
# each, for the replay of the sequence through rslub (tests-kunit/fidelity_tests.rs).
# Only the kernel's own allocator has the events: alloc=kernel boots.
TRACE_LOOPS=${TRACE_LOOPS:-25}
hbtrace_run() {
	t=/sys/kernel/tracing
	mount -t tracefs nodev "$t" 2>/dev/null
	echo 8192 > "$t/buffer_size_kb"
	# One clock for all CPUs: the replay follows the order of the events across them.
	echo global > "$t/trace_clock"
	echo nohash-ptr > "$t/trace_options"
	echo 'bytes_alloc == 256' > "$t/events/kmem/kmem_cache_alloc/filter"
	echo 'name == "skbuff_head_cache"' > "$t/events/kmem/kmem_cache_free/filter"
	echo > "$t/trace"
	echo 1 > "$t/events/kmem/kmem_cache_alloc/enable"
	echo 1 > "$t/events/kmem/kmem_cache_free/enable"
	measure hbtrace $((HB_GROUPS * 400 * TRACE_LOOPS)) ",\"groups\":$HB_GROUPS,\"loops\":$TRACE_LOOPS" \
		hackbench -g "$HB_GROUPS" -l "$TRACE_LOOPS"
	echo 0 > "$t/events/kmem/kmem_cache_alloc/enable"
	echo 0 > "$t/events/kmem/kmem_cache_free/enable"
	# A full buffer overwrites the oldest events: a sequence with a hole is no sequence.
	lost=$(cat "$t"/per_cpu/cpu*/stats | awk '$1 == "overrun:" || $1 == "commit" || $1 == "dropped" {n += $NF} END {print n + 0}')
	[ "$lost" = 0 ] || fatal "hbtrace: $lost events lost (buffer_size_kb too small)"
	awk '
	/kmem_cache_alloc: call_site=__alloc_skb/ || / kmem_cache_free: / {
		if (!match($0, /\[[0-9]+\]/)) next
		cpu = substr($0, RSTART + 1, RLENGTH - 2) + 0
		if (!match($0, / ptr=[0-9a-f]+/)) next
		print "rslub_bench: TRACE " cpu " " ($0 ~ /kmem_cache_alloc/ ? "A" : "F") " " substr($0, RSTART + 5, RLENGTH - 5)
	}' "$t/trace"
	say "TRACE end"
}

FAILED=0
say "progress: whole-system workloads, alloc=$ALLOC$PARAMS, direct=$DIRECT, $CPUS CPUs, $NODES node(s):$EXPS"
# A run of nothing, as every run is measured: what the snapshots and the rest allocate
# themselves (the SLUB_STATS kernel's snapshot opens thousands of counter files), which
# the report subtracts from every run's counters of the boot. Measured twice, and the
# report takes the second: the first snapshot of a boot makes the counter files' inodes
# and dentries, which later snapshots find made (subtracting the first run's counts took
# more from every run than its snapshots cost, below the counts of its own caches).
measure noop 1 "" true
measure noop 1 "" true
for e in $EXPS; do
	say "progress: $e"
	case "$e" in
	hackbench) twice hackbench_run ;;
	fio) thrice fio_run ;;
	pingpong) pingpong_both ;;
	build) twice build_run ;;
	fork) thrice fork_run ;;
	execve) thrice execve_run ;;
	kfree_rcu) twice kfree_rcu_run ;;
	micro) micro_run ;;
	hbtrace) WARM=1; hackbench_run; WARM=0; hbtrace_run ;;
	*) say "unknown workload $e"; FAILED=1 ;;
	esac
done
# What rslub served, for the report (rslub boots). The host checks the console for the
# kernel's reports and rslub's warnings (the patterns of scripts/test/reports.py).
if [ -r "$D/back" ]; then
	say "SERVED $(awk '$2 == "backed" || $2 == "kmalloc" {n++} END {print n + 0}' "$D/back") $(grep -c refused "$D/back")"
	sed 's/^/rslub_bench: BACK /' "$D/back"
fi
# The marks this guest made, which the report checks against the plugin's count.
say "MARKS $MARKS"
say "failed $FAILED"
say done
poweroff -f
