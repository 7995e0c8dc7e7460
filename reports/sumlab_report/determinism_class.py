"""The determinism class a report shows for a row of a study's CSV, by the lab's one rule
(core/determinism_classify.hpp): not_deterministic when some shape gave more than one bit
pattern over its runs; shape_invariant only when at least two shapes ran and gave one pattern
between them; run_to_run otherwise. One shape cannot show shape invariance.

Studies written before every study applied that rule (dot and segmented before 2026-12-05)
wrote shape_invariant for one shape with one pattern; the report shows what such a row measured
(run_to_run, and `one_shape` against a declared shape_invariant) from its own shapes column, so a
committed run is rendered by the same rule as a new one.
"""
from __future__ import annotations

import math

from .run_folder import num

RANK = {"not_deterministic": 0, "run_to_run": 1, "shape_invariant": 2}


def _count(text) -> float:
    v = num(text) if isinstance(text, str) or text is None else float(text)
    return v if math.isfinite(v) else math.nan


def shown_class(measured: str, shapes) -> str:
    """The class the row's counts support: a shape_invariant recorded for fewer than two shapes is
    run_to_run (one shape says nothing across shapes); anything else as recorded."""
    shapes_n = _count(shapes)
    if measured == "shape_invariant" and not shapes_n >= 2:
        return "run_to_run"
    return measured


def agreement(declared: str, measured: str, shapes) -> str:
    """Measured against declared, as core's compare(): matches, stronger, violated, or one_shape
    (shape invariance declared, the runs agree, one shape ran); "" when either class is unknown."""
    if declared not in RANK or measured not in RANK:
        return ""
    if not _count(shapes) >= 2 and declared == "shape_invariant" and measured == "run_to_run":
        return "one_shape"
    d, m = RANK[declared], RANK[measured]
    return "matches" if m == d else "stronger" if m > d else "violated"


def recorded_one_shape_invariant(rows: list[dict[str, str]], shapes_column: str = "shapes") -> int:
    """Rows that recorded shape_invariant for fewer than two shapes: written before the rule applied
    to their study (the report shows them as run_to_run)."""
    return sum(1 for r in rows if r.get("measured") == "shape_invariant" and not _count(r.get(shapes_column)) >= 2)
