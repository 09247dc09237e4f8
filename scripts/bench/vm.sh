#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# Boots the test kernel once to run the benchmark module, and writes its RESULT lines
# (JSON, one per line) to OUT and the whole console log to OUT.log.
#
#   vm.sh OUT PARAMS...         PARAMS: rslub_bench's parameters (suite=N)
#   REAL=1 vm.sh OUT EXPERIMENTS...
#                               the real workloads instead (scripts/bench/real_guest.sh,
#                               with guest_init.sh): rslub.ko, hackbench and
#                               workloads/pingpong.c in the initramfs
#
# Variables: CPUS (4), NODES (2), MEM_PER_NODE (MiB, 256), WALLCLOCK (1: no icount),
# TIMEOUT (seconds, 900), REAL, WHOLE (with REAL=1: scripts/bench/whole_guest.sh and its
# programs), COUNT_PLUGIN (a QEMU plugin to load, scripts/bench/qemu/count.c; its log is
# written to OUT.count), PROFILE (1: the plugin profiles each run by symbol), KERNEL_ARGS (more
# kernel parameters, e.g. mitigations), QEMU_CPU (QEMU's -cpu, max by default), SEED
# (QEMU's -seed, 1: the guest's random numbers), PAD (KiB of padding at the initramfs's
# end, 0: none; it moves where the kernel places the initramfs, and so the memory layout
# of what follows: the spread's boots vary it, see scripts/bench/whole.sh).
#
# Not virtme-ng, on purpose: the guest here reads nothing from the host after boot. Its
# whole root file system is a small initramfs (busybox, the module, an /init that loads
# it and powers off), its random numbers come from -seed and its clock from the
# instruction count (-icount, -rtc clock=vm). A host file read would complete at a host-
# dependent guest instant and make every boot's memory layout different, and with it the
# instructions the page allocator spends; without one, two boots run the same
# instructions, so `make bench` gives the same figures twice.
set -euo pipefail
. "$(dirname "$0")/../env.sh"

out=${1:?usage: vm.sh OUT PARAMS...}
shift
CPUS=${CPUS:-4}
NODES=${NODES:-2}
MEM_PER_NODE=${MEM_PER_NODE:-256}
TIMEOUT=${TIMEOUT:-900}
[[ "$CPUS" =~ ^[1-9][0-9]*$ ]] || die "CPUS=$CPUS: must be a positive number"
[[ "$NODES" =~ ^[1-9][0-9]*$ ]] || die "NODES=$NODES: must be a positive number"
[ "$CPUS" -ge "$NODES" ] || die "CPUS=$CPUS NODES=$NODES: every node needs at least one CPU"

kdir=$("$RSLUB_TOP/scripts/kernel.sh")
moddir=$(KDIR=$kdir "$RSLUB_TOP/scripts/modules.sh")
# Debian's busybox-static (scripts/setup.sh installs it): a static binary, all the guest's
# user space.
busybox=/bin/busybox
[ -x "$busybox" ] || die "$busybox not found: install busybox-static"
cpio_gen=$kdir/usr/gen_init_cpio
[ -x "$cpio_gen" ] || die "$cpio_gen not found: the kernel tree must be built with CONFIG_BLK_DEV_INITRD"

rundir=$(mktemp -d "$RSLUB_CACHE/bench.XXXXXX")
trap 'rm -rf "$rundir"' EXIT

# The initramfs: /init loads the module with the arguments the kernel passes it (those
# after "--" on its command line), then powers off.
cat > "$rundir/init" <<'S'
#!/bin/busybox sh
# rslub benchmark guest: load the module, power off.
# /sys for the memory table, which reads the kernel's caches from /sys/kernel/slab.
/bin/busybox mount -t sysfs sys /sys
# Which speculation mitigations this boot has live (make bench VARIANT=distro).
for f in /sys/devices/system/cpu/vulnerabilities/*; do
	[ -r "$f" ] && echo "rslub-bench: vulnerability ${f##*/}: $(/bin/busybox cat "$f")"
done
if /bin/busybox insmod /rslub_bench.ko "$@"; then
	echo "rslub-bench: loaded"
else
	echo "rslub-bench: insmod failed"
