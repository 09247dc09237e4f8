#!/bin/busybox sh
# SPDX-License-Identifier: GPL-2.0
#
# /init of the whole-system benchmark guest (WHOLE=1 scripts/bench_vm.sh, run by
# scripts/bench_whole.sh): one allocator for the whole boot, then the seeds' whole-system
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
# the QEMU plugin scripts/qemu/count.c logs the instructions executed so far at each, all
# vCPUs together and the kernel's apart, and the RESULT line names its two marks by
# number. The guest clock (/proc/timer_list) is read too: under -icount it counts
# instructions, plus the time every vCPU spent idle.
/bin/busybox mkdir -p /proc /sys /tmp /usr/bin /usr/sbin /sbin
/bin/busybox --install -s
mount -t proc proc /proc
mount -t sysfs sys /sys
mount -t debugfs none /sys/kernel/debug
ip link set lo up
echo 0 > /proc/sys/kernel/printk_ratelimit 2>/dev/null
export PATH=/usr/bin:/bin:/usr/sbin:/sbin

say() { echo "rslub_bench: $*"; }

ALLOC=kernel PARAMS="" EXPS=""
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
	(while [ ! -e /tmp/stop ]; do unshare -u true 2>/dev/null; done) &
	# shellcheck disable=SC2086 # parameters
	insmod /rslub.ko back=nsproxy $PARAMS || say "insmod failed: alloc=hooks$PARAMS"
	touch /tmp/stop
	wait
	;;
rslub)
	# shellcheck disable=SC2086 # parameters
	insmod /rslub.ko back=all $PARAMS || say "insmod failed: alloc=rslub$PARAMS"
	;;
*) say "unknown allocator $ALLOC" ;;
esac

D=/sys/kernel/debug/rslub
CPUS=$(grep -c ^processor /proc/cpuinfo)
NODES=$(ls -d /sys/devices/system/node/node* | wc -l)
# A CPU of the first and of the last node.
CPU_A=$(sed 's/[-,].*//' /sys/devices/system/node/node0/cpulist)
CPU_B=$(sed 's/.*[-,]//' /sys/devices/system/node/node$((NODES - 1))/cpulist)
MARKS=0

# SLUB's counters that the report reads (mm/slub.c, enum stat_item).
KSTATS="alloc_fastpath alloc_slowpath free_fastpath free_slowpath alloc_slab free_slab sheaf_refill sheaf_flush barn_get barn_get_fail barn_put barn_put_fail free_rcu_sheaf free_rcu_sheaf_fail"

now_ns() { awk '/^now at/ {print $3; exit}' /proc/timer_list; }
mark() { /bin/mark; MARKS=$((MARKS + 1)); }

# snap FILE: the kernel's page and slab figures, and rslub's counters of every cache, as
# "cache counter value" lines ("-" for the kernel's).
snap() {
	awk '/^pgalloc_/ {p += $2} /^pgfree / {f = $2}
		END {print "- pgalloc", p; print "- pgfree", f}' /proc/vmstat > "$1"
	awk '$1 == "Slab:" {print "- slab_kib", $2} $1 == "MemFree:" {print "- free_kib", $2}' \
		/proc/meminfo >> "$1"
	# SLUB's own counters (VARIANT=stats: CONFIG_SLUB_STATS), per cache, not per alias.
	if [ -r /sys/kernel/slab/kmalloc-64/alloc_fastpath ]; then
		for c in /sys/kernel/slab/*; do
			[ -L "$c" ] && continue
			for k in $KSTATS; do
				read -r v _ < "$c/$k" && echo "-k $k $v"
			done
		done | awk '{t[$2] += $3} END {for (k in t) print "-k", k, t[k]}' >> "$1"
	fi
	[ -d "$D" ] || return 0
	for f in "$D"/*/stats; do
		[ -r "$f" ] || continue
		c=${f%/stats}
		c=${c##*/}
		awk -v c="$c" '{print c, $1, $2}' "$f"
		awk -v c="$c" '$1 == "bytes" {split($2, p, "="); split($3, m, "=");
			print c, "page_bytes", p[2]; print c, "meta_bytes", m[2]}' "$D/$c/nodes"
	done >> "$1"
}

