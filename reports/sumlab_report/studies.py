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
from matplotlib.colors import SymLogNorm
from .run_folder import CsvData, Run, num


@dataclass
class Context:
    out_dir: Path
    fig_prefix: str                 # "figures/<run>-": stems of this run's figures
    palette: Palette
    # (run label, csv name, rows outside their bound, rows): the report's top line of checks.
    bound_checks: list[tuple[str, str, int, int]] = field(default_factory=list)
    # (run label, csv name, rows per cause): the same rows by verdict cause (bound_tally), so the
    # top line says how many are within, and why the others are not judged.
    bound_tallies: list[tuple[str, str, dict[str, int]]] = field(default_factory=list)
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


def _verdict(row: dict[str, str]) -> str:
    """The row's bound verdict: the `verdict` column, or (runs older than it) within_bound 1/0."""
    v = row.get("verdict", "").strip()
    if v:
        return v
    flag = row.get("within_bound", "").strip()
    if flag in ("1", "true"):
        return "within"
    return "no_bound" if flag == "" else "exceeds"  # empty: no bound applied to the row


# The causes a row of a bound check falls under, in the order the report lists them, each with the
# words that follow its count. no_bound has two causes: no theorem for the subject at all (a user's
# subject, kind `external`, or a kernel the study lists in summary.json's `no_bound_claimed`), or a
# theorem whose condition fails at that n (the registry's bounds are +inf only there,
# core/error_bound.hpp). A run whose summary has no such list (made before it) reads as either,
# except for a subject with a finite bound on another row: it has a theorem, so its condition failed.
BOUND_CAUSES = (
    ("within", "within their bound"),
    ("exceeds", "OUTSIDE their bound"),
    ("no_bound_condition", "with no bound at their n (the theorem's condition fails there)"),
    ("no_bound_claimed", "with no bound claimed (a library peer without a proof here, or a user's subject: "
                         "the lab proves nothing about it)"),
    ("no_bound", "with no bound (a theorem's condition fails, or none is claimed for this subject)"),
    ("special_input", "with a NaN or Inf input (not judged: errors undefined)"),
    ("exact_overflow", "whose exact sum overflows (not judged)"),
    ("intermediate_overflow", "that overflowed although their exact sum is finite (not judged)"),
    ("failed", "failed calls (no result to judge; the note column says why)"),
)


def no_bound_claimed(run: Run) -> set[str] | None:
    """The subjects the run's study lists as claiming no bound at any n; None for a run made before
    the studies wrote the list."""
    names = (run.summary or {}).get("no_bound_claimed")
    return set(names) if isinstance(names, list) else None


def bound_tally(data: CsvData, claimed: set[str] | None = None) -> dict[str, int]:
    """Rows per cause (BOUND_CAUSES' keys; a verdict the report does not know is counted under its
    own name). `claimed`: no_bound_claimed(run); without it, a no-bound row of a subject that has a
    finite bound on another row is its theorem's condition failing, and the others either cause."""
    tells_subject = "backend" in data.columns or "kind" in data.columns
    def subject(r: dict[str, str]) -> str:
        return r.get("algorithm", "").split("[")[0]  # a user's configuration: name[label]

    with_theorem = {subject(r) for r in data.rows if _verdict(r) in ("within", "exceeds")}
    counts: dict[str, int] = defaultdict(int)
    for r in data.rows:
        v = _verdict(r)
        if v == "no_bound" and tells_subject:
            external = "external" in (r.get("backend", "").strip(), r.get("kind", "").strip())
            if external or (claimed is not None and subject(r) in claimed):
                v = "no_bound_claimed"
            elif claimed is not None or subject(r) in with_theorem:
                v = "no_bound_condition"
        counts[v] += 1
    return dict(counts)


def _where(row: dict[str, str]) -> str:
    """The cell a row measured, as "dtype float32, dist normal, n 1024, seed 3" (the columns it has)."""
    return ", ".join(f"{c} {row[c]}" for c in ("dtype", "dist", "requested_condition", "n", "seed") if row.get(c))


def farther_than_sum_abs(data: CsvData) -> list[dict[str, str]]:
    """Rows with no bound whose error is larger than sum|x| itself: a result with no correct digit at
    the inputs' own scale. No theorem of the lab covers these rows, so the report does not call them
    wrong; it shows the measurement at the top, where a reader deciding which sum to trust looks."""
    if "abs_error" not in data.columns or "sum_abs" not in data.columns:
        return []
    return [r for r in data.rows if _verdict(r) == "no_bound" and num(r.get("abs_error")) > num(r.get("sum_abs"))]


def tally_phrases(counts: dict[str, int]) -> list[str]:
    """Phrases such as "264 within their bound" for the causes present, in BOUND_CAUSES' order."""
    words = dict(BOUND_CAUSES)
    order = [k for k, _ in BOUND_CAUSES] + sorted(k for k in counts if k not in words)
    return [f"{counts[k]} {words.get(k, f'with verdict {k!r}')}" for k in order if counts.get(k)]


def bound_violation_blocks(run: Run, data: CsvData, ctx: Context) -> list:
    """Rows whose error exceeds their bound: a result outside a theorem's bound is a bug in the
    algorithm, the bound or the measurement, and the report says so loudly. The other rows are
    counted by cause (bound_tally): within, no bound (the theorem's condition fails for that n, or
    none is claimed), special inputs, overflows, failed calls; ✓ only when every row is within."""
    if "within_bound" not in data.columns and "verdict" not in data.columns:
        return []
    counts = bound_tally(data, no_bound_claimed(run))
    bad = [r for r in data.rows if _verdict(r) == "exceeds"]
    far = farther_than_sum_abs(data)
    far_blocks = []
    if far:
        def cell(r: dict[str, str]) -> str:
            return f"{r.get('algorithm')} ({_where(r)}) relative error {_fmt(num(r.get('rel_error')))}"
        worst = sorted(far, key=lambda r: -num(r.get("rel_error")))[:5]
        text = (f"{run.label}/{data.name}: {len(far)} measurement(s) with no proven bound lie farther from the "
                "exact sum than sum|x| (no correct digit at the inputs' scale); the worst: "
                + "; ".join(map(cell, worst)) + ".")
        ctx.alarms.append(text)
        far_blocks = [Paragraph(text, "alarm")]
    ctx.bound_checks.append((run.label, data.name, len(bad), len(data.rows)))
    ctx.bound_tallies.append((run.label, data.name, counts))
    if not bad:
        ratios = [(num(r.get("abs_error")) / num(r.get("bound")), r) for r in data.rows
                  if _verdict(r) == "within" and num(r.get("bound")) > 0]
        tight = ""
        if ratios:
            ratio, row = max(ratios, key=lambda t: t[0])
            tight = f" The closest to its bound: {row.get('algorithm')} ({_where(row)}) at {_fmt(ratio)} of it."
        within = counts.get("within", 0)
        if within == len(data.rows):
            return [Paragraph(f"All {within} rows of `{data.name}` are within their error bound." + tight, "ok")]
        others = tally_phrases({k: v for k, v in counts.items() if k != "within"})
        return far_blocks + [Paragraph(
            f"{within} of {len(data.rows)} rows of `{data.name}` are within their error bound and none is "
            f"outside it; the other {len(data.rows) - within}: " + "; ".join(others) + "." + tight)]
    wanted = ["dtype", "dist", "requested_condition", "n", "seed", "algorithm", "value", "reference",
              "abs_error", "bound", "rel_error"]
    cols = [c for c in wanted if c in data.columns]
    rows = [[r.get(c, "") for c in cols] for r in bad[:200]]
    more = f" (first 200 of {len(bad)} shown)" if len(bad) > 200 else ""
    return far_blocks + [
        Paragraph(f"{len(bad)} of {len(data.rows)} rows of `{data.name}` are OUTSIDE their algorithm's "
                  "error bound: the algorithm, its bound or the measurement is wrong. All its rows: "
                  + "; ".join(tally_phrases(counts)) + ".", "alarm"),
        Table(cols, rows,
              f"Rows whose error exceeds their bound{more}.", alarm_rows=set(range(len(rows)))),
    ]


def render_table(run: Run, data: CsvData, ctx: Context) -> list:
    """A CSV without a renderer of its own (a new family's study, before it has one): the bound check
    where it has a verdict, then the table as the lab wrote it (the first 200 rows)."""
    more = f" (the first 200 of {len(data.rows)} rows)" if len(data.rows) > 200 else ""
    return [Heading(f"{data.name}", 3), *bound_violation_blocks(run, data, ctx),
            Table(data.columns, [[r.get(c, "") for c in data.columns] for r in data.rows[:200]],
                  f"`{data.name}` as written by the study{more}; no figure is drawn for it yet.")]


# summary.json's growth fits. A fit from before the per-n median (no "basis" key) was fitted to every
# seed's row pooled; its counts are taken from the CSV here, and the lab's present rules (3 distinct
# n at least) applied to it.
_POOLED_BASIS = "all seeds' rows pooled, each row with a positive finite error one point (a run made before the per-n median)"
_NO_FIT = {  # none_because -> (table cell, sentence)
    "correctly_rounded": ("correctly rounded", "its bound is a correctly rounded result's: the error is one final "
                          "rounding at every n, so a slope would fit noise"),
    "failed": ("every call failed", "every call failed"),
    "no_finite_error": ("no finite error", "no finite error (NaN/Inf inputs or an exact sum of 0)"),
    "all_zero": ("exact at every n", "exact at every n and seed"),
    "fewer_than_3_n": ("fewer than 3 n", "fewer than 3 sizes with a nonzero error on the fit's basis"),
}


