"""Renderers of `sumlab study scan` (columns: data/README.md, section "scan study"): prefix errors
against the exact prefixes, their growth with the position, determinism declared vs measured,
throughput against the memory-bound time, the linear recurrence for |a| < 1, = 1, > 1, and the
work/depth of Hillis-Steele vs Blelloch."""
from __future__ import annotations

import math
from collections import defaultdict

from . import figures
from .document import Figure, Heading, Paragraph, Table, slug
from .determinism_class import RANK as _RANK, agreement, shown_class
from .figures import plt
from .run_folder import CsvData, Run, num



def _fmt(v: float) -> str:
    if math.isnan(v):
        return "nan"
    if math.isinf(v):
        return "inf" if v > 0 else "-inf"
    return f"{v:.3g}"


def _log_panels(ctx, stem, panels, xlabel, ylabel, title, caption, xlog=True):
    """panels: [(panel title, {series label: [(x, y)]})]; y on a log axis, non-positive y counted."""
    ncols = min(3, max(1, len(panels)))
    nrows = max(1, math.ceil(len(panels) / ncols))
    fig, axes = plt.subplots(nrows, ncols, figsize=(5.8 * ncols, 3.6 * nrows), squeeze=False)
    for ax in axes.flat[len(panels):]:
        ax.set_visible(False)
    skipped = 0
    seen: dict[str, dict] = {}
    for ax, (ptitle, series) in zip(axes.flat, panels):
        for label, pts in series.items():
            pts = sorted(pts)
            good = [(x, y) for x, y in pts if y > 0 and math.isfinite(y)]
            skipped += len(pts) - len(good)
            if not good:
                continue
            style = dict(color=ctx.palette.colour(label), marker=ctx.palette.marker(label), markersize=4, lw=1.2)
            ax.plot([p[0] for p in good], [p[1] for p in good], label=label, **style)
            seen[label] = style
        ax.set_yscale("log")
        if xlog:
            ax.set_xscale("log", base=2)
        ax.set_xlabel(xlabel)
        ax.set_ylabel(ylabel)
        ax.set_title(ptitle)
    handles = [plt.Line2D([], [], label=k, **v) for k, v in seen.items()]
    fig.legend(handles=handles, loc="upper center", bbox_to_anchor=(0.5, 0.0), ncol=min(4, max(1, len(handles))),
               frameon=False)
    figures.save(fig, ctx.out_dir, ctx.fig_prefix + stem)
    if skipped:
        caption += f" {skipped} point(s) with a zero (exact) or non-finite value are not drawn."
    return Figure(ctx.fig_prefix + stem, title, caption)


def _scan_growth_findings(data: CsvData) -> list:
    """From the rows: how each + scan's worst scaled error changed from the smallest to the largest
    n of the run, and whether every max scan was exact."""
    worst: dict[tuple, dict[float, float]] = defaultdict(dict)
    max_inexact = 0
    for r in data.rows:
        if r.get("operator") == "max" and num(r.get("max_ulps")) != 0:
            max_inexact += 1
        if r.get("operator") != "plus":
            continue
        k, n = (r.get("dtype", ""), r.get("algorithm", "")), num(r.get("n"))
        worst[k][n] = max(worst[k].get(n, 0.0), num(r.get("max_scaled_error")))
    parts = []
    for (dtype, alg), by_n in worst.items():
        ns = sorted(by_n)
        if len(ns) >= 2:
            parts.append(f"{alg} ({dtype}) {by_n[ns[0]]:.2g} → {by_n[ns[-1]]:.2g}")
    text = []
    if parts:
        lo, hi = min(num(r.get("n")) for r in data.rows), max(num(r.get("n")) for r in data.rows)
        text.append(f"Measured in this run, worst scaled error of the + scans from n = {int(lo)} to n = {int(hi)}: "
                    + "; ".join(parts) + ".")
    if any(r.get("operator") == "max" for r in data.rows):
        text.append("Every max scan was exact." if max_inexact == 0 else
                    f"{max_inexact} max-scan row(s) were NOT exact (a bug).")
    return [Paragraph(" ".join(text))] if text else []


