"""Renderers of `sumlab study segmented` (segmented_errors.csv, segmented_determinism.csv,
segmented_ulp_histogram.csv): per-segment error by strategy and segment-size distribution, wrong
empty segments, determinism measured against declared, GPU bits against the model, and throughput
as a fraction of the memory-bound time. Registered in studies.RENDERERS (columns: data/README.md).
"""
from __future__ import annotations

import math
from collections import defaultdict

from . import figures
from .document import Figure, Heading, Paragraph, Table, slug
from .figures import plt
from .determinism_class import agreement, recorded_one_shape_invariant, shown_class
from .run_folder import CsvData, Run, num


def _fmt(v: float, digits: int = 3) -> str:
    if math.isnan(v):
        return "nan"
    if math.isinf(v):
        return "inf" if v > 0 else "-inf"
    return f"{v:.{digits}g}"


def _cell(r: dict[str, str]) -> str:
    return f"{r.get('distribution', '')} S={r.get('segments', '')} m={r.get('mean_size', '')}"


def _per_strategy_figure(run, data, ctx, value_of, ylabel, stem, title, caption, log=True):
    """One panel per dtype: x = layout cell (distribution, segments, mean), one marker per strategy
    at value_of(rows of that strategy and cell); colour and marker per strategy for the whole report."""
    dtypes = data.ordered_unique("dtype")
    cells = list(dict.fromkeys(_cell(r) for r in data.rows))
    strategies = data.ordered_unique("strategy")
    fig, axes = plt.subplots(1, len(dtypes), figsize=(max(5.5, 1.1 * len(cells) + 3) * len(dtypes), 4.0),
                             squeeze=False)
    drawn: dict[str, bool] = {}
    skipped = 0
    for ax, dtype in zip(axes[0], dtypes):
        width = 0.8 / max(1, len(strategies))
        for k, s in enumerate(strategies):
            xs, ys = [], []
            for i, c in enumerate(cells):
                rows = [r for r in data.rows if r.get("dtype") == dtype and r.get("strategy") == s and _cell(r) == c]
                if not rows:
                    continue
                v = value_of(rows)
                if v is None or not math.isfinite(v) or (log and v <= 0):
                    skipped += 1
                    continue
                xs.append(i - 0.4 + width * (k + 0.5))
                ys.append(v)
            if xs:
                ax.plot(xs, ys, linestyle="none", marker=ctx.palette.marker(s), color=ctx.palette.colour(s),
                        markersize=6, label=s)
                drawn[s] = True
        if log:
            ax.set_yscale("log")
        ax.set_xticks(range(len(cells)))
        ax.set_xticklabels(cells, rotation=25, ha="right", fontsize=7)
        ax.set_ylabel(ylabel)
        ax.set_title(f"{dtype} ({', '.join(data.ordered_unique('backend'))})")
    handles = [plt.Line2D([], [], linestyle="none", marker=ctx.palette.marker(s), color=ctx.palette.colour(s),
                          label=s) for s in strategies if drawn.get(s)]
    fig.tight_layout()
    fig.legend(handles=handles, loc="upper center", bbox_to_anchor=(0.5, -0.02), ncol=min(4, max(1, len(handles))),
               frameon=False)
    figures.save(fig, ctx.out_dir, ctx.fig_prefix + stem)
    if skipped:
        caption += f" {skipped} point(s) without a finite positive value are not drawn."
    return Figure(ctx.fig_prefix + stem, title, caption)


def _segmented_findings(data: CsvData) -> list:
    """From the rows: each strategy's worst per-segment error, where it happened, and how many
    empty segments it got wrong."""
    worst: dict[str, tuple[float, str]] = {}
    wrong_empty: dict[str, int] = defaultdict(int)
    for r in data.rows:
        s, u = r.get("strategy", ""), num(r.get("max_ulps"))
        where = r.get("distribution", "")
        if not math.isnan(u) and (s not in worst or u > worst[s][0]):
            worst[s] = (u, where)
        if r.get("wrong_empty") not in (None, ""):
            wrong_empty[s] += int(num(r.get("wrong_empty")))
    if not worst:
        return []
    parts = [f"{s} {u:.3g}" + (f" ({w})" if w else "") for s, (u, w) in sorted(worst.items(), key=lambda t: -t[1][0])]
    text = "Measured in this run, the worst segment of each strategy in ulps: " + "; ".join(parts) + "."
    bad = [f"{s} {n}" for s, n in wrong_empty.items() if n]
    if bad:
        text += " Empty segments not summed to +0: " + ", ".join(bad) + "."
    return [Paragraph(text)]


