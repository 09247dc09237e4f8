# SPDX-License-Identifier: GPL-2.0
#
# rslub: quick start in README.md.
#
#   make test    boot the test kernel, run the KUnit suites, print "N passed, N failed";
#                FULL=1 (what CI runs): the whole-kernel boot too, and the slow sweeps
#   make stress  make test with the all-CPU stress suite running STRESS seconds (300)
#   make run     boot it, load rslub with PARAMS="...", print what it reports; with
#                BACK=cache,... rslub backs those kernel caches (default: the skb
#                caches; BACK=none: none) while hackbench runs, then slabinfo
#   make shell   interactive guest with the modules at hand
#   make check   rustfmt (kernel settings) and clippy (CLIPPY=1), both must be clean
#   make check-figures   fails if a Documentation/benchmarks*.rst page is older than the
#                code it measures (scripts/bench/figures_current.py)
#   make bench   rslub against the kernel's kmem_cache under QEMU -icount; writes the
#                figures into Documentation/benchmarks*; PART=whole: only the
#                whole-system workloads (Documentation/benchmarks_whole.rst);
#                PART=side: all but the whole-system part (Documentation/benchmarks.rst);
#                PART=fidelity: only sheaves 7.3, classic SLUB 6.12 (built once, cached)
#                and rslub under each profile, side by side; PART=headline: only the
#                headline (Documentation/results.rst), in six boots
#                WORKLOADS= (bench: the 2-node boots' workloads, all by default)
#   make setup   install tools, fetch the kernel source, build the test kernel
#   make / make modules   build the modules (rslub.ko, its KUnit, benchmark and sample
#                modules) against the test kernel, or KDIR=, into the cache folder
#   make modules_install  install them under INSTALL_MOD_PATH (default /) in
#                lib/modules/<release>/updates, as out-of-tree modules are, and run depmod
#   make clean   remove the module builds and test logs from the cache folder
#
# Variables: VARIANT=default|debug  CPUS=4  NODES=2  PARAMS=  APPEND=  ACCEL=auto|kvm|tcg
#            SUITE= (test: a glob of suite names; only those run and count)
#            STRESS=3 (seconds of the all-CPU stress suite; make stress: 300)
#            KDIR= (a built Rust-enabled tree)  KSRC= (a source tree)  RSLUB_CACHE=
#
# Everything built goes to the cache folder (~/.cache/rslub by default), never here.
# This file is make's; Kbuild (next to it) is the kernel build's.

export FULL VARIANT CPUS NODES MEMLESS UPDATE_README BACK PARAMS APPEND ACCEL KDIR KSRC RSLUB_CACHE TIMEOUT MEM_PER_NODE STRESS SUITE PART SWEEP WORKLOADS

.PHONY: all setup kernel modules modules_install test stress run shell coverage check check-figures bench clean
all: modules

setup:
	@scripts/kernel.sh >/dev/null

kernel: setup

modules:
	@scripts/modules.sh >/dev/null

modules_install: modules
	@scripts/modules.sh modules_install >/dev/null

test:
	@scripts/test/vm.sh test

stress:
	@STRESS=$${STRESS:-300} scripts/test/vm.sh test

run:
	@scripts/test/vm.sh run

shell:
	@scripts/test/vm.sh shell

coverage:
	@scripts/test/vm.sh coverage

check:
	@scripts/check.sh

check-figures:
	@python3 scripts/bench/figures_current.py

# scripts/bench/bench.sh runs every part (PART=headline: scripts/bench/whole.sh's six boots
# of the headline).
bench:
	@scripts/bench/bench.sh

clean:
	@scripts/clean.sh