def render_scan_error(run: Run, data: CsvData, ctx) -> list:
    backend = ", ".join(data.ordered_unique("backend"))
    panels = []
    for dtype in data.ordered_unique("dtype"):
        for op in ("plus", "segmented"):
            series: dict[str, dict[float, float]] = defaultdict(dict)
            for r in data.rows:
                if r.get("dtype") != dtype or r.get("operator") != op:
                    continue
                n, y = num(r.get("n")), num(r.get("max_scaled_error"))
                key = r.get("algorithm", "")
                series[key][n] = max(series[key].get(n, 0.0), y)  # worst shape and distribution
            if series:
                panels.append((f"{op}, {dtype} ({backend})", {k: list(v.items()) for k, v in series.items()}))
    blocks: list = [
        Heading("Scans: prefix error against the exact prefix", 3, anchor=slug(run.label + "-scan-error")),
        Paragraph("What this shows: every inclusive prefix of each scan, compared with the exact prefix sum "
                  "(MPFR, each prefix correctly rounded to the dtype once). The error is the ordinal distance in "
                  "ulps of the dtype (0: correctly rounded); a max scan must be exact (a non-zero entry is a bug)."),
    ] + _scan_growth_findings(data)
    if panels:
        blocks.append(_log_panels(ctx, "scan-error-vs-n", panels, "n", "max |error| / running sum |x|",
                                  "Worst prefix error against n",
                                  "The largest error of any prefix divided by that prefix's running sum of "
                                  "magnitudes (the quantity Higham's bounds multiply; ulps explode where a prefix "
                                  "cancels), the worst over shapes and distributions, per algorithm."))
    worst: dict[tuple, list] = {}
    bad = set()
    for r in data.rows:
        k = (r.get("algorithm", ""), r.get("operator", ""), r.get("dtype", ""))
        w = worst.setdefault(k, [0.0, 1.0, 0.0, "", 0, 0.0, ""])
        if r.get("distinct_runs", "") != "":  # the most outputs one configuration gave over its runs
            w[6] = str(max(int(num(r.get("distinct_runs"))), int(w[6] or 0)))
        w[5] = max(w[5], num(r.get("max_scaled_error")))
        w[0] = max(w[0], num(r.get("max_ulps")))
        w[1] = min(w[1], num(r.get("exact_fraction")))
        w[2] = max(w[2], num(r.get("max_rel_error")))
        if r.get("gpu_equals_model") == "0":
            w[4] += 1
        w[3] = r.get("declared_determinism", "")
    rows = []
    for i, (k, w) in enumerate(worst.items()):
        rows.append([k[0], k[1], k[2], _fmt(w[0]), _fmt(w[1]), _fmt(w[2]), _fmt(w[5]), w[3], str(w[4]), w[6]])
        if w[4] or (k[1] == "max" and w[0] != 0):
            bad.add(i)
    blocks.append(Table(["algorithm", "operator", "dtype", "max ulps", "min exact fraction", "max rel error",
                         "max scaled error", "declared", "GPU != model", "distinct runs"], rows,
                        "Over every size, distribution and shape. distinct runs: the most different outputs one "
                        "shape or configuration gave when run again (empty: not rerun). Red: a run whose GPU bits "
                        "differ from the model's, or a max scan that is not exact.", alarm_rows=bad))
    failed = [r for r in data.rows if r.get("note", "")]
    if failed:
        blocks.append(Paragraph(f"{len(failed)} call(s) of your scans failed, e.g. {failed[0].get('algorithm')}: "
                                f"{failed[0].get('note')}", "alarm"))
    if bad:
        ctx.alarms.append(f"{run.label}/{data.name}: {len(bad)} scan line(s) with GPU != model or an inexact max.")
    return blocks