def _fit_entries(run: Run, data: CsvData) -> list[dict]:
    """summary.json's growth fits with what each rests on: basis, the range and number of n with a
    nonzero error, the counts of rows, and none_because when there is no exponent."""
    fits = (run.summary or {}).get("growth_fits")
    if not isinstance(fits, list):
        return []
    rows_of: dict[tuple, list] = defaultdict(list)
    for r in data.rows:
        rows_of[(r.get("dtype"), r.get("dist"), r.get("algorithm"))].append(r)
    out = []
    for f in fits:
        e = dict(f)
        if "basis" not in f:
            rows = rows_of.get((f.get("dtype"), f.get("dist"), f.get("algorithm")), [])
            failed = [r for r in rows if _verdict(r) == "failed"]
            errs = [(num(r.get("n")), num(r.get("rel_error"))) for r in rows if _verdict(r) != "failed"]
            finite = [(n, x) for n, x in errs if math.isfinite(x)]
            ns = sorted({n for n, x in finite if x > 0})
            e.update(basis=_POOLED_BASIS, rows=len(rows), failed_rows=len(failed),
                     nonfinite_rows=len(errs) - len(finite), zero_rows=sum(1 for _, x in finite if x == 0),
                     sizes=len({num(r.get("n")) for r in rows}), distinct_n=len(ns),
                     n_min=ns[0] if ns else None, n_max=ns[-1] if ns else None, none_because=None)
            if f.get("exponent") is None or len(ns) < 3:
                e.update(exponent=None, ci95=None, r_squared=None)
                e["none_because"] = ("failed" if rows and len(failed) == len(rows) else
                                     "no_finite_error" if not finite else
                                     "all_zero" if not ns else "fewer_than_3_n")
        out.append(e)
    return out


def _n_label(n) -> str:
    if not isinstance(n, (int, float)) or not math.isfinite(n):
        return "?"
    k = round(math.log2(n)) if n > 0 else 0
    return f"2^{k}" if n > 0 and 2.0 ** k == n else f"{n:.0f}" if n < 1e6 else f"{n:.3g}"


def _n_range(e: dict) -> str:
    """Such as "11 n in 2^4–2^20": the n with a nonzero error, which the fit rests on."""
    k = e.get("distinct_n", 0)
    if not k:
        return "no n with a nonzero error"
    if k == 1:
        return f"only n = {_n_label(e.get('n_min'))}"
    return f"{k} n in {_n_label(e.get('n_min'))}–{_n_label(e.get('n_max'))}"


def _no_fit_reason(e: dict, sentence: bool = False) -> str:
    why = e.get("none_because") or ""
    cell, text = _NO_FIT.get(why, (why or "no fit", why or "no fit"))
    return text if sentence else cell


# The summary's growth groups: (words, lowest b, highest b) as half-open intervals [lo, hi).
_GROWTH_GROUPS = (("grew like n^0.5 or faster", 0.5, math.inf),
                  ("grew more slowly (0.1 ≤ b < 0.5)", 0.1, 0.5),
                  ("stayed flat or fell (b < 0.1)", -math.inf, 0.1))


def _growth_group(ci) -> str | None:
    """The group whose interval holds the whole 95% confidence interval, or None."""
    if not isinstance(ci, (list, tuple)) or len(ci) != 2:
        return None
    lo, hi = ci
    for words, g_lo, g_hi in _GROWTH_GROUPS:
        if g_lo <= lo and hi < g_hi:
            return words
    return None


def _b_span(es: list[dict]) -> str:
    bs = sorted(e["exponent"] for e in es)
    return f"b {bs[0]:.2f}" if len(bs) == 1 else f"b {bs[0]:.2f} to {bs[-1]:.2f}"


def _growth_findings(run: Run, data: CsvData, dtypes: list[str]) -> list:
    """What the fits of this run say, per dtype: an algorithm is placed in a growth group only when
    the whole 95% confidence interval of every distribution's fit lies inside that group (shown
    with the median exponent over the distributions); otherwise the report says it cannot tell."""
    fits = _fit_entries(run, data)
    if not fits:
        return []
    lines = []
    for dtype in dtypes:
        fitted: dict[str, list[dict]] = defaultdict(list)
        unfitted: dict[str, list[dict]] = defaultdict(list)
        for e in fits:
            if e.get("dtype") == dtype:
                (fitted if e.get("exponent") is not None else unfitted)[e.get("algorithm", "")].append(e)
        placed: dict[str, list[tuple[float, str]]] = defaultdict(list)
        wide, split = [], []
        for a, es in fitted.items():
            groups = {_growth_group(e.get("ci95")) for e in es}
            if None in groups:
                wide.append(a)
            elif len(groups) > 1:
                split.append(a)
            else:
                placed[groups.pop()].append((statistics.median(e["exponent"] for e in es), a))
        parts = []
        for words, *_ in _GROWTH_GROUPS:
            if placed[words]:
                parts.append(f"{words}: " + ", ".join(f"{a} {b:.2f}" for b, a in sorted(placed[words], reverse=True)))
        if wide:
            parts.append("95% CI too wide to tell which group: " + ", ".join(f"{a} ({_b_span(fitted[a])})" for a in wide))
        if split:
            parts.append("in different groups for different distributions: "
                         + ", ".join(f"{a} ({_b_span(fitted[a])})" for a in split))
        only_unfitted = [a for a in unfitted if a not in fitted]
        if only_unfitted:
            reasons = [f"{a} ({'; '.join(dict.fromkeys(_no_fit_reason(e) for e in unfitted[a]))})"
                       for a in only_unfitted]
            parts.append("no fit: " + ", ".join(reasons))
        if parts:
            lines.append(f"{dtype} — " + "; ".join(parts) + ".")
    if not lines:
        return []
    bases = list(dict.fromkeys(e.get("basis", "") for e in fits))
    return [Paragraph("Measured in this run (exponent b of relative error ∝ n^b; basis: "
                      + " / ".join(bases) + "; an algorithm is placed in a group only when the whole 95% confidence "
                      "interval of each distribution's fit lies inside that group, and shown with the median b over "
                      "the distributions; the table below has each fit): " + " ".join(lines))]


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
        Paragraph("What this shows: each algorithm's relative error against the exact (MPFR) sum as the "
                  "number of terms grows. A dashed line in the algorithm's colour is its error bound for "
                  "the same input (core/error_bound.hpp: a theorem, or no line where the theorem's "
                  "condition fails for that n), so a solid line above its dashed line is a bug."),
    ] + _growth_findings(run, data, dtypes)
    for dtype in dtypes:
        if any(k[0] == dtype for k in errors):
            blocks.append(_error_vs_n_figure(run, dtype, dists, algorithms, errors, bounds, seeds, backend, ctx))
        else:
            blocks.append(Paragraph(f"{dtype}: no row has a finite error (every call failed, or every input or "
                                    "exact sum was special): no figure.", "note"))
    notes = []
    if special:
        notes.append(f"{special} rows with a NaN or Inf input or result (errors undefined) are not drawn.")
    if zero_sum:
        notes.append(f"{zero_sum} rows whose exact sum is 0 (relative error infinite) are not drawn.")
    if notes:
        blocks.append(Paragraph(" ".join(notes), "note"))
    blocks += _growth_fit_blocks(run, data, algorithms, dtypes, dists)
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
    # One row of panels per family of sums (one colour and marker per algorithm, the same in every
    # figure), one column per distribution; every panel on the same axes.
    families = figures.by_family([a for a in algorithms if any(k[1] == a for k in series)])
    slots = {a: i for _, members in families for i, a in enumerate(m for m in members if m in zero_algs)}
    strip = ZeroStrip(smallest, largest, [a for a in algorithms if a in zero_algs], slots)

    ncols, nrows = len(panels), len(families)
    fig, axes = plt.subplots(nrows, ncols, figsize=(3.0 * ncols + 2.4, 2.5 * nrows + 0.6), sharex=True,
                             sharey=True, squeeze=False)
    for row, (family, members) in enumerate(families):
        for col, dist in enumerate(panels):
            ax = axes[row][col]
            for a in members:
                if (dist, a) in series:
                    _draw_error_series(ax, series[(dist, a)], ctx.palette.style(a), strip, a, seeds, smallest)
            ax.set_xscale("log", base=2)
            ax.set_yscale("log")
            if row == 0:
                ax.set_title(dist)
            if col == 0:
                ax.set_ylabel(f"{family}\nrelative error")
            if row == nrows - 1:
                ax.set_xlabel("n (terms)")
        handles = [plt.Line2D([], [], color=ctx.palette.colour(a), marker=ctx.palette.marker(a), markersize=5,
                              label=a) for a in members]
        axes[row][-1].legend(handles=handles, loc="center left", bbox_to_anchor=(1.02, 0.5), frameon=False,
                             fontsize=7)
    strip.decorate(axes[0][0], label=False)  # shared y: one call sets the limits and ticks of every panel
    for ax in axes.flat:
        if strip.rows:
            ax.axhline(strip.line, color="0.5", lw=0.8)
    extras = [plt.Line2D([], [], color="0.3", linestyle="--", label="its bound (dashed, same colour)")]
    if seeds > 1:
        extras.append(Patch(color="0.3", alpha=0.2, label=f"min–max over {seeds} seeds"))
    if strip.rows:
        extras.append(_zero_handle())
    fig.legend(handles=extras, loc="upper center", bbox_to_anchor=(0.5, 0.0), ncol=len(extras), frameon=False)
    fig.suptitle(f"{dtype}: relative error vs n  ({run.label}, backend {backend})", y=1.0)
    fig.tight_layout()
    stem = figures.save(fig, ctx.out_dir, f"{ctx.fig_prefix}error-vs-n-{slug(dtype)}")
    caption = (f"One row per family of sums, one column per distribution, log–log axes shared by every panel. "
               f"Solid line: median over {seeds} seed(s) of the relative error against the MPFR reference")
    caption += "; shaded band: min–max over the seeds" if seeds > 1 else ""
    caption += ". Dashed line, same colour: the algorithm's proven bound divided by |exact sum|"
    caption += " (not drawn where the bound is 0 or no bound holds)."
    if strip.rows:
        caption += (" Zero errors cannot sit on a log axis: hollow markers in the strip labelled 0, under the "
                    "grey line, mark medians that are exactly 0 (" + ", ".join(strip.rows) + "); their height "
                    "only separates the algorithms.")
    return Figure(stem, f"{dtype}: relative error vs n", caption)


