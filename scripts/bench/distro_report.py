#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""The report of `make bench VARIANT=distro` (scripts/bench/distro.sh).

Reads the two boots' records (OUT/default.jsonl, OUT/forced.jsonl) and their logs (the
`rslub-bench: vulnerability` lines printed by the guest), prints the figures side by
side, and writes Documentation/benchmarks/distro.json and Documentation/benchmarks_distro.rst.

Usage: distro_report.py OUT TOP FORCED_ARGS FORCED_CPU COMMIT KERNEL QEMU [INIT_OUT]

INIT_OUT, if it holds a run of `make bench VARIANT=distro INIT_ON_ALLOC=1` (both boots
with init_on_alloc as the distribution boots), adds that run's per-boot ratios.
"""
import datetime
import json
import os
import re
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from common import heading, page_title, ratio, records, report_commit, table  # noqa: E402

BOOTS = ("default", "forced")
# The mitigations whose state the report quotes (the others are the same in both boots
# or do not touch a call or a return).
QUOTED = ("spectre_v2", "retbleed", "spec_rstack_overflow", "its", "indirect_target_selection")


def load(out, name):
    vuln = {}
    for line in open(f"{out}/{name}.jsonl.log", errors="replace"):
        m = re.search(r"rslub-bench: vulnerability (\S+): (.*)", line)
        if m:
            vuln[m.group(1)] = m.group(2).strip()
    rows = list(records(f"{out}/{name}.jsonl"))
    return {"vulnerabilities": vuln, "rows": rows}


# The fields that say which measurement a record is (the others are its figures).
IDENTITY = ("exp", "size", "remote_every", "node", "objects", "nodes", "min_partial", "run",
            "burst", "policy")


def key(r):
    return tuple(r.get(k) for k in IDENTITY)


def label(r):
    """The experiment's name, with what tells its records of one size apart."""
    if "remote_every" in r:
        return f"{r['exp']} (every {r['remote_every']})"
    return r["exp"]


def side_by_side(boots):
    """Rows present in both boots with figures for both allocators."""
    forced_rows = {key(r): r for r in boots["forced"]["rows"]}
    pairs = []
    for r in boots["default"]["rows"]:
        f = forced_rows.get(key(r))
        if f is None:
            continue
        if not all(isinstance(x.get("rslub"), (int, float)) and x.get("rslub") and x.get("kernel")
                   for x in (r, f)):
            continue
        pairs.append((r, f))
    return pairs


