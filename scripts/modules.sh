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
make -s -C "$kdir" M="$RSLUB_TOP" MO="$out" "${kargs[@]}" -j"$(nproc)" "$@" >&2
# The kernel's own slabinfo (tools/mm/slabinfo.c of the same tree), which
# scripts/slabinfo runs on rslub's debugfs tree.
src=$(readlink -f "$kdir/source" 2>/dev/null || printf '%s' "$kdir")/tools/mm/slabinfo.c
if [ -f "$src" ] && [ ! "$out/slabinfo" -nt "$src" ]; then
	"clang$RSLUB_LLVM" -O2 -o "$out/slabinfo" "$src" >&2 || die "cannot build $src"
fi
printf '%s\n' "$out"
