#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# Configures and builds the test kernel out of tree, in the cache, and prints its build
# folder on standard output. The folder is keyed by kernel version, variant and a hash of
# the config fragments and toolchain, and reused when it is complete.
#
# KDIR=<built tree>: use that tree, build nothing.
# KSRC=<source tree>: build from that source instead of Debian's package.
set -euo pipefail
. "$(dirname "$0")/env.sh"

if [ -n "${KDIR:-}" ]; then
	# Classic SLUB (RSLUB_KSERIES=6.12) is built without Rust: only the C modules load.
	rust='^CONFIG_RUST=y'
	[ "$RSLUB_KSERIES" = 6.12 ] && rust='^CONFIG_SLUB=y'
	[ -f "$KDIR/Module.symvers" ] && grep -q "$rust" "$KDIR/.config" ||
		die "KDIR=$KDIR is not a built kernel tree with ${rust#^} (RSLUB_KSERIES=$RSLUB_KSERIES)"
	printf '%s\n' "$KDIR"
	exit 0
fi

"$RSLUB_TOP/scripts/setup.sh"

src=${KSRC:-$RSLUB_CACHE/src/linux-$RSLUB_KSERIES}
kc=$RSLUB_TOP/scripts/kconfig
case "$VARIANT" in
default) frags=("$kc/base.config") ;;
debug) frags=("$kc/base.config" "$kc/distro.config" "$kc/debug.config") ;;
distro) frags=("$kc/base.config" "$kc/distro.config") ;;
stats) frags=("$kc/base.config" "$kc/stats.config") ;;
*) die "VARIANT=$VARIANT: must be 'default', 'debug', 'distro' or 'stats'" ;;
esac
# Classic SLUB (RSLUB_KSERIES=6.12): the base fragment where 6.12 has the option, then
# classic.config; the default and stats variants only (make bench's two).
classic=0
case $RSLUB_KSERIES in
7.*) ;;
6.12)
	classic=1
	case "$VARIANT" in default | stats) ;; *) die "RSLUB_KSERIES=6.12: VARIANT must be default or stats" ;; esac
	frags+=("$kc/classic.config")
	;;
*) die "RSLUB_KSERIES=$RSLUB_KSERIES: must be 7.3 (the test kernel) or 6.12 (classic SLUB)" ;;
esac

mapfile -t kargs < <(rslub_kmake_args)
version=$(make -s -C "$src" kernelversion)
key=$( { cat "${frags[@]}"; "$RSLUB_RUSTC" --version; clang"$RSLUB_LLVM" --version | head -1;
	"$RSLUB_BINDGEN" --version; printf '%s\n' "$src"; } | sha256sum | cut -c1-10)
out=$RSLUB_CACHE/build/linux-$version-$VARIANT-$key

# A complete build is reused without the lock: .rslub-built is written last, so a test of
# one variant need not wait for another variant's build.
if [ -f "$out/.rslub-built" ]; then
	log "kernel $version ($VARIANT) already built in $out, reused"
	printf '%s\n' "$out"
	exit 0
fi

exec 9>"$RSLUB_CACHE/.build.lock"
flock 9

if [ -f "$out/.rslub-built" ]; then
	log "kernel $version ($VARIANT) already built in $out, reused"
	printf '%s\n' "$out"
	exit 0
fi

log "configuring Linux $version ($VARIANT) in $out"
mkdir -p "$out"
cat "${frags[@]}" > "$out/rslub.fragment"
make -s -C "$src" O="$out" "${kargs[@]}" KCONFIG_ALLCONFIG="$out/rslub.fragment" allnoconfig

# Kconfig silently drops what it cannot satisfy: check every line of the fragment, the
# last for each option (a later fragment overrides an earlier one).
dropped=0
while read -r line; do
	case "$line" in
	CONFIG_*=*)
		grep -qxF "$line" "$out/.config" && continue
		# On 6.12, an option of the base fragment that 6.12 does not have is left out.
		opt=${line%%=*}
		if [ "$classic" = 1 ] && ! grep -rqE --include='Kconfig*' "^(menu)?config ${opt#CONFIG_}\$" "$src"; then
			log "not in Linux $version, left out: $line"
			continue
		fi
		log "dropped by Kconfig: $line"; dropped=1 ;;
	"# CONFIG_"*" is not set")
		opt=${line#\# }; opt=${opt%% *}
		grep -q "^$opt=" "$out/.config" && { log "wanted off, but set: $opt"; dropped=1; } ;;
	esac
done < <(awk '{ o = $0; sub(/^# /, "", o); sub(/[= ].*/, "", o) }
	/^CONFIG_|^# CONFIG_.* is not set$/ { last[o] = $0; if (!(o in seen)) { seen[o] = 1; order[n++] = o } }
	END { for (i = 0; i < n; i++) print last[order[i]] }' "$out/rslub.fragment")
[ "$dropped" -eq 0 ] || die "the kernel config lost wanted options (see above); is the toolchain complete?"

jobs=$(nproc)
log "building Linux $version ($VARIANT) with $jobs jobs (5 to 16 minutes on 2 cores)"
start=$(date +%s)
if ! make -s -C "$out" "${kargs[@]}" -j"$jobs" > "$out/build.log" 2>&1; then
	tail -n 40 "$out/build.log" >&2
	die "kernel build failed; full log in $out/build.log"
fi
touch "$out/.rslub-built"
log "kernel built in $(( $(date +%s) - start )) s"
printf '%s\n' "$out"
