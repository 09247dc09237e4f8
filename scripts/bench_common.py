# SPDX-License-Identifier: GPL-2.0
"""What scripts/bench_report.py and scripts/bench_real_report.py share: reading the
RESULT lines of the benchmark boots, and reStructuredText tables."""

import json
import os


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