def render_segmented_errors(run: Run, data: CsvData, ctx) -> list:
    for s in data.ordered_unique("strategy"):
        ctx.palette.style(s)
    blocks: list = [
        Heading("Segmented sums: per-segment error", 3, anchor=slug(run.label + "-segmented-errors")),
        Paragraph("What this shows: every strategy's sum of each segment against the exact MPFR sum of that "
                  "segment, in ulps (steps between representable values), per segment-size distribution. "
                  "prefix_difference (a global prefix sum, differenced) and reduceat are kept as pitfalls. "
                  "The y axis is 1 + ulps so that exact results show."),
        *_segmented_findings(data),
        _per_strategy_figure(run, data, ctx, lambda rs: 1 + max(num(r.get("max_ulps")) for r in rs),
                             "1 + max ulps over the segments", "segmented-max-ulps",
                             "Largest per-segment error (worst shape)",
                             "The worst segment of each cell, over the strategy's launch shapes."),
        _per_strategy_figure(run, data, ctx, lambda rs: 1 + max(num(r.get("p99_ulps")) for r in rs),
                             "1 + 99th percentile ulps", "segmented-p99-ulps",
                             "99th percentile of the per-segment error",
                             "The error distribution's tail over non-empty segments (worst shape)."),
    ]
    timed = [r for r in data.rows if r.get("fraction_of_roof", "") != ""]
    if timed:
        timed_data = CsvData(data.name, data.columns, timed)
        blocks.append(_per_strategy_figure(
            run, timed_data, ctx, lambda rs: max(num(r.get("fraction_of_roof")) for r in rs),
            "memory-bound time / measured time", "segmented-roof", "Throughput as a fraction of the memory-bound time",
            "Bytes (values read + offsets read + sums written) over the device-to-device copy bandwidth measured in "
            "the same run, divided by the median measured time; 1 is the roof. Best shape per strategy.",
            log=False))
    else:
        blocks.append(Paragraph("No times in this run (model backend): the throughput figure needs --backend cuda.",
                                "note"))
    cols = ["dtype", "distribution", "segments", "mean_size", "n", "strategy", "shape", "max_ulps", "p50_ulps",
            "p99_ulps", "wrong_empty", "gpu_equals_model", "ms", "fraction_of_roof", "distinct_runs", "note"]
    cols = [c for c in cols if c in data.columns]
    rows, flagged = [], set()
    text_cols = {"dtype", "distribution", "segments", "mean_size", "n", "strategy", "shape", "wrong_empty",
                 "gpu_equals_model", "distinct_runs", "note"}
    for i, r in enumerate(data.rows):
        rows.append([r.get(c, "") if c in text_cols else (_fmt(num(r.get(c))) if r.get(c, "") != "" else "")
                     for c in cols])
        ours = r.get("known_wrong") == "0" and r.get("where") not in ("gpu_peer", "external")
        if r.get("gpu_equals_model") == "0" or (ours and num(r.get("wrong_empty")) > 0):
            flagged.add(i)
    blocks.append(Table(cols, rows, "One row per (cell, strategy, shape). wrong_empty: empty segments whose sum is "
                        "not +0 (reduceat returns the next element: that is its pitfall); gpu_equals_model: 1 when "
                        "the GPU's bits equal the CPU model's for every segment. Red: a modelled kernel disagreeing "
                        "with its model, or a strategy not kept as a pitfall getting an empty segment wrong.",
                        alarm_rows=flagged))
    for where, who in (("gpu_peer", "CUB peer"), ("external", "of your subjects'")):
        wrong = [r for r in data.rows if r.get("where") == where and num(r.get("wrong_empty")) > 0]
        if wrong:
            blocks.append(Paragraph(f"{len(wrong)} {who} row(s) return something other than +0 for an empty "
                                    f"segment ({', '.join(sorted({r.get('strategy', '') for r in wrong}))}).", "alarm"))
    failed = [r for r in data.rows if r.get("note", "")]
    if failed:
        blocks.append(Paragraph(f"{len(failed)} call(s) of your subjects failed, e.g. {failed[0].get('strategy')}: "
                                f"{failed[0].get('note')}", "alarm"))
    if flagged:
        ctx.alarms.append(f"{run.label}/{data.name}: {len(flagged)} segmented row(s) with GPU-vs-model mismatches "
                          "or wrong empty segments.")
    return blocks


