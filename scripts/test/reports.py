#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""The one list of what in a kernel log fails a run: the kernel's reports and rslub's own.

Used by scripts/test/ktap.py (make test), scripts/bench/vm.sh (every benchmark boot) and the
whole-kernel boot (through ktap.py). Every message rslub prints at pr_warn or above is
either a report here (RSLUB) or listed in NOT_REPORTS with the reason it is not;
``reports.py --sources`` (make check) fails on a message in neither and on an entry whose
message is gone.

  reports.py LOG...      print the report lines of each log; exit 1 if there is one
  reports.py --sources   check that every pr_warn-or-above message of rslub's is listed

Expected reports: a KUnit case that provokes reports on purpose (tests-kunit/test_shim.rs,
``expect_reports``) prints ``rslub-test: reports expected of PREFIX`` and, at its end,
``rslub-test: reports end``. Between the two, rslub's reports about a cache whose name
starts with PREFIX are the test's own and are ignored, and so are the kernel's KASAN
reports of the test's deliberate accesses (KERNEL_EXPECTED) and the lockdep switch-off
that the first KASAN report causes; everything else still fails the run, on every CPU.
"""

import os
import re
import sys

# The kernel's reports: oopses, BUGs, warnings, sanitizers, lockdep (a lock without a
# static key switches it off without a taint), sleeping in atomic, RCU's stall warnings
# (normal, self-detected, expedited, and RCU-Tasks', which the removal of ftrace hooks
# waits for), the soft-lockup, hung-task (a task's name may hold spaces) and workqueue
# watchdogs.
KERNEL = re.compile(
    r"(ASSERTION FAILED|BUG:|kernel BUG at|Oops|Kernel panic|general protection fault|"
    r"WARNING:|KASAN:|UBSAN:|KFENCE:|"
    r"possible circular locking|inconsistent lock state|possible recursive locking|"
    r"sleeping function called from invalid context|scheduling while atomic|"
    r"suspicious RCU usage|detected stalls on CPUs|detected stalls on tasks|self-detected stall|"
    r"detected expedited stalls|soft lockup|hard LOCKUP|INFO: task .+? blocked for more than|"
    r"workqueue lockup|INFO: trying to register non-static key|"
    r"refcount_t:|list_(add|del) corruption)"
)
# The first KASAN report (or any taint) turns lockdep off for the rest of the boot: lock
# checking is gone from there on, so outside the window of a case that provokes the report
# this fails the run too.
LOCKDEP_OFF = re.compile(r"Disabling lock debugging due to kernel taint")
# Kernel reports a test provokes on purpose (tests-kunit/sanitize_tests.rs): only those of
# its deliberate accesses (tests-kunit/shim.c), and only inside an expected window.
KERNEL_EXPECTED = re.compile(
    r"BUG: KASAN: (slab-use-after-free|slab-out-of-bounds) in rslub_test_access_fn\b"
)

# rslub's reports: (the message as it appears in the log, with a group `cache` for the
# cache it is about where it names one; the literal text of its format string in rslub's
# sources, for --sources).
RSLUB = [
    # rust/cache/debug_paths.rs, CacheCore::report: double free, wrong cache, not a slab,
    # red zone, poison, ... (slub_debug's object reports).
    (r"\bcache (?P<cache>\S+): .+ at (0x)?[0-9a-f]{8,}: ", "cache {}: {} at {:p}: {}"),
    (r"\bcache (?P<cache>\S+): free pointer of free object .* overwritten",
     "free pointer of free object {:p} overwritten"),
    (r"\bcache (?P<cache>\S+): destroyed with \d+ objects still allocated",
     "destroyed with {} objects still allocated; keeping them"),
    (r"\bcache (?P<cache>\S+): unexpected gfp", "unexpected gfp: {:#x}"),
    (r"\bcache (?P<cache>\S+): __GFP_ZERO with a constructor", "__GFP_ZERO with a constructor"),
    # A cache a client never destroyed: its objects and slabs are leaked with it.
    (r"\bcache (?P<cache>\S+) was never destroyed", "was never destroyed; leaving it in place"),
    # A kernel cache destroyed while rslub still served objects of it (its caller leaked).
    # The test and benchmark modules print these with their own names (rslub_kunit:,
    # rslub_bench:), from the same rust/back/mod.rs.
    (r"\brslub\w*: a backed cache was destroyed with \d+ objects",
     "a backed cache was destroyed with {live} objects"),
    # A kernel cache destroyed while backed without rslub having seen the destroy.
    (r"\brslub\w*: (?P<cache>\S+) was destroyed while backed", "was destroyed while backed"),
    # rmmod while something is backed or draining: those objects are leaked.
    (r"\brslub\w*: unloading while caches are backed or draining",
     "unloading while caches are backed or draining"),
    # Hardened usercopy of an rslub object (rust/back/usercopy.c, rslub_usercopy_abort).
    (r"Kernel memory (exposure|overwrite) attempt detected (from|to) "
     r"(SLUB object '(?P<cache>[^']+)'|wrapped address)",
     "Kernel memory %s attempt detected"),
]

# rslub's pr_warn-or-above messages that are not reports, with the reason. (The literal
# text of the format string; the reason.)
NOT_REPORTS = [
    # Continuation lines: they follow a report above and carry no verdict of their own.
    ("  never {}", "a line of an object report's owner records (debug.rs)"),
    ("  last %s on CPU %u", "a line of an object report's owner records (shim.c)"),
    ("    %pS", "a line of an object report's call chain (shim.c)"),
    # Left behind by a destroy that was reported already ("destroyed with N objects
    # still allocated", above); said again at unload, where the objects are finally let go.
    ("slabs of caches destroyed with live objects stay",
     "the aftermath of a destroy with live objects, which is reported when it happens"),
    ("slabs of caches left behind are no slab pages any more",
     "the aftermath of a destroy with live objects or of a cache never destroyed, "
     "both reported when they happen"),
    # Refused requests: the load, the write to the back file or the backing fails with an
    # error and changes nothing; the tests that make them assert the error.
    ("no shadow slot left", "a refused cache creation (ENOSPC: as many caches live as rslub holds)"),
    ("this CPU lacks cmpxchg16b", "a refused load (the machine cannot run rslub)"),
    ("debug_pagealloc is on", "a refused load (the kernel's configuration)"),
    ("PREEMPT_RT kernels are not supported", "a refused load (the kernel's configuration)"),
    ("invalid parameter back={names}", "a refused load (a bad parameter)"),
    ("{e}\\n", "a refused load: the parameter's error, which names it (rslub.rs)"),
    ("back=all: no size class", "a refused load (a size class could not be made)"),
    ("back=all: a cache's struct cannot be held", "a refused load (the kernel's configuration)"),
    ("cannot back {name}: {why}", "a refused backing, with its reason"),
    ("cannot back {name}: no rslub cache of that name", "a refused backing"),
    ("cannot back the caches asked for", "a refused load (backing failed)"),
    ("cannot back {}: the cache of that name was destroyed", "a refused backing"),
    ("cannot back {name}: already backed", "a refused backing"),
    ("cannot back {name}: too many names", "a refused backing"),
    ("cannot back {name}: no cache of that name allocated", "a refused backing (unknown name)"),
    ("cannot back {}: named twice", "a refused load (a bad parameter)"),
    ("cannot back {}: rslub is going away", "a refused write to the back file (racing rmmod)"),
    ("cannot unback {name}: not backed", "a refused write to the back file"),
    ("rslub: %ps has no ftrace call site", "a refused load (the kernel cannot be hooked)"),
    ("rslub: cannot hook %s", "a refused load (the kernel cannot be hooked)"),
    ("rslub: cannot hook %ps by a direct call", "a refused load (the kernel cannot be hooked)"),
    ("call site is not a jmp to its trampoline", "a refused load (the kernel cannot be hooked)"),
    # A documented fallback (Documentation/backing.rst, "Direct calls"): the hook works
    # through the ftrace handler. The benchmarks, which need the direct calls, fail on it
    # (scripts/bench/whole.sh).
    ("ftrace call site is not at +%d: hooked without direct calls",
     "a slower but correct fallback; the benchmarks refuse it"),
    ("the shadow caches lie below vmemmap: hooked without direct calls",
     "a slower but correct fallback; the benchmarks refuse it"),
]

EXPECTED_BEGIN = re.compile(r"rslub-test: reports expected of (\S+)")
EXPECTED_END = "rslub-test: reports end"
RSLUB_RE = [(re.compile(log), fmt) for log, fmt in RSLUB]


def rslub_report(line):
    """The match of an rslub report in LINE, or None."""
    for r, _ in RSLUB_RE:
        m = r.search(line)
        if m:
            return m
    return None


def report_lines(lines):
    """The lines of a kernel log that fail a run: every kernel report, lockdep switched off,
    and rslub's own, except, inside a test's expected window, rslub's reports about that
    test's caches and the kernel's reports of its deliberate accesses."""
    hits, prefix = [], None
    for line in lines:
        begin = EXPECTED_BEGIN.search(line)
        if begin:
            prefix = begin.group(1)
            continue
        if EXPECTED_END in line:
            prefix = None
            continue
        if prefix is not None and KERNEL_EXPECTED.search(line):
            continue
        if LOCKDEP_OFF.search(line):
            if prefix is None:
                hits.append(line)
            continue
        if KERNEL.search(line):
            hits.append(line)
            continue
        m = rslub_report(line)
        if m:
            cache = m.groupdict().get("cache")
            if prefix is None or cache is None or not cache.startswith(prefix):
                hits.append(line)
    return hits


def source_messages(top):
    """(file, format string) of every pr_warn-or-above message in rslub's sources."""
    rust = re.compile(r'pr_(?:warn|err|crit|alert|emerg)!\(\s*"((?:[^"\\]|\\.)*)"', re.S)
    c = re.compile(r'pr_(?:warn|err|crit|alert|emerg)(?:_once|_ratelimited)?\(\s*"((?:[^"\\]|\\.)*)"',
                   re.S)
    out = []
    for root, _, files in os.walk(os.path.join(top, "rust")):
        for f in sorted(files):
            path = os.path.join(root, f)
            pat = rust if f.endswith(".rs") else c if f.endswith(".c") else None
            if pat is None:
                continue
            with open(path) as fh:
                text = fh.read()
            out += [(os.path.relpath(path, top), m.group(1)) for m in pat.finditer(text)]
    return out


def check_sources(top):
    """Every message is a report or listed as not one; every entry still names a message."""
    msgs = source_messages(top)
    known = [fmt for _, fmt in RSLUB] + [fmt for fmt, _ in NOT_REPORTS]
    bad = 0
    for path, msg in msgs:
        if not any(k in msg for k in known):
            print(f"{path}: \"{msg}\" is neither a report nor listed as not one "
                  f"(scripts/test/reports.py)")
            bad = 1
    for k in known:
        if not any(k in msg for _, msg in msgs):
            print(f"scripts/test/reports.py: no message of rslub's contains \"{k}\" any more")
            bad = 1
    return bad


def main(argv):
    if argv[1:] == ["--sources"]:
        here = os.path.dirname(os.path.abspath(__file__))
        return check_sources(os.path.dirname(os.path.dirname(here)))
    if len(argv) < 2:
        print(__doc__)
        return 2
    bad = 0
    for path in argv[1:]:
        with open(path, errors="replace") as f:
            hits = report_lines(f.read().splitlines())
        for h in hits[:40]:
            print(f"{path}: {h}")
        bad |= bool(hits)
    return int(bad)


if __name__ == "__main__":
    sys.exit(main(sys.argv))
