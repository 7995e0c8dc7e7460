"""Matplotlib conventions shared by every figure: the Agg backend, one colour and marker per
algorithm for the whole report, SVG+PNG output that is byte-stable for the same data, and the
"zero strip" that puts exact (zero-error) results where a log axis can show them.
"""
from __future__ import annotations

import math
from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

plt.rcParams.update({
    "svg.hashsalt": "sumlab",      # stable ids inside the SVG: same data, same file
    "svg.fonttype": "path",        # no font needed to view it
    "font.size": 9,
    "axes.titlesize": 10,
    "legend.fontsize": 8,
    "axes.grid": True,
    "grid.alpha": 0.3,
})

_COLOURS = list(plt.get_cmap("tab10").colors) + list(plt.get_cmap("Dark2").colors) + \
    list(plt.get_cmap("Set1").colors)
_MARKERS = ["o", "s", "^", "D", "v", "P", "X", "*", "h", "<", ">", "p", "d", "H", "8"]

# Unit roundoff of each dtype's format (round to nearest): the reference lines' u.
UNIT_ROUNDOFF = {"float32": 2.0 ** -24, "float64": 2.0 ** -53, "bfloat16": 2.0 ** -8,
                 "float16": 2.0 ** -11}


class Palette:
    """One style per algorithm name, assigned in order of first appearance over the whole
    report, so an algorithm keeps its colour in every figure."""

    def __init__(self) -> None:
        self._styles: dict[str, tuple] = {}

    def style(self, name: str) -> tuple:
        if name not in self._styles:
            i = len(self._styles)
            self._styles[name] = (_COLOURS[i % len(_COLOURS)], _MARKERS[i % len(_MARKERS)])
        return self._styles[name]

    def colour(self, name: str):
        return self.style(name)[0]

    def marker(self, name: str) -> str:
        return self.style(name)[1]


def save(fig, out_dir: Path, stem: str) -> str:
    """Writes stem.svg and stem.png under out_dir; returns the stem (relative path)."""
    path = out_dir / stem
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(str(path) + ".svg", format="svg", bbox_inches="tight", metadata={"Date": None})
    fig.savefig(str(path) + ".png", format="png", dpi=130, bbox_inches="tight",
                metadata={"Software": None})
    plt.close(fig)
    return stem


def finite_positive(values) -> list[float]:
    return [v for v in values if v > 0 and math.isfinite(v)]


class ZeroStrip:
    """Zero cannot sit on a log axis. Below the smallest positive value drawn, a grey line marks
    the bottom of the data; under it each algorithm with zero-error points gets its own row of
    hollow markers. The rows' heights carry no value, they only keep algorithms apart."""

    def __init__(self, smallest_positive: float, largest_positive: float, algorithms_with_zeros: list[str]):
        # Spacing scales with the decades the axis spans, so the strip stays legible on 40 decades.
        decades = max(1.0, math.log10(max(largest_positive, smallest_positive) / smallest_positive))
        step = max(0.2, 0.035 * decades)
        self.line = smallest_positive / 10 ** (1.5 * step)
        self.rows = {a: self.line / 10 ** (step * (i + 1)) for i, a in enumerate(algorithms_with_zeros)}
        self.bottom = self.line / 10 ** (step * (len(self.rows) + 0.8)) if self.rows else None

    def y(self, algorithm: str) -> float:
        return self.rows[algorithm]

    def decorate(self, ax) -> None:
        if not self.rows:
            return
        ax.axhline(self.line, color="0.5", lw=0.8)
        ax.text(0.01, self.line, " error = 0 below", transform=ax.get_yaxis_transform(),
                va="top", ha="left", fontsize=7, color="0.35", style="italic")
        lo, hi = ax.get_ylim()
        ax.set_ylim(self.bottom, hi)
