#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Fails when a page of figures is older than the code it measures (make check-figures).

Each Documentation/benchmarks*.rst names the commit its run measured ("commit abc1234" in
its first lines, written by its report script; results.rst also the side-by-side run's,
for its seeds' experiments). A page is stale when a commit after one of those changed the
code the page measures: the allocator and the modules it builds, the kernel
configurations, and the page's own benchmark scripts. README.md's results block, written
by headline.py from the same runs as results.rst, is held to the same. Prints each stale
page with those commits, and exits 1 if there is one.
"""

import os
import re
import subprocess
import sys

from common import REPORT_SCRIPTS

TOP = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

# What every page measures: the allocator, its modules and the kernels they run on.
CODE = ["rust", "bench", "include", "Kbuild", "scripts/kconfig/base.config",
        "scripts/bench/vm.sh", "scripts/bench/qemu", "scripts/bench/workloads"]
# Each page's own scripts (its driver, guest and report) and kernels. A page that names the
# commit its report ran at ("report at commit abc1234") is held to that commit for its report
# script (a report can be run again on a run's records), to the measured one for the rest.
REPORTS = set(REPORT_SCRIPTS)
PAGES = {
    "benchmarks.rst": ["scripts/bench/bench.sh", "scripts/bench/side_report.py",
                       "scripts/bench/common.py", "scripts/bench/real_guest.sh",
                       "scripts/bench/guest_init.sh", "scripts/bench/real_report.py"],
    "benchmarks_whole.rst": ["scripts/bench/whole.sh", "scripts/bench/whole_guest.sh",
                             "scripts/bench/guest_init.sh", "scripts/bench/common.py",
                             "scripts/bench/whole_report.py", "scripts/kconfig/stats.config",
                             "scripts/kconfig/classic.config"],
    "benchmarks_fidelity.rst": ["scripts/bench/whole.sh", "scripts/bench/whole_guest.sh",
                                "scripts/bench/guest_init.sh", "scripts/bench/common.py",
                                "scripts/bench/whole_report.py",
                                "scripts/kconfig/stats.config",
                                "scripts/kconfig/classic.config"],
    # With the seeds' experiments of the side-by-side boots (bench.sh's).
    "results.rst": ["scripts/bench/headline.py", "scripts/bench/whole.sh",
                    "scripts/bench/whole_guest.sh", "scripts/bench/guest_init.sh",
                    "scripts/bench/common.py", "scripts/bench/bench.sh",
                    "scripts/kconfig/classic.config"],
    "benchmarks_distro.rst": ["scripts/bench/distro.sh", "scripts/bench/distro_report.py",
                              "scripts/bench/common.py",
                              "scripts/kconfig/distro.config"],
}
# Scripts a page depends on only when the command it names wrote it: results.rst's own
# boots (make bench PART=headline) are headline.sh's; the full run's are whole.sh's.
BY_COMMAND = {"results.rst": ("PART=headline", ["scripts/bench/headline.sh"])}
# Figures written into another file, between markers, by a page's report: held to that
# page's code, their own text naming the commits as the page's first lines do.
BLOCKS = {"README.md": ("results.rst", re.compile(
    r"<!-- results: written by scripts/bench/headline.py -->(.*?)<!-- /results -->", re.S))}
MEASURED = re.compile(r"(?<!report at )\bcommit ([0-9a-f]{7,40})\b")
REPORTED = re.compile(r"\breport at commit ([0-9a-f]{7,40})\b(?! \(with uncommitted)")


def git(*args):
    return subprocess.run(["git", "-C", TOP, *args], check=True, stdout=subprocess.PIPE,
                          text=True).stdout


def check(name, head, own):
    """Whether page @name, whose first lines are @head, is stale for its code @own:
    prints what it finds; True if stale."""
    # One line: a wrapped paragraph may break "report at commit" anywhere.
    head = " ".join(head.split())
    measured = list(dict.fromkeys(MEASURED.findall(head)))
    if not measured:
        print(f"{name}: names no measured commit in its first 30 lines")
        return True
    r = REPORTED.search(head)
    since = []
    for m in measured:
        if r:
            since += git("log", "--format=%h %s", f"{m}..HEAD", "--", *CODE,
                         *[p for p in own if p not in REPORTS]).splitlines()
        else:
            since += git("log", "--format=%h %s", f"{m}..HEAD", "--", *CODE,
                         *own).splitlines()
    if r:
        since += git("log", "--format=%h %s", f"{r.group(1)}..HEAD", "--",
                     *[p for p in own if p in REPORTS]).splitlines()
    # Each commit once, newest first (git log's order, the runs' lists merged).
    order = git("log", "--format=%h").split()
    since = sorted(set(line for line in since if line.strip()),
                   key=lambda line: order.index(line.split()[0]))
    at = " and ".join(measured)
    if since:
        print(f"{name}: measured at {at}; {len(since)} later commit(s) changed what it "
              f"measures (regenerate it with make bench), the newest:")
        for line in since[:5]:
            print(f"  {line[:100]}")
        return True
    print(f"{name}: current (measured at {at})")
    return False


def main():
    stale = 0
    for page, own in PAGES.items():
        with open(os.path.join(TOP, "Documentation", page)) as f:
            head = "".join(f.readline() for _ in range(30))
        if page in BY_COMMAND and BY_COMMAND[page][0] in head:
            own = own + BY_COMMAND[page][1]
        stale |= check(page, head, own)
    for name, (page, block) in BLOCKS.items():
        with open(os.path.join(TOP, name)) as f:
            m = block.search(f.read())
        if not m:
            print(f"{name}: has no block of figures ({block.pattern[:40]}...)")
            stale = 1
            continue
        own = PAGES[page]
        if page in BY_COMMAND and BY_COMMAND[page][0] in m.group(1):
            own = own + BY_COMMAND[page][1]
        stale |= check(name, m.group(1), own)
    return int(stale)


if __name__ == "__main__":
    sys.exit(main())