def render_segmented_determinism(run: Run, data: CsvData, ctx) -> list:
    cols = [c for c in ["dtype", "distribution", "segments", "mean_size", "strategy", "shapes",
                        "distinct_across_shapes", "runs", "distinct_across_runs", "declared", "measured",
                        "consistent"] if c in data.columns]
    shown_cols = cols + (["agreement"] if "measured" in cols and "declared" in cols else [])
    rows, bad = [], set()
    for i, r in enumerate(data.rows):
        # The class by the lab's rule from the row's own counts: one shape is never shape_invariant.
        measured = shown_class(r.get("measured", ""), r.get("shapes")) if r.get("measured") else ""
        agree = agreement(r.get("declared", ""), measured, r.get("shapes")) if measured else "failed"
        row = [measured if c == "measured" else r.get(c, "") for c in cols]
        if len(shown_cols) > len(cols):
            row.append(agree)
        rows.append(row)
        if r.get("consistent") == "0" or agree == "violated":
            bad.add(i)
    model = "model" in data.ordered_unique("backend")
    blocks: list = [
        Heading("Segmented sums: determinism measured vs declared", 3,
                anchor=slug(run.label + "-segmented-determinism")),
        Paragraph("What this shows: how many distinct bit patterns (all segments together) each strategy gave "
                  "across its launch shapes and across repeated runs of its first shape (runs), the class that "
                  "implies by the lab's rule (not_deterministic if runs differ; shape_invariant only if two or "
                  "more shapes ran and agreed; run_to_run otherwise: one shape shows no invariance) and the class "
                  "the strategy declares. agreement: matches, stronger (the variation the declaration allows was "
                  "not seen), one_shape (shape invariance declared, one shape ran: not measured) or violated "
                  "(red: a bug in the lab's strategies, a finding in your subjects). Your subjects' configurations "
                  "each run that many times; an empty class means a call failed."
                  + (" Model backend: the modelled GPU strategies' runs are evaluations of the order model (one "
                     "fixed order: the same bits by construction), so their classes are modelled, not measured on "
                     "a GPU." if model else "")),
        Table(shown_cols, rows, "One row per (cell, strategy).", alarm_rows=bad),
    ]
    old = recorded_one_shape_invariant(data.rows)
    if old:
        blocks.append(Paragraph(f"{old} row(s) of this run recorded shape_invariant for one shape (the study "
                                "before the rule applied to it); shown here as run_to_run, the most one shape "
                                "measures.", "note"))
    if bad:
        ctx.alarms.append(f"{run.label}/{data.name}: {len(bad)} strategy cell(s) less deterministic than declared.")
    return blocks


_BUCKET_COLOURS = ["#2ca02c", "#98df8a", "#bcbd22", "#ffbb78", "#ff7f0e", "#d62728", "#7f0000"]


def render_segmented_histogram(run: Run, data: CsvData, ctx) -> list:
    """Stacked shares of segments per ulp bucket, one bar per strategy (first shape), one panel per
    (dtype, distribution) of the first (segments, mean) cell."""
    buckets = data.ordered_unique("bucket")
    keys = list(dict.fromkeys((r.get("dtype", ""), r.get("distribution", "")) for r in data.rows))
    if not keys:
        return []
    ncol = min(4, len(keys))
    nrow = math.ceil(len(keys) / ncol)
    fig, axes = plt.subplots(nrow, ncol, figsize=(3.6 * ncol, 4.0 * nrow), squeeze=False)
    for ax in axes.flat[len(keys):]:
        ax.set_visible(False)
    for ax, (dtype, dist) in zip(axes.flat, keys):
        rows = [r for r in data.rows if r.get("dtype") == dtype and r.get("distribution") == dist]
        first_cell = (rows[0].get("segments"), rows[0].get("mean_size"), rows[0].get("seed"))
        rows = [r for r in rows if (r.get("segments"), r.get("mean_size"), r.get("seed")) == first_cell]
        first_shape: dict[str, str] = {}
        for r in rows:
            first_shape.setdefault(r.get("strategy", ""), r.get("shape", ""))
        strategies = list(first_shape)
        counts: dict[str, dict[str, float]] = defaultdict(dict)
        for r in rows:
            if r.get("shape") == first_shape[r.get("strategy", "")]:
                counts[r["strategy"]][r["bucket"]] = num(r.get("segments_in_bucket"))
        bottom = [0.0] * len(strategies)
        for b, colour in zip(buckets, _BUCKET_COLOURS):
            shares = []
            for s in strategies:
                total = sum(counts[s].values()) or 1.0
                shares.append(counts[s].get(b, 0.0) / total)
            ax.bar(range(len(strategies)), shares, bottom=bottom, color=colour, label=f"{b} ulps")
            bottom = [x + y for x, y in zip(bottom, shares)]
        ax.set_xticks(range(len(strategies)))
        ax.set_xticklabels(strategies, rotation=40, ha="right", fontsize=7)
        ax.set_ylim(0, 1)
        ax.set_title(f"{dtype} {dist} S={first_cell[0]} m={first_cell[1]}", fontsize=8)
        ax.set_ylabel("share of non-empty segments")
    fig.tight_layout()
    handles, labels = axes.flat[0].get_legend_handles_labels()
    fig.legend(handles, labels, loc="upper center", bbox_to_anchor=(0.5, -0.01), ncol=len(buckets), frameon=False)
    stem = ctx.fig_prefix + "segmented-ulp-histogram"
    figures.save(fig, ctx.out_dir, stem)
    return [
        Heading("Segmented sums: distribution of the per-segment error", 3,
                anchor=slug(run.label + "-segmented-histogram")),
        Paragraph("What this shows: for each strategy (its first launch shape), the share of non-empty segments "
                  "whose sum is exact (0 ulps), 1 ulp away, and so on."),
        Figure(stem, "Per-segment error buckets", "Stacked shares per ulp bucket; one panel per (dtype, size "
               "distribution), first (segments, mean size, seed) cell of the run."),
    ]


SEGMENTED_RENDERERS = {
    "segmented_errors.csv": render_segmented_errors,
    "segmented_determinism.csv": render_segmented_determinism,
    "segmented_ulp_histogram.csv": render_segmented_histogram,
}
