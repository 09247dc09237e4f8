#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Writes the test count of a finished `make test` run into README.md.

The README's count is produced, not typed: `make test UPDATE_README=1` runs this after a
run with no failure. It reads RUNDIR/verdict.json (written by scripts/test/ktap.py) and
replaces the text between the markers `<!-- test-count -->` and `<!-- /test-count -->`.
"""

import json
import os
import re
import subprocess
import sys

# The repository: the pathspecs below are relative to it (git -C takes them from the folder
# it is given, so scripts/test/ would match nothing).
TOP = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def main():
    readme, rundir, topology = sys.argv[1], sys.argv[2], sys.argv[3]
    with open(f"{rundir}/verdict.json") as f:
        v = json.load(f)
    if v["failed"] or not v["passed"]:
        sys.exit("readme_count: the run failed; README.md left as it is")
    commit = subprocess.run(["git", "-C", TOP, "rev-parse", "--short", "HEAD"],
                            capture_output=True, text=True).stdout.strip() or "unknown"
    dirty = subprocess.run(["git", "-C", TOP, "status", "--porcelain", "--",
                            "rust", "tests-kunit", "Kbuild"],
                           capture_output=True, text=True).stdout.strip()
    at = f"{commit}{' plus uncommitted changes' if dirty else ''}"
    skipped = ", ".join(f"`{t}`" for t in v["skipped"])
    line = f"`{v['passed']} passed, {v['failed']} failed`"
    if skipped:
        line += f" (skipped on this topology: {skipped})"
    line += f", from `make test` on {topology}, at commit {at}"
    with open(readme) as f:
        text = f.read()
    new, n = re.subn(r"(<!-- test-count -->).*?(<!-- /test-count -->)",
                     lambda m: m.group(1) + line + m.group(2), text, flags=re.S)
    if n != 1:
        sys.exit("readme_count: README.md has no test-count markers")
    with open(readme, "w") as f:
        f.write(new)
    print(f"readme_count: README.md now says {line}")


if __name__ == "__main__":
    main()
