#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# Boots the test kernel under virtme-ng with rslub's modules at hand.
#
#   vm.sh test    run the KUnit suites and the load checks, print the verdict
#   vm.sh run     load rslub (modprobe, with PARAMS) and print what it reports
#   vm.sh shell   interactive shell in the guest
#   vm.sh coverage  which of the guest's caches rslub could back (every name checked)
#
# (The benchmarks boot without virtme-ng: scripts/bench/vm.sh says why.)
#
# Variables: BACK (run: kernel caches rslub backs while hackbench runs; default the skb caches, none for none), WHOLE (run: 1 for the whole kernel on rslub, rslub.back=all), CPUS (4), NODES (2), MEMLESS (nodes, the last ones, with CPUs and no memory;
# 1 when NODES >= 4, else 0), MEM_PER_NODE (MiB; 256, debug 512), PARAMS (run: rslub's
# parameters; test: the test module's and the whole-kernel boot's
# rslub's, e.g. direct=0), APPEND
# (extra kernel command line), ACCEL (auto, kvm or tcg), TIMEOUT (seconds), BOOT_LIMIT
# (test: seconds a boot may take to run init, 300; one that does not is retried once), VARIANT,
# STRESS (seconds the rslub_stress suite runs; 3 by default), QEMU_OPTS (extra QEMU
# options, passed through virtme-ng), UPDATE_README (1: a green test run writes its count
# into README.md), SUITE (test: a glob of suite names, as KUnit's filter_glob takes it;
# only the matching suites run and count: a quick check of one change; CI runs all).
set -euo pipefail
. "$(dirname "$0")/../env.sh"

mode=${1:?usage: vm.sh test|run|shell|coverage}
CPUS=${CPUS:-4}
NODES=${NODES:-2}
PARAMS=${PARAMS:-}
APPEND=${APPEND:-}
ACCEL=${ACCEL:-auto}
STRESS=${STRESS:-3}
[[ "$STRESS" =~ ^[0-9]+$ ]] || die "STRESS=$STRESS: must be a number of seconds"
# FULL=1 (CI): everything, slow parts included: the whole-kernel boot (suite
# rslub_whole_kernel), the KUnit cases' whole sweeps (rslub_kunit's `full`) and the load
# checks' long waits. Without it, one boot of what checks the most per second.
FULL=${FULL:-0}
[[ "$FULL" =~ ^[01]$ ]] || die "FULL=$FULL: must be 0 or 1"
# 512 MiB a node on the kernels with memory hot-remove (distro, debug; KASAN's shadow
# too): a node of four memory blocks (128 MiB) has two between the ones early boot
# fills (the kernel, each node's memmap and per-CPU areas), which rslub_page_view's
# offline case can empty.
case "$VARIANT" in
debug | distro) MEM_PER_NODE=${MEM_PER_NODE:-512} ;;
*) MEM_PER_NODE=${MEM_PER_NODE:-256} ;;
esac
if [ "$VARIANT" = debug ]; then TIMEOUT=${TIMEOUT:-1800}; else TIMEOUT=${TIMEOUT:-600}; fi
TIMEOUT=$((TIMEOUT + ${STRESS:-0}))

[[ "$CPUS" =~ ^[1-9][0-9]*$ ]] || die "CPUS=$CPUS: must be a positive number"
[[ "$NODES" =~ ^[1-9][0-9]*$ ]] || die "NODES=$NODES: must be a positive number"
[ "$CPUS" -ge "$NODES" ] || die "CPUS=$CPUS NODES=$NODES: every node needs at least one CPU"
if [ "$NODES" -ge 4 ]; then MEMLESS=${MEMLESS:-1}; else MEMLESS=${MEMLESS:-0}; fi
[[ "$MEMLESS" =~ ^[0-9]+$ ]] && [ "$MEMLESS" -lt "$NODES" ] ||
	die "MEMLESS=$MEMLESS: must be a number below NODES=$NODES (node 0 needs memory)"

kdir=$("$RSLUB_TOP/scripts/kernel.sh")
moddir=$(KDIR=$kdir "$RSLUB_TOP/scripts/modules.sh")