# delta BEFORE AFTER: JSON members: the kernel's figures, SLUB's counters summed over its
# caches where it has them ("slub":{...}), rslub's summed over its caches ("rslub":{...}),
# and per cache for those that served at least 2% of the run's
# allocations ("caches":{NAME:{...}}, with their layouts).
delta() {
	awk -v d="$D" '
	FNR == NR { before[$1 " " $2] = $3; next }
	{
		v = $3 - before[$1 " " $2]
		if ($1 == "-") { k[$2] = ($2 ~ /_kib$/) ? $3 : v; next }
		if ($1 == "-k") { ks[$2] = v; next }
		if ($2 == "page_bytes" || $2 == "meta_bytes") { held[$2] += $3; next }
		t[$2] += v; c[$1, $2] = v; names[$1] = 1
		if ($2 == "alloc_fastpath" || $2 == "alloc_slowpath") a[$1] += v
	}
	END {
		printf ",\"pgalloc\":%d,\"pgfree\":%d,\"slab_kib\":%d,\"free_kib\":%d", k["pgalloc"], k["pgfree"], k["slab_kib"], k["free_kib"]
		if (length(ks)) {
			printf ",\"slub\":{"
			sep = ""
			for (s in ks) { printf "%s\"%s\":%d", sep, s, ks[s]; sep = "," }
			printf "}"
		}
		if (!length(names)) exit
		printf ",\"rslub_page_bytes\":%d,\"rslub_meta_bytes\":%d,\"rslub\":{", held["page_bytes"], held["meta_bytes"]
		sep = ""
		for (s in t) { printf "%s\"%s\":%d", sep, s, t[s]; sep = "," }
		printf "},\"caches\":{"
		all = t["alloc_fastpath"] + t["alloc_slowpath"]; sep = ""
		for (n in names) {
			if (all == 0 || a[n] * 50 < all) continue
			printf "%s\"%s\":{", sep, n; sep = ","
			split("alloc_fastpath alloc_slowpath free_fastpath free_slowpath node_lock node_lock_contended alloc_slab free_slab", l, " ")
			for (i = 1; i in l; i++) printf "%s\"%s\":%d", (i > 1 ? "," : ""), l[i], c[n, l[i]]
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

# measure EXP UNITS JSON COMMAND...: a run of COMMAND between two marks; WARM=1 for the
# warm-up run (no line). UNITS is the run's count of its unit of work.
measure() {
	exp=$1 units=$2 extra=$3
	shift 3
	snap /tmp/before
	m0=$MARKS
	t0=$(now_ns)
	mark
	"$@" > /tmp/out 2>&1
	rc=$?
	mark
	t1=$(now_ns)
	snap /tmp/after
	[ "$rc" -eq 0 ] || { say "$exp failed ($rc): $(grep -m 3 -i -e error -e fail /tmp/out || tail -n 3 /tmp/out)"; FAILED=1; }
	[ "${WARM:-0}" = 1 ] && return 0
	say "RESULT {\"exp\":\"$exp\",\"alloc\":\"$ALLOC\",\"params\":\"${PARAMS# }\",\"cpus\":$CPUS,\"nodes\":$NODES,\"units\":$units,\"mark0\":$m0,\"mark1\":$((m0 + 1)),\"ns\":$((t1 - t0)),\"rc\":$rc$extra$(delta /tmp/before /tmp/after)}"
}

# Each workload: a warm-up run (caches sighted and backed, page cache filled), then the
# measured one.
twice() {
	WARM=1
	"$@"
	WARM=0
	"$@"
}

# seed 001: hackbench, unix sockets, 100-byte messages; every sender writes each message
# to every receiver of its group: 20 x 20 a group.
HB_GROUPS=${HB_GROUPS:-2} HB_LOOPS=${HB_LOOPS:-100}
hackbench_run() { measure hackbench $((HB_GROUPS * 400 * HB_LOOPS)) ",\"groups\":$HB_GROUPS,\"loops\":$HB_LOOPS" hackbench -g "$HB_GROUPS" -l "$HB_LOOPS"; }

# seed 000: fio's net engine over TCP loopback, the shape of fio's examples/netio (a
# receiver and a sender of 4 KiB blocks); the receiver listens before the run starts.
FIO_MIB=${FIO_MIB:-64}
fio_pair() {
	fio --output=/tmp/fio.send --name=sender --ioengine=net --protocol=tcp --port=8888 \
		--hostname=127.0.0.1 --bs=4k --size="${FIO_MIB}m" --rw=write || return 1
	wait "$FIO_RECV" || return 1
	grep -q "err= 0" /tmp/fio.send && grep -q "err= 0" /tmp/fio.recv
}
fio_run() {
	fio --output=/tmp/fio.recv --name=receiver --ioengine=net --protocol=tcp --port=8888 \
		--listen --bs=4k --size="${FIO_MIB}m" --rw=read &
	FIO_RECV=$!
	i=0
	while ! netstat -ltn 2>/dev/null | grep -q ':8888 ' && [ $i -lt 100 ]; do sleep 0.1; i=$((i + 1)); done
	measure fio $((FIO_MIB * 256)) ",\"mib\":$FIO_MIB,\"bs\":4096" fio_pair
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

# seed 003: a build of a fixed set of C files (scripts/workloads/build.mk) with the guest's
# gcc, make -j CPUS.
build_run() {
	make -s -C /build -f build.mk clean
	measure build "$(make -s -C /build -f build.mk count)" ",\"jobs\":$CPUS" \
		make -s -C /build -f build.mk -j"$CPUS"
}

# The 2026 sheaves regressions: perf bench syscall fork and execve (Debian's perf 6.12).
FORKS=${FORKS:-500} EXECS=${EXECS:-500}
fork_run() { measure fork "$FORKS" "" perf bench syscall fork -l "$FORKS"; }
execve_run() { measure execve "$EXECS" "" perf bench syscall execve -l "$EXECS"; }

# kfree_rcu() over a cache of the module's own (bench/kfree_rcu.c): the module marks its
# own start and end, around the loop and the cache's destroy.
RCU_OBJECTS=${RCU_OBJECTS:-100000}
kfree_rcu_run() {
	snap /tmp/before
	m0=$MARKS
	t0=$(now_ns)
	insmod /rslub_kfree_rcu.ko objects="$RCU_OBJECTS" > /tmp/out 2>&1
	rc=$?
	t1=$(now_ns)
	snap /tmp/after
	rmmod rslub_kfree_rcu 2>/dev/null
	line=$(dmesg | grep "rslub_kfree_rcu: done" | tail -n 1)
	if [ "$rc" -ne 0 ] || [ -z "$line" ]; then
		# The marks it made are unknown: no later run could be matched with its own.
		say "kfree_rcu failed ($rc): $(cat /tmp/out) $(dmesg | grep rslub_kfree_rcu | tail -n 3)"
		poweroff -f
	fi
	dmesg -c > /dev/null
	MARKS=$((MARKS + 2))
	[ "${WARM:-0}" = 1 ] && return 0
	say "RESULT {\"exp\":\"kfree_rcu\",\"alloc\":\"$ALLOC\",\"params\":\"${PARAMS# }\",\"cpus\":$CPUS,\"nodes\":$NODES,\"units\":$RCU_OBJECTS,\"mark0\":$m0,\"mark1\":$((m0 + 1)),\"ns\":$((t1 - t0)),\"rc\":0,\"module_ns\":${line##* ns=}$(delta /tmp/before /tmp/after)}"
}

say "progress: whole-system workloads, alloc=$ALLOC$PARAMS, $CPUS CPUs, $NODES node(s):$EXPS"
[ -e "$D/back" ] && say "back: $(grep -c . "$D/back") lines in $D/back"
FAILED=0
dmesg -c > /dev/null
for e in $EXPS; do
	say "progress: $e"
	case "$e" in
	hackbench) twice hackbench_run ;;
	fio) twice fio_run ;;
	pingpong) pingpong_both ;;
	build) twice build_run ;;
	fork) twice fork_run ;;
	execve) twice execve_run ;;
	kfree_rcu) twice kfree_rcu_run ;;
	*) say "unknown workload $e"; FAILED=1 ;;
	esac
done
# What rslub served, for the report (rslub boots).
if [ -r "$D/back" ]; then
	say "SERVED $(awk '$2 == "backed" || $2 == "kmalloc" {n++} END {print n + 0}' "$D/back") $(grep -c refused "$D/back")"
	sed 's/^/rslub_bench: BACK /' "$D/back"
fi
dmesg | grep -iE "BUG|WARNING|Oops|rslub: .*(error|corrupt)" | head -n 20 | sed 's/^/rslub_bench: KERNEL /'
say "failed $FAILED"
say done
poweroff -f