fi
/bin/busybox poweroff -f
S
cat > "$rundir/list" <<S
dir /bin 0755 0 0
dir /dev 0755 0 0
dir /sys 0755 0 0
nod /dev/console 0600 0 0 c 5 1
file /bin/busybox $busybox 0755 0 0
S
# cpio_path FILE...: the list's lines for FILE (at the same path as on the host, the
# target of a link) and the folders above it, each once.
declare -A listed
cpio_path() {
	local f d p part
	for f in "$@"; do
		[ -z "${listed[$f]:-}" ] || continue
		listed[$f]=1
		d=$(dirname "$f") p=""
		for part in ${d//\// }; do
			p+="/$part"
			[ -n "${listed[$p]:-}" ] || { listed[$p]=1; echo "dir $p 0755 0 0"; }
		done
		echo "file $f $(readlink -f "$f") $(stat -L -c %a "$f") 0 0"
	done
}
# cpio_exe PROGRAM...: a dynamically linked program and the libraries it loads.
cpio_exe() {
	local x
	for x in "$@"; do
		cpio_path "$x"
		# shellcheck disable=SC2046 # one path a word
		cpio_path $(ldd "$x" | grep -o '/[^ ]*')
	done
}
if [ "${REAL:-0}" = 1 ]; then
	# The real workloads: hackbench (Debian's rt-tests) with the libraries it links, and
	# the TCP workloads, built static here.
	hackbench=$(command -v hackbench) || die "hackbench not found: install rt-tests"
	gcc -O2 -static -Wall -o "$rundir/pingpong" "$RSLUB_TOP/scripts/bench/workloads/pingpong.c"
	{
		if [ "${WHOLE:-0}" = 1 ]; then
			echo "file /init $RSLUB_TOP/scripts/bench/whole_guest.sh 0755 0 0"
		else
			echo "file /init $RSLUB_TOP/scripts/bench/real_guest.sh 0755 0 0"
		fi
		echo "file /guest_init.sh $RSLUB_TOP/scripts/bench/guest_init.sh 0644 0 0"
		# None on classic SLUB's kernel (RSLUB_KSERIES=6.12, no Rust): alloc=kernel only.
		[ ! -f "$moddir/rslub.ko" ] || echo "file /rslub.ko $moddir/rslub.ko 0644 0 0"
		echo "file /bin/pingpong $rundir/pingpong 0755 0 0"
		cpio_exe "$hackbench"
		echo "file /bin/hackbench $hackbench 0755 0 0"
	} >> "$rundir/list"
	if [ "${WHOLE:-0}" = 1 ]; then
		# The whole-system workloads (scripts/bench/whole_guest.sh): the marker, the
		# kfree_rcu and kmem_micro modules, and the programs of WHOLE_FILES (fio, perf,
		# build: the compiler with the build's files; all three unless set). They are
		# most of the initramfs (fio's libraries 84 MB, perf's 40, cc1 32), which the
		# kernel unpacks at every boot: the sweep's boots, hackbench alone, go without.
		files=${WHOLE_FILES-fio perf build}
		want() { case " $files " in *" $1 "*) return 0 ;; esac; return 1; }
		gcc -O2 -static -nostdlib -o "$rundir/mark" "$RSLUB_TOP/scripts/bench/workloads/mark.c"
		gcc -O2 -static -Wall -o "$rundir/snapshot" \
			"$RSLUB_TOP/scripts/bench/workloads/snapshot.c"
		progs=()
		want fio && progs+=(fio)
		want perf && progs+=(perf)
		want build && progs+=(make gcc)
		for p in "${progs[@]}"; do
			command -v "$p" >/dev/null || die "$p not found (scripts/bench/whole.sh installs it)"
		done
		deps=()
		if want build; then
			ksrc=$(readlink -f "$kdir/source" 2>/dev/null || printf '%s' "$kdir")
			mk=$RSLUB_TOP/scripts/bench/workloads/build.mk
			# shellcheck disable=SC2207 # paths without spaces
			srcs=($(make -s -f "$mk" srcs))
			mkdir -p "$rundir/build"
			(cd "$ksrc" && cp --parents "${srcs[@]}" "$rundir/build/")
			# The headers they include: the C library's at their paths, the tree's in /build.
			mapfile -t deps < <(cd "$ksrc" && gcc -M -O2 -I scripts/include "${srcs[@]}" |
				tr ' \\' '\n\n' | grep -v ':$' | grep . | sort -u)
			for h in "${deps[@]}"; do
				case "$h" in
				/*) ;;
				*.h) (cd "$ksrc" && cp --parents "$h" "$rundir/build/") ;;
				esac
			done
			cp "$mk" "$rundir/build/build.mk"
			cc1=$(gcc -print-prog-name=cc1)
		fi
		{
			echo "file /bin/mark $rundir/mark 0755 0 0"
			echo "file /bin/snapshot $rundir/snapshot 0755 0 0"
			echo "file /rslub_kfree_rcu.ko $moddir/rslub_kfree_rcu.ko 0644 0 0"
			echo "file /rslub_kmem_micro.ko $moddir/rslub_kmem_micro.ko 0644 0 0"
			[ ! -f "$moddir/rslub_kmem_micro_api.ko" ] ||
				echo "file /rslub_kmem_micro_api.ko $moddir/rslub_kmem_micro_api.ko 0644 0 0"
			! want fio || cpio_exe "$(command -v fio)"
			! want perf || cpio_exe "$(command -v perf)"
			if want build; then
				cpio_exe "$(command -v make)" "$(readlink -f "$(command -v gcc)")" "$cc1" \
					"$(readlink -f "$(command -v as)")"
				# The driver runs "as" and "gcc" is what the Makefile calls.
				echo "slink /usr/bin/gcc $(readlink -f "$(command -v gcc)") 0777 0 0"
				echo "slink /usr/bin/as $(readlink -f "$(command -v as)") 0777 0 0"
				for h in "${deps[@]}"; do
					case "$h" in /*) cpio_path "$h" ;; esac
				done
				# gcc -M names a header by its link's target: Debian's multiarch asm/
				# headers are links into /usr/lib/linux/uapi, found by their names.
				cpio_path /usr/include/x86_64-linux-gnu/asm/*.h
				(cd "$rundir" && find build -type d | sed 's|^|dir /|; s|$| 0755 0 0|')
				(cd "$rundir" && find build -type f) | while read -r f; do
					echo "file /$f $rundir/$f 0644 0 0"
				done
			fi
		} >> "$rundir/list"
	fi
else
	cat >> "$rundir/list" <<S
file /init $rundir/init 0755 0 0
file /rslub_bench.ko $moddir/rslub_bench.ko 0644 0 0
S
fi
if [ "${PAD:-0}" != 0 ]; then
	[[ "$PAD" =~ ^[0-9]+$ ]] || die "PAD=$PAD: KiB, a number"
	head -c $((PAD * 1024)) /dev/zero > "$rundir/pad"
	echo "file /pad $rundir/pad 0644 0 0" >> "$rundir/list"
fi
"$cpio_gen" "$rundir/list" > "$rundir/initramfs.cpio"

# NODES nodes of MEM_PER_NODE MiB, CPUs split evenly in order.
# One socket per node when the CPUs split evenly (as make test's guest): a node that
# shares a socket with another makes the boot warn in set_cpu_sibling_map().
smp=$CPUS
[ $((CPUS % NODES)) -ne 0 ] || smp+=",sockets=$NODES,cores=$((CPUS / NODES)),threads=1"
qemu=(qemu-system-x86_64 -machine q35 -cpu "${QEMU_CPU:-max}" -smp "$smp" -m "$((NODES * MEM_PER_NODE))M")
if [ "$NODES" -gt 1 ]; then
	for ((n = 0; n < NODES; n++)); do
		first=$((n * CPUS / NODES)); last=$(((n + 1) * CPUS / NODES - 1))
		qemu+=(-object "memory-backend-ram,id=m$n,size=${MEM_PER_NODE}M"
			-numa "node,nodeid=$n,cpus=$first-$last,memdev=m$n")
	done
	# Distances that differ from node to node, as make test's.
	while read -r a b d; do
		qemu+=(-numa "dist,src=$a,dst=$b,val=$d")
	done < <(rslub_ring_distances "$NODES")
fi
# Two waits of the boot that measure nothing and cost seconds under TCG: the INIT delay
# before each secondary CPU starts (10 ms of busy waiting, as the kernel takes QEMU's
# "AMD ... family 6" for an old CPU: cpu_init_udelay=0, what it uses on any recent one),
# and, under -icount, the delay loop's calibration on every secondary CPU (its TSC is
# taken for unsynchronized, so no CPU takes another's value): there the TSC runs at one
# tick a guest nanosecond (the kernels measure 999.99 to 1000.01 MHz), so lpj, the ticks
# of a jiffy, is 10^9 / HZ, which a preset lpj gives every CPU (it only sizes udelay()'s
# waits). Without them a boot ran ~260 M instructions and 4-5 s of host time more before
# /init (README.md, the times of make bench).
boot_args="cpu_init_udelay=0"
if [ "${WALLCLOCK:-0}" = 1 ]; then
	# The secondary figure: wall clock, every vCPU in a host thread of its own.
	qemu+=(-accel tcg,thread=multi)
else
	# One guest nanosecond per guest instruction.
	qemu+=(-accel tcg -icount shift=0,align=off,sleep=off -seed "${SEED:-1}"
		-rtc base=2026-01-01T00:00:00,clock=vm)
	hz=$(sed -n 's/^CONFIG_HZ=//p' "$kdir/.config")
	[[ "$hz" =~ ^[1-9][0-9]*$ ]] || die "no CONFIG_HZ in $kdir/.config"
	boot_args+=" lpj=$((1000000000 / hz))"
fi
# COUNT_PLUGIN: the instruction-counting plugin (scripts/bench/qemu/count.c), its log
# beside OUT; PROFILE=1: with the kernel's symbols, for its profile of each run.
plugin=${COUNT_PLUGIN:-}
# Under -icount every vCPU runs on one thread: the plugin adds without locking.
[ "${WALLCLOCK:-0}" = 1 ] || plugin+=",single=1"
if [ "${PROFILE:-0}" = 1 ]; then
	# Its table of module blocks grows as blocks are translated: one vCPU thread only.
	[ "${WALLCLOCK:-0}" != 1 ] || die "PROFILE=1 needs -icount: not with WALLCLOCK=1"
	plugin+=",map=$kdir/System.map"
fi
[ -z "${COUNT_PLUGIN:-}" ] || qemu+=(-plugin "$plugin" -d plugin -D "$rundir/count.log")
qemu+=(-display none -vga none -parallel none -net none -monitor none -no-reboot
	-serial "file:$rundir/console.log"
	-kernel "$kdir/arch/x86/boot/bzImage" -initrd "$rundir/initramfs.cpio"
	-append "console=ttyS0 loglevel=7 log_buf_len=16M panic=-1 oops=panic $boot_args ${KERNEL_ARGS:-} -- $*")

where="$CPUS CPUs, $NODES node(s), Linux $RSLUB_KSERIES $VARIANT kernel, -cpu ${QEMU_CPU:-max}${KERNEL_ARGS:+, $KERNEL_ARGS}"
[ "${WALLCLOCK:-0}" = 1 ] && where+=", wall clock" || where+=", icount"
log "bench: $where; rslub_bench $*"
# A boot that oopses on QEMU TCG's stale int3 (Documentation/testing.rst: a trap on a byte
# that memory no longer holds as int3, after text patching) is booted again, once.
for attempt in 1 2; do
	: > "$rundir/console.log"
	rm -f "$rundir/count.log"
	# Progress, as the guest prints it.
	tail -F -n +1 "$rundir/console.log" 2>/dev/null |
		sed -un 's/\r$//; s/.*rslub_bench: \(progress: .*\|done\)$/  guest: \1/p' >&2 &
	tailer=$!
	set +e
	timeout "$TIMEOUT" "${qemu[@]}" </dev/null > "$rundir/qemu.log" 2>&1
	rc=$?
	set -e
	sleep 0.3
	kill "$tailer" 2>/dev/null || true
	sed 's/\r$//' "$rundir/console.log" > "$out.log"  # the serial console ends lines in CRLF
	if [ "$attempt" -eq 1 ] && ! grep -q 'rslub_bench: done' "$out.log" &&
		python3 "$RSLUB_TOP/scripts/test/ktap.py" --stale-int3 "$out.log"; then
		log "the guest oopsed on QEMU TCG's stale int3 (testing.rst; not rslub's); booting again once"
		mv "$out.log" "$out.stale-int3.log"
		continue
	fi
	break
done
[ "$rc" -ne 124 ] || die "the guest timed out after $TIMEOUT s; console in $out.log"
[ "$rc" -eq 0 ] || die "QEMU exited with $rc: $(tail -n 3 "$rundir/qemu.log"); console in $out.log"
grep -q 'rslub_bench: done' "$out.log" || die "the benchmarks did not finish; console in $out.log"
# A kernel report or one of rslub's (scripts/test/reports.py, the list make test uses) fails the
# benchmark: its figures would be of a broken run.
reports=$(python3 "$RSLUB_TOP/scripts/test/reports.py" "$out.log") ||
	die "the kernel or rslub reported a problem (console in $out.log):"$'\n'"$reports"
sed -n 's/.*rslub_bench: RESULT //p' "$out.log" > "$out"
[ -z "${COUNT_PLUGIN:-}" ] || cp "$rundir/count.log" "$out.count"
# A profile's module blocks are mapped to rslub's symbols by the module the guest loaded.
[ "${PROFILE:-0}" != 1 ] || [ ! -f "$moddir/rslub.ko" ] || cp "$moddir/rslub.ko" "$out.ko"
