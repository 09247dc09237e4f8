#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# Installs what rslub needs on a Debian 12 (bookworm) machine, idempotently:
#  - packages from Debian's archive (extra suites bookworm-backports and trixie-backports,
#    pinned at priority 100 so that nothing else on the machine upgrades from them);
#  - the kernel source from Debian's linux-source-$RSLUB_KSERIES, unpacked into the cache;
#  - bindgen from crates.io and virtme-ng from PyPI, into the cache.
# A second run finds everything in place and says so.
#
# KSRC=<tree> skips the kernel source download; KDIR=<built tree> also skips the parts
# that only serve the kernel build (see README.md).
set -euo pipefail
. "$(dirname "$0")/env.sh"

did=0
note() { did=1; log "$*"; }

PKGS=(clang-19 lld-19 llvm-19 libclang-19-dev flex bison bc cpio kmod libelf-dev
      libssl-dev busybox-static python3 python3-venv rsync xz-utils
      rustc-web rust-web-src rust-web-clippy rustfmt-web
      rt-tests stress-ng fio)

apt_sources() {
	local src=/etc/apt/sources.list.d/rslub.sources pref=/etc/apt/preferences.d/rslub
	local want_src want_pref
	want_src=$(cat <<'S'
# Added by rslub's scripts/setup.sh: used only by explicit target release.
Types: deb deb-src
URIs: http://deb.debian.org/debian
Suites: bookworm-backports trixie-backports
Components: main
Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg
S
)
	want_pref=$(cat <<'S'
# Added by rslub's scripts/setup.sh: never upgrade from these suites by default.
Package: *
Pin: release a=bookworm-backports
Pin-Priority: 100

Package: *
Pin: release a=trixie-backports
Pin-Priority: 100
S
)
	if [ "$(cat "$src" 2>/dev/null)" != "$want_src" ] ||
	   [ "$(cat "$pref" 2>/dev/null)" != "$want_pref" ]; then
		note "adding bookworm-backports and trixie-backports (pinned at 100)"
		printf '%s\n' "$want_src" | as_root tee "$src" >/dev/null
		printf '%s\n' "$want_pref" | as_root tee "$pref" >/dev/null
		as_root rm -f "$RSLUB_CACHE/.apt-updated"
	fi
}

apt_update_once() {
	[ -e "$RSLUB_CACHE/.apt-updated" ] && return 0
	note "apt-get update"
	as_root apt-get update -q >/dev/null
	touch "$RSLUB_CACHE/.apt-updated"
}

missing_pkgs() {
	local p
	for p in "$@"; do
		dpkg-query -W -f='${Status}\n' "$p" 2>/dev/null | grep -q '^install ok installed' ||
			printf '%s\n' "$p"
	done
}

install_packages() {
	local -a miss
	mapfile -t miss < <(missing_pkgs "${PKGS[@]}")
	if [ ${#miss[@]} -gt 0 ]; then
		apt_update_once
		note "installing ${miss[*]}"
		as_root env DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends \
			"${miss[@]}" >/dev/null
	fi
	# QEMU 10 from bookworm-backports: asked for by target release only.
	if [ -n "$(missing_pkgs qemu-system-x86)" ]; then
		apt_update_once
		note "installing qemu-system-x86 from bookworm-backports"
		as_root env DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends \
			-t bookworm-backports qemu-system-x86 >/dev/null
	fi
	# cargo, to build bindgen: the machine's own if any, else Debian's.
	if ! command -v cargo >/dev/null && [ -n "$(missing_pkgs cargo-web)" ]; then
		apt_update_once
		note "installing cargo-web"
		as_root env DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends \
			cargo-web >/dev/null
	fi
}

kernel_source() {
	if [ -n "${KSRC:-}" ]; then
		[ -f "$KSRC/Makefile" ] || die "KSRC=$KSRC is not a kernel source tree"
		return 0
	fi
	local dir=$RSLUB_CACHE/src/linux-$RSLUB_KSERIES
	[ -f "$dir/.rslub-unpacked" ] && return 0
	apt_update_once
	note "fetching $RSLUB_KPKG from $RSLUB_KSUITE"
	local dl=$RSLUB_CACHE/debs
	rm -rf "$dl" "$dir"
	mkdir -p "$dl" "$RSLUB_CACHE/src"
	# A pinned version (RSLUB_KVERSION) when the suite still serves it; the security suite
	# drops old versions, and then its newest is taken, with a warning.
	if [ -n "$RSLUB_KVERSION" ] && (cd "$dl" && apt-get -o APT::Sandbox::User=root download -q \
		"$RSLUB_KPKG=$RSLUB_KVERSION" >/dev/null 2>&1); then
		:
	else
		[ -z "$RSLUB_KVERSION" ] ||
			log "warning: $RSLUB_KPKG $RSLUB_KVERSION is no longer served; taking $RSLUB_KSUITE's"
		(cd "$dl" && apt-get -o APT::Sandbox::User=root download -q "$RSLUB_KPKG/$RSLUB_KSUITE" >/dev/null)
	fi
	dpkg-deb -x "$dl"/"$RSLUB_KPKG"_*.deb "$dl/x"
	note "unpacking the kernel source into $dir"
	mkdir -p "$dir.tmp"
	tar -xJf "$dl/x/usr/src/$RSLUB_KPKG.tar.xz" -C "$dir.tmp" --strip-components=1
	mv "$dir.tmp" "$dir"
	rm -rf "$dl"
	touch "$dir/.rslub-unpacked"
}

bindgen() {
	[ -x "$RSLUB_BINDGEN" ] && return 0
	note "building bindgen-cli from crates.io into $RSLUB_TOOLS (about 3 minutes)"
	local cargo
	cargo=$(command -v cargo || true)
	[ -n "$cargo" ] || die "no cargo found"
	"$cargo" install -q bindgen-cli --version '^0.73' --locked --root "$RSLUB_TOOLS"
}

virtme_ng() {
	[ -x "$RSLUB_VNG" ] && return 0
	note "installing virtme-ng 1.42 from PyPI into $RSLUB_VENV"
	rm -rf "$RSLUB_VENV"
	/usr/bin/python3 -m venv "$RSLUB_VENV"
	"$RSLUB_VENV/bin/pip" install -q --disable-pip-version-check 'virtme-ng==1.42'
}

mkdir -p "$RSLUB_CACHE"
apt_sources
install_packages
[ -n "${KDIR:-}" ] || kernel_source
[ -n "${KDIR:-}" ] || bindgen
virtme_ng
if [ "$did" -eq 0 ]; then
	log "setup: everything already in place, nothing to do"
fi
