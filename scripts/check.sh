#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# rustfmt with the kernel tree's .rustfmt.toml; clippy builds (CLIPPY=1) of the modules
# with warnings as errors, with hardened free pointers and without (RSLUB_HARDENED=n);
# every message of rslub's at pr_warn or above classified (scripts/test/reports.py). Exits
# non-zero on anything to fix.
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

out=$(mktemp -d "$RSLUB_CACHE/check.XXXXXX")
trap 'rm -rf "$out"' EXIT
mapfile -t kargs < <(rslub_kmake_args)
# Both builds of the allocator: hardened free pointers (the default: every module) and
# plain ones (RSLUB_HARDENED=n, Kbuild: only rust/rslub.o takes the setting, so only it is
# built again), each in a folder of its own.
for hardened in y n; do
	log "clippy (CLIPPY=1, warnings are errors), RSLUB_HARDENED=$hardened"
	mkdir -p "$out/$hardened"
	target=()
	[ "$hardened" = n ] && target=(rust/rslub.o)
	if ! make -s -C "$kdir" M="$RSLUB_TOP" MO="$out/$hardened" "${kargs[@]}" CLIPPY=1 \
		RSLUB_HARDENED=$hardened KRUSTFLAGS="-Dwarnings" KCFLAGS="-Werror" -j"$(nproc)" \
		"${target[@]}" 2>&1; then
		log "clippy or the compiler reported problems (above), RSLUB_HARDENED=$hardened"
		status=1
	fi
done

log "rslub's messages: each a report or listed as not one (scripts/test/reports.py)"
python3 "$RSLUB_TOP/scripts/test/reports.py" --sources || status=1
[ "$status" -eq 0 ] && log "check: clean"
exit "$status"
