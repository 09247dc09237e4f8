# SPDX-License-Identifier: GPL-2.0
#
# make bench PART=headline: Documentation/results.rst alone (scripts/bench/headline.py), in
# six boots: the four allocators of the side-by-side tables (sheaves 7.3, classic SLUB
# 6.12, rslub under each profile) running the headline's workloads (WORKLOADS, by default
# those below), without their SLUB_STATS boots, and the kernel's again with QEMU's -seed 2
# and 3 and other memory layouts for the spread (as scripts/bench/whole.sh's). Sourced by
# scripts/bench/whole.sh, whose boot(), out and start it uses.
hw=${WORKLOADS:-hackbench pingpong fork execve kfree_rcu micro}
# Smaller runs than the full run's where they cost the most (perf's fork and execve, the
# ping-pong), unless set: the figures are per unit, from the difference of two sizes.
for v in FORKS=100 EXECS=100 PP_TRIPS=2000; do
	case " $KERNEL_ARGS " in *" ${v%%=*}="*) ;; *) KERNEL_ARGS="${KERNEL_ARGS:+$KERNEL_ARGS }$v" ;; esac
done
export KERNEL_ARGS
NODES=2 boot "$out/n2-kernel.jsonl" alloc=kernel $hw
RSLUB_KSERIES=6.12 NODES=2 boot "$out/n2-classic.jsonl" alloc=kernel $hw
NODES=2 boot "$out/n2-rslub.jsonl" alloc=rslub $hw
NODES=2 boot "$out/n2-rslub-tuned.jsonl" alloc=rslub rslub:profile=tuned ${hw/micro/}
# The spread: the same command line as the kernel's first boot; the seed and the
# initramfs's padding differ.
NODES=2 SEED=2 PAD=1024 boot "$out/n2-kernel-seed2.jsonl" alloc=kernel $hw
NODES=2 SEED=3 PAD=2560 boot "$out/n2-kernel-seed3.jsonl" alloc=kernel $hw
log "headline benchmarks ran in $(( $(date +%s) - start )) s; writing the report"
# The seeds' experiments from the last side-by-side boots (make bench or PART=side), if the
# cache folder holds them; README.md's block from these boots.
python3 "$RSLUB_TOP/scripts/bench/headline.py" "$out" "$RSLUB_TOP/Documentation" \
	--command "make bench PART=headline" --seconds "$(( $(date +%s) - start ))" \
	--side "$RSLUB_CACHE/bench-results" --readme "$RSLUB_TOP/README.md"
