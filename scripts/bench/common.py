# SPDX-License-Identifier: GPL-2.0
"""The one library of the benchmark reports (side_report.py, real_report.py,
whole_report.py, headline.py, distro_report.py): the pages' headings, tables and plots;
reading the boots' records (RESULT lines; for the whole-system boots also the counting
plugin's marks and profiles and the console); the whole-system runs' derived records
and the lookups the pages share; and the commit a report runs at."""

import bisect
import glob
import html
import json
import os
import re
import subprocess
import sys

# Pages: headings, tables, plots.


def page_title(title, width=0):
    """A page's licence line and its title between two bars of "=", @width long if that
    is longer than the title (as some pages have them)."""
    bar = "=" * max(width, len(title))
    return f".. SPDX-License-Identifier: GPL-2.0\n\n{bar}\n{title}\n{bar}\n"


def heading(title, char="=", width=0):
    """A section's title, underlined with @char ("=" a section, "-" a subsection), @width
    long if that is longer than the title (as some pages have it)."""
    return f"{title}\n{char * max(width, len(title))}\n"


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


SERIES_COLORS = ["#1f77b4", "#d62728", "#7f7f7f", "#2ca02c", "#9467bd"]


def label_lines(label, width):
    """A group's label in lines that fit @width pixels (about 6 a character at the plot's
    font size), broken at spaces; one line where it fits or cannot be broken."""
    fits = lambda text: len(text) * 6 <= width * 0.95
    if fits(label) or " " not in label:
        return [label]
    lines = []
    for word in label.split():
        if lines and fits(f"{lines[-1]} {word}"):
            lines[-1] += f" {word}"
        else:
            lines.append(word)
    return lines


