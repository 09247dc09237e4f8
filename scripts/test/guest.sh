#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# Runs inside the test guest (started by scripts/test/vm.sh), as root.
#
#   guest.sh test RUNDIR MODDIR KPARAMS BACK
#                                       load checks (as KTAP suite rslub_load), then the
#                                       KUnit module with KPARAMS, backing BACK while
#                                       traffic flows over loopback, then the checks of
#                                       suite rslub_traffic; results go to RUNDIR/ktap/<suite>
#   guest.sh whole RUNDIR MODDIR        suite rslub_whole_kernel: rslub loaded by the first
#                                       command (rslub.back=all on the command line), the
#                                       whole kernel on it
#   guest.sh coverage RUNDIR MODDIR     which of the guest's caches rslub could back
#   guest.sh run  RUNDIR MODDIR PARAMS [BACK]
#                                       modprobe rslub PARAMS, print what it reports; with
#                                       BACK, back those caches while hackbench runs, print
#                                       rslub's statistics for them, unback, drain, rmmod;
#                                       BACK=all: rslub loaded by the first command, the whole
#                                       kernel on it while hackbench runs (no rmmod)
#
# RUNDIR is shared read-write with the host; RUNDIR/done holds the exit status.
# RSLUB_SUITES (test): the suites to run, space-separated (vm.sh's SUITE); all if unset.
set -uo pipefail
mode=$1 rundir=$2 moddir=$3 params=${4:-} back=${5:-}
scripts=$(cd "$(dirname "$0")/.." && pwd)

# whole (and run with back=all, make run WHOLE=1): rslub is loaded by the guest's first
# command, with back=all from the kernel command line (rslub.back=all, which modprobe
# passes on), and serves the rest of the boot.
# kmemleak (the debug kernel): what the boot leaked before anything of rslub's ran is not
# under test: two scans find it (an object is reported once unreferenced and unchanged
# across two) and `clear` keeps it out of every later report. The checks end with
# kmemleak_finds_nothing.
kmemleak=/sys/kernel/debug/kmemleak
kmemleak_baseline() {
	# Lockdep must still be on when the checks begin (a report during the boot, which
	# the checks do not scan, would have switched it off for the whole run).
	if [ -r /proc/lockdep_stats ] && grep -q 'debug_locks: *0' /proc/lockdep_stats; then
		echo "guest: lockdep was off before the checks began (debug_locks 0)" >> "$rundir/guest.log"
	fi
	[ -e $kmemleak ] || return 0
	# Objects younger than 5 s are never reported: what the boot allocated last is
	# cleared too.
	sleep 6
	echo scan > $kmemleak && echo scan > $kmemleak && echo clear > $kmemleak
}
if [ "$mode" = whole ] || { [ "$mode" = run ] && [ "$back" = all ]; }; then
	mount -t debugfs none /sys/kernel/debug 2>/dev/null
	kmemleak_baseline
	echo "rslub-test: checks begin" > /dev/kmsg
	# shellcheck disable=SC2086 # PARAMS is a list of name=value words
	modprobe -d "$rundir/modtree" rslub $params > "$rundir/whole-modprobe.out" 2>&1
	echo $? > "$rundir/whole-modprobe.rc"
fi
mount -t debugfs none /sys/kernel/debug 2>/dev/null
# `run` keeps the console quiet (what matters is printed from dmesg); `test` leaves the
# kernel log on the console, which the host keeps in vng.log, for a guest that hangs.
[ "$mode" != test ] && [ "$mode" != whole ] && dmesg -n 1 2>/dev/null

# Kernel log lines printed since mark_log was last called.
log_mark=0
mark_log() { log_mark="rslub-guest-mark-$RANDOM$RANDOM"; echo "$log_mark" > /dev/kmsg; }
new_log() { dmesg | sed -n "/$log_mark\$/,\$p" | tail -n +2; }

# modprobe finds the modules in RUNDIR/modtree, where the host installed them with
# `make modules_install INSTALL_MOD_PATH=RUNDIR/modtree` (scripts/test/vm.sh).