def _draw_error_series(ax, s, style, strip, a, seeds, smallest) -> None:
    ns, med, lo, hi, bnd = s
    colour, marker = style
    if seeds > 1:
        band = [(n, max(l, smallest), h) for n, l, h in zip(ns, lo, hi) if h > 0]
        if band:
            ax.fill_between([b[0] for b in band], [b[1] for b in band], [b[2] for b in band], color=colour,
                            alpha=0.12, lw=0)
    pos = [(n, m) for n, m in zip(ns, med) if m > 0]
    if pos:
        ax.plot([p[0] for p in pos], [p[1] for p in pos], color=colour, marker=marker, ms=3.5, lw=1.3)
    zeros = [n for n, m in zip(ns, med) if m == 0]
    if zeros:
        ax.plot(zeros, [strip.y(a)] * len(zeros), color=colour, marker=marker, ms=4, markerfacecolor="none",
                linestyle="none")
    bpos = [(n, b) for n, b in zip(ns, bnd) if b > 0 and math.isfinite(b)]
    if bpos:
        ax.plot([p[0] for p in bpos], [p[1] for p in bpos], color=colour, lw=1.0, linestyle="--")


def _growth_fit_cell(f: dict) -> str:
    extra = []
    if f.get("zero_rows"):
        extra.append(f"{f['zero_rows']} of {f.get('rows', '?')} rows exact")
    if f.get("failed_rows"):
        extra.append(f"{f['failed_rows']} failed")
    if f.get("nonfinite_rows"):
        extra.append(f"{f['nonfinite_rows']} NaN/Inf")
    tail = "".join(f", {x}" for x in extra)
    if f.get("exponent") is None:
        why = _no_fit_reason(f)
        return f"— {why}" + (f" ({_n_range(f)}{tail})" if f.get("none_because") == "fewer_than_3_n" else "")
    ci = f.get("ci95") or [math.nan, math.nan]
    r2 = f.get("r_squared")
    return (f"{f['exponent']:.2f} [{ci[0]:.2f}, {ci[1]:.2f}]" + (f" R²={r2:.2f}" if isinstance(r2, (int, float)) else "")
            + f"; {_n_range(f)}{tail}")


