"""One renderer per CSV a study writes, keyed by the CSV's file name (`RENDERERS`).

A renderer takes (run, csv data, context) and returns report blocks (headings, text, figures,
tables). Adding a study's report is adding one function and one line to RENDERERS; a CSV with no
renderer is listed in the report as skipped. Labels and legends use the algorithm, dtype and
distribution names exactly as the CSV holds them (they come from the registry in code).
"""
from __future__ import annotations

import json
import math
import statistics
from collections import defaultdict
from dataclasses import dataclass, field
from pathlib import Path

from . import figures
from .document import Figure, Heading, Paragraph, Table, slug
from .figures import Palette, ZeroStrip, plt
from matplotlib.patches import Patch
from .run_folder import CsvData, Run, num


@dataclass
class Context:
    out_dir: Path
    fig_prefix: str                 # "figures/<run>-": stems of this run's figures
    palette: Palette
    # (run label, csv name, rows outside their bound, rows): the report's top line of checks.
    bound_checks: list[tuple[str, str, int, int]] = field(default_factory=list)
    # Failures any renderer wants at the top of the report, in red.
    alarms: list[str] = field(default_factory=list)


def _fmt(v: float, digits: int = 3) -> str:
    if math.isnan(v):
        return "nan"
    if math.isinf(v):
        return "inf" if v > 0 else "-inf"
    return f"{v:.{digits}g}"


def relative_bound(row: dict[str, str]) -> float:
    """The algorithm's bound relative to |exact sum|. The CSV's `bound` is absolute;
    |exact| = sum_abs / condition (both exact, rounded to double), falling back on |reference|
    (the correctly rounded sum) when the condition number is not finite."""
    bound = num(row.get("bound"))
    sum_abs, cond = num(row.get("sum_abs")), num(row.get("condition"))
    exact = sum_abs / cond if (math.isfinite(cond) and cond > 0 and sum_abs > 0) else abs(num(row.get("reference")))
    if bound == 0:
        return 0.0
    return bound / exact if exact > 0 else math.inf


def _median(values: list[float]) -> float:
    return statistics.median(values) if values else math.nan


def bound_violation_blocks(run: Run, data: CsvData, ctx: Context) -> list:
    """Rows with within_bound == 0: a result outside its algorithm's documented bound is a bug in
    the algorithm, the bound or the measurement, and the report says so loudly."""
    if "within_bound" not in data.columns:
        return []
    bad = [r for r in data.rows if r.get("within_bound", "").strip() not in ("1", "true")]
    ctx.bound_checks.append((run.label, data.name, len(bad), len(data.rows)))
    if not bad:
        return [Paragraph(f"All {len(data.rows)} rows of `{data.name}` are within their algorithm's "
                          "documented error bound.", "ok")]
    wanted = ["dtype", "dist", "requested_condition", "n", "seed", "algorithm", "value", "reference",
              "abs_error", "bound", "rel_error"]
    cols = [c for c in wanted if c in data.columns]
    rows = [[r.get(c, "") for c in cols] for r in bad[:200]]
    more = f" (first 200 of {len(bad)} shown)" if len(bad) > 200 else ""
    return [
        Paragraph(f"{len(bad)} of {len(data.rows)} rows of `{data.name}` are OUTSIDE their algorithm's "
                  "documented error bound: the algorithm, its bound or the measurement is wrong.", "alarm"),
        Table(cols, rows,
              f"Rows with within_bound = 0{more}.", alarm_rows=set(range(len(rows)))),
    ]


def _shared_legend(fig, palette: Palette, algorithms: list[str], extras: list) -> None:
    handles = [plt.Line2D([], [], color=palette.colour(a), marker=palette.marker(a), markersize=5, label=a)
               for a in algorithms]
    fig.legend(handles=handles + extras, loc="upper center", bbox_to_anchor=(0.5, 0.0),
               ncol=min(6, len(handles) + len(extras)), frameon=False)


def _zero_handle() -> plt.Line2D:
    return plt.Line2D([], [], color="0.3", marker="o", markerfacecolor="none", linestyle="none",
                      label="error = 0 (exact; row only separates algorithms)")


# --- error vs n --------------------------------------------------------------------------------

