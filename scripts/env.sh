# SPDX-License-Identifier: GPL-2.0
#
# Common settings of rslub's scripts: where things live and how the kernel is built.
# Sourced, never run. Every variable can be set from the environment (or on the make
# command line) to override it.

RSLUB_TOP=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)

# Cache folder outside the repository: downloaded packages, kernel source, tools and
# kernel builds.
RSLUB_CACHE=${RSLUB_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/rslub}

# The test kernel: Debian's linux-source package of this series. RSLUB_KSERIES=6.12 is
# classic SLUB (the last series before sheaves), which make bench measures beside rslub:
# 6.12.117 from bookworm-security, the version Documentation/design.rst cites by line.
RSLUB_KSERIES=${RSLUB_KSERIES:-7.3}
RSLUB_KPKG=linux-source-$RSLUB_KSERIES
case $RSLUB_KSERIES in
6.12)
	RSLUB_KSUITE=${RSLUB_KSUITE:-bookworm-security}
	RSLUB_KVERSION=${RSLUB_KVERSION-6.12.117-1~deb12u1}
	;;
*)
	RSLUB_KSUITE=${RSLUB_KSUITE:-trixie-backports}
	RSLUB_KVERSION=${RSLUB_KVERSION-}
	;;
esac

# Kernel variant: "default" or "debug" (KASAN, lockdep, ...).
VARIANT=${VARIANT:-default}

# Toolchain. Debian's rustc-web matches the kernel's Rust requirements and ships the
# library source the kernel compiles; rustup's rustc (often first on PATH) has none.
RSLUB_RUSTC=${RUSTC:-/usr/bin/rustc}
RSLUB_RUSTDOC=${RUSTDOC:-/usr/bin/rustdoc}
RSLUB_CLIPPY=${CLIPPY_DRIVER:-/usr/bin/clippy-driver}
RSLUB_RUSTFMT=${RUSTFMT:-/usr/bin/rustfmt}
RSLUB_LLVM=${LLVM:--19}
RSLUB_TOOLS=$RSLUB_CACHE/tools
RSLUB_BINDGEN=${BINDGEN:-$RSLUB_TOOLS/bin/bindgen}
RSLUB_VENV=$RSLUB_CACHE/venv
RSLUB_VNG=$RSLUB_VENV/bin/vng

# Arguments for every make that compiles against the kernel.
rslub_kmake_args() {
	printf '%s\n' "LLVM=$RSLUB_LLVM" "RUSTC=$RSLUB_RUSTC" "RUSTDOC=$RSLUB_RUSTDOC" \
		"BINDGEN=$RSLUB_BINDGEN" "CLIPPY_DRIVER=$RSLUB_CLIPPY" "RUSTFMT=$RSLUB_RUSTFMT"
}

# The NUMA distances of the test and benchmark guests, as the ACPI SLIT: NODES nodes sit
# on a ring in the order 0, 2, 4, ..., 1, 3, 5, ..., and two nodes are 10 + 10 * (steps
# between them on the ring) apart, so that nearest-first is not id order (with 4 nodes,
# node 0 has nodes 2 and 3 at 20 and node 1 at 30). Prints "A B DISTANCE" per pair A < B.
rslub_ring_distances() {
	local nodes=$1 n i a b d ring=()
	local -A pos
	for ((n = 0; n < nodes; n += 2)); do ring+=("$n"); done
	for ((n = 1; n < nodes; n += 2)); do ring+=("$n"); done
	for ((i = 0; i < nodes; i++)); do pos[${ring[$i]}]=$i; done
	for ((a = 0; a < nodes; a++)); do
		for ((b = a + 1; b < nodes; b++)); do
			d=$(( ${pos[$a]} - ${pos[$b]} )); d=${d#-}
			[ $((nodes - d)) -ge "$d" ] || d=$((nodes - d))
			printf '%s %s %s\n' "$a" "$b" "$((10 + 10 * d))"
		done
	done
}

log() { printf 'rslub: %s\n' "$*" >&2; }
die() { printf 'rslub: error: %s\n' "$*" >&2; exit 1; }

# Run as root, or through sudo when not root.
as_root() {
	if [ "$(id -u)" -eq 0 ]; then "$@"; else sudo "$@"; fi
}

# virtme-ng runs its helpers (virtme-run, ...) from PATH.
PATH=$RSLUB_VENV/bin:$PATH
