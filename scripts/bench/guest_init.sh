# SPDX-License-Identifier: GPL-2.0
# shellcheck shell=dash
#
# What the workload guests' /init scripts share (real_guest.sh, whole_guest.sh; REAL=1
# scripts/bench/vm.sh puts this file in the initramfs as /guest_init.sh), sourced as
# their first command: busybox's applets, the file systems and loopback they use, the
# kernel's messages unthrottled; then functions only, which each calls where it needs
# them. Nothing here reads the host.
/bin/busybox mkdir -p /proc /sys /tmp /usr/bin /usr/sbin /sbin
/bin/busybox --install -s
mount -t proc proc /proc
mount -t sysfs sys /sys
mount -t debugfs none /sys/kernel/debug
ip link set lo up
echo 0 2>/dev/null > /proc/sys/kernel/printk_ratelimit

# A line for the host: the RESULT lines, progress, failures (scripts/bench/vm.sh reads
# the console).
say() { echo "rslub_bench: $*"; }

# The guest clock in nanoseconds: under -icount it counts instructions (and the time
# every vCPU spent idle).
now_ns() { awk '/^now at/ {print $3; exit}' /proc/timer_list; }

# topology: D (rslub's debugfs folder), CPUS, NODES, and CPU_A and CPU_B, a CPU of the
# first and of the last node.
# shellcheck disable=SC2034 # for the scripts that source this
topology() {
	D=/sys/kernel/debug/rslub
	CPUS=$(grep -c ^processor /proc/cpuinfo)
	NODES=$(ls -d /sys/devices/system/node/node* | wc -l)
	CPU_A=$(sed 's/[-,].*//' /sys/devices/system/node/node0/cpulist)
	CPU_B=$(sed 's/.*[-,]//' /sys/devices/system/node/node$((NODES - 1))/cpulist)
}

# load_sighting FUNCTION ARGS...: insmod /rslub.ko ARGS while FUNCTION runs over and
# over: a cache is found when it allocates, and FUNCTION makes the cache that ARGS back
# allocate. Returns insmod's status once FUNCTION's loop has stopped.
load_sighting() {
	sight=$1
	shift
	(while [ ! -e /tmp/stop ]; do "$sight"; done) &
	insmod /rslub.ko "$@"
	rc=$?
	touch /tmp/stop
	wait
	return $rc
}