def render_error_vs_n(run: Run, data: CsvData, ctx: Context) -> list:
    algorithms = data.ordered_unique("algorithm")
    for a in algorithms:
        ctx.palette.style(a)
    dtypes, dists = data.ordered_unique("dtype"), data.ordered_unique("dist")
    backend = ", ".join(data.ordered_unique("backend"))
    seeds = len(data.ordered_unique("seed"))

    errors: dict[tuple, list[float]] = defaultdict(list)
    bounds: dict[tuple, list[float]] = defaultdict(list)
    special = zero_sum = 0
    for r in data.rows:
        rel = num(r.get("rel_error"))
        if math.isnan(rel):
            special += 1
            continue
        if math.isinf(rel):
            zero_sum += 1
            continue
        key = (r["dtype"], r["dist"], r["algorithm"], num(r["n"]))
        errors[key].append(rel)
        bounds[key].append(relative_bound(r))

    blocks: list = [
        Heading("Relative error vs n", 3, anchor=slug(run.label + "-error-vs-n")),
        Paragraph("What this shows: how each algorithm's error grows with the number of terms. "
                  "Recursive (serial) summation should grow about like n, or stall where the "
                  "accumulator stops absorbing the addends; pairwise like log n; Kahan and Neumaier stay "
                  "flat near u; fixed-point and exact sit at or below half an ulp. A dashed line in the "
                  "algorithm's colour is its documented worst-case bound for the same input, so the "
                  "solid line must stay under its dashed line."),
    ]
    for dtype in dtypes:
        blocks.append(_error_vs_n_figure(run, dtype, dists, algorithms, errors, bounds, seeds, backend, ctx))
    notes = []
    if special:
        notes.append(f"{special} rows with a NaN or Inf input or result (errors undefined) are not drawn.")
    if zero_sum:
        notes.append(f"{zero_sum} rows whose exact sum is 0 (relative error infinite) are not drawn.")
    if notes:
        blocks.append(Paragraph(" ".join(notes), "note"))
    blocks += _growth_fit_blocks(run, algorithms, dtypes, dists)
    blocks += bound_violation_blocks(run, data, ctx)
    return blocks


