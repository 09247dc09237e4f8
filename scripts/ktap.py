#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Turns a test run's guest boots into one verdict.

Reads RUNDIR/ktap/<suite> of each boot's RUNDIR (each a KTAP document with one suite, as
KUnit's debugfs writes it), joins them into one KTAP document, parses it with the kernel's own
tools/testing/kunit/kunit.py, scans the guest's kernel log for reports (oops, BUG,
KASAN, lockdep, sleep in atomic, WARNING, and rslub's own: free list corruption, double
free, wrong cache, red zone, poison, objects left at destruction, flags fixed up), and
prints a summary per suite and then the line "N passed, N failed". Exits non-zero on any failed test, a suite that did
not report, a kernel report, a guest that did not finish, or zero tests run.
"""

import argparse
import json
import os
import re
import subprocess
import sys

# Kernel log lines that fail a run whatever the tests said.
REPORTS = re.compile(
    r"(ASSERTION FAILED|BUG:|Oops|Kernel panic|general protection fault|WARNING:|KASAN:|UBSAN:|"
    r"possible circular locking|inconsistent lock state|possible recursive locking|"
    r"sleeping function called from invalid context|scheduling while atomic|"
    r"suspicious RCU usage|RCU stall|soft lockup|hard LOCKUP|refcount_t:|list_(add|del) corruption)"
)

# rslub's own reports (rust/cache/debug_paths.rs `report`, `freelist_corrupted`, destruction with
# objects left, flags fixed up, hardened usercopy of its objects): they fail a run too, but for those a test provokes on
# purpose, between the marks of `expect_reports()` (tests-kunit/test_shim.rs).
RSLUB_REPORTS = re.compile(
    r"(\bcache \S+: .+ at (0x)?[0-9a-f]{8,}: |free pointer of free object .* overwritten|"
    r"destroyed with \d+ objects still allocated|\bcache \S+: unexpected gfp|"
    r"__GFP_ZERO with a constructor|Kernel memory (exposure|overwrite) attempt detected)"
)
# Kernel reports a test provokes on purpose (tests-kunit/sanitize_tests.rs): only those of
# its deliberate accesses (tests-kunit/shim.c), and only inside an `expect_reports()` window.
KERNEL_EXPECTED = re.compile(
    r"BUG: KASAN: (slab-use-after-free|slab-out-of-bounds) in rslub_test_access_fn\b"
)
EXPECTED_BEGIN = "rslub-test: reports expected"
EXPECTED_END = "rslub-test: reports end"


def report_lines(lines):
    """The lines of a kernel log that fail a run: every kernel report, and rslub's own
    outside the windows in which a test expects them."""
    hits, expected = [], False
    for line in lines:
        if EXPECTED_BEGIN in line:
            expected = True
        elif EXPECTED_END in line:
            expected = False
        elif expected and KERNEL_EXPECTED.search(line):
            continue
        elif REPORTS.search(line) or (not expected and RSLUB_REPORTS.search(line)):
            hits.append(line)
    return hits


def join_ktap(docs):
    """One KTAP document from several single-suite documents, renumbered."""
    out = ["KTAP version 1", f"1..{len(docs)}"]
    for i, (name, text) in enumerate(docs, 1):
        lines = text.splitlines()
        # Drop the per-file header ("KTAP version 1", "1..1").
        while lines and (lines[0].startswith("KTAP version") or lines[0] == "1..1"):
            lines.pop(0)
        for line in lines:
            m = re.match(r"^(ok|not ok) 1 (\S+)(.*)$", line)
            if m and m.group(2) == name:
                line = f"{m.group(1)} {i} {name}{m.group(3)}"
            out.append(line)
    return "\n".join(out) + "\n"


def main():
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--kunit", required=True, help="path of the kernel's kunit.py")
    ap.add_argument("--rundir", required=True, action="append",
                    help="a boot's directory (repeated for each boot; results go to the first)")
    ap.add_argument("suites", nargs="+", help="suites that must report")
    a = ap.parse_args()
    rundirs, a.rundir = a.rundir, a.rundir[0]

    problems = []
    for rd in rundirs:
        if os.path.exists(os.path.join(rd, "done")):
            continue
        problems.append(f"the guest did not finish (crash, panic or timeout): {rd}")
        try:
            with open(os.path.join(rd, "vng.log"), errors="replace") as f:
                tail = f.read().splitlines()[-40:]
            print("--- last lines of the guest console ---")
            print("\n".join(tail))
            print("---")
        except OSError:
            pass

    docs, missing = [], []
    for s in a.suites:
        for rd in rundirs:
            p = os.path.join(rd, "ktap", s)
            if os.path.exists(p):
                with open(p, errors="replace") as f:
                    docs.append((s, f.read()))
                break
        else:
            missing.append(s)

    results = {}
    skipped_cases = []
    if docs:
        ktap = os.path.join(a.rundir, "results.ktap")
        with open(ktap, "w") as f:
            f.write(join_ktap(docs))
        jpath = os.path.join(a.rundir, "results.json")
        r = subprocess.run(
            [sys.executable, a.kunit, "parse", f"--json={jpath}", ktap],
            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
        )
        sys.stdout.write(r.stdout)
        try:
            with open(jpath) as f:
                top = json.load(f)
        except (OSError, ValueError) as e:
            problems.append(f"kunit.py parse gave no results ({e})")
            top = {}
        for g in top.get("sub_groups", []):
            results[g["name"]] = g["misc"]
            for t in g.get("test_cases", []):
                if t.get("status") == "SKIP":
                    skipped_cases.append(f"{g['name']}.{t['name']}")

    for rd in rundirs:
        log = os.path.join(rd, "dmesg")
        if os.path.exists(log):
            with open(log, errors="replace") as f:
                lines = f.read().splitlines()
            # Only what happened once the checks began (scripts/guest.sh marks the log).
            start = next((i for i, l in enumerate(lines) if "rslub-test: checks begin" in l), 0)
            hits = report_lines(lines[start:])
            if hits:
                problems.append("the kernel log has reports:\n  " + "\n  ".join(hits[:40]))
        glog = os.path.join(rd, "guest.log")
        if os.path.exists(glog) and os.path.getsize(glog):
            with open(glog, errors="replace") as f:
                problems.append("the guest said:\n  " + f.read().strip())

    passed = failed = 0
    print()
    print("Summary per suite:")
    for s in a.suites:
        m = results.get(s)
        if m is None:
            print(f"  {s:28} did not report (counted as 1 failure)")
            failed += 1
            continue
        bad = m["failed"] + m["crashed"] + m["errors"]
        extra = f", {m['skipped']} skipped" if m["skipped"] else ""
        print(f"  {s:28} {m['passed']} passed, {bad} failed{extra}")
        passed += m["passed"]
        failed += bad
    if skipped_cases:
        # The reasons are in the KTAP output above ("# SKIP ...").
        print(f"skipped (not counted): {', '.join(skipped_cases)}")
    for p in problems:
        print(f"FAIL: {p}")
        failed += 1
    if passed + failed == 0:
        print("FAIL: no test ran")
    print(f"logs: {' '.join(rundirs)}")
    print(f"{passed} passed, {failed} failed")
    with open(os.path.join(a.rundir, "verdict.json"), "w") as f:
        json.dump({"passed": passed, "failed": failed, "skipped": skipped_cases,
                   "suites": {s: results.get(s) for s in a.suites}}, f)
    return 0 if failed == 0 and passed > 0 else 1


if __name__ == "__main__":
    sys.exit(main())