# install_modules RUNDIR: `make modules_install INSTALL_MOD_PATH=RUNDIR/modtree`, as a user
# installs the modules; the guest's modprobe finds them there (modprobe -d). The empty
# lists of the kernel's own modules keep depmod from warning about an empty tree. The
# kernel's own test modules that the whole-kernel torture loads (scripts/kconfig/base.config)
# go in beside them.
install_modules() {
	local d m
	d=$1/modtree/lib/modules/$(cat "$kdir/include/config/kernel.release")
	mkdir -p "$d/kernel/lib"
	: > "$d/modules.order"
	: > "$d/modules.builtin"
	: > "$d/modules.builtin.modinfo"
	for m in lib/test_xarray.ko lib/test_maple_tree.ko lib/test_rhashtable.ko lib/tests/list-test.ko; do
		if [ -f "$kdir/$m" ]; then
			cp "$kdir/$m" "$d/kernel/lib/"
		else
			log "no $m in $kdir: the whole-kernel torture will say it cannot load it"
		fi
	done
	make -s -C "$RSLUB_TOP" modules_install INSTALL_MOD_PATH="$1/modtree" KDIR="$kdir" >/dev/null
}
# The skb caches rslub backs in `make run` by default and during the suites (under KASAN
# the napi skb cache poisons skbuff_head_cache objects through their slab page).
skb_caches=skbuff_head_cache,skbuff_small_head
if grep -q '^CONFIG_KASAN=y' "$kdir/.config"; then
	# Every KASAN report, not only the first: the suites provoke some on purpose
	# (rslub_sanitize), and one after them must still be seen.
	APPEND="${APPEND:+$APPEND }kasan_multi_shot"
	# 4-level paging: with 5-level (QEMU's CPU has LA57), an interrupt while the boot CPU
	# is identified (identify_cpu() clears its feature bits, LA57 among them) makes KASAN
	# take direct-map addresses for wild ones; with every report shown, the boot drowns.
	APPEND="$APPEND no5lvl"
	# The hang detectors of debug.config, with thresholds for TCG under KASAN: a CPU
	# that does not schedule for 60 s, a workqueue that does not run for 120 s.
	APPEND="$APPEND watchdog_thresh=30 workqueue.watchdog_thresh=120"
	# A task that writes a suite's KUnit `run` file waits, uninterruptible, for each case
	# (KUnit's own timeout is 300 s): the hung-task report only past that.
	APPEND="$APPEND hung_task_timeout_secs=400"
fi
# A kernel log of 16 MiB: the debug run prints more than the default 128 KiB ring holds,
# and the guest saves its dmesg at the end (scripts/test/ktap.py reads it and the console).
APPEND="log_buf_len=16M${APPEND:+ $APPEND}"
# The host command of the layout what-if, built here: the guest compares it with the
# module's debugfs file.
"$RSLUB_TOP/scripts/layout" --build >/dev/null
ksrc=$(readlink -f "$kdir/source")

# Topology: NODES nodes of MEM_PER_NODE MiB (the last MEMLESS of them with none), CPUs
# split evenly in order, distances not uniform (rslub_ring_distances, scripts/env.sh).
topo=(--cpus "$CPUS" --memory "$(((NODES - MEMLESS) * MEM_PER_NODE))M")
if [ "$NODES" -gt 1 ]; then
	for ((n = 0; n < NODES; n++)); do
		first=$((n * CPUS / NODES)); last=$(((n + 1) * CPUS / NODES - 1))
		mem=${MEM_PER_NODE}M
		[ "$n" -lt $((NODES - MEMLESS)) ] || mem=0
		topo+=(--numa "$mem,cpus=$first-$last")
	done
	while read -r a b d; do
		topo+=(--numa-distance "$a,$b=$d")
	done < <(rslub_ring_distances "$NODES")
fi