def _error_vs_n_figure(run, dtype, dists, algorithms, errors, bounds, seeds, backend, ctx) -> Figure:
    panels = [d for d in dists if any(k[0] == dtype and k[1] == d for k in errors)] or dists
    series = {}  # (dist, alg) -> (ns, median, lo, hi, bound median)
    positives, zero_algs = [], []
    for dist in panels:
        for a in algorithms:
            ns = sorted(k[3] for k in errors if k[:3] == (dtype, dist, a))
            if not ns:
                continue
            med = [_median(errors[(dtype, dist, a, n)]) for n in ns]
            lo = [min(errors[(dtype, dist, a, n)]) for n in ns]
            hi = [max(errors[(dtype, dist, a, n)]) for n in ns]
            bnd = [_median(bounds[(dtype, dist, a, n)]) for n in ns]
            series[(dist, a)] = (ns, med, lo, hi, bnd)
            positives += figures.finite_positive(med + lo + bnd)
            if any(m == 0 for m in med) and a not in zero_algs:
                zero_algs.append(a)
    smallest = min(positives) if positives else figures.UNIT_ROUNDOFF.get(dtype, 1e-16)
    largest = max(positives) if positives else smallest
    strip = ZeroStrip(smallest, largest, [a for a in algorithms if a in zero_algs])

    ncols = min(3, len(panels))
    nrows = math.ceil(len(panels) / ncols)
    fig, axes = plt.subplots(nrows, ncols, figsize=(4.4 * ncols, 3.4 * nrows), sharex=True, sharey=True,
                             squeeze=False)
    for ax in axes.flat[len(panels):]:
        ax.set_visible(False)
    for ax, dist in zip(axes.flat, panels):
        for a in algorithms:
            if (dist, a) not in series:
                continue
            ns, med, lo, hi, bnd = series[(dist, a)]
            colour, marker = ctx.palette.style(a)
            if seeds > 1:
                band = [(n, max(l, smallest), h) for n, l, h in zip(ns, lo, hi) if h > 0]
                if band:
                    ax.fill_between([b[0] for b in band], [b[1] for b in band], [b[2] for b in band],
                                    color=colour, alpha=0.12, lw=0)
            pos = [(n, m) for n, m in zip(ns, med) if m > 0]
            if pos:
                ax.plot([p[0] for p in pos], [p[1] for p in pos], color=colour, marker=marker, ms=3.5, lw=1.3)
            zeros = [n for n, m in zip(ns, med) if m == 0]
            if zeros:
                ax.plot(zeros, [strip.y(a)] * len(zeros), color=colour, marker=marker, ms=4,
                        markerfacecolor="none", linestyle="none")
            bpos = [(n, b) for n, b in zip(ns, bnd) if b > 0 and math.isfinite(b)]
            if bpos:
                ax.plot([p[0] for p in bpos], [p[1] for p in bpos], color=colour, lw=1.0, linestyle="--")
        ax.set_xscale("log", base=2)
        ax.set_yscale("log")
        ax.set_title(dist)
        ax.xaxis.set_tick_params(labelbottom=True)
    for ax in axes[:, 0]:
        ax.set_ylabel("relative error |ŝ − s| / |s|")
    for ax in axes.flat[:len(panels)]:
        ax.set_xlabel("n (terms)")
    strip.decorate(axes.flat[0])  # shared y: one call sets the limits of every panel
    for ax in axes.flat[1:len(panels)]:
        if strip.rows:
            ax.axhline(strip.line, color="0.5", lw=0.8)
    extras = [plt.Line2D([], [], color="0.3", linestyle="--", label="bound (same colour)")]
    if seeds > 1:
        extras.append(Patch(color="0.3", alpha=0.2, label=f"min–max over {seeds} seeds"))
    if strip.rows:
        extras.append(_zero_handle())
    _shared_legend(fig, ctx.palette, [a for a in algorithms if any(k[1] == a for k in series)], extras)
    fig.suptitle(f"{dtype}: relative error vs n  ({run.label}, backend {backend})", y=1.0)
    fig.tight_layout()
    stem = figures.save(fig, ctx.out_dir, f"{ctx.fig_prefix}error-vs-n-{slug(dtype)}")
    caption = (f"One panel per distribution, log–log axes. Solid line: median over {seeds} seed(s) of the "
               "relative error against the MPFR reference")
    caption += "; shaded band: min–max over the seeds" if seeds > 1 else ""
    caption += ". Dashed line, same colour: the algorithm's documented bound divided by |exact sum|"
    caption += " (not drawn where the bound is 0 or infinite)."
    if strip.rows:
        caption += (" Zero errors cannot sit on a log axis: hollow markers under the grey line mark medians "
                    "that are exactly 0 (" + ", ".join(strip.rows) + "); their height only separates "
                    "the algorithms.")
    return Figure(stem, f"{dtype}: relative error vs n", caption)


def _growth_fit_blocks(run: Run, algorithms: list[str], csv_dtypes: list[str], csv_dists: list[str]) -> list:
    fits = (run.summary or {}).get("growth_fits")
    if not isinstance(fits, list) or not fits:
        return [Paragraph("No growth fits in summary.json (the study did not finish, or an older run).", "note")]
    blocks: list = [Heading("Fitted growth exponents", 4)]
    # Rows and columns in the CSV's order (the figures' order), then anything only the summary has.
    dtypes = list(dict.fromkeys(csv_dtypes + [f.get("dtype", "") for f in fits]))
    dists = list(dict.fromkeys(csv_dists + [f.get("dist", "") for f in fits]))
    dtypes = [t for t in dtypes if any(f.get("dtype") == t for f in fits)]
    dists = [d for d in dists if any(f.get("dist") == d for f in fits)]
    algs = [a for a in algorithms if any(f.get("algorithm") == a for f in fits)]
    algs += [a for a in dict.fromkeys(f.get("algorithm", "") for f in fits) if a not in algs]
    by_key = {(f.get("dtype"), f.get("dist"), f.get("algorithm")): f for f in fits}
    for dtype in dtypes:
        rows = []
        for a in algs:
            row = [a]
            for d in dists:
                f = by_key.get((dtype, d, a))
                if f is None:
                    row.append("")
                elif f.get("exponent") is None:
                    row.append(f"— ({f.get('points', 0)} pts)")
                else:
                    ci = f.get("ci95") or [math.nan, math.nan]
                    r2 = f.get("r_squared")
                    row.append(f"{f['exponent']:.2f} [{ci[0]:.2f}, {ci[1]:.2f}]"
                               + (f" R²={r2:.2f}" if isinstance(r2, (int, float)) else ""))
            rows.append(row)
        blocks.append(Table(["algorithm"] + dists, rows,
                            f"{dtype}: exponent b of relative error ~ n^b, least squares on log–log axes over "
                            "all seeds, with its 95% confidence interval and R². b ≈ 1: grows like n; b ≈ 0: "
                            "flat (log n shows as a small b). — : too few nonzero errors to fit (exact results).",
                            numeric=False))
    return blocks