def render_scan_position(run: Run, data: CsvData, ctx) -> list:
    blocks: list = [Heading("Scans: error against the position", 3, anchor=slug(run.label + "-scan-position"))]
    ulps = [r for r in data.rows if r.get("metric") == "scaled_error" and r.get("operator") == "plus"]
    if ulps:
        largest = max(num(r.get("n")) for r in ulps)
        dist = ulps[0].get("distribution", "")
        panels = []
        for dtype in dict.fromkeys(r.get("dtype", "") for r in ulps):
            series: dict[str, dict[float, float]] = defaultdict(dict)
            for r in ulps:
                if r.get("dtype") != dtype or num(r.get("n")) != largest or r.get("distribution") != dist:
                    continue
                label = r.get("algorithm", "")
                x = num(r.get("bin_lo"))
                series[label][x] = max(series[label].get(x, 0.0), num(r.get("mean")))
            panels.append((f"plus, {dtype}, {dist}, n = {int(largest)}", {k: list(v.items()) for k, v in series.items()}))
        blocks.append(_log_panels(ctx, "scan-error-vs-position", panels, "prefix length (terms, bin start)",
                                  "mean |error| / running sum |x| in the bin", "Prefix error against the position",
                                  "Mean scaled error of the prefixes of 2^k .. 2^(k+1) - 1 terms (worst shape per "
                                  "algorithm): how the error grows along the array."))
    rec = [r for r in data.rows if r.get("metric") == "rel_error"]
    if rec:
        largest = max(num(r.get("n")) for r in rec)
        panels = []
        for dtype in dict.fromkeys(r.get("dtype", "") for r in rec):
            for case in dict.fromkeys(r.get("distribution", "") for r in rec):
                series: dict[str, dict[float, float]] = defaultdict(dict)
                for r in rec:
                    if r.get("dtype") != dtype or r.get("distribution") != case or num(r.get("n")) != largest:
                        continue
                    label, x = r.get("algorithm", ""), num(r.get("bin_lo"))
                    series[label][x] = max(series[label].get(x, 0.0), num(r.get("max")))
                panels.append((f"{case}, {dtype}", {k: list(v.items()) for k, v in series.items()}))
        blocks.append(_log_panels(ctx, "scan-recurrence-vs-position", panels, "t (bin start)",
                                  "max relative error of h_t in the bin", "Linear recurrence: error along t",
                                  f"n = {int(largest)}: the serial loop h = a h + b and the affine scans against the "
                                  "MPFR loop."))
    return blocks


def render_scan_determinism(run: Run, data: CsvData, ctx) -> list:
    cols = [c for c in ["algorithm", "operator", "dtype", "distribution", "n", "shapes", "runs_per_shape",
                        "distinct_across_runs", "distinct_across_shapes", "declared", "measured"] if c in data.columns]
    model = run.provenance.get("backend") == "model"
    rows, bad = [], set()
    modelled = single = 0
    for i, r in enumerate(data.rows):
        measured = shown_class(r.get("measured", ""), r.get("shapes"))
        agree = agreement(r.get("declared", ""), measured, r.get("shapes"))
        shown = measured
        if measured in _RANK and r.get("runs_per_shape") == "1":
            # One run per shape shows nothing run to run: on the model it is the order model's one
            # evaluation (its fixed order), on a GPU a single launch.
            shown += " (modelled)" if model else " (one run)"
            modelled += model
            single += not model
        rows.append([shown if c == "measured" else r.get(c, "") for c in cols] + [agree])
        if agree == "violated":
            bad.add(i)
    cub_nd = [r for r in data.rows if r.get("algorithm") == "cub" and num(r.get("distinct_across_runs")) > 1]
    text = ("What this shows: the distinct output bit patterns (all n prefixes hashed) over repeated runs "
            "of one shape and over the shapes swept, and the class they imply by the lab's rule (one shape shows "
            "no invariance). The modelled scans are declared run_to_run (max: shape_invariant); CUB's decoupled "
            "look-back is declared not_deterministic and measured: "
            + (f"{len(cub_nd)} CUB cell(s) gave more than one result across runs."
               if any(r.get("algorithm") == "cub" for r in data.rows)
               else "no CUB rows here (model backend)."))
    if modelled:
        text += (f" Model backend: {modelled} row(s) are the order model evaluated once per shape (runs_per_shape "
                 "1): their class compares the shapes only and is marked modelled; the scans' run-to-run "
                 "behaviour on a GPU is not measured here.")
    if single:
        text += f" {single} row(s) ran one run per shape: run-to-run behaviour not measured (marked one run)."
    blocks: list = [
        Heading("Scans: determinism declared vs measured", 3, anchor=slug(run.label + "-scan-determinism")),
        Paragraph(text),
        Table(cols + ["agreement"], rows, "agreement: matches, stronger (the variation the declaration allows was "
              "not seen), one_shape (shape invariance declared, one shape ran) or violated (red: measured less "
              "deterministic than declared).", alarm_rows=bad),
    ]
    if bad:
        ctx.alarms.append(f"{run.label}/{data.name}: {len(bad)} scan cell(s) less deterministic than declared.")
    return blocks


