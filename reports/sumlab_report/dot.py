"""Renderer of `sumlab study dot`'s dot_determinism.csv (columns: data/README.md, "Study dot"): per
cell and subject, distinct values over the calls of each configuration and over the
configurations, the class they imply by the lab's rule (reports/sumlab_report/determinism_class.py)
against the declared one. dot_errors.csv has no renderer of its own: it is shown as its table, with
the bound check. Registered in studies.RENDERERS."""
from __future__ import annotations

from .determinism_class import agreement, recorded_one_shape_invariant, shown_class
from .document import Heading, Paragraph, Table, slug
from .run_folder import CsvData, Run


def _kinds(run: Run) -> dict[str, str]:
    """algorithm -> where it ran (cpu, cuda or model), from dot_errors.csv's kind column."""
    path = run.path / "dot_errors.csv"
    if not path.is_file():
        return {}
    return {r.get("algorithm", ""): r.get("kind", "") for r in run.read(path).rows}


def render_dot_determinism(run: Run, data: CsvData, ctx) -> list:
    kinds = _kinds(run)
    # A CSV written before the study applied the lab's rule: its CPU subjects were called once per
    # cell whatever `runs` says, and one configuration was recorded shape_invariant.
    old = recorded_one_shape_invariant(data.rows) > 0
    cols = [c for c in ["dist", "n", "seed", "algorithm", "shapes", "runs", "distinct_runs", "distinct_shapes",
                        "declared", "measured"] if c in data.columns]
    rows, bad = [], set()
    modelled = once = 0
    for i, r in enumerate(data.rows):
        measured = shown_class(r.get("measured", ""), r.get("shapes"))
        agree = agreement(r.get("declared", ""), measured, r.get("shapes"))
        kind = kinds.get(r.get("algorithm", ""), "")
        shown = measured
        if kind == "model":
            shown += " (modelled)"
            modelled += 1
        elif old and kind == "cpu":
            shown += " (one call)"
            once += 1
        rows.append([shown if c == "measured" else r.get(c, "") for c in cols] + [agree])
        if r.get("consistent") == "0" or agree == "violated":
            bad.add(i)
    text = ("What this shows: per cell and subject, the configurations (shapes) it ran, the calls of each "
            "(runs), the most distinct values one configuration gave over its calls and the distinct values "
            "over the configurations, and the class that implies by the lab's rule: not_deterministic if "
            "some configuration's calls differ; shape_invariant only if two or more configurations ran and "
            "agreed; run_to_run otherwise (a CPU subject has one configuration: invariance not measured, "
            "one_shape against a declared shape_invariant).")
    if modelled:
        text += (f" {modelled} row(s) are the order model's (model backend): one evaluation per configuration, "
                 "so their class compares the configurations only; run to run it is the model's fixed order, not "
                 "a measurement.")
    blocks: list = [
        Heading("Dot products: determinism measured vs declared", 3, anchor=slug(run.label + "-dot-determinism")),
        Paragraph(text),
        Table([f"{c} (as recorded)" if old and c == "runs" else c for c in cols] + ["agreement"], rows, "One row per (cell, subject). agreement: matches, stronger (the "
              "variation the declaration allows was not seen), one_shape or violated (red).", alarm_rows=bad),
    ]
    if old:
        blocks.append(Paragraph(
            "This run was written before the dot study counted its calls: `runs` is the --runs asked for, as "
            f"recorded, but the CPU subjects were called once per cell ({once} row(s), marked one call: their "
            "run-to-run behaviour was not measured), and their one configuration was recorded shape_invariant; "
            "the class shown is the one their counts support.", "note"))
    if bad:
        ctx.alarms.append(f"{run.label}/{data.name}: {len(bad)} dot cell(s) less deterministic than declared.")
    return blocks


DOT_RENDERERS = {"dot_determinism.csv": render_dot_determinism}