# --- error vs condition number -------------------------------------------------------------------

def render_error_vs_cond(run: Run, data: CsvData, ctx: Context) -> list:
    algorithms = data.ordered_unique("algorithm")
    for a in algorithms:
        ctx.palette.style(a)
    dtypes = data.ordered_unique("dtype")
    backend = ", ".join(data.ordered_unique("backend"))
    blocks: list = [
        Heading("Relative error vs condition number", 3, anchor=slug(run.label + "-error-vs-cond")),
        Paragraph("What this shows: on ill-conditioned sums (Ogita–Rump–Oishi generator) the relative "
                  "error of an ordinary sum is about u·cond: once cond passes 1/u no digit is left. A "
                  "compensated sum behaves like a sum in twice the precision, u + u²·cond, and an exact "
                  "sum stays at u or below whatever the condition number."),
    ]
    skipped = 0
    for dtype in dtypes:
        pts: dict[str, list[tuple[float, float, str]]] = defaultdict(list)
        for r in data.rows:
            if r.get("dtype") != dtype:
                continue
            cond, rel = num(r.get("condition")), num(r.get("rel_error"))
            if not (math.isfinite(cond) and cond > 0 and math.isfinite(rel)):
                skipped += 1
                continue
            pts[r["algorithm"]].append((cond, rel, r.get("requested_condition", r.get("condition"))))
        if pts:
            blocks.append(_error_vs_cond_figure(run, dtype, algorithms, pts, backend, ctx))
    if skipped:
        blocks.append(Paragraph(f"{skipped} rows with an infinite condition number (exact sum 0) or an "
                                "undefined error are not drawn.", "note"))
    blocks += bound_violation_blocks(run, data, ctx)
    return blocks


