#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# Removes the module build output and test logs from the cache; keeps the kernel builds,
# the kernel source and the tools (remove the cache folder itself to drop those).
set -euo pipefail
. "$(dirname "$0")/env.sh"
rm -rf "$RSLUB_CACHE/modules" "$RSLUB_CACHE"/test.* "$RSLUB_CACHE"/run.*
log "removed module builds and test logs from $RSLUB_CACHE"
