# SPDX-License-Identifier: GPL-2.0
"""What the benchmark reports share: reading the RESULT lines of the benchmark boots,
reStructuredText tables, and the commit a report runs at."""

import json
import os
import subprocess


def load(paths):
    recs = []
    for p in paths:
        boot = os.path.splitext(os.path.basename(p))[0]
        with open(p) as f:
            for line in f:
                line = line.strip()
                if line:
                    r = json.loads(line)
                    r["boot"] = boot
                    recs.append(r)
    return recs


def table(header, rows):
    """A reStructuredText list-table."""
    out = [".. list-table::", "   :header-rows: 1", ""]
    for r in [header] + rows:
        first = True
        for c in r:
            # A bare "-" would be an empty bullet list: escaped, as an empty cell is.
            out.append(("   * - " if first else "     - ") + (str(c) if c not in ("", "-") else "\\-"))
            first = False
    return "\n".join(out) + "\n"


# The report scripts: a page's report commit is marked when any differs from it.
REPORT_SCRIPTS = ("scripts/bench/side_report.py", "scripts/bench/real_report.py",
                  "scripts/bench/whole_report.py", "scripts/bench/distro_report.py",
                  "scripts/bench/common.py")


def report_commit():
    """The commit the reports run at, for a page's provenance
    (scripts/bench/figures_current.py holds the report scripts' changes against it, the
    measured code's against the run's), marked if a report script differs from it."""
    top = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    git = ["git", "-C", top]
    try:
        head = subprocess.run(git + ["rev-parse", "--short", "HEAD"], check=True,
                              stdout=subprocess.PIPE, text=True).stdout.strip()
        dirty = subprocess.run(git + ["diff", "--quiet", "HEAD", "--", *REPORT_SCRIPTS]
                               ).returncode != 0
    except (OSError, subprocess.CalledProcessError):
        return "unknown"
    return head + (" (with uncommitted changes)" if dirty else "")
