#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# Builds rslub.ko (and rslub_kunit.ko) against the test kernel, out of tree: the objects
# go to the cache, never into the repository. Prints the output folder.
set -euo pipefail
. "$(dirname "$0")/env.sh"

kdir=$("$RSLUB_TOP/scripts/kernel.sh")
out=$RSLUB_CACHE/modules/$(basename "$kdir")
mapfile -t kargs < <(rslub_kmake_args)
# RSLUB_HARDENED=n (see Kbuild): built apart, so the two builds never mix objects.
case ${RSLUB_HARDENED:-y} in
y) ;;
n) out=$out-unhardened kargs+=(RSLUB_HARDENED=n) ;;
*) die "RSLUB_HARDENED=$RSLUB_HARDENED: must be y or n" ;;
esac
mkdir -p "$out"
# RSLUB_BUILD_ONCE=ID (make bench sets it for its run): with no make target given, build
# into each output folder once for that ID; the run's later boots load those modules
# without make's checks (1.5 s of host time a boot).
# The marker names the run and the kernel build (rebuilt kernel: rebuilt modules).
once=$out/.built-for-run
stamp="${RSLUB_BUILD_ONCE:-} $(stat -c %Y "$kdir/Module.symvers" 2>/dev/null || echo none)"
if [ $# -eq 0 ] && [ -n "${RSLUB_BUILD_ONCE:-}" ] && [ "$(cat "$once" 2>/dev/null)" = "$stamp" ]; then
	printf '%s\n' "$out"
	exit 0
fi
rm -f "$once"
if [ "$RSLUB_KSERIES" = 6.12 ]; then
	# Classic SLUB's kernel (no Rust: Kbuild builds only the benchmark's C modules). Its
	# Kbuild has no MO= (a separate output folder, 6.13 on): the sources are copied to
	# the output folder and built there, never in the repository.
	mkdir -p "$out/bench"
	cp "$RSLUB_TOP/Kbuild" "$out/"
	cp "$RSLUB_TOP"/bench/kfree_rcu.c "$RSLUB_TOP"/bench/kmem_micro.c "$out/bench/"
	cp -r "$RSLUB_TOP/include" "$out/"
	make -s -C "$kdir" M="$out" "${kargs[@]}" -j"$(nproc)" "$@" >&2
else
	make -s -C "$kdir" M="$RSLUB_TOP" MO="$out" "${kargs[@]}" -j"$(nproc)" "$@" >&2
fi
# The kernel's own slabinfo (tools/mm/slabinfo.c of the same tree), which
# scripts/slabinfo runs on rslub's debugfs tree.
src=$(readlink -f "$kdir/source" 2>/dev/null || printf '%s' "$kdir")/tools/mm/slabinfo.c
if [ -f "$src" ] && [ ! "$out/slabinfo" -nt "$src" ]; then
	"clang$RSLUB_LLVM" -O2 -o "$out/slabinfo" "$src" >&2 || die "cannot build $src"
fi
[ $# -ne 0 ] || [ -z "${RSLUB_BUILD_ONCE:-}" ] || printf '%s\n' "$stamp" > "$once"
printf '%s\n' "$out"