def svg_bars(path, title, ylabel, groups, series, values, colors=None, ref=None):
    """Grouped bar chart: values[s][g] for series s and group g (None: no bar), series s
    in colors[s] (by default SERIES_COLORS in turn); @ref, a (value, label), is drawn as a
    dashed line across the bars."""
    colors = colors or [SERIES_COLORS[s % len(SERIES_COLORS)] for s in range(len(series))]
    w, h, left, bottom, top = 760, 340, 70, 60, 40
    plot_w, plot_h = w - left - 20, h - top - bottom
    vmax = max([v for row in values for v in row if v is not None] + [1])
    vmax *= 1.1
    n_g, n_s = len(groups), len(series)
    gw = plot_w / max(n_g, 1)
    bw = gw * 0.8 / max(n_s, 1)
    out = [
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{w}" height="{h}" '
        f'font-family="sans-serif" font-size="11">',
        f'<rect width="{w}" height="{h}" fill="white"/>',
        f'<text x="{w / 2}" y="20" text-anchor="middle" font-size="14">{html.escape(title)}</text>',
        f'<text x="15" y="{top + plot_h / 2}" transform="rotate(-90 15 {top + plot_h / 2})" '
        f'text-anchor="middle">{html.escape(ylabel)}</text>',
    ]
    for i in range(5):
        v = vmax * i / 4
        y = top + plot_h - plot_h * i / 4
        out.append(f'<line x1="{left}" y1="{y:.1f}" x2="{left + plot_w}" y2="{y:.1f}" stroke="#ddd"/>')
        out.append(f'<text x="{left - 5}" y="{y + 4:.1f}" text-anchor="end">{v:.0f}</text>')
    for g, name in enumerate(groups):
        x0 = left + g * gw + gw * 0.1
        for s in range(n_s):
            v = values[s][g]
            if v is None:
                continue
            bh = plot_h * v / vmax
            x = x0 + s * bw
            out.append(
                f'<rect x="{x:.1f}" y="{top + plot_h - bh:.1f}" width="{bw * 0.95:.1f}" '
                f'height="{bh:.1f}" fill="{colors[s]}">'
                f'<title>{html.escape(series[s])} {html.escape(str(name))}: {v}</title></rect>'
            )
        cx = left + g * gw + gw / 2
        lines = label_lines(str(name), gw)
        out.append(
            f'<text x="{cx:.1f}" y="{top + plot_h + 15}" text-anchor="middle">'
            + html.escape(lines[0])
            + "".join(f'<tspan x="{cx:.1f}" dy="12">{html.escape(line)}</tspan>'
                      for line in lines[1:])
            + "</text>"
        )
    # The legend's entries 150 apart, closer where that would not fit them all.
    step = min(150, (w - left) // max(n_s + (ref is not None), 1))
    for s, name in enumerate(series):
        x = left + s * step
        y = h - 18
        out.append(f'<rect x="{x}" y="{y - 9}" width="10" height="10" '
                   f'fill="{colors[s]}"/>')
        out.append(f'<text x="{x + 14}" y="{y}">{html.escape(name)}</text>')
    if ref is not None:
        # The line, and its legend entry after the series'.
        y = top + plot_h - plot_h * ref[0] / vmax
        out.append(f'<line x1="{left}" y1="{y:.1f}" x2="{left + plot_w}" y2="{y:.1f}" '
                   'stroke="black" stroke-dasharray="6,4"/>')
        x, y = left + n_s * step, h - 18
        out.append(f'<line x1="{x}" y1="{y - 4}" x2="{x + 20}" y2="{y - 4}" stroke="black" '
                   'stroke-dasharray="6,4"/>')
        out.append(f'<text x="{x + 24}" y="{y}">{html.escape(ref[1])}</text>')
    out.append("</svg>")
    with open(path, "w") as f:
        f.write("\n".join(out) + "\n")


def plot(figdir, name, title, ylabel, groups, series, values, colors=None, ref=None):
    """svg_bars() as @figdir/NAME.svg, @figdir the benchmarks folder beside the page;
    returns the page's directive that shows it."""
    svg_bars(os.path.join(figdir, f"{name}.svg"), title, ylabel, groups, series, values,
             colors, ref)
    return f"\n.. image:: benchmarks/{name}.svg\n"


# Figures.


def ratio(a, b):
    """@a over @b, to two decimals; "-" without @a or @b."""
    return f"{a / b:.2f}" if a is not None and b else "-"


def pct(a, b):
    """@a as a percentage of @b, to one decimal; "-" without a @b."""
    return f"{100.0 * a / b:.1f}" if b else "-"


def range_cells(values):
    """The smallest, the median and the largest of @values (to two decimals), and how many
    there are: a table's cells."""
    v = sorted(values)
    return [f"{v[0]:.2f}", f"{v[len(v) // 2]:.2f}", f"{v[-1]:.2f}", len(v)]


# rslub's counters under their file names (SLUB's where SLUB had the counter); records
# written before have rslub's short names.
OLD_NAMES = {"alloc_fastpath": "alloc_fast", "alloc_slowpath": "alloc_slow",
             "free_fastpath": "free_fast", "free_slowpath": "free_slow",
             "alloc_slab": "new_slab", "free_slab": "slab_freed",
             "alloc_node_mismatch": "node_mismatch"}


def counter(w, name, *default):
    """Counter @name of rslub's counters @w, under its name or the one it had before;
    without it, @default if given (else KeyError)."""
    if name in w:
        return w[name]
    old = OLD_NAMES.get(name, name)
    return w.get(old, *default) if default else w[old]


# The allocators of the workload runs (real_guest.sh's variants, whole_guest.sh's alloc=).
ALLOC = {"kernel": "kernel (SLUB with sheaves)", "hooks": "kernel + rslub's hooks",
         "rslub": "rslub, whole kernel"}


def hook_cost(r, op):
    """Operation @op's figures in the hooks' cost record @r (rslub_bench's hook_cost):
    without the hooks, through ftrace's handler alone (where @r has it; else the direct
    calls' figure), with the direct calls, and without the hooks again; None where @r has
    no @op."""
    if f"{op}_off" not in r:
        return None
    on = r[f"{op}_on"]
    return r[f"{op}_off"], r.get(f"{op}_handler", on), on, r[f"{op}_off_again"]


# Records of every boot: its RESULT lines, one JSON object a line.


def records(path):
    """The records of the JSON-lines file @path, one by one (blank lines skipped)."""
    with open(path) as f:
        for line in f:
            if line.strip():
                yield json.loads(line)


def load(paths):
    """The records of the boots @paths, each with its boot's name (its file's, without
    the extension) as "boot"."""
    recs = []
    for p in paths:
        boot = os.path.splitext(os.path.basename(p))[0]
        for r in records(p):
            r["boot"] = boot
            recs.append(r)
    return recs


# Records of the whole-system boots (whole.sh): RUNDIR/BOOT.jsonl, the counting plugin's
# log beside each (BOOT.jsonl.count: scripts/bench/qemu/count.c's "mark" and, with
# PROFILE=1, "prof" lines) and its console (BOOT.jsonl.log); RUNDIR/meta.


def read_meta(rundir):
    """The run's meta lines (whole.sh): commit, date, kernel build, QEMU, vCPUs, classic
    SLUB's kernel build."""
    with open(os.path.join(rundir, "meta")) as f:
        return [line.rstrip("\n") for line in f]


def plugin_counts(path):
    """The counting plugin's log @path: {mark: (instructions, kernel-mode instructions)}
    so far at each mark, and {mark: {symbol: kernel instructions since the mark before}}
    of a profiled boot."""
    marks, prof = {}, {}
    with open(path) as f:
        for line in f:
            m = re.match(r"mark (\d+) insns (\d+) kernel (\d+)", line)
            if m:
                marks[int(m.group(1))] = (int(m.group(2)), int(m.group(3)))
            m = re.match(r"prof (\d+) (\d+) (\S+)", line)
            if m:
                # Static functions of one name in several files: one row.
                p = prof.setdefault(int(m.group(1)), {})
                p[m.group(3)] = p.get(m.group(3), 0) + int(m.group(2))
    return marks, prof


def load_run(rundir):
    """Every record of the whole-system boots of @rundir, each with its boot's name, its
    instructions between its marks ("insns", "kinsns"), what rslub served ("served") and,
    from a profiled boot, its kernel-mode instructions by symbol ("prof")."""
    recs = []
    for path in sorted(glob.glob(os.path.join(rundir, "*.jsonl"))):
        boot = os.path.basename(path)[:-len(".jsonl")]
        marks, prof = plugin_counts(path + ".count")
        # A boot run again with PROFILE=1 after the run (the builds': profile_section())
        # keeps the first boot's counts beside it: they must be the same to the instruction.
        if os.path.exists(path + ".count.unprofiled"):
            first, _ = plugin_counts(path + ".count.unprofiled")
            if first != marks:
                sys.exit(f"{path}: the profiled boot did not count as the run's boot did")
        served = guest_marks = name_of = None
        sections = {}
        with open(path + ".log") as f:
            for line in f:
                m = re.search(r"rslub_bench: section rslub (\S+) (0x[0-9a-f]+)", line)
                if m:
                    sections[m.group(1)] = int(m.group(2), 16)
                m = re.search(r"rslub_bench: SERVED (\d+) (\d+)", line)
                if m:
                    served = (int(m.group(1)), int(m.group(2)))
                m = re.search(r"rslub_bench: MARKS (\d+)", line)
                if m:
                    guest_marks = int(m.group(1))
        # Every marker the guest executed was counted, and nothing else was taken for one:
        # otherwise a run's two marks are not the ones its RESULT line names.
        if guest_marks != len(marks):
            sys.exit(f"{path}: the guest made {guest_marks} marks, the plugin counted "
                     f"{len(marks)}")
        for r in records(path):
            r["boot"] = boot
            if r["exp"] == "micro":
                # Timed by the module itself (bench/kmem_micro.c): no marks.
                recs.append(r)
                continue
            a, b = marks.get(r["mark0"]), marks.get(r["mark1"])
            if a is None or b is None:
                sys.exit(f"{path}: marks {r['mark0']}/{r['mark1']} not in the plugin's log")
            r["insns"] = b[0] - a[0]
            r["kinsns"] = b[1] - a[1]
            r["served"] = served
            if prof:
                name_of = name_of or module_names(path + ".ko", sections)
                r["prof"] = run_profile(path, prof, r, name_of)
            recs.append(r)
    return recs


def module_names(ko, sections):
    """A function naming the blocks past the kernel's text (count.c's @HEX) by rslub's
    symbols, from the module @ko the boot loaded and where the guest said its text
    @sections are: "rslub: FUNCTION", or [modules, other] (another module, ftrace's
    trampolines)."""
    funcs = []
    if sections and os.path.exists(ko):
        names = {}
        for line in subprocess.run(["readelf", "-SW", ko], capture_output=True, text=True,
                                   check=True).stdout.splitlines():
            m = re.match(r"\s*\[\s*(\d+)\]\s+(\S+)", line)
            if m:
                names[m.group(1)] = m.group(2)
        for line in subprocess.run(["readelf", "-sW", "-C", ko], capture_output=True,
                                   text=True, check=True).stdout.splitlines():
            f = line.split(None, 7)
            if len(f) == 8 and f[3] == "FUNC" and names.get(f[6]) in sections:
                start = sections[names[f[6]]] + int(f[1], 16)
                funcs.append((start, start + int(f[2]), "rslub: " + f[7].replace("rslub::", "")))
    funcs.sort()
    starts = [f[0] for f in funcs]

    def name_of(sym):
        if not sym.startswith("@"):
            return sym
        a = int(sym[1:], 16)
        i = bisect.bisect_right(starts, a) - 1
        return funcs[i][2] if i >= 0 and a < funcs[i][1] else "[modules, other]"
    return name_of


def run_profile(path, prof, r, name_of):
    """The kernel's instructions of run @r by symbol (PROFILE=1 boots: count.c's "prof"
    lines after each mark, of what ran since the mark before), which add up to its
    kernel-mode count: each block counts whole for both."""
    out = {}
    for m in range(r["mark0"] + 1, r["mark1"] + 1):
        for sym, n in prof.get(m, {}).items():
            if sym != "[user]":
                name = name_of(sym)
                out[name] = out.get(name, 0) + n
    if sum(out.values()) != r["kinsns"]:
        sys.exit(f"{path}: the profile of marks {r['mark0']}-{r['mark1']} sums to "
                 f"{sum(out.values())} kernel instructions, the marks to {r['kinsns']}")
    return out


# The per-run counts of a record (whole_guest.sh's result()): what a marginal
# record subtracts. Everything else (layouts, sizes, levels such as memory held) is the
# larger run's.
COUNTS = ("insns", "kinsns", "ns", "units", "pgalloc", "pgfree", "pgfault", "ctxt")
# Every counter a cache's record may hold (whole_guest.sh's FSTATS, rslub's lock
# counters); the layouts (size, order, objects_per_slab) are not counts.
CACHE_COUNTS = ("alloc_fastpath", "alloc_slowpath", "free_fastpath", "free_slowpath",
                "free_frozen", "free_add_partial", "free_remove_partial", "alloc_refill",
                "alloc_from_partial", "alloc_slab", "free_slab", "alloc_node_mismatch",
                "cpuslab_flush", "deactivate_full", "deactivate_empty", "deactivate_to_head",
                "deactivate_to_tail", "deactivate_remote_frees", "deactivate_bypass",
                "order_fallback", "cpu_partial_alloc", "cpu_partial_free", "cpu_partial_node",
                "cpu_partial_drain", "node_lock", "node_lock_contended")


def sub(b, a):
    """What run @b did beyond run @a, of the same workload at half its size: @b's counts
    minus @a's (the program's start-up and exit drop out). Per cache, the caches both runs
    list, reselected at 2% of the difference's allocations."""
    out = dict(b)
    out["derived_from"] = [a["mark0"], b["mark0"]]
    for key in COUNTS:
        if key in b and key in a:
            out[key] = b[key] - a[key]
    for group in ("rslub", "slub"):
        if group in b and group in a:
            out[group] = {k: v - a[group].get(k, 0) for k, v in b[group].items()}
    if "prof" in b and "prof" in a:
        out["prof"] = {k: b["prof"].get(k, 0) - a["prof"].get(k, 0)
                       for k in b["prof"].keys() | a["prof"].keys()}
    for group in ("caches", "slub_caches"):
        if group not in b:
            continue
        caches = {}
        for name, c in b[group].items():
            if name not in a.get(group, {}):
                continue
            d = dict(c)
            for k in CACHE_COUNTS:
                if k in c:
                    d[k] = c[k] - a[group][name].get(k, 0)
            caches[name] = d
        total = sum(d["alloc_fastpath"] + d["alloc_slowpath"] for d in caches.values())
        out[group] = {n: d for n, d in caches.items()
                      if total and (d["alloc_fastpath"] + d["alloc_slowpath"]) * 50 >= total}
    return out


def denoise(recs):
    """Every run's counters less those of the boot's run of nothing ("noop",
    whole_guest.sh): the snapshots' own allocations. Marginal records need none
    (it cancels); the instruction counts have none (the marks are inside)."""
    # The boot's last run of nothing (the guest measures two: the first makes the
    # snapshot's sysfs inodes, which every later snapshot finds made).
    noops = {r["boot"]: r for r in recs if r["exp"] == "noop"}
    for n in noops.values():
        check_totals(n)
    out = []
    for r in recs:
        n = noops.get(r["boot"])
        if r["exp"] == "noop":
            continue
        if n is None or r.get("marginal") or r["exp"] == "micro":
            out.append(r)
            continue
        r = dict(r)
        # What the snapshots read must add up before anything is subtracted: a total below
        # its own listed caches is a collection fault, not noise.
        check_totals(r)
        if "ctxt" in r and "ctxt" in n:
            r["ctxt"] -= n["ctxt"]
        for total, caches in (("rslub", "caches"), ("slub", "slub_caches")):
            if total in r and total in n:
                denoise_group(r, n, total, caches)
        r["denoised"] = True
        out.append(r)
    return out


def denoise_group(r, n, total, caches):
    """Record @r's counters of one allocator (@total, summed over every cache, and the
    listed @caches) less those of the run of nothing @n, part by part, none below zero:
    each listed cache less its own part of @n, and the caches not listed (their sum, the
    total less the listed ones) less @n's part outside @r's listed caches. The snapshots'
    allocations repeat from run to run, but a new slab for them does not (a slab that
    the run of nothing had to make, a run that followed found made): subtracting the run
    of nothing's slab pages from a cache that made none in the run would count less
    than nothing there, and take it from the other caches' figures. What a clamp kept
    from going below zero is recorded in the record ("clamped": counts by part) and
    summed on the page."""
    rc, nc = r.get(caches, {}), n.get(caches, {})
    clamped = r.setdefault("clamped", {})

    def less(v, noise, part, k):
        if v < noise:
            clamped[f"{total} {part} {k}"] = noise - v
        return max(v - noise, 0)

    r[caches] = {name: {k: (less(v, nc.get(name, {}).get(k, 0), name, k) if k in CACHE_COUNTS
                            else v)
                        for k, v in c.items()}
                 for name, c in rc.items()}
    out = {}
    for k, v in r[total].items():
        if k not in CACHE_COUNTS:
            out[k] = v - n[total].get(k, 0)
            continue
        listed = sum(c.get(k, 0) for c in rc.values())
        listed_noise = sum(nc.get(name, {}).get(k, 0) for name in rc)
        rest = less(v - listed, n[total].get(k, 0) - listed_noise, "(not listed)", k)
        out[k] = sum(c.get(k, 0) for c in r[caches].values()) + rest
    r[total] = out
    if not clamped:
        del r["clamped"]


def check_totals(r):
    """A measured record's summed counters (every cache of the allocator) are at least the
    sum of the caches it lists (those of at least 2% of its allocations), less one: the
    snapshot reads the caches' files one after another, and a slab can be made between
    two reads (seen: 47 against 48). Raises on a record that breaks it."""
    for total, caches in (("rslub", "caches"), ("slub", "slub_caches")):
        if total not in r or caches not in r:
            continue
        for k, v in r[total].items():
            listed = sum(c.get(k, 0) for c in r[caches].values())
            if k in CACHE_COUNTS and v < listed - 1:
                raise SystemExit(f"{r['exp']} on boot {r['boot']}: {total} total {k} {v} is "
                                 f"below its listed caches' sum {listed}")


def marginal(recs):
    """Workloads run at two sizes (scale 1 and 2, whole_guest.sh's thrice()) get a
    derived record each, the larger run minus the smaller ("marginal"), which the tables
    show; the measured records stay in whole.json ("table": false)."""
    out = []
    for r in recs:
        if r.get("scale") == 2:
            a = next(x for x in recs if x["boot"] == r["boot"] and x["exp"] == r["exp"]
                     and x.get("scale") == 1)
            m = sub(r, a)
            m["marginal"] = True
            m.pop("scale")
            out.append(m)
        if r.get("scale") in (1, 2):
            r = dict(r, table=False)
        out.append(r)
    return out


# The whole-system runs: what the pages look up.


# Each workload: its unit of work, and what a run does (from one of its records).
WORK = {
    "hackbench": ("message", lambda r: f"``hackbench -g {r['groups']} -l {r['loops']}``: unix "
                  f"sockets, 100-byte messages, {r['units']} messages a run (seed 001)"),
    "fio": ("4 KiB block", lambda r: "fio's ``net`` engine over TCP loopback, a receiver and "
            f"a sender of 4 KiB blocks, {r['units'] // 256} MiB and {r['units'] // 128} MiB (the "
            "shape of fio's ``examples/netio``, seed 000)"
            + (f", the sender on CPU {r['sender_cpu']} (node 0) and the receiver on CPU "
               f"{r['receiver_cpu']} (the last node)" if "sender_cpu" in r else "")),
    "pingpong": ("round trip", lambda r: "TCP request/response of 64 bytes between CPU "
                 f"{r['client_cpu']} (node 0) and CPU {r['server_cpu']} (the last node), "
                 f"{r['units']} round trips (seed 002), with the kernel's deferred skb frees "
                 "(``defer on``, the reader hands each skb back to the CPU that allocated it) "
                 "and without (``skb_defer_max=0``)"),
    "fork": ("fork", lambda r: f"``perf bench syscall fork -l {r['units']}`` and ``-l "
             f"{2 * r['units']}`` (Debian's perf 6.12): fork, the child exits, wait"),
    "execve": ("execve", lambda r: f"``perf bench syscall execve -l {r['units']}`` and ``-l "
               f"{2 * r['units']}``: fork, execve of ``/bin/true`` (busybox), wait"),
    "kfree_rcu": ("object", lambda r: f"``bench/kfree_rcu.c``: {r['units']} objects of 64 "
                  "bytes from a cache of its own, each freed by ``kfree_rcu()`` as soon as "
                  "allocated, then the cache destroyed, which waits for them all"),
    "build": ("file", lambda r: f"``make -j{r['jobs']}`` of {r['units']} C files of Linux "
              "7.3's host tools with the guest's ``gcc -O2`` "
              "(``scripts/bench/workloads/build.mk``; seed 003)"),
}


def per(r, v, scale=1):
    return scale * v / r["units"]


def series(r):
    """Which kernel a record ran on: "6.12" for classic SLUB's boots (*-classic), else
    "7.3"."""
    return "6.12" if r["boot"].endswith("-classic") else "7.3"


# The allocators side by side, as whole.sh's boots name them, in the columns' order.
COLUMNS = (("n2-kernel", "sheaves 7.3"), ("n2-classic", "classic SLUB 6.12"),
           ("n2-rslub", "rslub classic"), ("n2-rslub-tuned", "rslub tuned"))


def find(recs, boot, exp, defer=None):
    """The run of workload @exp on @boot (for pingpong, the one with deferred skb frees
    @defer, "on" or "off"), or None."""
    return next((r for r in recs if r["boot"] == boot and r["exp"] == exp
                 and r.get("defer") == defer), None)


def fidelity_groups(recs, exp):
    """The runs of @exp side by side, per pingpong mode: (prefix, sheaves 7.3, classic
    6.12, rslub classic, rslub tuned), any of them None when not run."""
    defers = ("on", "off") if exp == "pingpong" else (None,)
    return [(f"defer {d}: " if d else "", *(find(recs, boot, exp, d) for boot, _ in COLUMNS))
            for d in defers]


def build_runs(recs, n):
    """The build's runs on @n nodes in the columns' order, but for rslub tuned (the build
    runs under the classic profile only): sheaves 7.3, classic SLUB 6.12, rslub classic,
    any of them None when not run."""
    return tuple(find(recs, boot, "build") for boot in
                 (f"n{n}-kernel-build", f"n{n}-build-classic", f"n{n}-rslub-build"))


# The kernel's 2-node boots with QEMU's -seed 1, 2 and 3, the last two with the initramfs
# padded (another memory layout: whole.sh); the build's likewise, on @n nodes.
KERNEL_SEEDS = ("n2-kernel", "n2-kernel-seed2", "n2-kernel-seed3")


def build_seeds(n):
    """The kernel's build boots on @n nodes, -seed 1, 2 and 3."""
    return tuple(f"n{n}-kernel-build{s}" for s in ("", "-seed2", "-seed3"))


def kernel_spread(recs, exp, defer=None, boots=KERNEL_SEEDS):
    """How far boots of one allocator differ on a workload: the range of the kernel's
    kernel-mode instructions per unit over its @boots (-seed 1, 2, 3, layouts moved), over
    the first's;
    None with fewer than two of them."""
    runs = [r for b in boots for r in recs if r["boot"] == b and r["exp"] == exp
            and r.get("defer") == defer]
    if len(runs) < 2 or runs[0]["boot"] != boots[0]:
        return None
    v = [per(r, r["kinsns"]) for r in runs]
    return (max(v) - min(v)) / v[0]


def micro_result(micro, boot, who):
    """The fast paths of bench/kmem_micro.c that boot @boot measured on allocator @who
    (the module's "alloc"), or None."""
    return next((r["module"] for r in micro if r["boot"] == boot
                 and r["module"]["alloc"] == who), None)


# The kernels' own allocator functions (mm/slub.c's and mm/slab_common.c's) by series, for
# an allocator's share of a profile.
SLAB = {}


def load_slab_functions(rundir):
    """The text symbols of mm/slub.o and mm/slab_common.o in the kernel builds the run's
    meta names (its 7.3 build, line 3; classic SLUB's, line 6), from the cache folder the
    builds live in; a build no longer there leaves its series out (no share shown)."""
    # As scripts/env.sh has it.
    cache = os.environ.get("RSLUB_CACHE") or os.path.join(
        os.environ.get("XDG_CACHE_HOME") or os.path.expanduser("~/.cache"), "rslub")
    meta = read_meta(rundir)
    for series_, i in (("7.3", 2), ("6.12", 5)):
        if len(meta) <= i:
            continue
        objs = [os.path.join(cache, "build", meta[i], "mm", o)
                for o in ("slub.o", "slab_common.o")]
        if not all(os.path.exists(o) for o in objs):
            print(f"bench report: no {' or '.join(objs)}: no allocator code share for "
                  f"{series_}", file=sys.stderr)
            continue
        out = subprocess.run(["nm", "--defined-only"] + objs, capture_output=True, text=True,
                             check=True).stdout
        SLAB[series_] = {f[2] for f in (line.split() for line in out.splitlines())
                         if len(f) == 3 and f[1] in "tTwW"}


def rslub_code(r):
    """Run @r's kernel instructions in rslub's functions (module_names()), from its
    profile."""
    return sum(v for k, v in r["prof"].items() if k.startswith("rslub: "))


def allocator_code(r):
    """Run @r's kernel instructions in allocator code: its kernel's mm/slub.c and
    mm/slab_common.c functions and rslub's; None without a profile or the list."""
    slab = SLAB.get(series(r))
    if "prof" not in r or slab is None:
        return None
    return rslub_code(r) + sum(v for k, v in r["prof"].items() if k in slab)


# Provenance.


# The report scripts: a page's report commit is marked when any differs from it.
REPORT_SCRIPTS = ("scripts/bench/side_report.py", "scripts/bench/real_report.py",
                  "scripts/bench/whole_report.py", "scripts/bench/distro_report.py",
                  "scripts/bench/headline.py", "scripts/bench/common.py")


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