def render_scan_throughput(run: Run, data: CsvData, ctx) -> list:
    blocks: list = [Heading("Scans: throughput against the memory bound", 3,
                            anchor=slug(run.label + "-scan-throughput"))]
    if not data.rows:
        blocks.append(Paragraph("No times: the model backend does not time (run on cuda).", "note"))
        return blocks
    groups = list(dict.fromkeys((r.get("operator", ""), r.get("dtype", "")) for r in data.rows))
    fig, axes = plt.subplots(1, len(groups), figsize=(max(4.0, 0.35 * len(data.rows) / max(1, len(groups))) * len(groups), 3.8),
                             squeeze=False)
    for ax, (op, dtype) in zip(axes[0], groups):
        rs = [r for r in data.rows if r.get("operator") == op and r.get("dtype") == dtype]
        labels = [f"{r.get('algorithm')} {r.get('shape')}" for r in rs]
        ax.bar(range(len(rs)), [num(r.get("fraction_of_bound")) for r in rs],
               color=[ctx.palette.colour(r.get("algorithm", "")) for r in rs])
        ax.set_xticks(range(len(rs)))
        ax.set_xticklabels(labels, rotation=75, fontsize=6)
        ax.set_ylim(0, 1.05)
        ax.set_ylabel("memory-bound time / time")
        ax.set_title(f"{op}, {dtype}, n = {rs[0].get('n')}")
    figures.save(fig, ctx.out_dir, ctx.fig_prefix + "scan-throughput")
    blocks.append(Figure(ctx.fig_prefix + "scan-throughput", "Fraction of the memory-bound time",
                         "1 = as fast as reading n values and writing n values at the device-to-device copy bandwidth "
                         "measured in the same run (the minimum traffic of any scan)."))
    cols = [c for c in ["algorithm", "shape", "operator", "dtype", "n", "ms", "memory_bound_ms", "fraction_of_bound"]
            if c in data.columns]
    blocks.append(Table(cols, [[r.get(c, "") for c in cols] for r in data.rows], "Median of the timed samples, each a run of scans back to back."))
    return blocks


