#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# rustfmt with the kernel tree's .rustfmt.toml, and a clippy build (CLIPPY=1) of both
# modules with warnings as errors. Exits non-zero on anything to fix.
set -euo pipefail
. "$(dirname "$0")/env.sh"

kdir=$("$RSLUB_TOP/scripts/kernel.sh")
ksrc=$(readlink -f "$kdir/source")
mapfile -t files < <(cd "$RSLUB_TOP" && git ls-files -co --exclude-standard '*.rs')
[ "${#files[@]}" -gt 0 ] || die "no Rust sources found"

status=0
log "rustfmt --check (${#files[@]} files, $ksrc/.rustfmt.toml)"
if ! (cd "$RSLUB_TOP" && "$RSLUB_RUSTFMT" --edition 2021 --config-path "$ksrc/.rustfmt.toml" \
	--check "${files[@]}"); then
	log "rustfmt: the files above need formatting"
	status=1
fi

log "clippy (CLIPPY=1, warnings are errors)"
out=$(mktemp -d "$RSLUB_CACHE/check.XXXXXX")
trap 'rm -rf "$out"' EXIT
mapfile -t kargs < <(rslub_kmake_args)
if ! make -s -C "$kdir" M="$RSLUB_TOP" MO="$out" "${kargs[@]}" CLIPPY=1 KRUSTFLAGS="-Dwarnings" \
	KCFLAGS="-Werror" -j"$(nproc)" 2>&1; then
	log "clippy or the compiler reported problems (above)"
	status=1
fi
[ "$status" -eq 0 ] && log "check: clean"
exit "$status"