# KVM where it works, TCG otherwise. A /dev/kvm may exist and still fail to boot a stock
# kernel (a paravirtual hypervisor), so "auto" tries one boot and remembers the answer.
accel_args() {
	local verdict=$RSLUB_CACHE/accel
	case "$ACCEL" in
	kvm) return 0 ;;
	tcg) echo --disable-kvm; return 0 ;;
	auto) ;;
	*) die "ACCEL=$ACCEL: must be auto, kvm or tcg" ;;
	esac
	if [ ! -f "$verdict" ]; then
		local v=tcg
		if [ -r /dev/kvm ] && [ -w /dev/kvm ]; then
			log "probing KVM (one short boot)"
			if timeout 60 "$RSLUB_VNG" --run "$kdir" --disable-microvm "${shim_args[@]}" \
				--exec 'echo rslub-kvm-ok' </dev/null 2>&1 | grep -q rslub-kvm-ok; then
				v=kvm
			fi
		fi
		echo "$v" > "$verdict"
		log "KVM probe: using $v (remembered in $verdict; ACCEL=kvm|tcg overrides)"
	fi
	[ "$(cat "$verdict")" = kvm ] || echo --disable-kvm
}

# virtme-ng needs udev in the guest to find its script ports. Where the host has no udevd,
# boot with small stand-ins first on PATH (they only create /dev/virtio-ports/* links).
shim_args=()
if ! command -v udevd >/dev/null && [ ! -x /lib/systemd/systemd-udevd ] &&
	[ ! -x /usr/lib/systemd/systemd-udevd ]; then
	shims=$RSLUB_CACHE/vng-shims
	mkdir -p "$shims"
	cat > "$shims/udevd" <<'S'
#!/bin/sh
# rslub stand-in for udevd: only the /dev/virtio-ports/<name> links virtme-ng needs.
mkdir -p /dev/virtio-ports
for d in /sys/class/virtio-ports/*; do
	[ -r "$d/name" ] || continue
	n=$(cat "$d/name")
	[ -n "$n" ] && ln -sf "../${d##*/}" "/dev/virtio-ports/$n"