def _growth_fit_blocks(run: Run, data: CsvData, algorithms: list[str], csv_dtypes: list[str],
                       csv_dists: list[str]) -> list:
    fits = _fit_entries(run, data)
    if not fits:
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
                row.append("" if f is None else _growth_fit_cell(f))
            rows.append(row)
        mine = [f for f in fits if f.get("dtype") == dtype]
        bases = " / ".join(dict.fromkeys(f.get("basis", "") for f in mine))
        why = [f"“{cell}”: {text}" for key, (cell, text) in _NO_FIT.items()
               if any(f.get("none_because") == key for f in mine)]
        blocks.append(Table(["algorithm"] + dists, rows,
                            f"{dtype}: exponent b of relative error ~ n^b, least squares on log–log axes (basis: "
                            f"{bases}), with its 95% confidence interval, R², and the n it rests on (those "
                            "with a nonzero error on that basis; rows with an error of exactly 0, failed calls and "
                            "NaN/Inf errors counted where there are any). b ≈ 1: grows like n; b ≈ 0: flat (log n "
                            "shows as a small b)." + (" — : no fit; " + "; ".join(why) + "." if why else ""),
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
        Paragraph("What this shows: the relative error of each algorithm on ill-conditioned sums "
                  "(Ogita–Rump–Oishi generator) against their measured condition number Σ|x|/|Σx|."),
    ] + _condition_findings(data, dtypes)
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


def _condition_findings(data: CsvData, dtypes: list[str]) -> list:
    """Per dtype and algorithm, from the rows: the largest condition number up to which the
    relative error stayed within 2u (every bit but the last right), and the smallest at which it
    reached 1 (no correct digit)."""
    lines = []
    for dtype in dtypes:
        u = figures.UNIT_ROUNDOFF.get(dtype, 2.0 ** -53)
        per_alg: dict[str, list[tuple[float, float]]] = defaultdict(list)
        for r in data.rows:
            cond, rel = num(r.get("condition")), num(r.get("rel_error"))
            if r.get("dtype") == dtype and math.isfinite(cond) and cond > 0 and not math.isnan(rel):
                per_alg[r["algorithm"]].append((cond, rel))
        parts = []
        for a, pts in per_alg.items():
            pts.sort()
            full = [c for c, _ in pts]
            kept = max((c for c, rel in pts if all(r2 <= 2 * u for c2, r2 in pts if c2 <= c)), default=None)
            lost = min((c for c, rel in pts if rel >= 1), default=None)
            text = f"{a}: ≤ 2u up to {_fmt(kept, 2) if kept else 'no condition tried'}"
            text += f", all digits lost from {_fmt(lost, 2)}" if lost else f", never lost every digit (to {_fmt(max(full), 2)})"
            parts.append(text)
        if parts:
            lines.append(f"{dtype} — " + "; ".join(parts) + ".")
    if not lines:
        return []
    return [Paragraph("Measured in this run (condition numbers as measured): " + " ".join(lines))]


def _quantile(values: list[float], q: float) -> float:
    v = sorted(values)
    if not v:
        return math.nan
    i = q * (len(v) - 1)
    lo, hi = math.floor(i), math.ceil(i)
    return v[lo] + (v[hi] - v[lo]) * (i - lo)


def _error_vs_cond_figure(run, dtype, algorithms, pts, backend, ctx) -> Figure:
    u = figures.UNIT_ROUNDOFF.get(dtype, 2.0 ** -53)
    algs = [a for a in algorithms if a in pts]
    positives = figures.finite_positive(rel for a in algs for _, rel, _ in pts[a])
    conds = [c for a in algs for c, _, _ in pts[a]]
    smallest = min(positives + [u]) if positives else u
    zero_algs = [a for a in algs if any(rel == 0 for _, rel, _ in pts[a])]
    families = figures.by_family(algs)
    slots = {a: i for _, members in families for i, a in enumerate(m for m in members if m in zero_algs)}
    strip = ZeroStrip(smallest, max(positives + [u * max(conds)]), zero_algs, slots)

    # One panel per family of sums, on shared axes.
    ncols = min(3, len(families))
    nrows = math.ceil(len(families) / ncols)
    fig, axes = plt.subplots(nrows, ncols, figsize=(4.6 * ncols, 3.6 * nrows + 0.5), sharex=True, sharey=True,
                             squeeze=False)
    for ax in axes.flat[len(families):]:
        ax.set_visible(False)
    lo, hi = min(conds), max(conds)
    xs = [lo * (hi / lo) ** (i / 200) for i in range(201)] if hi > lo else [lo, lo * 10]
    for ax, (family, members) in zip(axes.flat, families):
        for a in members:
            _draw_cond_series(ax, pts[a], ctx.palette.style(a), strip, a)
        ax.plot(xs, [u * x for x in xs], color="k", lw=1.0, linestyle=":")
        ax.plot(xs, [u + u * u * x for x in xs], color="k", lw=1.0, linestyle="-.")
        ax.set_xscale("log")
        ax.set_yscale("log")
        ax.set_title(family)
        ax.legend(handles=[plt.Line2D([], [], color=ctx.palette.colour(a), marker=ctx.palette.marker(a),
                                      markersize=4, label=a) for a in members],
                  loc="upper left", fontsize=7, frameon=False)
        ax.xaxis.set_tick_params(labelbottom=True)
    for ax in axes[:, 0]:
        ax.set_ylabel("relative error |ŝ − s| / |s|")
    for ax in axes.flat[:len(families)]:
        ax.set_xlabel("condition number Σ|xᵢ| / |Σxᵢ| (measured)")
    strip.decorate(axes[0][0], label=False)
    for ax in axes.flat[:len(families)]:
        if strip.rows:
            ax.axhline(strip.line, color="0.5", lw=0.8)
    extras = [plt.Line2D([], [], color="k", linestyle=":", label=f"u·cond (u = 2^{round(math.log2(u))})"),
              plt.Line2D([], [], color="k", linestyle="-.", label="u + u²·cond"),
              Patch(color="0.3", alpha=0.2, label="25–75% of the seeds")]
    if strip.rows:
        extras.append(_zero_handle())
    fig.legend(handles=extras, loc="upper center", bbox_to_anchor=(0.5, 0.0), ncol=len(extras), frameon=False)
    fig.suptitle(f"{dtype}: relative error vs condition number  ({run.label}, backend {backend})", y=1.0)
    fig.tight_layout()
    stem = figures.save(fig, ctx.out_dir, f"{ctx.fig_prefix}error-vs-cond-{slug(dtype)}")
    caption = ("One panel per family of sums. Every measurement as a faint point; the solid line joins, per "
               "requested condition number, the median over the seeds of the measured condition and of the "
               "error, and the band spans their 25–75% quantiles. Black dotted: u·cond; dash-dotted: "
               f"u + u²·cond, with u the unit roundoff of {dtype}. Past cond ≈ 1/u a sum may cancel to exactly "
               "0, a relative error of exactly 1: the lines that drop to 1 and climb again are such results, not "
               "a recovery of accuracy.")
    if strip.rows:
        caption += (" Hollow markers in the strip labelled 0, under the grey line, are errors exactly 0 (" +
                    ", ".join(strip.rows) + "); their height only separates the algorithms.")
    return Figure(stem, f"{dtype}: relative error vs condition number", caption)


def _draw_cond_series(ax, p, style, strip, a) -> None:
    colour, marker = style
    nz = [(c, r) for c, r, _ in p if r > 0]
    if nz:
        ax.plot([c for c, _ in nz], [r for _, r in nz], color=colour, marker=marker, ms=3, alpha=0.3,
                linestyle="none")
    z = [c for c, r, _ in p if r == 0]
    if z:
        ax.plot(z, [strip.y(a)] * len(z), color=colour, marker=marker, ms=4, markerfacecolor="none",
                linestyle="none", alpha=0.6)
    groups: dict[str, list[tuple[float, float]]] = defaultdict(list)
    for c, r, req in p:
        groups[req].append((c, r))
    rows = []
    for g in groups.values():
        errs = [r for _, r in g if r > 0]
        if errs:
            rows.append((_median([c for c, _ in g]), _median(errs), _quantile(errs, 0.25), _quantile(errs, 0.75)))
    rows.sort()
    if len(rows) > 1:
        ax.plot([r[0] for r in rows], [r[1] for r in rows], color=colour, lw=1.3)
        ax.fill_between([r[0] for r in rows], [r[2] for r in rows], [r[3] for r in rows], color=colour, alpha=0.15,
                        lw=0)


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


# --- determinism (sumlab study determinism) ----------------------------------------------------------
# Three CSVs (columns in data/README.md): determinism_classes.csv (one row per kernel: the table),
# determinism_inputs.csv (one row per kernel and input: the class matrix), determinism_runs.csv
# (one row per distinct value of each shape: the heatmaps and the atomic histograms).

_CLASS_LETTER = {"shape_invariant": "I", "run_to_run": "R", "not_deterministic": "N"}


def _size_label(n: str) -> str:
    v = int(num(n)) if math.isfinite(num(n)) else 0
    for e in range(10, 41):
        p = 1 << e
        if v == p:
            return f"2^{e}"
        if p < v <= p + 16:
            return f"2^{e}+{v - p}"
    return n


def _determinism_runs_made(run: Run) -> dict[str, int]:
    """Per kernel, the fewest runs one shape got, from determinism_runs.csv's `runs` (what ran):
    for a classes table written before it had runs_per_shape_min. Source model rows are one
    evaluation each (older studies wrote R); gpu_atomic's sampled orders count where nothing was
    measured beside them."""
    path = run.path / "determinism_runs.csv"
    if not path.is_file():
        return {}
    rows = run.read(path).rows
    measured = {r.get("kernel") for r in rows if r.get("source") == "measured"}
    fewest: dict[str, int] = {}
    for r in rows:
        source, kernel = r.get("source", ""), r.get("kernel", "")
        if source == "failed" or (source == "model_sampled" and kernel in measured):
            continue
        runs = 1.0 if source == "model" else num(r.get("runs"))
        if math.isfinite(runs):
            fewest[kernel] = min(fewest.get(kernel, int(runs)), int(runs))
    return fewest


def _determinism_nan_figures(run: Run) -> dict[str, tuple[int, bool]]:
    """Per kernel, (most NaN patterns of one input, whether any input has ulp figures), from
    determinism_inputs.csv: for a classes table written before it carried them (it showed 0 ulps
    where every pattern was NaN)."""
    path = run.path / "determinism_inputs.csv"
    if not path.is_file():
        return {}
    out: dict[str, tuple[int, bool]] = {}
    for r in run.read(path).rows:
        if r.get("measured") == "failed":
            continue
        nans = num(r.get("nan_patterns"))
        most, has = out.get(r.get("kernel", ""), (0, False))
        out[r.get("kernel", "")] = (max(most, int(nans) if math.isfinite(nans) else 0),
                                    has or math.isfinite(num(r.get("spread_ulps"))))
    return out


# Notes older studies wrote, and what they measured: a kernel without a launch shape (a library
# included) ran one configuration, so invariance was not measured (only a one-thread kernel has its
# order by construction); a modelled kernel's shape was one evaluation, not R runs.
_OLD_NOTES = {
    "takes no launch shape: one shape, invariance by construction":
        "takes no launch shape: one configuration ran; invariance across shapes not measured",
    "model: one evaluation per shape stands for every run":
        "modelled: the order model evaluated once per shape (one evaluation, not runs on a GPU)",
}


def render_determinism_classes(run: Run, data: CsvData, ctx: Context) -> list:
    backend = ", ".join(data.ordered_unique("backend"))
    summary = run.summary or {}
    new_format = "runs_per_shape_min" in data.columns
    made = {} if new_format else _determinism_runs_made(run)
    nan_figures = {} if "nan_patterns_max" in data.columns else _determinism_nan_figures(run)
    header = ["kernel", "kind", "declared", "measured", "agreement", "inputs at class", "shapes", "runs / shape",
              "witness", "within", "across", "NaN patterns", "spread", "max_abs", "model_mismatches", "note"]
    rows, bad = [], set()
    tally: dict[str, int] = defaultdict(int)
    modelled = 0
    for i, r in enumerate(data.rows):
        kernel = r.get("kernel", "")
        failed = r.get("measured") == "failed"
        is_model = r.get("source", "").startswith("model")
        measured = r.get("measured", "")
        agreement = r.get("agreement", "")
        tally[agreement] += 1
        if is_model and not failed:
            measured += " (modelled)"
            modelled += 1
        runs = r.get("runs_per_shape_min", "") if new_format else str(made.get(kernel, ""))
        nan_max, has_ulps = nan_figures.get(kernel, (None, True))
        nans = r.get("nan_patterns_max", "") if nan_max is None else str(nan_max)
        spread, max_abs = r.get("spread_ulps_max", ""), r.get("max_abs_ulps", "")
        if not has_ulps:
            spread = max_abs = "nan"
        note = _OLD_NOTES.get(r.get("note", ""), r.get("note", ""))
        figures_ = [r.get("shapes_max", ""), runs, r.get("witness", ""), r.get("distinct_within_shape_max", ""),
                    r.get("distinct_across_shapes_max", ""), nans, spread, max_abs]
        if failed:  # no class is claimed: no figures either (older studies wrote 0s)
            figures_ = ["", "", r.get("witness", ""), "", "", "", "", ""]
        rows.append([kernel, r.get("kind", ""), r.get("declared", ""), measured, agreement,
                     f"{r.get('inputs_at_measured', '')} of {r.get('inputs', '')}", *figures_,
                     r.get("model_mismatches", ""), note])
        if agreement == "violated" or num(r.get("model_mismatches")) > 0:
            bad.add(i)
    if not any(row[11] not in ("", "0") for row in rows):  # no NaN anywhere: the column says nothing
        header.pop(11)
        rows = [row[:11] + row[12:] for row in rows]
    held = tally["matches"] + tally["stronger"]
    counted = (f"Of {len(data.rows)} declared classes: {held} hold as far as measured ({tally['matches']} as "
               f"declared, {tally['stronger']} measured stronger), {tally['one_shape']} one_shape (one shape ran: "
               f"invariance not measured), {tally['failed']} failed (calls failed: no class), {tally['violated']} "
               "violated.")
    if modelled:
        counted += (f" {modelled} of the classes are modelled (model backend: the order model evaluated once per "
                    "shape, gpu_atomic's runs its sampled arrival orders): run-to-run behaviour on a GPU is not "
                    "measured by them.")
    if new_format:
        runs_text = ("runs / shape: the fewest runs one shape got over every input (R asked: "
                     f"{summary.get('runs_per_shape', '?')}; fewer, at least 2, where --max-shape-seconds "
                     "stopped a shape; 1 for a modelled kernel: one evaluation).")
    else:
        runs_text = ("runs / shape: the fewest runs one shape got, counted from determinism_runs.csv (this run's "
                     "tables predate that column and record the R asked for, "
                     f"{summary.get('runs_per_shape', '?')}, as runs_per_shape; --max-shape-seconds "
                     f"{summary.get('max_shape_seconds', '?')} stopped slower shapes after at least 2 runs; a "
                     "modelled kernel's shape is one evaluation).")
    blocks: list = [
        Heading("Determinism: measured against declared", 3, anchor=slug(run.label + "-determinism")),
        Paragraph("What this shows: for each GPU kernel and CPU peer, the determinism class its measurements "
                  "support, next to the class it declares, and the shapes and runs behind it. not_deterministic: "
                  "some launch shape (or thread count) gave more than one bit pattern over its runs; run_to_run: "
                  "one pattern per shape, but different shapes gave different bits (or only one shape ran); "
                  "shape_invariant: one pattern for every run of two or more shapes. "
                  "The least deterministic input decides (witness). 'stronger' means the variation the "
                  "declaration allows did not show up in these runs; 'violated' means the declaration is wrong; "
                  "'one_shape' means shape invariance is declared and the runs agree, but only one shape "
                  "(or configuration) was run, so invariance across shapes was not measured; 'failed' means "
                  "calls failed and no class is claimed. " + runs_text),
        Paragraph(counted, "alarm" if tally["violated"] or tally["failed"] else "text"),
        Table(header, rows, f"One row per kernel over every input of this run (backend {backend}). inputs at "
              "class: inputs whose own class is the one shown, of those classified; shapes: most shapes of one "
              "input; within / across: most distinct bit patterns in one shape / over all shapes; spread and "
              "max_abs in ulps of the correctly rounded sum (nan: every pattern NaN, no ulps). Red: a violated "
              "declaration or a GPU result the order model did not predict.",
              alarm_rows=bad, numeric=True),
    ]
    failed = [e for e in summary.get("expectations", []) if not e.get("ok")]
    if failed:
        text = "; ".join(f"{e.get('kernel')} expected {e.get('expected')}, measured {e.get('measured')}" for e in failed)
        ctx.alarms.append(f"Determinism classes in {run.label} differ from the issue's expectations: {text}.")
        blocks.append(Paragraph("Expectations not met: " + text + ".", "alarm"))
    elif summary.get("expectations"):
        how = "Modelled as expected" if backend == "model" else "As expected"
        blocks.append(Paragraph(how + ": " + ", ".join(f"{e.get('kernel')} {e.get('measured')}"
                                                       for e in summary["expectations"]) + ".", "ok"))
    if bad:
        ctx.alarms.append(f"{len(bad)} kernel(s) in {run.label}/{data.name} violate their declared determinism "
                          "class or disagree with the order model (red rows).")
    mm = summary.get("model_mismatches")
    if isinstance(mm, (int, float)) and mm > 0:
        ctx.alarms.append(f"{run.label}: {int(mm)} (kernel, shape) results on the GPU differ from the order model.")
    if summary.get("exact_vs_mpfr_mismatches"):
        ctx.alarms.append(f"{run.label}: core's exact sum disagreed with MPFR on "
                          f"{summary['exact_vs_mpfr_mismatches']} input(s).")
    if summary.get("not_measured"):
        blocks.append(Paragraph("Not measured on this backend: " + "; ".join(summary["not_measured"]) + ".", "note"))
    return blocks


def render_determinism_inputs(run: Run, data: CsvData, ctx: Context) -> list:
    kernels = data.ordered_unique("kernel")
    inputs = []
    for r in data.rows:
        key = (r.get("dtype", ""), r.get("dist", ""), r.get("n", ""))
        if key not in inputs:
            inputs.append(key)
    cell = {}
    modelled = False
    for r in data.rows:
        if r.get("measured") == "failed":  # no class, no counts: calls failed on this input
            text = "failed"
        else:
            letter = _CLASS_LETTER.get(r.get("measured", ""), "?")
            text = f"{letter} {r.get('distinct_across_shapes', '')}"
            if letter == "N":
                text = f"N {r.get('distinct_within_shape_max', '')}/{r.get('distinct_across_shapes', '')}"
            if num(r.get("nan_patterns")) > 0:
                text += f" ({r.get('nan_patterns')} NaN)"
            if r.get("source", "").startswith("model"):
                text += " m"
                modelled = True
        if r.get("agreement") == "violated":
            text += " !"
        cell[(r["kernel"], (r.get("dtype", ""), r.get("dist", ""), r.get("n", "")))] = text
    header = ["kernel"] + [f"{t} {d} {_size_label(n)}" for t, d, n in inputs]
    rows = [[k] + [cell.get((k, i), "") for i in inputs] for k in kernels]
    return [
        Heading("Determinism class per input", 4),
        Table(header, rows, "Measured class per kernel and input: I = shape_invariant, R = run_to_run, "
              "N = not_deterministic, followed by the number of distinct bit patterns over every shape (for N: "
              "most in one shape / over all shapes) and the NaN patterns among them; "
              + ("'m': modelled (the order model, one evaluation per shape); " if modelled else "")
              + "'failed': calls failed, no class; '!' marks a violated declaration.", numeric=False),
    ]


def _shape_row_label(r: dict[str, str]) -> str:
    mapping = {"grid_stride": "gs", "contiguous": "ct"}.get(r.get("mapping", ""), r.get("mapping", ""))
    return f"{r.get('block')} v{r.get('vector')} {mapping}"


def render_determinism_runs(run: Run, data: CsvData, ctx: Context) -> list:
    backend = ", ".join(data.ordered_unique("backend"))
    blocks: list = [Heading("Determinism: bits over launch shapes and runs", 4,
                            anchor=slug(run.label + "-determinism-runs"))]
    gpu = [r for r in data.rows if r.get("kind") == "gpu"]
    # The largest n per (dtype, dist): the figures use it (the tables in the CSVs hold every size).
    largest: dict[tuple, float] = {}
    for r in gpu:
        key = (r["dtype"], r["dist"])
        largest[key] = max(largest.get(key, 0.0), num(r["n"]))
    mismatches = [r for r in gpu if r.get("model_agrees") == "0" and r.get("kernel") != "gpu_atomic"]
    if mismatches:
        ctx.alarms.append(f"{len(mismatches)} GPU results in {run.label}/{data.name} differ from the order model's "
                          "prediction (model_agrees = 0).")
        cols = ["kernel", "dtype", "dist", "n", "shape", "hex", "model_hex"]
        blocks.append(Table(cols, [[r.get(c, "") for c in cols] for r in mismatches[:100]],
                            "GPU results the model did not predict (first 100).",
                            alarm_rows=set(range(min(100, len(mismatches))))))
    for (dtype, dist), n in largest.items():
        rows = [r for r in gpu if r["dtype"] == dtype and r["dist"] == dist and num(r["n"]) == n]
        # Sampled arrival orders stand for runs only where nothing was measured (the model backend).
        measured = {r["kernel"] for r in rows if r.get("source") != "model_sampled"}
        rows = [r for r in rows if r.get("source") != "model_sampled" or r["kernel"] not in measured]
        fig = _determinism_heatmaps(run, dtype, dist, rows, backend, ctx)
        if fig:
            blocks.append(fig)
    hist = _atomic_histograms(run, gpu, largest, backend, ctx)
    if hist:
        blocks.append(hist)
    blocks += _peer_table(data)
    return blocks


def _determinism_heatmaps(run, dtype, dist, rows, backend, ctx):
    # kernel -> (row label, grid) -> {ulps: count}
    cells: dict[str, dict[tuple, dict[float, int]]] = defaultdict(lambda: defaultdict(lambda: defaultdict(int)))
    for r in rows:
        if not r.get("grid"):
            continue
        u = num(r.get("ulps_from_rounded"))
        cells[r["kernel"]][(_shape_row_label(r), int(num(r["grid"])))][u] += int(num(r.get("count")) or 1)
    kernels = [k for k in cells if len({g for _, g in cells[k]}) > 1 or len({lbl for lbl, _ in cells[k]}) > 1]
    if not kernels:
        return None
    finite = [abs(u) for k in kernels for c in cells[k].values() for u in c if math.isfinite(u)]
    vmax = max(1.0, max(finite) if finite else 1.0)
    ncols = min(4, len(kernels))
    nrows = math.ceil(len(kernels) / ncols)
    fig, axes = plt.subplots(nrows, ncols, figsize=(3.9 * ncols, 3.9 * nrows), squeeze=False, layout="constrained")
    for ax in axes.flat[len(kernels):]:
        ax.set_visible(False)
    # Symmetric log colours: 1 ulp stays visible next to hundreds on cancelling inputs.
    norm = SymLogNorm(linthresh=1.0, vmin=-vmax, vmax=vmax, base=10)
    image = None
    for ax, k in zip(axes.flat, kernels):
        grids = sorted({g for _, g in cells[k]})
        labels = sorted({lbl for lbl, _ in cells[k]},
                        key=lambda s: (int(s.split()[0]), s.split()[1], s.split()[2]))
        mat = [[math.nan] * len(grids) for _ in labels]
        for (lbl, g), counts in cells[k].items():
            mode = max(counts.items(), key=lambda kv: kv[1])[0]
            i, j = labels.index(lbl), grids.index(g)
            mat[i][j] = mode
            txt = "nan" if math.isnan(mode) else f"{int(mode)}"
            if len(counts) > 1:
                txt += "*"
            ax.text(j, i, txt, ha="center", va="center", fontsize=5.5 if len(grids) * len(labels) > 40 else 7)
        image = ax.imshow(mat, cmap="RdBu_r", norm=norm, aspect="auto")
        ax.set_xticks(range(len(grids)), [str(g) for g in grids], rotation=45, fontsize=7)
        ax.set_yticks(range(len(labels)), labels, fontsize=6)
        ax.set_title(k, fontsize=9)
        ax.grid(False)
        ax.set_xlabel("grid (blocks)", fontsize=7)
    if image is not None:
        fig.colorbar(image, ax=axes.ravel().tolist(), shrink=0.6,
                     label="ulps from the correctly rounded sum (symmetric log scale)")
    n = int(max(num(r["n"]) for r in rows))
    fig.suptitle(f"{dtype} {dist} n={_size_label(str(n))}: result in ulps from the correctly rounded sum  "
                 f"({run.label}, backend {backend})")
    stem = figures.save(fig, ctx.out_dir, f"{ctx.fig_prefix}determinism-heatmap-{slug(dtype)}-{slug(dist)}")
    caption = ("One panel per GPU kernel; columns: grid size (blocks), rows: block size, elements per load (v) and "
               "mapping (gs = grid_stride, ct = contiguous); fields a kernel ignores are collapsed. Each cell is "
               "the signed distance in ulps between the kernel's result for that shape and the correctly rounded "
               "(MPFR) sum; white is exact. A '*' marks a shape whose runs gave more than one value (the most "
               "frequent is shown). Colours are on a symmetric log scale (linear within ±1 ulp). A run_to_run "
               "kernel shows a patchwork of colours, a shape_invariant one a single colour.")
    if backend == "model":
        caption += (" Model backend: deterministic kernels are the order model's values; gpu_atomic's cells are "
                    "the most frequent of the model's sampled arrival orders.")
    return Figure(stem, f"{dtype} {dist}: ulps from the correctly rounded sum over launch shapes", caption)


def _atomic_histograms(run, gpu, largest, backend, ctx):
    panels = []
    for (dtype, dist), n in largest.items():
        rows = [r for r in gpu if r.get("kernel") == "gpu_atomic" and r["dtype"] == dtype and r["dist"] == dist
                and num(r["n"]) == n]
        if not rows:
            continue
        by_shape: dict[str, dict[str, dict[float, int]]] = defaultdict(lambda: defaultdict(dict))
        for r in rows:
            by_shape[r["shape"]][r["source"]][num(r["ulps_from_rounded"])] = int(num(r["count"]))
        primary = "measured" if any("measured" in s for s in by_shape.values()) else "model_sampled"
        shape = max(by_shape, key=lambda s: (len(by_shape[s].get(primary, {})), s))
        panels.append((dtype, dist, n, shape, by_shape[shape]))
    if not panels:
        return None
    ncols = min(3, len(panels))
    nrows = math.ceil(len(panels) / ncols)
    fig, axes = plt.subplots(nrows, ncols, figsize=(4.6 * ncols, 3.3 * nrows), squeeze=False)
    for ax in axes.flat[len(panels):]:
        ax.set_visible(False)
    colours = {"measured": "#1f77b4", "model_sampled": "#ff7f0e"}
    for ax, (dtype, dist, n, shape, series) in zip(axes.flat, panels):
        sources = [s for s in ("measured", "model_sampled") if s in series]
        xs = sorted({u for s in sources for u in series[s] if math.isfinite(u)})
        span = (max(xs) - min(xs)) if xs else 0.0
        width = max(1.0, span / 60) * 0.8 / max(1, len(sources))
        for i, s in enumerate(sources):
            total = sum(series[s].values()) or 1
            ax.bar([x + (i - (len(sources) - 1) / 2) * width for x in xs],
                   [series[s].get(x, 0) / total for x in xs], width=width, color=colours[s],
                   label=f"{s} ({total} {'runs' if s == 'measured' else 'orders'})")
        ax.set_title(f"{dtype} {dist} n={_size_label(str(int(n)))}\n{shape}", fontsize=7.5)
        ax.set_xlabel("ulps from the correctly rounded sum")
        ax.set_ylabel("fraction")
        ax.legend(fontsize=7)
    fig.suptitle(f"gpu_atomic: run-to-run values  ({run.label}, backend {backend})", y=1.02)
    fig.tight_layout()
    stem = figures.save(fig, ctx.out_dir, f"{ctx.fig_prefix}determinism-atomic-histograms")
    caption = ("For each input (largest n), the gpu_atomic launch shape with the most distinct values: the fraction "
               "of runs giving each value, in ulps from the correctly rounded sum. ")
    caption += ("Blue: measured on the GPU; orange: the order model's block arrival orders drawn uniformly at random "
                "(the same partials, another order of the final atomicAdd chain)." if backend != "model" else
                "Model backend: every bar is the order model's sampled arrival orders (uniformly random block "
                "permutations), which stand in for runs.")
    return Figure(stem, "gpu_atomic: histogram of run-to-run values", caption)


def _peer_table(data: CsvData) -> list:
    peers = [r for r in data.rows if r.get("kind") == "cpu_peer"]
    if not peers:
        return []
    agg: dict[tuple, dict] = {}
    for r in peers:
        key = (r["kernel"], r["dtype"], r["dist"], r["n"], r.get("threads", ""))
        a = agg.setdefault(key, {"runs": r.get("runs", ""), "distinct": 0, "ulps": [], "ms": r.get("ms", "")})
        a["distinct"] += 1
        u = num(r.get("ulps_from_rounded"))
        if math.isfinite(u):
            a["ulps"].append(u)
    rows = []
    for (k, dtype, dist, n, threads), a in agg.items():
        lo = int(min(a["ulps"])) if a["ulps"] else "nan"
        hi = int(max(a["ulps"])) if a["ulps"] else "nan"
        rows.append([k, dtype, dist, _size_label(n), threads, a["runs"], str(a["distinct"]),
                     f"{lo}" if lo == hi else f"{lo} .. {hi}", a["ms"]])
    return [Heading("CPU peers by thread count", 4),
            Table(["peer", "dtype", "dist", "n", "threads", "runs", "distinct", "ulps", "ms"], rows,
                  "Each CPU peer, R runs per thread count on the host that ran the study: distinct bit patterns and "
                  "their range in ulps from the correctly rounded sum; ms is the median time of one run. More than "
                  "one pattern at one thread count is run-to-run non-determinism (TBB's work stealing, OpenMP's "
                  "combine order).")]


# The registry: CSV file name -> renderer. One line per study output.
RENDERERS = {
    "error_vs_n.csv": render_error_vs_n,
    "error_vs_cond.csv": render_error_vs_cond,
    "headlines.csv": render_headlines,
    "determinism_classes.csv": render_determinism_classes,
    "determinism_inputs.csv": render_determinism_inputs,
    "determinism_runs.csv": render_determinism_runs,
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
    cells = run.path / "cells.log"
    if run.summary is None and cells.is_file():  # a study writes summary.json after its last cell
        done = sum(1 for line in cells.read_text(encoding="utf-8").splitlines() if line.strip())
        blocks.append(Paragraph(f"This run did not finish: it has no summary.json, and cells.log lists {done} "
                                "finished cell(s). The tables and figures hold those cells only; the same command "
                                "with --resume completes it.", "alarm"))
    return blocks


# --- study variance: row kernels (row_variance.csv, row_softmax.csv, row_argmax.csv, row_verify.csv) ----

def _row_series_label(r: dict[str, str]) -> str:
    if r.get("layout") == "external":  # the user's subject: its name carries its configuration
        return f"{r.get('method', '')} (yours)"
    return f"{r.get('method', '')} ({r.get('layout', '')}/{r.get('block', '')})"


_ROW_LAYOUT_STYLE = {"warp_per_row": "-", "block_per_row": "--", "external": "-."}


def _row_subject_findings(data: CsvData) -> list:
    """The user's row subjects: calls that failed, and configurations whose repeated calls gave more
    than one output."""
    theirs = [r for r in data.rows if r.get("layout") == "external"]
    if not theirs:
        return []
    # A claim about repeated calls holds only over the cells whose calls all returned (no note, a
    # count of distinct outputs); a failed cell's calls stopped at the failure.
    failed = [r for r in theirs if r.get("note", "")]
    done = [r for r in theirs if not r.get("note", "") and r.get("distinct_outputs", "") != ""]
    varying = [r for r in done if num(r.get("distinct_outputs")) > 1]
    parts = [f"{len(theirs)} cell(s) of your subjects"]
    if done:
        parts.append(f"in the {len(done)} whose calls all returned, each configuration was called "
                     f"{', '.join(sorted({r.get('runs', '') for r in done}, key=lambda t: (len(t), t)))} times")
        if varying:
            parts.append("different outputs from the same input in " +
                         ", ".join(sorted({f"{r.get('method')} ({r.get('dtype')})" for r in varying})))
        else:
            parts.append("every one of them gave the same bits in every call")
    else:
        parts.append("none completed its calls: nothing is claimed about repeated calls")
    if failed:
        who = sorted({f"{r.get('method')} ({r.get('dtype')})" for r in failed})
        parts.append(f"{len(failed)} failed ({', '.join(who)}), e.g. {failed[0].get('method')}: "
                     f"{failed[0].get('note')}")
    return [Paragraph("Your subjects: " + "; ".join(parts) + ".", "alarm" if failed else "text")]


def _row_error_figure(run, data, ctx, x_col, x_label, y_col, y_label, stem, title, caption, categorical):
    """One panel per dtype: y_col (log) against x_col per (method, layout/block); colour = method,
    line style = layout. Non-positive values cannot sit on a log axis and are counted in the caption."""
    dtypes = data.ordered_unique("dtype")
    fig, axes = plt.subplots(1, len(dtypes), figsize=(5.2 * len(dtypes), 3.8), squeeze=False)
    skipped = 0
    labels_seen: dict[str, tuple] = {}
    for ax, dtype in zip(axes[0], dtypes):
        rows = [r for r in data.rows if r.get("dtype") == dtype]
        xs_text = list(dict.fromkeys(r.get(x_col, "") for r in rows))
        xpos = {t: (i if categorical else num(t)) for i, t in enumerate(xs_text)}
        series: dict[str, list] = defaultdict(list)
        for r in rows:
            series[_row_series_label(r)].append(r)
        for label, rs in series.items():
            method, layout = rs[0].get("method", ""), rs[0].get("layout", "")
            pts = sorted((xpos[r.get(x_col, "")], num(r.get(y_col))) for r in rs)
            good = [(x, y) for x, y in pts if y > 0 and math.isfinite(y)]
            skipped += len(pts) - len(good)
            if not good:
                continue
            style = dict(color=ctx.palette.colour(method), marker=ctx.palette.marker(method),
                         linestyle=_ROW_LAYOUT_STYLE.get(layout, ":"), markersize=4, lw=1.2)
            ax.plot([p[0] for p in good], [p[1] for p in good], label=label, **style)
            labels_seen[label] = style
        ax.set_yscale("log")
        if categorical:
            ax.set_xticks(range(len(xs_text)))
            ax.set_xticklabels([_fmt(num(t), 2) for t in xs_text])
        else:
            ax.set_xscale("log")
        ax.set_xlabel(x_label)
        ax.set_ylabel(y_label)
        ax.set_title(f"{dtype} ({', '.join(data.ordered_unique('backend'))})")
    handles = [plt.Line2D([], [], label=lab, **st) for lab, st in labels_seen.items()]
    fig.legend(handles=handles, loc="upper center", bbox_to_anchor=(0.5, 0.0), ncol=min(3, max(1, len(handles))),
               frameon=False)
    figures.save(fig, ctx.out_dir, ctx.fig_prefix + stem)
    if skipped:
        caption += f" {skipped} point(s) with a zero, negative or non-finite value are not drawn."
    return Figure(ctx.fig_prefix + stem, title, caption)


def _on_users_rows(data: CsvData, column: str) -> bool:
    """Whether the table measured the user's rows (study variance --input): its offset, scale or
    case column reads "data" in every row, and there is no axis of generated cells to plot."""
    return bool(data.rows) and all(r.get(column) == "data" for r in data.rows)


def _variance_findings(data: CsvData) -> list:
    """From the rows: per dtype and method, the largest offset whose median relative error stayed
    below 1e-3 (on the user's rows: the median error), the worst error, and the rows with a negative
    variance, summed over the run."""
    on_data = _on_users_rows(data, "offset")
    parts = []
    for dtype in data.ordered_unique("dtype"):
        for method in data.ordered_unique("method"):
            rs = [r for r in data.rows if r.get("dtype") == dtype and r.get("method") == method
                  and r.get("median_rel_error", "") != ""]  # a layer_norm subject or a failed call has none
            if not rs:
                continue
            good = [num(r.get("offset")) for r in rs if num(r.get("median_rel_error")) < 1e-3]
            negative = sum(int(num(r.get("negative_variance_rows")) or 0) for r in rs
                           if r.get("negative_variance_rows", "") != "")
            worst = max(num(r.get("max_rel_error")) for r in rs)
            if on_data:  # one cell: its median error, from layout to layout
                lo, hi = (f(num(r.get("median_rel_error")) for r in rs) for f in (min, max))
                where = f"median error {_fmt(lo, 2)}" + (f" to {_fmt(hi, 2)}" if hi != lo else "")
            else:
                where = f"median error < 1e-3 up to offset {_fmt(max(good), 2) if good else 'none tried'}"
            parts.append(f"{method} ({dtype}): {where}, worst {_fmt(worst, 2)}, {negative} negative-variance row(s)")
    return [Paragraph("Measured in this run: " + "; ".join(parts) + ".")] if parts else []


def render_row_variance(run: Run, data: CsvData, ctx: Context) -> list:
    for m in data.ordered_unique("method"):
        ctx.palette.style(m)
    backend = ", ".join(data.ordered_unique("backend"))
    shape = f"{data.rows[0].get('rows', '?')} × {data.rows[0].get('cols', '?')}" if data.rows else "?"
    if _on_users_rows(data, "offset"):  # one cell: the table says it all
        blocks: list = [
            Heading("Row variance of your rows", 3, anchor=slug(run.label + "-row-variance")),
            Paragraph(f"What this shows: the population variance of each of your rows ({shape}, backend {backend}), "
                      "computed by each row kernel (textbook E[x²] − E[x]², two passes, Welford per thread with the "
                      "general Chan merge or the equal-count lane merge) in the kernel's exact order, against the "
                      "exact MPFR variance of the same row, and the normalised rows against the exact ones. A "
                      "negative variance makes the normalised row NaN."),
            *_variance_findings(data),
        ]
        return blocks + _row_variance_table(run, data, ctx)
    blocks = [
        Heading("Row variance: error vs row offset", 3, anchor=slug(run.label + "-row-variance")),
        Paragraph("What this shows: the population variance of rows offset + N(0, 1), computed by each row kernel "
                  "(textbook E[x²] − E[x]², two passes, Welford per thread with the general Chan merge or the "
                  "equal-count lane merge) in the kernel's exact order, against the exact MPFR variance. A "
                  "negative variance makes the normalised row NaN."),
        *_variance_findings(data),
        _row_error_figure(run, data, ctx, "offset", "row offset (mean; σ = 1)", "median_rel_error",
                          "median relative error of the variance", "row-variance-median",
                          "Median relative error of the row variance",
                          f"Median over the rows ({shape}, backend {backend}) of |variance − exact| / exact, per "
                          "method; solid: warp_per_row, dashed: block_per_row.", True),
        _row_error_figure(run, data, ctx, "offset", "row offset (mean; σ = 1)", "max_rel_error",
                          "max relative error of the variance", "row-variance-max",
                          "Largest relative error of the row variance",
                          "The worst row of each cell; a NaN variance would count as infinite.", True),
    ]
    if any(r.get("max_out_abs_error", "") != "" for r in data.rows):
        blocks.append(_row_error_figure(
            run, data, ctx, "offset", "row offset (mean; σ = 1)", "max_out_abs_error",
            "max |out − exact normalised row|", "row-layer-norm-max",
            "Largest error of the normalised rows (layer norm without weights)",
            "max |out − (x − mean)/sqrt(var + 1e-5)| over the matrix, the reference from the exact mean and "
            "variance in long double (it resolves errors above ~2⁻⁵² · |mean| · rstd: float32 and bfloat16 "
            "outputs, not float64 ones at large offsets).", True))
    return blocks + _row_variance_table(run, data, ctx)


def _row_variance_table(run: Run, data: CsvData, ctx: Context) -> list:
    """The user's subjects' findings and row_variance.csv's table, with its alarms."""
    blocks = _row_subject_findings(data)
    cols = ["dtype", "offset", "method", "layout", "block", "negative_variance_rows", "nan_output_rows",
            "median_rel_error", "max_rel_error", "max_out_abs_error", "us_per_row", "time_over_bound",
            "distinct_outputs", "note"]
    cols = [c for c in cols if c in data.columns]
    rows, flagged = [], set()
    for i, r in enumerate(data.rows):
        rows.append([r.get(c, "") if c in ("dtype", "method", "layout", "block", "offset",
                                           "negative_variance_rows", "nan_output_rows", "distinct_outputs", "note")
                     else (_fmt(num(r.get(c))) if r.get(c, "") != "" else "") for c in cols])
        if num(r.get("negative_variance_rows")) > 0 or num(r.get("nan_output_rows")) > 0:
            flagged.add(i)
    blocks.append(Table(cols, rows, "Rows with a negative variance and rows whose normalised output "
                        "(x − mean)/sqrt(var + 1e-5) holds a NaN, per cell (highlighted when non-zero: the "
                        "textbook formula's failure the seeds report as 357 of 1024 rows at offset 10⁴). "
                        "time_over_bound: measured time over the memory-bound time (bytes / copy bandwidth "
                        "measured in the same run); empty on the model backend.", alarm_rows=flagged))
    bad = [r for r in data.rows if r.get("method") != "textbook" and r.get("layout") != "external" and
           (num(r.get("negative_variance_rows")) > 0 or num(r.get("nan_output_rows")) > 0)]
    if bad:
        ctx.alarms.append(f"{run.label}/{data.name}: {len(bad)} cell(s) of a stable method (not textbook) "
                          "report negative variances or NaN outputs.")
    return blocks


def _softmax_findings(data: CsvData) -> list:
    """From the rows: per dtype and method, the scale with the largest error and that error."""
    parts = []
    for dtype in data.ordered_unique("dtype"):
        for method in data.ordered_unique("method"):
            rs = [r for r in data.rows if r.get("dtype") == dtype and r.get("method") == method
                  and not math.isnan(num(r.get("max_rel_error")))]
            if rs:
                w = max(rs, key=lambda r: num(r.get("max_rel_error")))
                where = "" if w.get("scale") == "data" else f" at scale {w.get('scale')}"
                parts.append(f"{method} ({dtype}) worst {_fmt(num(w.get('max_rel_error')), 2)}{where}")
    return [Paragraph("Measured in this run: " + "; ".join(parts) + ".")] if parts else []


def render_row_softmax(run: Run, data: CsvData, ctx: Context) -> list:
    for m in data.ordered_unique("method"):
        ctx.palette.style(m)
    backend = ", ".join(data.ordered_unique("backend"))
    on_data = _on_users_rows(data, "scale")
    blocks: list = [
        Heading("Row softmax of your rows" if on_data else "Row softmax: error vs logit scale", 3,
                anchor=slug(run.label + "-row-softmax")),
        Paragraph("What this shows: the largest relative error of the probabilities of " +
                  ("each of your rows" if on_data else "rows scale · N(0, 1)") +
                  ", online softmax (one pass for (max, sum), rescaled at every merge) against three passes, both "
                  "with the same portable exp, against a long-double reference. x − max is rounded before exp, "
                  "so an absolute error u·|x − max| in the exponent becomes a relative error of the same size in "
                  "the probability."),
        *_softmax_findings(data),
    ]
    if not on_data:  # (one cell of the user's rows: no axis to plot; the table holds it)
        blocks.append(_row_error_figure(run, data, ctx, "scale", "logit scale (σ of the row)", "max_rel_error",
                                        "max relative error of p", "row-softmax-max-rel",
                                        "Largest relative error of the softmax probabilities",
                                        f"Over every element with p_ref at least the smallest normal (backend "
                                        f"{backend}); solid: warp_per_row, dashed: block_per_row.", False))
    blocks += _row_subject_findings(data)
    cols = [c for c in ["dtype", "scale", "method", "layout", "block", "max_abs_error", "max_rel_error",
                        "max_sum_error", "nan_rows", "us_per_row", "time_over_bound", "distinct_outputs", "note"]
            if c in data.columns]
    rows, flagged = [], set()
    for i, r in enumerate(data.rows):
        rows.append([r.get(c, "") if c in ("dtype", "scale", "method", "layout", "block", "nan_rows",
                                           "distinct_outputs", "note")
                     else (_fmt(num(r.get(c))) if r.get(c, "") != "" else "") for c in cols])
        if num(r.get("nan_rows")) > 0:
            flagged.add(i)
    blocks.append(Table(cols, rows, "max_sum_error: the worst |Σ p − 1| of a row. Rows of finite logits must "
                        "never be NaN (highlighted if one is).", alarm_rows=flagged))
    if flagged:
        ctx.alarms.append(f"{run.label}/{data.name}: {len(flagged)} softmax cell(s) produced NaN rows from finite logits.")
    return blocks


def render_row_argmax(run: Run, data: CsvData, ctx: Context) -> list:
    cols = [c for c in ["dtype", "case", "layout", "block", "index_mismatches", "value_mismatches",
                        "expected_index_row0", "index_row0", "description"] if c in data.columns]
    rows, bad = [], set()
    for i, r in enumerate(data.rows):
        rows.append([r.get(c, "") for c in cols])
        if num(r.get("index_mismatches")) != 0 or num(r.get("value_mismatches")) != 0:
            bad.add(i)
    blocks: list = [
        Heading("Row argmax: ties, signed zeros, NaN and Inf", 3, anchor=slug(run.label + "-row-argmax")),
        Paragraph("What this shows: the argmax kernel's (value, index) reduction against a serial scan with "
                  "torch.argmax's rules: ties go to the lower index, +0 and −0 tie, NaN is larger than every "
                  "number (the first NaN wins, even over +Inf), an all −Inf row gives index 0. The order is total, "
                  "so every layout must pick the same element: any non-zero count is a bug."),
        Table(cols, rows, "Rows (of each case's matrix) whose index or returned value differs from the serial "
              "scan, per layout; red when non-zero.", alarm_rows=bad, numeric=True),
    ]
    if bad:
        ctx.alarms.append(f"{run.label}/{data.name}: argmax differs from torch.argmax semantics in {len(bad)} "
                          "(case, layout) run(s).")
        blocks.append(Paragraph(f"{len(bad)} (case, layout) runs disagree with the serial scan.", "alarm"))
    elif rows:
        blocks.append(Paragraph(f"All {len(rows)} (case, layout) runs agree with the serial scan.", "ok"))
    return blocks


def render_row_verify(run: Run, data: CsvData, ctx: Context) -> list:
    cols = [c for c in ["kernel", "dtype", "cases", "mismatches", "errors", "first_failure"] if c in data.columns]
    rows, bad = [], set()
    for i, r in enumerate(data.rows):
        rows.append([r.get(c, "") for c in cols])
        if num(r.get("mismatches")) != 0 or num(r.get("errors")) != 0:
            bad.add(i)
    blocks: list = [
        Heading("Row kernels: GPU bits against the model", 3, anchor=slug(run.label + "-row-verify")),
        Paragraph("What this shows: before the study, every row kernel ran on the GPU and on its CPU model over "
                  "layouts, block sizes and shapes (rows of 0 and 1 element, cols around the warp width, rows "
                  "longer than a block) and three inputs; every output compared bitwise (NaN = NaN)."),
        Table(cols, rows, "One line per (kernel, dtype); red when any case differs or failed to run.",
              alarm_rows=bad, numeric=True),
    ]
    if bad:
        ctx.alarms.append(f"{run.label}/{data.name}: GPU and model bits differ (or failed) for {len(bad)} "
                          "(kernel, dtype) line(s).")
    return blocks


RENDERERS.update({
    "row_variance.csv": render_row_variance,
    "row_softmax.csv": render_row_softmax,
    "row_argmax.csv": render_row_argmax,
    "row_verify.csv": render_row_verify,
})


# --- order diagrams (sumlab explain --csv RUN_DIR/order_trace.csv) --------------------------------
# One row per input element and per addition of the traced tree (columns in data/README.md); one
# panel per (kernel, dtype, n, shape): inputs on the bottom row in index order, each addition above
# the mean position of its operands, coloured by the stage that performs it.

_STAGE_COLOUR = {"thread": "#1f77b4", "warp": "#2ca02c", "block": "#ff7f0e", "cross-block": "#d62728"}


def render_order_trace(run: Run, data: CsvData, ctx: Context) -> list:
    groups: dict[tuple, list] = defaultdict(list)
    for r in data.rows:
        groups[(r.get("kernel", ""), r.get("dtype", ""), r.get("n", ""), r.get("shape", ""))].append(r)
    fig, axes = plt.subplots(len(groups), 1, figsize=(10, 3.2 * len(groups)), squeeze=False)
    for ax, (key, rows) in zip(axes[:, 0], groups.items()):
        kernel, dtype, n, shape = key
        pos: dict[str, tuple[float, int]] = {}
        leaves = [r for r in rows if r.get("stage") == "input"]
        for i, r in enumerate(leaves):
            pos[r["node"]] = (float(i), 0)
        adds = [r for r in rows if r.get("stage") != "input"]
        for r in adds:  # rows are in evaluation order: operands come first
            a, b = pos.get(r["lhs"], (0.0, 0)), pos.get(r["rhs"], (0.0, 0))
            pos[r["node"]] = ((a[0] + b[0]) / 2, max(a[1], b[1]) + 1)
        for r in adds:
            x, y = pos[r["node"]]
            for child in (r["lhs"], r["rhs"]):
                if child in pos:
                    cx, cy = pos[child]
                    ax.plot([x, cx], [y, cy], color="#aaaaaa", lw=0.8, zorder=1)
        for stage, colour in _STAGE_COLOUR.items():
            pts = [pos[r["node"]] for r in adds if r.get("stage") == stage]
            if pts:
                ax.scatter([p[0] for p in pts], [p[1] for p in pts], s=28, color=colour, label=stage, zorder=2)
        ax.scatter([pos[r["node"]][0] for r in leaves], [0] * len(leaves), s=18, marker="s", color="#444444",
                   label="input", zorder=2)
        if len(leaves) <= 32:
            for r in leaves:
                ax.annotate(f"{r['node']}\nt{r.get('first_thread', '')}", pos[r["node"]], textcoords="offset points",
                            xytext=(0, -22), ha="center", fontsize=6)
        if adds:
            top = max(adds, key=lambda r: pos[r["node"]][1])
            ax.annotate(f"= {top['value']}", pos[top["node"]], textcoords="offset points", xytext=(8, 4), fontsize=8)
        ax.set_title(f"{kernel} {dtype} n={n}, shape {shape}", fontsize=9)
        ax.set_yticks([])
        ax.set_xticks([])
        ax.set_ylabel("additions ↑")
        ax.legend(loc="upper left", fontsize=7, frameon=False, ncol=5)
        ax.margins(x=0.03, y=0.25)
    stem = ctx.fig_prefix + "order-trace"
    figures.save(fig, ctx.out_dir, stem)
    return [
        Heading("Order diagrams", 3, anchor=slug(run.label + "-order")),
        Paragraph("What this shows: the exact tree of additions the order model performs for each kernel and "
                  "launch shape (sumlab explain), the same operations the GPU kernel performs; two shapes of "
                  "the same kernel pair different partial sums, which is why their bits can differ. t<k> is "
                  "the thread that loads each input."),
        Figure(stem, "Order of additions per launch shape",
               "Inputs (squares) in index order at the bottom; each dot is one addition, placed above its "
               "operands and coloured by stage (thread chain, warp shuffles, shared-memory block stage, "
               "cross-block). Additions of the identity from idle lanes are omitted."),
    ]


RENDERERS["order_trace.csv"] = render_order_trace

# --- study segmented (segmented_*.csv): its renderers live in their own module ------------------
from .segmented import SEGMENTED_RENDERERS  # noqa: E402

RENDERERS.update(SEGMENTED_RENDERERS)

# --- the scan study (its renderers live in scan.py) -------------------------------------------
from . import scan as _scan  # noqa: E402

RENDERERS.update(_scan.RENDERERS)

# --- the dot study's determinism table (dot.py; dot_errors.csv is shown as its table) ------------
from .dot import DOT_RENDERERS  # noqa: E402

RENDERERS.update(DOT_RENDERERS)

# --- sumlab bench (bench_*.csv): its renderers live in bench.py ---------------------------------
from .bench import BENCH_RENDERERS  # noqa: E402

RENDERERS.update(BENCH_RENDERERS)

# --- sumlab sum --out (sum.csv): one input, every algorithm's result ---------------------------

def render_sum(run: Run, data: CsvData, ctx: Context) -> list:
    """One input summed by each algorithm: the relative errors side by side with their bounds,
    and the table of values and bits."""
    for r in data.rows:
        ctx.palette.style(r.get("algorithm", ""))
    inputs = ", ".join(f"{r} (n = {n})" for r, n in dict.fromkeys((r.get("input", ""), r.get("n", ""))
                                                                for r in data.rows))
    drawn = [r for r in data.rows if num(r.get("rel_error")) >= 0]
    blocks: list = [Heading("One input, every algorithm", 3, anchor=slug(run.label + "-sum")),
                    Paragraph(f"What this shows: the sum of {inputs} by each algorithm, against the exact sum "
                              "(MPFR); a bar is the relative error, a dash the algorithm's bound for this input.")]
    if drawn:
        fig, ax = plt.subplots(figsize=(max(6.0, 0.45 * len(drawn) + 2), 3.6))
        xs = range(len(drawn))
        floor = min([num(r["rel_error"]) for r in drawn if num(r["rel_error"]) > 0] or [1e-20]) / 10
        for i, r in enumerate(drawn):
            rel = num(r.get("rel_error"))
            ax.bar(i, max(rel, floor), color=ctx.palette.colour(r["algorithm"]), hatch="" if rel > 0 else "//")
            b = num(r.get("bound"))
            exact = num(r.get("sum_abs")) / num(r.get("condition")) if num(r.get("condition")) > 0 else math.nan
            if math.isfinite(b) and exact > 0:
                ax.plot([i - 0.4, i + 0.4], [b / exact] * 2, color="0.2", lw=1.2)
        ax.set_xticks(list(xs))
        ax.set_xticklabels([r["algorithm"] for r in drawn], rotation=40, ha="right", fontsize=8)
        ax.set_yscale("log")
        ax.set_ylabel("relative error")
        fig.tight_layout()
        stem = figures.save(fig, ctx.out_dir, f"{ctx.fig_prefix}sum")
        blocks.append(Figure(stem, "Relative error by algorithm",
                             "Bars: |computed − exact| / |exact|; hatched bars are exact results (drawn at the "
                             "floor); dashes: the bound divided by |exact| (none where no bound holds)."))
    cols = [c for c in ["algorithm", "backend", "shape", "value", "hex", "rel_error", "ulps", "bound", "verdict"]
            if c in data.columns]
    rows = [[r.get(c, "") if c in ("algorithm", "backend", "shape", "hex", "verdict", "value")
             else _fmt(num(r.get(c))) for c in cols] for r in data.rows]
    blocks.append(Table(cols, rows, "Every result of the run.",
                        alarm_rows={i for i, r in enumerate(data.rows) if _verdict(r) == "exceeds"}))
    blocks += bound_violation_blocks(run, data, ctx)
    return blocks


RENDERERS["sum.csv"] = render_sum