def render_scan_recurrence(run: Run, data: CsvData, ctx) -> list:
    def panels_of(column):
        panels = []
        for dtype in data.ordered_unique("dtype"):
            for case in data.ordered_unique("a_case"):
                series: dict[str, dict[float, float]] = defaultdict(dict)
                for r in data.rows:
                    if r.get("dtype") == dtype and r.get("a_case") == case:
                        label, n = r.get("algorithm", ""), num(r.get("n"))
                        series[label][n] = max(series[label].get(n, 0.0), num(r.get(column)))
                panels.append((f"{case}, {dtype}", {k: list(v.items()) for k, v in series.items()}))
        return panels
    blocks: list = [
        Heading("Linear recurrence h_t = a_t h_(t-1) + b_t", 3, anchor=slug(run.label + "-scan-recurrence")),
        Paragraph("What this shows: the serial loop and the parallel form (an inclusive scan of (a, b) pairs "
                  "under affine composition) against an MPFR loop at 1024 bits, relative error of h_t. "
                  "contracting: a in [0.5, 0.99), errors stay near u; unit: a = 1, the prefix sum of b (a random "
                  "walk that can pass near 0, where relative error is large); growing: a slightly above 1 so the "
                  "product grows ~e^30 over n steps. The scan computes products of many a's that the loop never "
                  "forms, with their own rounding; CUB's operator may be contracted to an FMA (default flags)."),
        _log_panels(ctx, "scan-recurrence-scaled", panels_of("max_scaled_error"), "n",
                    "max |h_t - h*_t| / s_t", "Recurrence error against its scale",
                    "s_t = |a_t| s_(t-1) + |b_t|, the recurrence's analogue of sum |x|: meaningful even where h_t "
                    "crosses 0. Worst t, worst shape, per algorithm."),
        _log_panels(ctx, "scan-recurrence-median", panels_of("median_rel_error"), "n",
                    "median relative error of h_t", "Recurrence: median relative error against n",
                    "The median over t of |h_t - h*_t| / |h*_t| (the maximum, in the table, is set by the t where "
                    "h*_t is nearest 0), worst shape, per algorithm."),
    ]
    cols = [c for c in ["dtype", "a_case", "n", "algorithm", "shape", "max_rel_error", "median_rel_error",
                        "final_rel_error", "max_scaled_error", "gpu_equals_model"] if c in data.columns]
    bad = {i for i, r in enumerate(data.rows) if r.get("gpu_equals_model") == "0"}
    blocks.append(Table(cols, [[r.get(c, "") for c in cols] for r in data.rows], "Red: GPU != model.", alarm_rows=bad))
    return blocks


def render_scan_work(run: Run, data: CsvData, ctx) -> list:
    panels = []
    for metric, label in (("work_per_element", "combines per element"), ("depth", "steps (depth)")):
        series: dict[str, list] = defaultdict(list)
        for r in data.rows:
            series[r.get("algorithm", "")].append((num(r.get("n")), num(r.get(metric))))
        panels.append((label, series))
    mism = [r for r in data.rows if r.get("work") != r.get("formula_work") or r.get("depth") != r.get("formula_depth")]
    blocks: list = [
        Heading("Hillis-Steele vs Blelloch: work and depth", 3, anchor=slug(run.label + "-scan-work")),
        Paragraph("Counted while executing each scan on the CPU. Hillis-Steele does n log2 n - (2^K - 1) combines "
                  "in K = ceil(log2 n) steps; Blelloch 2(m - 1) in 2 log2 m (m = n rounded up to a power of two: "
                  "n = 2^k + 1 nearly doubles its work), plus n for the inclusive form; the serial loop n - 1 in "
                  "n - 1. " + ("Every count equals its formula." if not mism else
                               f"{len(mism)} row(s) differ from the formula!"), "ok" if not mism else "alarm"),
        _log_panels(ctx, "scan-work", panels, "n", "", "Work and depth", "Both axes logarithmic."),
    ]
    if mism:
        ctx.alarms.append(f"{run.label}/{data.name}: {len(mism)} work/depth count(s) differ from the formulas.")
    return blocks


def render_scan_verify(run: Run, data: CsvData, ctx) -> list:
    cols = [c for c in ["algorithm", "operator", "dtype", "cases", "mismatches", "errors", "first_failure"]
            if c in data.columns]
    bad = {i for i, r in enumerate(data.rows) if num(r.get("mismatches")) != 0 or num(r.get("errors")) != 0}
    if bad:
        ctx.alarms.append(f"{run.label}/{data.name}: GPU and model bits differ for {len(bad)} scan line(s).")
    return [Heading("Scans: GPU bits against the model", 3, anchor=slug(run.label + "-scan-verify")),
            Table(cols, [[r.get(c, "") for c in cols] for r in data.rows],
                  "Shapes x operators x awkward sizes, inclusive and exclusive; red when any case differs.",
                  alarm_rows=bad)]


RENDERERS = {
    "scan_error.csv": render_scan_error,
    "scan_position.csv": render_scan_position,
    "scan_determinism.csv": render_scan_determinism,
    "scan_throughput.csv": render_scan_throughput,
    "scan_recurrence.csv": render_scan_recurrence,
    "scan_work.csv": render_scan_work,
    "scan_verify.csv": render_scan_verify,
}