done
exit 0
S
	printf '#!/bin/sh\nexit 0\n' > "$shims/udevadm"
	printf '#!/bin/sh\nexit 0\n' > "$shims/systemd-tmpfiles"
	chmod +x "$shims"/*
	shim_args=(--append "PATH=$shims:/usr/sbin:/usr/bin:/sbin:/bin")
fi

# One socket per node when the CPUs divide evenly: QEMU's default (one socket) puts
# cache siblings on different nodes, and the kernel WARNs about that at boot.
qemu_opts=${QEMU_OPTS:-}
if [ "$NODES" -gt 1 ] && [ $((CPUS % NODES)) -eq 0 ]; then
	qemu_opts="-smp $CPUS,sockets=$NODES,cores=$((CPUS / NODES)),threads=1 $qemu_opts"
fi

mapfile -t accel < <(accel_args)
vng=("$RSLUB_VNG" --run "$kdir" --disable-microvm "${accel[@]}" "${topo[@]}" "${shim_args[@]}")
[ -z "$APPEND" ] || vng+=(--append "$APPEND")
[ -z "$qemu_opts" ] || vng+=(--qemu-opts "$qemu_opts")

where="${CPUS} CPUs, ${NODES} node(s) ($MEMLESS without memory), $VARIANT kernel, ${accel[*]:-kvm}"
[ "$mode" != test ] || [ "$FULL" = 0 ] || where+=", FULL=1"
case "$mode" in
shell)
	log "shell: $where; modules in $moddir"
	exec "${vng[@]}" --cwd "$moddir"
	;;
run)
	rundir=$(mktemp -d "$RSLUB_CACHE/run.XXXXXX")
	trap 'rm -rf "$rundir"' EXIT
	install_modules "$rundir"
	# The workload by default: hackbench with rslub backing the skb caches. BACK=none
	# loads rslub alone. WHOLE=1: the whole kernel on rslub (rslub.back=all on the
	# kernel command line, rslub loaded by the guest's first command).
	if [ "${WHOLE:-0}" = 1 ]; then
		[ -z "${BACK:-}" ] || [ "$BACK" = all ] || die "WHOLE=1 backs every cache: no BACK=$BACK"
		BACK=all
		vng+=(--append "rslub.back=all")
	elif [ "${BACK:-}" = none ]; then
		BACK=
	elif [ -z "${BACK:-}" ]; then
		BACK=$skb_caches
	fi
	if [ -n "${BACK:-}" ]; then
		[[ "$BACK" =~ ^[A-Za-z0-9_.:,-]+$ ]] || die "BACK=$BACK: cache names, comma-separated"
		# The workload: hackbench, from Debian's rt-tests, run in the guest from the host's
		# root file system (virtme-ng).
		if ! command -v hackbench >/dev/null; then
			log "installing rt-tests (hackbench) for BACK="
			as_root env DEBIAN_FRONTEND=noninteractive apt-get install -y -q \
				--no-install-recommends rt-tests >/dev/null
		fi
	fi
	log "run: $where; modprobe rslub $PARAMS${BACK:+ back=$BACK}"
	timeout "$TIMEOUT" "${vng[@]}" --rwdir "$rundir" \
		--exec "$RSLUB_TOP/scripts/test/guest.sh run $rundir $moddir '$PARAMS' '${BACK:-}'" \
		</dev/null 2>&1 | cat
	[ -f "$rundir/done" ] || die "the guest did not finish (crash or timeout)"
	exit "$(cat "$rundir/done")"
	;;
coverage)
	rundir=$(mktemp -d "$RSLUB_CACHE/run.XXXXXX")
	trap 'rm -rf "$rundir"' EXIT
	install_modules "$rundir"
	log "coverage: $where; every name in /sys/kernel/slab checked"
	timeout "$TIMEOUT" "${vng[@]}" --rwdir "$rundir" \
		--exec "$RSLUB_TOP/scripts/test/guest.sh coverage $rundir $moddir" </dev/null 2>&1 |
		grep -E '^(guest:|  *[0-9]+ |[A-Za-z0-9_.:-]+	)' || true
	[ -f "$rundir/done" ] || die "the guest did not finish (crash or timeout)"
	exit "$(cat "$rundir/done")"
	;;
test) ;;
*) die "unknown mode $mode" ;;
esac

# test: the suites that must report: every #[kunit_tests(..)] in tests-kunit/, and the
# load checks done by scripts/test/guest.sh.
mapfile -t suites < <(sed -n 's/^#\[kunit_tests(\([a-z0-9_]*\))\]/\1/p' "$RSLUB_TOP"/tests-kunit/*.rs | sort -u)
suites+=(rslub_load rslub_traffic)
[ "$FULL" = 1 ] && suites+=(rslub_whole_kernel)
# SUITE=GLOB: only the matching suites (KUnit filters its own by kunit.filter_glob; the
# guest skips the load and traffic checks that do not match).
SUITE=${SUITE:-}
if [ -n "$SUITE" ]; then
	[[ "$SUITE" =~ ^[][A-Za-z0-9_*?.-]+$ ]] || die "SUITE=$SUITE: a glob of suite names"
	picked=()
	for s in "${suites[@]}"; do
		# shellcheck disable=SC2053 # SUITE is a glob
		[[ "$s" == ${SUITE%%.*} ]] && picked+=("$s")
	done
	[ "${#picked[@]}" -gt 0 ] || die "SUITE=$SUITE matches no suite (${suites[*]})"
	[ "${UPDATE_README:-0}" != 1 ] || die "UPDATE_README=1 needs every suite: drop SUITE"
	suites=("${picked[@]}")
	vng+=(--append "kunit.filter_glob=$SUITE")
fi

# The suites run with the skb caches backed while the guest sends TCP and unix-socket
# traffic over loopback. The boot keeps no page cache for kfree_rcu() batches
# (slab_common.rcu_min_cached_objs=0): every kfree_rcu() of the kernel's takes its
# fallback path, the head-queued one, which rslub's objects must never reach.
suite_back=$skb_caches

# Every suite but the whole-kernel one runs in the first boot.
first=() whole=
for s in "${suites[@]}"; do
	if [ "$s" = rslub_whole_kernel ]; then whole=1; else first+=("$s"); fi
done
rm -rf "$RSLUB_CACHE"/test.*  # keep only the latest run's logs
# QEMU's own crashes under TCG (seen: physmem.c's iotlb_to_section assertion during the
# guest's PCI probe), told from the guest's: QEMU's message and no panic of the kernel.
qemu_crash='Assertion .* failed|qemu-system-[a-z0-9_]+: .*(Aborted|core dumped)'
qemu_crashed() {
	grep -qE "$qemu_crash" "$1" && ! grep -qE 'Kernel panic|BUG:|Oops' "$1"
}
# QEMU TCG's stale int3 (Documentation/testing.rst): the first thing the kernel reports is
# an int3 trap on a byte that memory no longer holds as int3, right after text patching,
# with no test failed before it. Retried once, said so; any other oops is a failure.
stale_int3() {
	python3 "$RSLUB_TOP/scripts/test/ktap.py" --stale-int3 "$1"
}
# An early-boot hang under TCG: the kernel stops printing during its own initialisation,
# with QEMU's vCPU threads busy, before it runs init (seen on 2 cores with 4 vCPUs: after
# the PCI probe's "e820: register RAM buffer resource", after "vgaarb: loaded"). No module
# is loaded by then (the guest's script loads rslub, from init): it is not a test failure.
# guest LOG ARGS...: boots the guest with the vng arguments ARGS, its console in LOG, as
# `timeout TIMEOUT vng`; a boot that has not run init ("Run ... as init process") within
# BOOT_LIMIT seconds (300) is stopped, and returns 200.
BOOT_LIMIT=${BOOT_LIMIT:-300}
[[ "$BOOT_LIMIT" =~ ^[1-9][0-9]*$ ]] || die "BOOT_LIMIT=$BOOT_LIMIT: must be a positive number of seconds"
guest() {
	local out=$1 pid t=0
	shift
	timeout "$TIMEOUT" "${vng[@]}" "$@" </dev/null > "$out" 2>&1 &
	pid=$!
	while kill -0 "$pid" 2>/dev/null; do
		if [ "$t" -ge "$BOOT_LIMIT" ] && ! grep -q ' as init process' "$out"; then
			kill -TERM "$pid" 2>/dev/null
			wait "$pid"
			return 200
		fi
		sleep 1
		t=$((t + 1))
	done
	wait "$pid"
}
attempt=1
while :; do
	rundir=$(mktemp -d "$RSLUB_CACHE/test.XXXXXX")
	install_modules "$rundir"
	log "test: $where; suites: ${suites[*]}; backed during the suites: $suite_back"
	set +e
	rc=0
	if [ -n "${first[*]}" ]; then
		guest "$rundir/vng.log" --verbose --rwdir "$rundir" \
			--append "rslub.max_order=2 slab_common.rcu_min_cached_objs=0 kunit.autorun=0" \
			--exec "RSLUB_FULL=$FULL RSLUB_SUITES='${first[*]}' $RSLUB_TOP/scripts/test/guest.sh test $rundir $moddir 'stress_seconds=$STRESS full=$FULL $PARAMS' $suite_back"
		rc=$?
	else
		echo 0 > "$rundir/done"
	fi
	# The whole-kernel suite boots on its own: rslub.back=all on the kernel command line
	# and rslub loaded by the guest's first command, for the rest of the boot.
	if [ -n "$whole" ] && [ "$rc" -ne 124 ] && [ "$rc" -ne 200 ]; then
		for wattempt in 1 2; do
			mkdir -p "$rundir/whole"
			install_modules "$rundir/whole"
			log "test: $where; suite rslub_whole_kernel: a boot with rslub.back=all"
			guest "$rundir/whole/vng.log" --verbose --rwdir "$rundir/whole" \
				--append "rslub.back=all" \
				--exec "RSLUB_SUITES=rslub_whole_kernel $RSLUB_TOP/scripts/test/guest.sh whole $rundir/whole $moddir '$PARAMS'"
			w=$?
			# As for the first boot below: a crash of QEMU itself, or a hang before
			# init, is retried once; the failed boot's log stays beside the new one.
			if [ "$wattempt" -eq 1 ] && [ ! -f "$rundir/whole/done" ] &&
				qemu_crashed "$rundir/whole/vng.log"; then
				log "QEMU itself crashed in the whole-kernel boot (not a test failure); retrying once. Its words:"
				grep -E "$qemu_crash" "$rundir/whole/vng.log" | tail -n 3 >&2
				mv "$rundir/whole" "$rundir/whole-qemu-crashed"
				continue
			fi
			if [ "$wattempt" -eq 1 ] && [ ! -f "$rundir/whole/done" ] &&
				stale_int3 "$rundir/whole/vng.log"; then
				log "the whole-kernel boot oopsed on QEMU TCG's stale int3 (testing.rst; not a test failure); retrying once. Its words:"
				grep -m 2 -E 'Oops: int3|^RIP: 0010' "$rundir/whole/vng.log" >&2
				mv "$rundir/whole" "$rundir/whole-stale-int3"
				continue
			fi
			if [ "$wattempt" -eq 1 ] && [ "$w" -eq 200 ]; then
				log "the whole-kernel boot did not reach init in $BOOT_LIMIT s (an early-boot hang, before any module is loaded: not a test failure); retrying once. Its last words:"
				tail -n 3 "$rundir/whole/vng.log" >&2
				mv "$rundir/whole" "$rundir/whole-hung-early"
				continue
			fi
			break
		done
		[ "$rc" -ne 0 ] || rc=$w
	fi
	set -e
	# A crash of QEMU itself (not of the guest) is retried once, and said so.
	if [ ! -f "$rundir/done" ] && [ "$attempt" -eq 1 ] && qemu_crashed "$rundir/vng.log"; then
		log "QEMU itself crashed (not a test failure); retrying once. Its last words:"
		tail -n 3 "$rundir/vng.log" >&2
		attempt=2
		continue
	fi
	if [ ! -f "$rundir/done" ] && [ "$attempt" -eq 1 ] && stale_int3 "$rundir/vng.log"; then
		log "the guest oopsed on QEMU TCG's stale int3 (testing.rst; not a test failure); retrying once. Its words:"
		grep -m 2 -E 'Oops: int3|^RIP: 0010' "$rundir/vng.log" >&2
		mv "$rundir" "$rundir-stale-int3"
		attempt=2
		continue
	fi
	# (Only the first boot's hang: a whole-kernel boot that hung twice is not booted
	# a third time behind a first boot that ran.)
	if [ ! -f "$rundir/done" ] && [ "$attempt" -eq 1 ] && [ "$rc" -eq 200 ]; then
		log "the guest did not reach init in $BOOT_LIMIT s (an early-boot hang, before any module is loaded: not a test failure); retrying once. Its last words:"
		tail -n 3 "$rundir/vng.log" >&2
		mv "$rundir" "$rundir-hung-early"
		attempt=2
		continue
	fi
	break
done
if [ "$rc" -eq 124 ]; then
	log "the guest timed out after $TIMEOUT s"
fi
if [ "$rc" -eq 200 ] || [ "${w:-0}" -eq 200 ]; then
	log "the guest did not reach init in $BOOT_LIMIT s, twice"
fi
status=0
python3 "$RSLUB_TOP/scripts/test/ktap.py" --kunit "$ksrc/tools/testing/kunit/kunit.py" \
	--where "$where${PARAMS:+, PARAMS=$PARAMS}" --rundir "$rundir" ${whole:+--rundir "$rundir/whole"} "${suites[@]}" || status=$?
# RSLUB_VERDICTS=DIR (.ci/run): the verdict is kept there too, for `ktap.py --combine`,
# which fails on a test that every run skipped.
if [ -n "${RSLUB_VERDICTS:-}" ] && [ -f "$rundir/verdict.json" ]; then
	mkdir -p "$RSLUB_VERDICTS"
	cp "$rundir/verdict.json" "$RSLUB_VERDICTS/$(date +%s%N).json"
fi
# A failed run's logs outlive the next run's start (which removes every test.*): a copy
# in failed/ (the newest ten), without the modules' tree.
if [ "$status" -ne 0 ]; then
	kept="$RSLUB_CACHE/failed/$(date +%Y%m%d-%H%M%S)-${rundir##*/}"
	mkdir -p "$kept"
	for f in "$rundir"/*; do
		[ "${f##*/}" = modtree ] || cp -r "$f" "$kept/"
	done
	log "this failed run's logs are kept in $kept"
	ls -1d "$RSLUB_CACHE"/failed/* | head -n -10 | xargs -r rm -rf
fi
# UPDATE_README=1: a green run writes its count into README.md (produced, not typed).
if [ "$status" -eq 0 ] && [ "${UPDATE_README:-0}" = 1 ]; then
	python3 "$RSLUB_TOP/scripts/test/readme_count.py" "$RSLUB_TOP/README.md" "$rundir" "$where"
fi
exit "$status"