def main():
    out, top, forced, forced_cpu, commit, kernel, qemu = sys.argv[1:8]
    init_out = sys.argv[8] if len(sys.argv) > 8 else ""
    boots = {name: load(out, name) for name in BOOTS}
    init = None
    if init_out and all(os.path.exists(f"{init_out}/{n}.jsonl") for n in BOOTS):
        init = {name: load(init_out, name) for name in BOOTS}
        meta = open(f"{init_out}/meta").read().split("\n") if os.path.exists(
            f"{init_out}/meta") else ["?", "?"]
        init_commit, init_day = meta[0], meta[1]
    for name, b in boots.items():
        v = b["vulnerabilities"]
        print(f"{name}: " + "; ".join(f"{k}: {v[k]}" for k in QUOTED if k in v))

    # The side-by-side rows: rslub and the kernel in each boot.
    body = []
    for r, f in side_by_side(boots):
        body.append([label(r), r["size"], f"{r['rslub']:.2f}", f"{r['kernel']:.2f}",
                     ratio(r['rslub'], r['kernel']), f"{f['rslub']:.2f}", f"{f['kernel']:.2f}",
                     ratio(f['rslub'], f['kernel']),
                     ratio(f['rslub'], r['rslub']), ratio(f['kernel'], r['kernel'])])
    header = ["experiment", "size", "rslub", "kernel", "ratio", "rslub (forced)",
              "kernel (forced)", "ratio (forced)", "rslub forced/default",
              "kernel forced/default"]
    print(f"{'experiment':<24}{'size':>6}" + "".join(f"{h:>10}" for h in
          ("rslub", "kernel", "ratio", "rslub*", "kernel*", "ratio*", "rslub*/", "kernel*/")))
    for b in body:
        print(f"{b[0]:<24}{b[1]:>6}" + "".join(f"{c:>10}" for c in b[2:]))

    hooks = {name: next((r for r in boots[name]["rows"] if r.get("exp") == "hook_cost"), None)
             for name in BOOTS}
    hook_body = []
    fields = ("pair_off", "pair_on", "bulk16_off", "bulk16_on")
    if all(h and all(isinstance(h.get(k), (int, float)) for k in fields) for h in hooks.values()):
        for what, off, on in (("alloc+free pair", "pair_off", "pair_on"),
                              ("bulk 16, per object", "bulk16_off", "bulk16_on")):
            d, f = hooks["default"], hooks["forced"]
            hook_body.append([what, d[off], d[on], f"{d[on] - d[off]:.2f}",
                              f[off], f[on], f"{f[on] - f[off]:.2f}"])
        for h in hook_body:
            print("hooks: " + ", ".join(str(c) for c in h))

    dest = os.path.join(top, "Documentation", "benchmarks", "distro.json")
    record = {"commit": commit, "kernel": kernel, "qemu": qemu, "forced_args": forced,
              "forced_cpu": forced_cpu, "both_boots": "init_on_alloc=0", **boots}
    if init:
        record["init_on_alloc_run"] = {"commit": init_commit, "date": init_day, **init}
    json.dump(record, open(dest, "w"), indent=1)
    print(f"written: {dest}")

    def vuln_list(name):
        v = boots[name]["vulnerabilities"]
        lines = [f"   - ``{k}``: {v[k]}" for k in sorted(v) if v[k] != "Not affected"]
        rest = sum(1 for k in v if v[k] == "Not affected")
        return "\n".join(lines + [f"   - and {rest} others: Not affected"])

    day = datetime.date.today().isoformat()
    doc = [
        page_title("Benchmarks on the distribution-like kernel"),
        "Written by ``make bench VARIANT=distro`` (``scripts/bench/distro.sh``); do not edit the",
        "figures. The side-by-side tables of :doc:`benchmarks` (the same module, ``suite=0``) on",
        "the ``VARIANT=distro`` kernel (:doc:`testing`: IBT, retpolines, return thunks, call",
        "thunks and call depth tracking compiled in, memcg, the slab hardening options), under",
        "``-icount shift=0`` as there, in two boots that differ only in the CPU model and the",
        "mitigations on the command line, both with ``init_on_alloc=0`` (see below):\n",
        "- **default**: QEMU's ``-cpu max``, which the kernel finds not vulnerable, so it patches",
        "  the retpolines, return thunks and call depth accounting out at boot;",
        f"- **forced**: ``-cpu {forced_cpu}`` with ``{forced}``, so that indirect calls go",
        "  through retpolines and every call and return through the call depth accounting",
        "  (``retbleed=stuff``), as on the Skylake-era hardware Debian's kernel still serves.\n",
        f"Made on {day}: commit {commit}, kernel build {kernel}, {qemu}; report at commit "
        f"{report_commit()}.",
        "Raw figures: ``benchmarks/distro.json``.\n",
        "What each boot had live (``/sys/devices/system/cpu/vulnerabilities``, read in the guest):\n",
        "default:\n", vuln_list("default"), "",
        "forced:\n", vuln_list("forced"), "",
        "icount counts instructions: the retpoline's and the return thunk's speculation traps",
        "cost cycles on hardware that no instruction count shows, so what the forced boot",
        "measures is the instructions the mitigations add (the call depth counter's update on",
        "every call and return, the retpoline's thunk on every indirect call), not their",
        "cycles. Neither boot enforces IBT: TCG's ``-cpu max`` has no ``ibt`` (the test",
        "guest's ``/proc/cpuinfo``), and Skylake predates CET; the ENDBR instructions are",
        "there and execute as NOPs. Page table isolation is not compiled into the test kernel",
        "(``meltdown: Vulnerable`` in the forced boot): it costs at every kernel entry and",
        "exit, not on the paths measured here.\n",
        "Why ``init_on_alloc=0``: under ``-icount`` each iteration of a ``rep stosb`` counts as",
        "an instruction, and the kernel's ``memset()`` uses one only on a CPU with fast short",
        "``rep stos`` (FSRS), which ``-cpu max`` has and Skylake has not (it runs",
        "``memset_orig``, 8-byte stores). With the distribution's ``init_on_alloc=1`` every",
        "allocation zeroes its object, a byte an instruction in the default boot and about a",
        "fifth of that in the forced one (``memset_orig`` runs 11 instructions per 64 bytes):",
        *(["in that run a 4096-byte allocation counts thousands of instructions more in the",
           "default boot, which says nothing of the mitigations. The zeroing is the same for",
           "both allocators within a boot, so the ratios of each boot of that run still",
           "compare them (the last section)."] if init else
          ["in the last such run (``make bench VARIANT=distro INIT_ON_ALLOC=1``, 42 minutes,",
           "measured at ee887cf; its page as last committed in 9dd422e) a 4096-byte",
           "allocation counted 4162 instructions against 791, which says nothing of the",
           "mitigations; this page was made without one."]),
        "``memcpy()`` is alike: a ``rep movsb`` only with FSRM (``-cpu max`` has it,",
        "Skylake not), and the kernel's bulk paths copy their pointer arrays with it, so the",
        "kernel's bulk figures are lower in the forced boot. The forced/default columns are",
        "therefore what the CPU model and the mitigations together changed; rows without",
        "``memset``/``memcpy`` in their path (the pairs, ``fast_alloc``, ``fast_free``) show",
        "the mitigations alone.\n",
        heading("Side by side, both boots"),
        "Instructions per operation; ``ratio`` is rslub / kernel, and the last two columns",
        "what the forced boot (its CPU model and mitigations) multiplied each allocator's",
        "figure by.\n",
        table(header, body),
    ]
    if hook_body:
        doc += [
            heading("The backing hooks"),
            "A kernel cache that is not backed, while another one is (so ftrace sends its",
            "calls through rslub's handler): instructions per operation without the hooks and",
            "with them, in each boot.\n",
            table(["operation", "no hooks", "hooks on", "added", "no hooks (forced)",
                   "hooks on (forced)", "added (forced)"], hook_body),
        ]
    if init:
        ib = side_by_side(init)
        doc += [
            heading("As the distribution boots: ``init_on_alloc=1``"),
            f"``make bench VARIANT=distro INIT_ON_ALLOC=1`` on commit {init_commit}"
            f" ({init_day}): the same two boots",
            "with every object zeroed when allocated. rslub / kernel in each boot; the zeroing",
            "(see above) dominates the larger sizes and differs between the boots, so only the",
            "ratios within a boot mean something.\n",
            table(["experiment", "size", "rslub", "kernel", "ratio", "rslub (forced)",
                   "kernel (forced)", "ratio (forced)"],
                  [[label(r), r["size"], f"{r['rslub']:.2f}", f"{r['kernel']:.2f}",
                    ratio(r['rslub'], r['kernel']), f"{f['rslub']:.2f}",
                    f"{f['kernel']:.2f}", ratio(f['rslub'], f['kernel'])]
                   for r, f in ib]),
        ]
    rst = os.path.join(top, "Documentation", "benchmarks_distro.rst")
    open(rst, "w").write("\n".join(doc))
    print(f"written: {rst}")


if __name__ == "__main__":
    main()