def _error_vs_cond_figure(run, dtype, algorithms, pts, backend, ctx) -> Figure:
    u = figures.UNIT_ROUNDOFF.get(dtype, 2.0 ** -53)
    algs = [a for a in algorithms if a in pts]
    positives = figures.finite_positive(rel for a in algs for _, rel, _ in pts[a])
    conds = [c for a in algs for c, _, _ in pts[a]]
    smallest = min(positives + [u]) if positives else u
    zero_algs = [a for a in algs if any(rel == 0 for _, rel, _ in pts[a])]
    strip = ZeroStrip(smallest, max(positives + [u * max(conds)]), zero_algs)

    fig, ax = plt.subplots(figsize=(7.5, 5.0))
    for a in algs:
        colour, marker = ctx.palette.style(a)
        p = pts[a]
        nz = [(c, r) for c, r, _ in p if r > 0]
        if nz:
            ax.plot([c for c, _ in nz], [r for _, r in nz], color=colour, marker=marker, ms=3, alpha=0.35,
                    linestyle="none")
        z = [c for c, r, _ in p if r == 0]
        if z:
            ax.plot(z, [strip.y(a)] * len(z), color=colour, marker=marker, ms=4, markerfacecolor="none",
                    linestyle="none", alpha=0.6)
        groups: dict[str, list[tuple[float, float]]] = defaultdict(list)
        for c, r, req in p:
            groups[req].append((c, r))
        med = sorted((_median([c for c, _ in g]), _median([r for _, r in g])) for g in groups.values())
        med = [(c, r) for c, r in med if r > 0]
        if len(med) > 1:
            ax.plot([c for c, _ in med], [r for _, r in med], color=colour, lw=1.3)
    lo, hi = min(conds), max(conds)
    xs = [lo * (hi / lo) ** (i / 200) for i in range(201)] if hi > lo else [lo, lo * 10]
    ax.plot(xs, [u * x for x in xs], color="k", lw=1.0, linestyle=":")
    ax.plot(xs, [u + u * u * x for x in xs], color="k", lw=1.0, linestyle="-.")
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlabel("condition number  Σ|xᵢ| / |Σxᵢ|  (measured)")
    ax.set_ylabel("relative error |ŝ − s| / |s|")
    strip.decorate(ax)
    extras = [plt.Line2D([], [], color="k", linestyle=":", label=f"u·cond (u = 2^{round(math.log2(u))})"),
              plt.Line2D([], [], color="k", linestyle="-.", label="u + u²·cond")]
    if strip.rows:
        extras.append(_zero_handle())
    _shared_legend(fig, ctx.palette, algs, extras)
    ax.set_title(f"{dtype}: relative error vs condition number  ({run.label}, backend {backend})")
    fig.tight_layout()
    stem = figures.save(fig, ctx.out_dir, f"{ctx.fig_prefix}error-vs-cond-{slug(dtype)}")
    caption = ("Every measurement as a faint point; the solid line joins, per requested condition number, "
               "the medians over seeds. Black dotted: u·cond; dash-dotted: u + u²·cond, with u the unit "
               f"roundoff of {dtype}.")
    if strip.rows:
        caption += (" Hollow markers under the grey line are errors exactly 0 (" + ", ".join(strip.rows) +
                    "); their height only separates the algorithms.")
    return Figure(stem, f"{dtype}: relative error vs condition number", caption)


# --- headline figures ------------------------------------------------------------------------------

def render_headlines(run: Run, data: CsvData, ctx: Context) -> list:
    flag = "matches"
    bad = {i for i, r in enumerate(data.rows)
           if flag in data.columns and r.get(flag, "").strip().lower() not in ("1", "true", "yes")}
    rows = [[r.get(c, "") for c in data.columns] for r in data.rows]
    blocks: list = [
        Heading("Headline figures re-measured", 3, anchor=slug(run.label + "-headlines")),
        Paragraph("What this shows: the seeds' textbook figures (10⁷ × 0.1f summed serially gives 1,087,937 "
                  "where a tree gives 1,000,000; 2²⁶ uniform floats stall at 16,777,216; a bfloat16 "
                  "accumulator stalls at ~256× the addend), measured again by this run and compared with "
                  "the value the seeds state."),
        Table(data.columns, rows, "Each row: the figure, the algorithm, the measured value (and its bits), "
              "the exact reference and the expected value; matches = 1 when they agree.",
              alarm_rows=bad),
    ]
    if bad:
        text = f"{len(bad)} of {len(rows)} headline figures in {run.label}/{data.name} do NOT match the stated value."
        ctx.alarms.append(text + " See the red rows below.")
        blocks.append(Paragraph(text, "alarm"))
    elif flag in data.columns:
        blocks.append(Paragraph(f"All {len(rows)} headline figures match.", "ok"))
    return blocks


# The registry: CSV file name -> renderer. One line per study output.
RENDERERS = {
    "error_vs_n.csv": render_error_vs_n,
    "error_vs_cond.csv": render_error_vs_cond,
    "headlines.csv": render_headlines,
}


def provenance_blocks(run: Run) -> list:
    rows = []
    for k, v in run.provenance.items():
        if isinstance(v, bool):
            text = "yes" if v else "no"
        elif isinstance(v, (dict, list)):
            text = json.dumps(v, ensure_ascii=False)
        elif v is None:
            text = "—"
        else:
            text = str(v)
        rows.append([k, text])
    blocks: list = [Heading("Provenance", 3, anchor=slug(run.label + "-provenance")),
                    Table(["field", "value"], rows, f"From `{run.path.name}/provenance.json`.", numeric=False)]
    if run.provenance.get("git_dirty") is True:
        blocks.append(Paragraph("The working tree had uncommitted changes when this run was made: the commit "
                                "alone does not reproduce it.", "note"))
    return blocks
