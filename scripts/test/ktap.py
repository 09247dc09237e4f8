#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Turns a test run's guest boots into one verdict.

Reads RUNDIR/ktap/<suite> of each boot's RUNDIR (each a KTAP document with one suite, as
KUnit's debugfs writes it), joins them into one KTAP document, parses it with the kernel's own
tools/testing/kunit/kunit.py, scans the guest's kernel log and console for reports (the one list in
scripts/test/reports.py: the kernel's oopses, BUGs, warnings, sanitizers, lockdep, stalls and
hangs, and rslub's own), and
prints a summary per suite and then the line "N passed, N failed". Exits non-zero on any failed test, a suite that did
not report, a kernel report, a guest that did not finish, or zero tests run.
"""

import argparse
import json
import os
import re
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from reports import report_lines  # noqa: E402 (the one list of reports: scripts/test/reports.py)

CHECKS_BEGIN = "rslub-test: checks begin"


def log_reports(path):
    """The report lines of a kernel log from the line where the checks began (the boot
    before it is not under test; scripts/test/guest.sh marks it), or None if there is no log."""
    if not os.path.exists(path):
        return None
    with open(path, errors="replace") as f:
        lines = f.read().splitlines()
    start = next((i for i, l in enumerate(lines) if CHECKS_BEGIN in l), 0)
    return report_lines(lines[start:])


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


def combine(folder):
    """The verdicts of several runs (.ci/run's steps): fails if a test was skipped in every
    run that had it, that is if what a test checks was checked nowhere."""
    runs = []
    for name in sorted(os.listdir(folder)):
        if name.endswith(".json"):
            with open(os.path.join(folder, name)) as f:
                runs.append(json.load(f))
    if not runs:
        print(f"FAIL: no verdict in {folder}")
        return 1
    ran = set().union(*(set(r.get("ran", [])) for r in runs))
    skipped = set().union(*(set(r.get("skipped", [])) for r in runs))
    for r in runs:
        print(f"  {r['passed']} passed, {r['failed']} failed, {len(r['skipped'])} skipped: "
              f"{r.get('where', '?')}")
    nowhere = sorted(skipped - ran)
    for t in nowhere:
        print(f"FAIL: skipped in every run: {t}")
    print(f"{len(runs)} runs; {len(ran)} tests ran in at least one, "
          f"{len(nowhere)} skipped in all")
    return 1 if nowhere or any(r["failed"] for r in runs) else 0


def stale_int3(log):
    """Whether the console LOG failed first on QEMU TCG's stale int3 (Documentation/testing.rst):
    the first report of the kernel is an "Oops: int3" whose dump shows, at the byte the trap
    stopped after, no int3 any more (the text patching had finished: the CPU ran a stale
    translation), and no test failed before it."""
    lines = open(log, errors="replace").read().splitlines()
    first = next((i for i, l in enumerate(lines)
                  if re.search(r"Oops:|BUG:|WARNING:|Kernel panic|^\s*not ok ", l)), None)
    if first is None or not re.search(r"Oops: int3: ", lines[first]):
        return False
    for i in range(first + 1, min(first + 80, len(lines))):
        if not lines[i].startswith("RIP: 0010:"):
            continue
        for code in lines[i + 1:i + 3]:
            m = re.search(r"Code: (?:[0-9a-f]{2} )*([0-9a-f]{2}) <[0-9a-f]{2}>", code)
            if m:
                return m.group(1) != "cc"
        return False
    return False


def main():
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--combine", metavar="DIR",
                    help="instead: read every verdict.json kept in DIR (RSLUB_VERDICTS of "
                         ".ci/run's runs) and fail on a test that every run skipped")
    ap.add_argument("--kunit", help="path of the kernel's kunit.py")
    ap.add_argument("--where", default="", help="the run's kernel and topology, for the verdict")
    ap.add_argument("--rundir", action="append",
                    help="a boot's directory (repeated for each boot; results go to the first)")
    ap.add_argument("suites", nargs="*", help="suites that must report")
    ap.add_argument("--stale-int3", metavar="LOG",
                    help="instead: exit 0 if the console LOG failed first on QEMU TCG's stale int3")
    a = ap.parse_args()
    if a.stale_int3:
        return 0 if stale_int3(a.stale_int3) else 1
    if a.combine:
        return combine(a.combine)
    if not (a.kunit and a.rundir and a.suites):
        ap.error("--kunit, --rundir and the suites are needed")
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
    skipped_cases, ran_cases = [], []
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
                else:
                    ran_cases.append(f"{g['name']}.{t['name']}")

    for rd in rundirs:
        # The guest's dmesg (saved at its end, from a 16 MiB ring) and the whole console,
        # which goes on to the shutdown; a report in either fails the run, once.
        hits, seen = [], set()
        for name in ("dmesg", "vng.log"):
            for h in log_reports(os.path.join(rd, name)) or []:
                key = re.sub(r"^\[[ 0-9.]*\] ", "", h.strip())
                if key not in seen:
                    seen.add(key)
                    hits.append(h)
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
        json.dump({"where": a.where, "passed": passed, "failed": failed,
                   "skipped": skipped_cases, "ran": ran_cases,
                   "suites": {s: results.get(s) for s in a.suites}}, f)
    return 0 if failed == 0 and passed > 0 else 1


if __name__ == "__main__":
    sys.exit(main())
