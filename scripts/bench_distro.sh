#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# make bench VARIANT=distro: the side-by-side tables (rslub_bench suite=0: fast paths,
# pairs, batches, bulk, cross-CPU frees) on the distribution-like kernel, under -icount,
# in two boots: as QEMU's CPU model boots it (the kernel finds the CPU not vulnerable
# and patches the retpolines and return thunks out), and with the mitigations forced on
# a CPU model that needs them (Skylake: retpolines, and call depth tracking for
# retbleed, "stuff"). Each boot prints which mitigations are live
# (/sys/devices/system/cpu/vulnerabilities); the report prints both boots' figures and
# their ratio, and writes Documentation/benchmarks/distro.json.
set -euo pipefail
. "$(dirname "$0")/env.sh"

export VARIANT=distro CPUS=${CPUS:-4} NODES=2
out=$RSLUB_CACHE/bench-distro
rm -rf "$out"
mkdir -p "$out"
vm=$RSLUB_TOP/scripts/bench_vm.sh
forced=${FORCED:-spectre_v2=retpoline,generic retbleed=stuff}
"$vm" "$out/default.jsonl" suite=0
QEMU_CPU=${FORCED_CPU:-Skylake-Client-v4} KERNEL_ARGS="$forced" "$vm" "$out/forced.jsonl" suite=0
python3 - "$out" "$RSLUB_TOP/Documentation/benchmarks/distro.json" "$forced" <<'PY'
import json, re, sys
out, dest, forced = sys.argv[1:]
boots = {}
for name in ("default", "forced"):
    vuln = {}
    for line in open(f"{out}/{name}.jsonl.log"):
        m = re.search(r"rslub-bench: vulnerability (\S+): (.*)", line)
        if m:
            vuln[m.group(1)] = m.group(2).strip()
    rows = [json.loads(l) for l in open(f"{out}/{name}.jsonl") if l.strip()]
    boots[name] = {"vulnerabilities": vuln, "rows": rows}
for name, b in boots.items():
    v = b["vulnerabilities"]
    print(f"{name}: spectre_v2: {v.get('spectre_v2', '?')}; retbleed: {v.get('retbleed', '?')}")
key = lambda r: (r.get("exp"), r.get("size"))
forced_rows = {key(r): r for r in boots["forced"]["rows"]}
print(f"{'experiment':<14}{'size':>6}  {'rslub':>8}{'kernel':>8}{'ratio':>7}   "
      f"{'rslub*':>8}{'kernel*':>8}{'ratio*':>7}   (* forced: {forced})")
for r in boots["default"]["rows"]:
    f = forced_rows.get(key(r))
    if f is None or not isinstance(r.get("rslub"), (int, float)) or not r.get("kernel"):
        continue
    print(f"{r['exp']:<14}{r['size']:>6}  {r['rslub']:>8.1f}{r['kernel']:>8.1f}"
          f"{r['rslub'] / r['kernel']:>7.2f}   {f['rslub']:>8.1f}{f['kernel']:>8.1f}"
          f"{f['rslub'] / f['kernel']:>7.2f}")
json.dump({"forced_args": forced, **boots}, open(dest, "w"), indent=1)
print(f"written: {dest}")
PY