# unback_and_drain FILE NAMES [ROUNDS]: unbacks each cache of the comma-separated NAMES
# through the back file FILE, then asks it to destroy drained caches until none of NAMES
# is listed and no cache drains that did not before (none at all is listed, if NAMES is
# empty), ROUNDS of 0.1 s (100 by default), sending a loopback datagram from each CPU
# between attempts: TCP defers the free of a received skb to the CPU that allocated it,
# until that CPU's next packet. Prints the rounds it took, or what is left. A cache that
# is not one of NAMES and was backed or draining already (one a failed KUnit case left)
# is not waited for; one that began to drain here is (a name merged into another cache
# is listed under that cache's name).
unback_and_drain() {
	local f=$1 c n left before
	before=" $(awk '$2 == "draining" { printf "%s ", $1 }' "$f")"
	for c in ${2//,/ }; do echo "-$c" > "$f" || return 1; done
	for n in $(seq "${3:-100}"); do
		echo drain > "$f"
		left=$(awk -v names=",$2," -v before="$before" 'names == ",," ||
			index(names, "," $1 ",") || ($2 == "draining" && !index(before, " " $1 " "))' "$f")
		[ -z "$left" ] && { echo "$n drain round(s)"; return 0; }
		kick
		sleep 0.1
	done
	echo "still draining after ${3:-100} rounds: $left"
	return 1
}

# have_memcg: whether the kernel has memory cgroups (the cgroup2 hierarchy, mounted here
# if it is not yet, offers the memory controller; /proc/cgroups lists only the
# controllers of cgroup v1).
have_memcg() {
	grep -qw memory /sys/fs/cgroup/cgroup.controllers 2>/dev/null ||
		{ mount -t cgroup2 none /sys/fs/cgroup 2>/dev/null &&
			grep -qw memory /sys/fs/cgroup/cgroup.controllers; }
}

# kick: one UDP datagram over loopback from each CPU in turn (traffic.py --kick, without
# starting Python each round, which takes seconds on the debug kernel): each CPU's NET_RX
# softirq then frees the skbs other CPUs deferred to it.
kick() {
	local cpu
	for cpu in $(seq 0 $(($(nproc --all) - 1))); do
		taskset -c "$cpu" bash -c 'echo x > /dev/udp/127.0.0.1/9' 2>/dev/null || true
	done
}

# hackbench_views RUN VIEW BACK TABLE (make run): hackbench (4 groups of 10 senders and
# 10 receivers over unix sockets, 1000 messages each) under the activity view of
# scripts/slabinfo, then rslub's back file, then the kernel's own slabinfo
# (tools/mm/slabinfo) on rslub's tree: the table of rslub's caches; each announced by
# its lines (RUN and VIEW the first two).
hackbench_views() {
	echo "guest: $1"
	echo "guest: $2"
	RSLUB_SLABINFO=$moddir/slabinfo "$scripts/slabinfo" --command "hackbench -g 4 -l 1000" \
		-AD 2>&1 | sed 's/^/  /'
	[ "${PIPESTATUS[0]}" -eq 0 ] || return 1
	echo "guest: $3"
	sed 's/^/  /' /sys/kernel/debug/rslub/back
	echo "guest: $4"
	RSLUB_SLABINFO=$moddir/slabinfo "$scripts/slabinfo" | sed 's/^/  /' || return 1
}

# run_backed: with rslub backing $back, hackbench_views, then the report of the first
# backed cache, then unbacking, draining and rmmod.
run_backed() {
	local d=/sys/kernel/debug/rslub n
	hackbench_views "hackbench -g 4 -l 1000 with rslub backing $back, and over its run the" \
		"activity view of scripts/slabinfo (-D), busiest first (-A):" \
		"rslub's backed caches (alloc/free: objects served by rslub):" \
		"scripts/slabinfo (tools/mm/slabinfo of the test kernel):" || return 1
	echo "guest: scripts/slabinfo -r ${back%%,*}:"
	RSLUB_SLABINFO=$moddir/slabinfo "$scripts/slabinfo" -r "${back%%,*}" | sed 's/^/  /' ||
		return 1
	n=$(unback_and_drain "$d/back" "$back") || { echo "guest: $n"; return 1; }
	echo "guest: unbacked; every rslub object was freed (0 live), after $n"
}

# run_whole (make run WHOLE=1): rslub serves the whole kernel since the first command;
# hackbench_views, then what rslub serves: the kmalloc classes and every other cache,
# with their counts.
run_whole() {
	local d=/sys/kernel/debug/rslub
	dmesg | grep -E 'rslub: (back=all|loaded)' | sed 's/^/guest: /'
	hackbench_views "hackbench -g 4 -l 1000 on the whole kernel served by rslub, and over its run" \
		"the activity view of scripts/slabinfo (-D), busiest first (-A):" \
		"what rslub serves ($d/back: alloc/free are objects served by rslub):" \
		"scripts/slabinfo (tools/mm/slabinfo of the test kernel) on rslub's caches:" || return 1
	echo "guest: $(grep -c ' kmalloc alloc ' "$d/back") kmalloc classes and $(grep -c ' backed alloc ' "$d/back") other caches served, $(grep -c ' refused: ' "$d/back") refused"
}

# coverage: which of the guest's caches rslub could back. Every name in /sys/kernel/slab
# (a cache's own, or merged into another) is checked through the back file ("?name":
# found when it allocates, within a second, and checked; nothing is backed) while a
# workload makes the common caches allocate; prints one line per name and a summary
# per verdict.
if [ "$mode" = coverage ]; then
	d=/sys/kernel/debug/rslub/back stop=$rundir/stop-coverage
	insmod "$moddir/rslub.ko" || { echo 1 > "$rundir/done"; exit 0; }
	ip link set lo up 2>/dev/null
	rm -f "$stop"
	python3 "$scripts/test/traffic.py" "$stop" tcp unix > /dev/null 2>&1 &
	# Processes (task, mm, vma, signal, file caches), lookups and reads of /proc.
	(while [ ! -e "$stop" ]; do /bin/true; done) &
	(while [ ! -e "$stop" ]; do cat /proc/self/status /proc/meminfo > /dev/null; ls /proc /sys > /dev/null; done) &
	sleep 1
	out=$rundir/coverage.txt
	: > "$out"
	for e in /sys/kernel/slab/*; do
		n=$(basename "$e")
		case "$n" in :*) continue ;; esac
		mark_log
		echo "?$n" > "$d" 2>/dev/null
		line=$(new_log | grep -E "rslub: (check $n:|cannot back $n:)" | tail -1 |
			sed 's/^\[[^]]*\] rslub: //')
		echo "$n	${line:-no verdict}" >> "$out"
	done
	touch "$stop"
	wait
	rmmod rslub
	echo "guest: $(wc -l < "$out") names in /sys/kernel/slab (merged names included)"
	cat "$out"
	echo "guest: summary (names; a merged cache counts once per name):"
	sed 's/^[^	]*	//' "$out" | sed -E 's/^check [^:]*: //; s/^cannot back [^:]*: //' |
		sed -E 's/^can back .*/can back/; s/^cannot back [^:]*: /refused: /; s/^no cache of that name allocated.*/idle or unknown (no allocation within 1 s)/' |
		sed -E 's/^(refused: [^:]*):.*/\1/' | sort | uniq -c | sort -rn
	echo 0 > "$rundir/done"
	exit 0
fi

if [ "$mode" = run ] && [ "$back" = all ]; then
	rc=$(cat "$rundir/whole-modprobe.rc")
	cat "$rundir/whole-modprobe.out"
	[ "$rc" -eq 0 ] && { run_whole || rc=1; }
elif [ "$mode" = run ]; then
	mark_log
	# shellcheck disable=SC2086 # PARAMS is a list of name=value words
	modprobe -d "$rundir/modtree" rslub $params ${back:+back=$back}
	rc=$?
	if [ "$rc" -eq 0 ] && [ -n "$back" ]; then
		run_backed || rc=1
	fi
fi
if [ "$mode" = run ]; then
	echo "guest: kernel command line: $(cat /proc/cmdline | tr ' ' '\n' | grep '^rslub\.' | tr '\n' ' ')"
	echo "guest: online CPUs $(cat /sys/devices/system/cpu/online), online nodes $(cat /sys/devices/system/node/online)"
	cet=$(grep -m1 -ow -E 'ibt|user_shstk' /proc/cpuinfo | sort -u | tr '\n' ' ')
	echo "guest: CPU flags for control-flow protection: ${cet:-none (no ibt: IBT not enforced)}"
	echo "guest: mitigations: $(grep -H . /sys/devices/system/cpu/vulnerabilities/{spectre_v2,retbleed,srso,its} 2>/dev/null | sed 's|.*/||' | tr '\n' ';')"
	new_log | grep -E 'rslub|WARNING|BUG|Oops|KASAN' || true
	if [ "$rc" -eq 0 ] && [ "$back" = all ]; then
		! rmmod rslub 2>/dev/null && echo "guest: rmmod rslub: refused, as whole-kernel mode wants (reboot to remove)" || rc=1
	elif [ "$rc" -eq 0 ]; then
		rmmod rslub && echo "guest: rmmod rslub: done" || rc=1
	fi
	echo "$rc" > "$rundir/done"
	exit 0
fi

# --- test mode: the load checks, written as a KTAP suite --------------------------------
mkdir -p "$rundir/ktap"
# wanted SUITE: whether SUITE is to run.
wanted() { [ -z "${RSLUB_SUITES+x}" ] || [[ " $RSLUB_SUITES " == *" $1 "* ]]; }
# scripts/test/ktap.py scans the kernel log for reports from this line on: the boot is not
# under test.
kmemleak_baseline
echo "rslub-test: checks begin" > /dev/kmsg
n=0 body="" unloaded_after_check=
# check NAME COMMAND...: runs COMMAND, records ok/not ok (its output as diagnostics).
check() {
	local name=$1
	shift
	n=$((n + 1))
	local out rc=0 t0=$EPOCHREALTIME
	out=$("$@" 2>&1) || rc=1
	# How long it took, for whoever looks for the slow checks (make test FULL=1 has them).
	out+=$'\n'"took $(awk -v a="$t0" -v b="$EPOCHREALTIME" 'BEGIN { printf "%.1f", b - a }') s"
	# In suite rslub_load every check unloads what it loaded, passed or failed: one that
	# leaves rslub behind fails, says what rslub still backs, and is cleaned up after, so
	# that the next checks (and the KUnit module's hooks) find no rslub.
	if [ -n "$unloaded_after_check" ] && grep -q '^rslub ' /proc/modules; then
		rc=1
		out+=$'\n'"rslub is still loaded after this check; cleaning up:"$'\n'"$(leftover_unload 2>&1)"
	fi
	if [ "$rc" = 0 ]; then
		[ -n "$out" ] && body+="$(printf '%s\n' "$out" | sed 's/^/        # /')"$'\n'
		body+="    ok $n $name"$'\n'
	else
		body+="$(printf '%s\n' "$out" | sed 's/^/        # /')"$'\n'
		body+="    not ok $n $name"$'\n'
	fi
}

# full_check NAME FUNCTION [ARGS...]: check, in make test FULL=1 (CI runs it on 2 and 4
# nodes) and on a KASAN kernel (CI's debug run, where some of them take other paths: one
# backed cache for slabinfo, KASAN's checks on the refused loads): the slower variants of
# what the default kernel's quick run checks once (make test stays under 90 s).
kasan_kernel=
# (grep reads all of dmesg: with -q it would stop at the match, and pipefail count dmesg's
# SIGPIPE as a failure.)
dmesg | grep 'KernelAddressSanitizer initialized' >/dev/null && kasan_kernel=1
slow_variants=
if [ "${RSLUB_FULL:-0}" = 1 ] || [ -n "$kasan_kernel" ]; then slow_variants=1; fi
full_check() {
	[ -n "$slow_variants" ] || return 0
	check "$@"
}

# leftover_unload: unbacks whatever rslub still backs, drains it (up to 600 rounds) and
# unloads it, saying what was backed and whether that worked.
leftover_unload() {
	local d=/sys/kernel/debug/rslub/back c n
	echo "back file: $(cat "$d" 2>&1)"
	for c in $(awk '$2 == "backed" {print $1}' "$d" 2>/dev/null); do echo "-$c" > "$d"; done
	for n in $(seq 600); do
		rmmod rslub 2>/dev/null && { echo "rslub unloaded after the cleanup ($n rounds)"; return 0; }
		echo drain > "$d" 2>/dev/null
		kick
		sleep 0.1
	done
	echo "rslub could not be unloaded: $(cat "$d" 2>&1)"
	return 1
}

# kmemleak_finds_nothing: two scans (an object is reported once it is 5 s old and
# unreferenced in both) find no unreferenced object at all since kmemleak_baseline. Every
# leak fails, whoever made it: rslub's own memory, objects rslub serves (kmemleak scans
# them, rust/sanitize.rs) and the kernel's. The leaks rslub_sanitize's kmemleak case
# makes on purpose are freed by the case before it asserts anything, failed or not.
kmemleak_finds_nothing() {
	local out
	sleep 6
	echo scan > $kmemleak && echo scan > $kmemleak || { echo "cannot scan"; return 1; }
	out=$(cat $kmemleak)
	[ -z "$out" ] || { echo "kmemleak reports unreferenced objects:"; echo "$out" | head -200; return 1; }
	echo "two scans: no unreferenced object"
}

# write_suite NAME: the checks so far, as KTAP suite NAME; starts a new suite.
write_suite() {
	local verdict=ok
	grep -q '^    not ok' <<<"$body" && verdict="not ok"
	{
		printf 'KTAP version 1\n1..1\n    KTAP version 1\n    # Subtest: %s\n    1..%d\n' "$1" "$n"
		printf '%s' "$body"
		printf '%s 1 %s\n' "$verdict" "$1"
	} > "$rundir/ktap/$1"
	n=0 body=""
}

# load_ok WANT PARAMS...: insmod succeeds and the log shows WANT.
load_ok() {
	local want=$1
	shift
	mark_log
	insmod "$moddir/rslub.ko" "$@" || { echo "insmod $* failed"; return 1; }
	new_log | grep -q -- "$want" || { echo "log lacks '$want':"; new_log; rmmod rslub; return 1; }
	rmmod rslub || { echo "rmmod failed"; return 1; }
}

# load_fails WANT PARAMS...: insmod fails and the log shows WANT (the parameter's name).
load_fails() {
	local want=$1
	shift
	mark_log
	if insmod "$moddir/rslub.ko" "$@"; then
		echo "insmod $* succeeded"
		rmmod rslub
		return 1
	fi
	new_log | grep -q -- "$want" || { echo "log lacks '$want':"; new_log; return 1; }
}

# modprobe_cmdline: the kernel was booted with rslub.max_order=2 (by vm.sh); modprobe
# passes it to the module.
modprobe_cmdline() {
	grep -qw 'rslub.max_order=2' /proc/cmdline || { echo "not booted with rslub.max_order=2"; return 1; }
	mark_log
	modprobe -d "$rundir/modtree" rslub || { echo "modprobe failed"; return 1; }
	new_log | grep -q 'loaded: max_order=2 ' || { echo "max_order=2 not reported:"; new_log; rmmod rslub; return 1; }
	rmmod rslub
}

# back_real_cache CACHE: back=CACHE at load, while a shell loop looks paths up (every
# lookup allocates a names_cache object); rslub serves them, rmmod is refused while the
# cache is backed, and unbacking plus draining let the module go.
back_real_cache() {
	local cache=$1 d=/sys/kernel/debug/rslub/back stop=$rundir/stop-user line n out
	rm -f "$stop"
	(while [ ! -e "$stop" ]; do ls / > /dev/null; done) &
	local user=$!
	mark_log
	if ! insmod "$moddir/rslub.ko" back=$cache; then
		touch "$stop"; wait "$user"
		echo "insmod back=$cache failed:"; new_log
		return 1
	fi
	sleep 1
	line=$(grep "^$cache backed" "$d") || { touch "$stop"; wait "$user"; echo "not backed: $(cat "$d")"; rmmod rslub; return 1; }
	n=$(echo "$line" | awk '{print $4}')
	if rmmod rslub 2>/dev/null; then
		touch "$stop"; wait "$user"
		echo "rmmod succeeded while $cache was backed"
		return 1
	fi
	touch "$stop"; wait "$user"
	out=$(unback_and_drain "$d" "$cache") || { echo "$out"; return 1; }
	rmmod rslub || { echo "rmmod failed after unbacking"; return 1; }
	[ "$n" -gt 0 ] || { echo "rslub served no allocation of $cache: $line"; return 1; }
	echo "$cache: $n allocations served by rslub"
}

if wanted rslub_load; then
unloaded_after_check=1
check load_with_defaults load_ok "loaded: max_order=3 min_order=0 min_objects="
check load_with_params load_ok "loaded: max_order=4 min_order=1 min_objects=16 min_partial=7" \
	max_order=4 min_order=1 min_objects=16 min_partial=7
check reject_max_order_99 load_fails "invalid parameter max_order=99" max_order=99
check reject_negative_min_objects load_fails "invalid parameter min_objects=-1" min_objects=-1
check reject_min_partial_out_of_range load_fails "invalid parameter min_partial=5000" min_partial=5000
check reject_min_order_above_max_order load_fails "invalid parameter min_order=3" min_order=3 max_order=2
check reject_non_numeric_max_order load_fails "max_order" max_order=three
# More of the bad-input catalogue (Documentation/reliability.rst), the rest with full_check
# (the quick run has a value of each kind: refused above, read another way here). The
# kernel's Rust integer parser reads 0x as hex and a leading 0 as octal; empty,
# overflowing and out-of-range values fail the load with the parameter named, and a value
# padded with a space is split there by the kernel's argument parser (leaving it empty).
check leading_zero_max_order_is_octal load_ok "loaded: max_order=8 " max_order=010
full_check hex_max_order_is_read_as_hex load_ok "loaded: max_order=2 " max_order=0x2
full_check reject_empty_max_order load_fails "max_order" max_order=
full_check reject_padded_max_order load_fails "max_order" "max_order= 3"
full_check reject_negative_max_order load_fails "invalid parameter max_order=-1" max_order=-1
full_check reject_overflowing_min_objects load_fails "min_objects" min_objects=99999999999
full_check reject_overflowing_min_partial load_fails "min_partial" min_partial=4294967296
check empty_back_backs_nothing load_ok "loaded: max_order=3 " back=
check modprobe_reads_kernel_cmdline modprobe_cmdline
# unknown_cache_is_a_bad_parameter: the load fails as for any bad parameter (EINVAL, which
# insmod prints as "Invalid parameters"), the log naming it.
unknown_cache_is_a_bad_parameter() {
	local out
	out=$(load_fails "invalid parameter back=rslub_no_such_cache" back=rslub_no_such_cache 2>&1) ||
		{ echo "$out"; return 1; }
	echo "$out"
	grep -q "Invalid parameters" <<<"$out" || { echo "insmod did not say Invalid parameters"; return 1; }
}
check reject_unknown_cache_to_back unknown_cache_is_a_bad_parameter
# back_typesafe_cache: vm_area_struct (SLAB_TYPESAFE_BY_RCU, its free pointer at
# vm_freeptr) backed through debugfs once rslub is loaded (the load's uevent has been
# handled by then), while a loop starts processes: each maps vm_area_structs, which its
# page faults find under RCU (lock_vma_under_rcu()) and its exit frees. A VMA lives as
# long as its process, and a process that maps or splits one while the cache is backed
# holds an rslub object until it unmaps it or exits: so backing, counting and unbacking
# happen in a child of this shell that exits before the drain, after the loop's
# processes (this shell, waiting meanwhile, maps nothing; once it held one VMA for the
# whole check, and the drain gave up). The drain then waits for VMAs that something
# else mapped meanwhile, and says which cache is still draining if it gives up.
back_typesafe_cache() {
	local cache=vm_area_struct d=/sys/kernel/debug/rslub/back stop=$rundir/stop-user line n out
	local seen=$rundir/typesafe-backed
	insmod "$moddir/rslub.ko" || { echo "insmod failed"; return 1; }
	rm -f "$stop" "$stop.done" "$seen"
	# Running already: backing by name waits for the cache's next allocation.
	(while [ ! -e "$stop" ]; do ls / > /dev/null; cat /proc/self/maps > /dev/null; done
		touch "$stop.done") &
	local user=$!
	mark_log
	(
		echo "$cache" > "$d" || { touch "$stop"; echo "cannot back $cache:"; exit 1; }
		sleep 2
		touch "$stop"
		for i in $(seq 300); do [ -e "$stop.done" ] && break; sleep 0.1; done
		grep "^$cache backed" "$d" > "$seen"
		echo "-$cache" > "$d" || { echo "cannot unback $cache"; exit 1; }
	)
	out=$?
	touch "$stop"; wait "$user"
	# On failure check() unloads what is left.
	[ "$out" = 0 ] || { new_log; return 1; }
	line=$(cat "$seen") && [ -n "$line" ] || { echo "was not backed: $(cat "$d")"; return 1; }
	n=$(echo "$line" | awk '{print $4}')
	out=$(unback_and_drain "$d" "" 300) || { echo "$out"; return 1; }
	rmmod rslub || { echo "rmmod failed after unbacking"; return 1; }
	[ "$n" -gt 0 ] || { echo "rslub served no allocation of $cache: $line"; return 1; }
	echo "$cache: $n allocations served by rslub"
}

# A kmalloc size class is found at once and refused (Documentation/backing.rst).
check reject_cache_rslub_cannot_serve load_fails "cannot back kmalloc-64: a kmalloc cache" \
	back=kmalloc-64
# load_fails_while_allocating WANT PARAMS...: load_fails while a shell loop looks paths up
# and starts processes (names_cache, vm_area_struct and their kin allocate), so that the
# caches named in back= are sighted. vm_area_struct is SLAB_TYPESAFE_BY_RCU and
# SLAB_ACCOUNT: with memory cgroups compiled in (/proc/cgroups lists the controllers)
# refused as SLAB_ACCOUNT.
load_fails_while_allocating() {
	local stop=$rundir/stop-user r=0
	rm -f "$stop"
	(while [ ! -e "$stop" ]; do ls / > /dev/null; done) &
	local user=$!
	load_fails "$@" || r=1
	touch "$stop"; wait "$user"
	return "$r"
}
# failed_load_leaves_no_hook: back= with a cache rslub serves and then one it refuses (the
# same name twice; as full_check's, also a name nothing allocates, refused after a
# second's wait for it) fails the load while TCP traffic allocates from the first:
# nothing may have been backed, no hook may stay behind pointing into the freed module,
# and the traffic goes on intact for 10 s after each refusal (2 s without RSLUB_FULL: a
# dangling hook is called within the first packets).
failed_load_leaves_no_hook() {
	local stop=$rundir/stop-failed-load first=${back%%,*} names r=0 wait=2
	local refused=("$first,$first")
	[ "${RSLUB_FULL:-0}" = 1 ] && wait=10
	[ -n "$slow_variants" ] && refused+=("$first,rslub_no_such_cache")
	rm -f "$stop"
	rm -f "$stop.ready"
	python3 "$scripts/test/traffic.py" "$stop" tcp > "$rundir/traffic-failed-load.out" 2>&1 &
	local t=$!
	# Until the first message came back (python starts slowly on the debug kernel).
	local i
	for i in $(seq 120); do [ -e "$stop.ready" ] && break; sleep 0.5; done
	for names in "${refused[@]}"; do
		local before=$r
		mark_log
		if insmod "$moddir/rslub.ko" back=$names 2>/dev/null; then
			echo "insmod back=$names succeeded"; rmmod rslub; r=1; continue
		fi
		new_log | grep -q "invalid parameter back=$names" ||
			{ echo "log lacks 'invalid parameter back=$names':"; new_log; r=1; }
		new_log | grep -q "backing $first" && { echo "$first was backed:"; new_log; r=1; }
		grep -q '^rslub ' /proc/modules && { echo "rslub is still loaded"; r=1; }
		sleep "$wait"
		[ "$r" = "$before" ] &&
			echo "back=$names: load refused, nothing backed, traffic went on for $wait s"
	done
	touch "$stop"
	wait "$t" || r=1
	cat "$rundir/traffic-failed-load.out"
	return "$r"
}
check failed_load_leaves_no_hook failed_load_leaves_no_hook
# debug= (slub_debug's letters, then cache names): an unknown letter fails the load.
check load_with_debug load_ok "loaded: max_order=3 .* debug=FZPU,rslub_x" "debug=FZPU,rslub_x*"
check reject_unknown_debug_flag load_fails "invalid parameter debug: unknown flag 'X'" debug=FX
check debug_off_loads load_ok "loaded: max_order=3 " debug=-
# profile= (classic, the default, or tuned): anything else fails the load.
check load_with_classic_profile load_ok "loaded: max_order=3 .* profile=classic"
check load_with_tuned_profile load_ok "loaded: max_order=3 .* profile=tuned" profile=tuned
check reject_unknown_profile load_fails "invalid parameter profile: must be classic" profile=fast
# rmmod while another module (samples/client.c) holds a cache: refused by the kernel's
# module references; once the client has freed its objects and destroyed its cache at its
# own unload, rslub goes.
# back_write_racing_rmmod: a write to the back file that backs a cache while rmmod runs,
# in rounds with the write started 0.1 s later each time, so that rmmod is early in some
# and late in others. debugfs does not hold the module for the writer: the exit closes the
# backing first, then removes the file, which waits for the writer (rust/back/mod.rs,
# exit()). In each round exactly one wins: the write backs the cache and rmmod is refused
# (the hooks hold the module), or rmmod goes and the write fails. Never both (rmmod with
# the cache backed: its hooks would then run in freed text, an Oops the log check
# reports), nor neither, nor a hang (an exit that waited for the writer while holding what
# the writer needs). The cache is skbuff_fclone_cache, found at once and idle here:
# unbacked, it drains at once. Four rounds on the KASAN kernel (0, 0.2, 0.4 and 0.6 s),
# where a round takes 7 to 11 s, not 2.
back_write_racing_rmmod() {
	local c=skbuff_fclone_cache i w gone wrote tally="" rounds
	rounds=$(seq 0 7)
	[ -n "$kasan_kernel" ] && rounds=$(seq 0 2 6)
	# shellcheck disable=SC2086 # a list of numbers
	for i in $rounds; do
		insmod "$moddir/rslub.ko" || { echo "insmod failed in round $i"; return 1; }
		rmmod rslub 2>/dev/null &
		w=$!
		sleep "0.$i"
		wrote=0 gone=0
		(echo "$c" > /sys/kernel/debug/rslub/back) 2>/dev/null && wrote=1
		wait "$w" && gone=1
		tally+=" $([ $wrote = 1 ] && echo write || echo rmmod)"
		if [ $((wrote + gone)) != 1 ]; then
			echo "round $i: the write $([ $wrote = 1 ] && echo backed || echo failed)," \
				"rmmod $([ $gone = 1 ] && echo went || echo "was refused")"
			grep -q '^rslub ' /proc/modules && leftover_unload > /dev/null
			return 1
		fi
		if [ $wrote = 1 ]; then
			leftover_unload > /dev/null || { echo "round $i: rslub cannot be unloaded"; return 1; }
		fi
	done
	echo "who won each round, the write started $(echo $rounds | sed 's/[0-9]/0.&/g; s/ /, /g') s after rmmod:$tally"
}
rmmod_under_a_client() {
	insmod "$moddir/rslub.ko" || { echo "insmod rslub failed"; return 1; }
	insmod "$moddir/rslub_client.ko" || { echo "insmod rslub_client failed"; rmmod rslub; return 1; }
	if rmmod rslub 2>/dev/null; then
		echo "rmmod rslub succeeded while rslub_client held a cache"
		return 1
	fi
	mark_log
	rmmod rslub_client || { echo "rmmod rslub_client failed"; return 1; }
	new_log | grep -q "rslub_client: 0 objects changed, destroy: 0" ||
		{ echo "client log:"; new_log; rmmod rslub; return 1; }
	rmmod rslub || { echo "rmmod rslub failed after the client left"; return 1; }
}
check rmmod_refused_while_a_client_holds_a_cache rmmod_under_a_client
check back_write_racing_rmmod back_write_racing_rmmod

# whatif_matches_the_host_command: the debugfs file layout_whatif and the host command
# scripts/layout (built before the boot, run here on the guest's CPU count) print the
# same table, one rule in one source file: with the defaults, and with FULL=1 also with
# other parameters (not in CI's debug run, which has no FULL=1: the computation is the
# same under KASAN, and each set costs 20 s there).
whatif_matches_the_host_command() {
	local f=/sys/kernel/debug/rslub/layout_whatif p size args out want r=0 bin
	# The host command's binary, found once (the script checks its sources over 9p at
	# every call: 6 s a call on the debug kernel).
	bin=$("$scripts/layout" --build) || { echo "scripts/layout --build failed"; return 1; }
	local sets=("")
	[ "${RSLUB_FULL:-0}" = 1 ] && sets+=("max_order=1 min_objects=4")
	for p in "${sets[@]}"; do
		# shellcheck disable=SC2086 # a list of name=value words
		insmod "$moddir/rslub.ko" $p || { echo "insmod $p failed"; return 1; }
		args=()
		[ -z "$p" ] || args=(--max-order 1 --min-objects 4)
		for size in "8" "100" "700 64" "3000" "4096" "9000 8"; do
			echo "$size" > "$f" || { r=1; continue; }
			out=$(cat "$f")
			# shellcheck disable=SC2086 # SIZE [ALIGN]
			want=$("$bin" $size --cpus "$(nproc)" "${args[@]}")
			if [ "$out" != "$want" ]; then
				printf 'params "%s", %s: debugfs\n%s\nscripts/layout\n%s\n' "$p" "$size" "$out" "$want"
				r=1
			fi
		done
		echo "params \"$p\": 6 sizes, same table; e.g. size 3000:"
		echo 3000 > "$f" && cat "$f"
		rmmod rslub || return 1
	done
	return "$r"
}
check whatif_matches_the_host_command whatif_matches_the_host_command
# Where this boot merged names_cache into another cache (slab_merge: CI's one-node run
# merges it into kmalloc-192), backing it is refused as backing a kmalloc cache is.
if [ -L /sys/kernel/slab/names_cache ]; then
	check merged_names_cache_is_refused_with_its_kmalloc_cache load_fails_while_allocating \
		"cannot back kmalloc-[0-9a-z]*: a kmalloc cache" back=names_cache
else
	check back_names_cache_then_unback_and_unload back_real_cache names_cache
fi
if have_memcg; then
	check refuse_vm_area_struct_under_memcg load_fails_while_allocating \
		"cannot back vm_area_struct: SLAB_ACCOUNT" back=vm_area_struct
else
	check back_vm_area_struct_then_unback_and_unload back_typesafe_cache
fi
# nothing_left_to_kmemleak: after every load and unload above (failed ones included)
# kmemleak finds no unreferenced object that a load, an unload or a write to rslub's
# files allocated (commands insmod, modprobe, rmmod, bash). An object is reported once
# it is 5 s old and unchanged across two scans.
nothing_left_to_kmemleak() {
	local out
	sleep 6
	echo scan > $kmemleak && echo scan > $kmemleak || { echo "cannot scan"; return 1; }
	out=$(awk '/^unreferenced object/ { if (keep) print block; block = $0; keep = 0; next }
		{ block = block "\n" $0 }
		/^  comm "(insmod|modprobe|rmmod|bash)"/ { keep = 1 }
		END { if (keep) print block }' $kmemleak)
	[ -z "$out" ] || { echo "kmemleak reports objects of the checks:"; echo -e "$out"; return 1; }
}
[ -e $kmemleak ] && check nothing_left_to_kmemleak nothing_left_to_kmemleak

write_suite rslub_load
unloaded_after_check=
fi

if [ "$mode" = test ]; then
# --- the KUnit module: its suites run while it loads, with the caches $back backed by it
# while TCP and unix-socket traffic flows over loopback (scripts/test/traffic.py); then the
# checks of suite rslub_traffic: rslub served those caches during the suites, every
# message came back intact, and unbacking, draining and rmmod leave nothing behind.
d=/sys/kernel/debug/rslub_kunit/back stop=$rundir/stop-traffic
# A memory cgroup for rslub_back's memcg case (CONFIG_MEMCG kernels): /rslub_test of the
# cgroup2 hierarchy, with the memory controller of its own.
if have_memcg; then
	echo +memory > /sys/fs/cgroup/cgroup.subtree_control
	mkdir -p /sys/fs/cgroup/rslub_test
fi
rm -f "$stop"
ip link set lo up 2>/dev/null
rm -f "$stop.ready"
python3 "$(dirname "$0")/traffic.py" "$stop" tcp unix > "$rundir/traffic.out" 2>&1 &
traffic=$!
# Until the first message came back (python starts slowly on a busy host or the debug
# kernel): the suites may be short (SUITE=).
for i in $(seq 120); do
	[ -e "$stop.ready" ] && break
	kill -0 "$traffic" 2>/dev/null || break
	sleep 0.5
done
[ -e "$stop.ready" ] || echo "guest: the traffic script did not start: $(cat "$rundir/traffic.out")" >> "$rundir/guest.log"
grep -q '^rslub ' /proc/modules && echo "guest: rslub.ko is still loaded: the KUnit module's hooks cannot be registered" >> "$rundir/guest.log"
mark_log
# shellcheck disable=SC2086 # a list of name=value words
insmod "$moddir/rslub_kunit.ko" $params ${back:+back=$back} ||
	echo "guest: insmod rslub_kunit.ko failed" >> "$rundir/guest.log"
# The boot has kunit.autorun=0 (scripts/test/vm.sh): loading the module registers its suites
# (those kunit.filter_glob lets through) and runs none; each runs here when its debugfs
# `run` file is written, in this order: every suite by name, then rslub_sanitize, whose
# first KASAN report turns lockdep off for the rest of the boot (scripts/test/reports.py fails
# on that anywhere else). Each suite's results are copied once it has run.
suites_in_order() {
	local dir s
	for dir in /sys/kernel/debug/kunit/rslub*/; do
		# No KUnit suite asked for (SUITE=rslub_load): the pattern stays as it is.
		[ -d "$dir" ] || continue
		s=$(basename "$dir")
		[ "$s" = rslub_sanitize ] || echo "$s"
	done
	[ -d /sys/kernel/debug/kunit/rslub_sanitize ] && echo rslub_sanitize
}
for s in $(suites_in_order); do
	# In a child: a case may pin or renice the task that runs it, as it did insmod.
	(echo 1 > "/sys/kernel/debug/kunit/$s/run") ||
		echo "guest: cannot run suite $s" >> "$rundir/guest.log"
	cp "/sys/kernel/debug/kunit/$s/results" "$rundir/ktap/$s"
done
backed=$(cat "$d" 2>&1)
touch "$stop"
wait "$traffic"
traffic_rc=$?

# served_during_suites: each cache of $back is listed as backed, with allocations.
served_during_suites() {
	local c line r=0
	[ -n "$back" ] || { echo "no cache to back"; return 1; }
	for c in ${back//,/ }; do
		line=$(grep "^$c backed alloc " <<<"$backed") || { echo "$c not backed: $backed"; r=1; continue; }
		[ "$(awk '{print $4}' <<<"$line")" -gt 0 ] || { echo "rslub served no $c: $line"; r=1; continue; }
		echo "$line"
	done
	return "$r"
}
traffic_intact() {
	cat "$rundir/traffic.out"
	return "$traffic_rc"
}
# slabinfo_reads_the_tree: the kernel's own tools/mm/slabinfo, through scripts/slabinfo,
# prints a line for each backed cache. With one cache in the tree (under KASAN only the
# small heads are backed) slabinfo prints that cache's report instead of the table and
# the activity view, as it does on SLUB.
slabinfo_single() {
	[ "$(find /sys/kernel/debug/rslub_kunit -mindepth 1 -maxdepth 1 -type d | wc -l)" -eq 1 ]
}
slabinfo_reads_the_tree() {
	local c out single=
	slabinfo_single && single=1
	out=$(RSLUB_SLABINFO=$moddir/slabinfo "$scripts/slabinfo" --dir rslub_kunit 2>&1) ||
		{ echo "$out"; return 1; }
	echo "$out"
	for c in ${back//,/ }; do
		if [ -n "$single" ]; then
			grep -q "^Slabcache: $c " <<<"$out" || { echo "no report for $c"; return 1; }
		else
			grep -Eq "^$c +[0-9]" <<<"$out" || { echo "no line for $c"; return 1; }
		fi
	done
}
# slabinfo_reports_and_activity (full_check): its report of one cache (-r) with the
# statistics, and its activity view (-AD) over one second.
slabinfo_reports_and_activity() {
	local c=${back%%,*} out single=
	slabinfo_single && single=1
	out=$(RSLUB_SLABINFO=$moddir/slabinfo "$scripts/slabinfo" --dir rslub_kunit -r "$c" 2>&1) ||
		{ echo "$out"; return 1; }
	grep -q "^Slabcache: $c " <<<"$out" || { echo "$out"; echo "no report of $c"; return 1; }
	grep -E "^(Slabcache:|Fastpath|Slowpath) " <<<"$out"
	# The activity view over one second, traffic stopped: the allocations counted in it
	# are that second's (fewer than all since the suites began), not the totals.
	local dir=/sys/kernel/debug/rslub_kunit/$c line delta total
	out=$(RSLUB_SLABINFO=$moddir/slabinfo "$scripts/slabinfo" --dir rslub_kunit --interval 1 -AD 2>&1) ||
		{ echo "$out"; return 1; }
	if [ -n "$single" ]; then
		grep -q "^Slabcache: $c " <<<"$out" || { echo "$out"; echo "no report for $c"; return 1; }
		# The report's allocations: "Fastpath <allocs> <frees> ..." and "Slowpath ...";
		# slabinfo leaves both out when no allocation and no new slab were counted.
		line=$(grep -E "^(Fastpath|Slowpath) " <<<"$out" | tr '\n' ' ')
		delta=$(awk '{print $2 + $7}' <<<"${line:-Fastpath 0 0 0 0 Slowpath 0}")
	else
		# The activity line: name, operations, allocations, frees, ...
		line=$(grep -E "^$c +[0-9]" <<<"$out")
		delta=$(awk '{print $3}' <<<"$line")
	fi
	[[ "$delta" =~ ^[0-9]+$ ]] || { echo "$out"; echo "no activity figures for $c"; return 1; }
	total=$(( $(cut -d' ' -f1 "$dir/alloc_fastpath") + $(cut -d' ' -f1 "$dir/alloc_slowpath") ))
	echo "activity over 1 s: $line (allocations since the suites began: $total)"
	[ "$delta" -lt "$total" ] || { echo "the interval view shows the totals"; return 1; }
}
# backed_caches_sound: after the suites' traffic, no backed cache counted a debug error or
# a corrupted free pointer, and a walk of its slabs (validate) finds no error.
backed_caches_sound() {
	local c dir f e v r=0
	for c in ${back//,/ }; do
		dir=/sys/kernel/debug/rslub_kunit/$c
		for f in debug_errors freelist_corrupt; do
			e=$(cut -d' ' -f1 "$dir/$f") || { r=1; continue; }
			[ "$e" = 0 ] || { echo "$c: $f is $e"; r=1; }
		done
		v=$(cat "$dir/validate") || { r=1; continue; }
		echo "$c: validate: $v"
		[[ "$v" =~ ^slabs\ [1-9][0-9]*\ .*\ errors\ 0$ ]] || { echo "$c: validate found errors or no slab"; r=1; }
	done
	return "$r"
}
# unback_drain_unload: after unbacking, in-flight skbs drain back to rslub, then rmmod.
unback_drain_unload() {
	unback_and_drain "$d" "$back" || return 1
	rmmod rslub_kunit || { echo "rmmod rslub_kunit failed; its back file: $(cat "$d")"; return 1; }
}
if wanted rslub_traffic; then
	check suites_ran_with_caches_backed served_during_suites
	check loopback_traffic_echoed_intact traffic_intact
	check backed_caches_are_sound backed_caches_sound
	check slabinfo_reads_the_tree slabinfo_reads_the_tree
	full_check slabinfo_reports_and_activity slabinfo_reports_and_activity
	check unback_drain_and_unload unback_drain_unload
	[ -e $kmemleak ] && check kmemleak_finds_nothing kmemleak_finds_nothing
	write_suite rslub_traffic
else
	unback_drain_unload > /dev/null || echo "guest: unbacking and unloading failed" >> "$rundir/guest.log"
fi
lsmod | grep -q '^rslub_kunit' && rmmod rslub_kunit 2>> "$rundir/guest.log"
fi

# --- suite rslub_whole_kernel, in a boot of its own (guest.sh whole): rslub loaded by
# the first command with rslub.back=all from the kernel command line, then processes,
# files, unix sockets and loopback TCP (hackbench and the traffic script); every cache
# rslub can serve that allocated meanwhile is backed and served, kmalloc by rslub's size
# classes, none of them has an error, and rmmod is refused.
wd=/sys/kernel/debug/rslub/back
whole_load() {
	grep -qw rslub.back=all /proc/cmdline || { echo "no rslub.back=all on the command line"; return 1; }
	[ "$(cat "$rundir/whole-modprobe.rc")" = 0 ] ||
		{ echo "modprobe rslub failed:"; cat "$rundir/whole-modprobe.out"; dmesg | grep rslub; return 1; }
	dmesg > "$rundir/whole-load.log"
	grep -q "back=all: every cache rslub can serve is backed" "$rundir/whole-load.log" ||
		{ echo "no back=all message:"; grep rslub "$rundir/whole-load.log"; return 1; }
}
whole_rmmod_refused() {
	if rmmod rslub 2>/dev/null; then echo "rmmod succeeded in whole-kernel mode"; return 1; fi
}
whole_workload() {
	local stop=$rundir/stop-whole
	rm -f "$stop"
	python3 "$(dirname "$0")/traffic.py" "$stop" tcp unix > "$rundir/traffic-whole.out" 2>&1 &
	local t=$!
	(while [ ! -e "$stop" ]; do ls / > /dev/null; cat /proc/self/maps > /dev/null; done) &
	local u=$!
	hackbench -g 4 -l 200 > /dev/null || { touch "$stop"; wait; echo "hackbench failed"; return 1; }
	touch "$stop"; wait "$t" "$u"
	echo "$(grep -c ' backed alloc ' $wd) caches backed, $(grep -c ' refused: ' $wd) refused"
}
# whole_served: at least 20 caches served, every refusal with its reason; with memory
# cgroups (the distribution-like kernel) the SLAB_ACCOUNT caches are refused, as the
# memcg policy decides (Documentation/backing.rst), and slab merging folds the rest into
# fewer caches: at least 5 served there, and 20 sighted in all.
whole_served() {
	local backed served refused want=20
	backed=$(grep -c ' backed alloc ' $wd)
	refused=$(grep -c ' refused: ' $wd)
	served=$(awk '$2 == "backed" && $4 > 0' $wd | wc -l)
	echo "$backed backed, $served of them served objects; busiest:"
	awk '$2 == "backed" {print $4, $1}' $wd | sort -rn | head -5 | sed 's/^/  /'
	echo "refused:"
	grep ' refused: ' $wd | sed 's/^/  /'
	if have_memcg; then
		want=5
		[ $((backed + refused)) -ge 20 ] || { echo "fewer than 20 caches sighted"; return 1; }
	fi
	[ "$served" -ge "$want" ] || { echo "fewer than $want caches served"; return 1; }
	! grep ' refused: $' $wd || { echo "a refusal without its reason"; return 1; }
}
# whole_kmalloc: kmalloc is served by rslub's size classes: the common sizes have
# objects out, and the kernel's slabinfo, reading rslub's tree, lists the classes and at
# least 30 other caches with their counts.
whole_kmalloc() {
	local c n out r=0
	grep -q "back=all: kmalloc served by [0-9]* size classes" "$rundir/whole-load.log" ||
		{ echo "no kmalloc message"; cat "$rundir/whole-load.log"; return 1; }
	for c in kmalloc-64 kmalloc-128 kmalloc-256 kmalloc-512 kmalloc-1k; do
		n=$(awk -v c=$c '$1 == c && $2 == "kmalloc" {print $4}' $wd)
		[ -n "$n" ] && [ "$n" -gt 0 ] || { echo "$c: no kmalloc served: $(grep "^$c " $wd)"; r=1; continue; }
		echo "$c: $n kmalloc allocations served by rslub"
	done
	out=$(RSLUB_SLABINFO=$moddir/slabinfo "$scripts/slabinfo" 2>&1) || { echo "$out"; return 1; }
	echo "slabinfo: $(grep -Ec '^kmalloc-' <<<"$out") kmalloc classes, $(grep -Evc '^(kmalloc-|Name )' <<<"$out") other caches"
	grep -E '^(Name|kmalloc-(64|512|1k) )' <<<"$out" | sed 's/^/  /'
	[ "$(grep -Ec '^kmalloc-' <<<"$out")" -ge 10 ] || { echo "slabinfo lists fewer than 10 kmalloc classes"; r=1; }
	if ! have_memcg; then
		[ "$(grep -Evc '^(kmalloc-|Name )' <<<"$out")" -ge 30 ] || { echo "slabinfo lists fewer than 30 other caches"; r=1; }
	fi
	return $r
}
whole_sound() {
	local c v e r=0 n=0
	for c in $(awk '$2 == "backed" || $2 == "kmalloc" {print $1}' $wd); do
		e=$(cut -d' ' -f1 "/sys/kernel/debug/rslub/$c/debug_errors") || { r=1; continue; }
		[ "$e" = 0 ] || { echo "$c: debug_errors $e"; r=1; }
		v=$(cat "/sys/kernel/debug/rslub/$c/validate") || { r=1; continue; }
		[[ "$v" =~ errors\ 0$ ]] || { echo "$c: validate: $v"; r=1; }
		n=$((n + 1))
	done
	echo "$n caches validated"
	return "$r"
}
# whole_stress: Debian's stress-ng, a fixed list of stressors of its memory, vm, fork and
# exec, pipe, socket (loopback only), file and System V IPC classes (not epoll: its
# server cannot bind as nobody in the guest, EACCES, ipv4 and unix alike), one instance
# each, all at once, bounded in time (20 s) and in operations per stressor, checking the
# data they move (--verify); as user nobody (the exec stressor refuses root). Every
# stressor must run and finish without an error. Beside them, fio's io_uring engine
# (buffered random reads and writes that go async to io-wq, registered files and
# buffers, every block verified), and reads of /dev/zero and writes to /dev/null through
# it: those two complete inline (FMODE_NOWAIT), so each request's kmalloc'ed async data
# goes back to the ring's cache through kasan_mempool_poison_object(), which reads the
# slab page (io_uring/alloc_cache.h); a file here (overlayfs, tmpfs) has no NOWAIT, its
# requests go to io-wq and their async data is freed, never cached. (stress-ng 0.15's
# io-uring stressor fails its IORING_OP_STATX with ENOENT on the default 7.3 kernel, on
# the kernel's allocator too.)
whole_stress() {
	local s args=() out rc dir=/tmp/rslub-stress fio_out fio_pid fio_rc
	command -v stress-ng > /dev/null || { echo "stress-ng is not installed (scripts/setup.sh)"; return 1; }
	command -v fio > /dev/null || { echo "fio is not installed (scripts/setup.sh)"; return 1; }
	for s in malloc brk memfd vm mmap mremap madvise fault fork vfork clone exec zombie poll \
		pipe splice tee sock udp sockpair dentry open filename rename link getdent dir \
		msg sem-sysv shm-sysv; do
		args+=("--$s" 1 "--$s-ops" 200000)
	done
	mkdir -p "$dir/fio" && chmod 1777 "$dir"
	ip link set lo up 2>/dev/null
	fio_out=$dir/fio.out
	fio --name=io_uring --directory="$dir/fio" --ioengine=io_uring --rw=randrw --bs=4k \
		--size=8M --iodepth=16 --numjobs=2 --registerfiles=1 --fixedbufs=1 --time_based \
		--runtime=20 --verify=crc32c --verify_fatal=1 --group_reporting \
		--name=zero --filename=/dev/zero --ioengine=io_uring --rw=read --bs=4k --size=64M \
		--iodepth=16 --registerfiles=1 --fixedbufs=1 \
		--name=null --filename=/dev/null --ioengine=io_uring --rw=write --bs=4k --size=64M \
		--iodepth=16 --registerfiles=1 --fixedbufs=1 > "$fio_out" 2>&1 &
	fio_pid=$!
	out=$(cd "$dir" && setpriv --reuid=65534 --regid=65534 --clear-groups \
		stress-ng --temp-path "$dir" --timeout 20 --verify --vm-bytes 16M --mmap-bytes 8M \
		--malloc-bytes 8M --metrics-brief "${args[@]}" 2>&1)
	rc=$?
	wait "$fio_pid"
	fio_rc=$?
	grep -E 'err=|READ:|WRITE:' "$fio_out" | sed 's/^ *//; s/^/fio: /'
	[ "$fio_rc" = 0 ] && [ "$(grep -c 'err= 0' "$fio_out")" = 3 ] && ! grep -q 'err= *[1-9-]' "$fio_out" ||
		{ tail -20 "$fio_out"; echo "fio (io_uring) exited with $fio_rc"; rm -rf "$dir"; return 1; }
	rm -rf "$dir"
	# The table of operations per stressor (not the miscellaneous figures after it) and
	# what stress-ng says of the run.
	awk '/miscellaneous metrics/ { misc = 1 } /^stress-ng: (info|fail|error|warn)/ || (/^stress-ng: metrc/ && !misc)' \
		<<<"$out" | sed 's/^stress-ng: //; s/\[[0-9]*\] //'
	[ "$rc" = 0 ] || { tail -20 <<<"$out"; echo "stress-ng exited with $rc"; return 1; }
	grep -q 'successful run completed' <<<"$out" || { echo "stress-ng did not complete"; return 1; }
	! grep -qE '^stress-ng: (fail|error):' <<<"$out" || { echo "a stressor failed"; return 1; }
	! grep -q 'skipping' <<<"$out" || { echo "a stressor was skipped"; return 1; }
}
# whole_view: kernel code over the pages of kmalloc objects that rslub serves
# (tests-kunit/view_whole.c, which passes on the kernel's allocator too): 20000
# request_region()/release_region() cycles leave the kmalloc classes' live objects where
# they were (free_resource() kfree()s a struct resource only if it is on a slab page, so
# each cycle leaked one while rslub's slabs were plain pages), and pages taken and put
# through a bvec iterator (iov_iter_get_pages2(), put_page()) keep their count and their
# objects.
whole_view() {
	local before after cycles=20000 out
	live() { awk '$2 == "kmalloc" { n += $4 - $6 } END { print n + 0 }' $wd; }
	before=$(live)
	out=$(insmod "$moddir/rslub_view_whole.ko" cycles=$cycles 2>&1) ||
		{ echo "insmod rslub_view_whole failed: $out"; dmesg | grep rslub_view_whole | tail -5; return 1; }
	rmmod rslub_view_whole || { echo "rmmod rslub_view_whole failed"; return 1; }
	after=$(live)
	echo "live objects of the kmalloc classes: $before before, $after after $cycles cycles"
	[ $((after - before)) -lt $((cycles / 2)) ] || { echo "a struct resource leaked a cycle"; return 1; }
}
# whole_kernel_tests: the kernel's own tests of XArray, maple tree and rhashtable (test
# modules that run at load, the first two failing it when a case fails; rhashtable's
# only says so) and the KUnit suites of the list types,
# every allocation of theirs served by rslub's kmalloc classes and backed caches
# (radix_tree_node, maple_node).
whole_kernel_tests() {
	local m out r=0 rc res fg=/sys/module/kunit/parameters/filter_glob fglob
	fglob=$(cat "$fg")
	for m in "test_xarray" "test_maple_tree" "test_rhashtable parm_entries=10000 runs=2 tcount=4" \
		"list-test"; do
		mark_log
		# SUITE= filters KUnit's suites by name (kunit.filter_glob): the list suites run
		# anyway, and the filter is as it was after their load.
		[ "$m" = list-test ] && [ "$fglob" != "(null)" ] && printf '*' > "$fg"
		# shellcheck disable=SC2086 # the module and its parameters
		modprobe -d "$rundir/modtree" $m
		rc=$?
		[ "$m" = list-test ] && [ "$fglob" != "(null)" ] && printf '%s' "$fglob" > "$fg"
		[ "$rc" = 0 ] || { echo "modprobe $m failed:"; new_log | tail -20; r=1; continue; }
		out=$(new_log)
		case $m in
		test_xarray | test_maple_tree)
			# "XArray: N of M tests passed", "maple_tree: N of M tests passed": N = M > 0.
			res=$(grep -E '(XArray|maple_tree): [0-9]+ of [0-9]+ tests passed' <<<"$out")
			echo "$res"
			awk '{for (i = 1; i < NF; i++) if ($(i + 1) == "of") {n = $i; m = $(i + 2)}}
				END {exit !(m > 0 && n == m)}' <<<"$res" || { echo "not every case passed"; r=1; } ;;
		test_rhashtable*)
			grep -E 'Started 4 threads, 0 failed, rhltable test returns 0' <<<"$out" || r=1
			grep -q 'Testing rhashtable_next_key: pass' <<<"$out" || { echo "rhashtable_next_key failed"; r=1; }
			# A walk that met a resize (table-jumps > 0) restarts and may count entries
			# twice, as rhashtable_walk_next() allows: its count mismatch is no failure.
			awk '/Traversal complete:/ { print; n = e = j = $0
					sub(/.*nelems=/, "", n); sub(/,.*/, "", n)
					sub(/.*entries=/, "", e); sub(/,.*/, "", e)
					sub(/.*table-jumps=/, "", j); jumped = j + 0 > 0 && n == e }
				/Test failed: Total count mismatch/ { if (!jumped) { print; bad = 1 }; next }
				/Test failed|YES, failed/ { print; bad = 1 }
				END { exit bad }' <<<"$out" > /tmp/rslub-rht || { cat /tmp/rslub-rht; r=1; } ;;
		list-test)
			for res in list-kunit-test hlist klist; do
				res=/sys/kernel/debug/kunit/$res/results
				[ -f "$res" ] || { echo "no $res: $(ls /sys/kernel/debug/kunit)"; r=1; continue; }
				grep -E '^(not )?ok [0-9]+ ' "$res" || { echo "no verdict in $res:"; cat "$res"; r=1; }
				grep -q '^not ok ' "$res" && r=1
			done ;;
		esac
		rmmod "${m%% *}" || { echo "rmmod ${m%% *} failed"; r=1; }
	done
	return "$r"
}
if [ "$mode" = whole ] && wanted rslub_whole_kernel; then
	check back_all_loads whole_load
	check rmmod_is_refused whole_rmmod_refused
	check workload_runs_on_rslub whole_workload
	check stress_ng_runs_on_rslub whole_stress
	check kernel_data_structure_tests_pass whole_kernel_tests
	check kernel_paths_keep_slab_pages whole_view
	check caches_are_served whole_served
	check kmalloc_is_served whole_kmalloc
	check backed_caches_are_sound whole_sound
	[ -e $kmemleak ] && check kmemleak_finds_nothing kmemleak_finds_nothing
	write_suite rslub_whole_kernel
fi
dmesg > "$rundir/dmesg"
echo 0 > "$rundir/done"
