"""Matplotlib conventions shared by every figure: the Agg backend, one colour and marker per
algorithm for the whole report, SVG output that is byte-stable for the same data, and the
"zero strip" that puts exact (zero-error) results where a log axis can show them.
"""
from __future__ import annotations

import math
from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import matplotlib.ticker  # noqa: E402

plt.rcParams.update({
    "svg.hashsalt": "sumlab",      # stable ids inside the SVG: same data, same file
    "svg.fonttype": "path",        # no font needed to view it
    "font.size": 9,
    "axes.titlesize": 10,
    "legend.fontsize": 8,
    "axes.grid": True,
    "grid.alpha": 0.3,
})

_MARKERS = ["o", "s", "^", "D", "v", "P", "X", "*", "h", "<", ">", "p", "d", "H", "8"]

# The sums by how they add, in the registry's order: the panels of the error figures, and the
# source of each algorithm's style. Every algorithm of the registry has a colour of its own (no two
# share one, so figures that mix families stay readable), chosen so that the members of a family
# (one panel) differ in hue, and a marker that differs within the family; the same in every figure.
FAMILIES: list[tuple[str, list[str]]] = [
    ("left to right", ["serial", "serial_wide", "serial_bf16", "gpu_serial"]),
    ("pairwise trees (CPU)", ["pairwise", "pairwise_b128", "numpy_pairwise"]),
    ("GPU trees", ["gpu_interleaved", "gpu_strided", "gpu_sequential", "gpu_first_add", "gpu_warp_unrolled",
                   "gpu_unrolled", "gpu_multi_add", "gpu_two_pass", "gpu_atomic", "gpu_last_block", "gpu_cub",
                   "gpu_thrust", "gpu_racy_tree"]),
    ("compensated and wide", ["kahan", "neumaier", "gpu_kahan", "gpu_double_acc", "gpu_double_word"]),
    ("exact and fixed point", ["exact", "fixed_point", "gpu_exact", "gpu_fixed_point"]),
]
OTHER_FAMILY = "other subjects"
_T20 = plt.get_cmap("tab20").colors  # ten hues, each dark (even index) and light (odd index)
_D2 = plt.get_cmap("Dark2").colors
_FAMILY_COLOURS = [
    [_T20[0], _T20[2], _T20[4], _T20[6]],                     # left to right: blue, orange, green, red
    [_T20[8], _T20[10], _T20[12]],                            # CPU trees: purple, brown, pink
    # GPU trees: Harris 1-7 in the light hues; the kernels and peers a reader compares most in strong ones
    [_T20[1], _T20[3], _T20[5], _T20[7], _T20[9], _T20[11], _T20[13], _T20[14], _T20[16], _T20[18], "#08306b",
     "#67000d", _T20[17]],
    [_D2[0], _D2[1], _D2[2], _D2[3], "#3f007d"],               # compensated: teal, rust, slate, magenta, violet
    [_D2[4], _D2[5], _D2[6], "#00441b"],                       # exact: lime, mustard, umber, dark green
]
# The rest (roofs, peers, the user's subjects, strategies): black first, then Set1.
_OTHER_COLOURS = ["black"] + list(plt.get_cmap("Set1").colors) + list(plt.get_cmap("Set2").colors)
_STYLE_OF: dict[str, tuple] = {}
_FAMILY_OF: dict[str, str] = {}
for _k, (_family, _members) in enumerate(FAMILIES):
    for _j, _name in enumerate(_members):
        _STYLE_OF[_name] = (_FAMILY_COLOURS[_k][_j], _MARKERS[(3 * _k + _j) % len(_MARKERS)])
        _FAMILY_OF[_name] = _family
assert len({c for c, _ in _STYLE_OF.values()}) == len(_STYLE_OF), "two algorithms share a colour"


def family_of(name: str) -> str:
    """The family an algorithm's name belongs to (a configuration's name[label] by its name);
    OTHER_FAMILY for what the registry does not hold (the user's subjects, peers, strategies)."""
    return _FAMILY_OF.get(name.split("[")[0], OTHER_FAMILY)


def by_family(names: list[str]) -> list[tuple[str, list[str]]]:
    """The names grouped by family, families in FAMILIES' order (then OTHER_FAMILY), names in the
    order given."""
    order = [f for f, _ in FAMILIES] + [OTHER_FAMILY]
    groups: dict[str, list[str]] = {}
    for n in names:
        groups.setdefault(family_of(n), []).append(n)
    return [(f, groups[f]) for f in order if f in groups]

# Unit roundoff of each dtype's format (round to nearest): the reference lines' u.
UNIT_ROUNDOFF = {"float32": 2.0 ** -24, "float64": 2.0 ** -53, "bfloat16": 2.0 ** -8,
                 "float16": 2.0 ** -11}


class Palette:
    """One style per name for the whole report: the registry's algorithms have fixed ones (see
    FAMILIES); any other name (a subject, a peer, a
    strategy) gets the next free one in order of first appearance, so it too keeps its style in
    every figure."""

    def __init__(self) -> None:
        self._styles: dict[str, tuple] = {}

    def style(self, name: str) -> tuple:
        if name in _STYLE_OF:
            return _STYLE_OF[name]
        if name not in self._styles:
            i = len(self._styles)
            self._styles[name] = (_OTHER_COLOURS[i % len(_OTHER_COLOURS)], _MARKERS[i % len(_MARKERS)])
        return self._styles[name]

    def colour(self, name: str):
        return self.style(name)[0]

    def marker(self, name: str) -> str:
        return self.style(name)[1]


def save(fig, out_dir: Path, stem: str) -> str:
    """Writes stem.svg under out_dir; returns the stem (relative path). One format: the HTML
    embeds it, the Markdown links it, and it is byte-stable for the same data (a PNG beside it
    doubled every committed report's size and changed at each rendering)."""
    path = out_dir / stem
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(str(path) + ".svg", format="svg", bbox_inches="tight", metadata={"Date": None})
    plt.close(fig)
    return stem


def finite_positive(values) -> list[float]:
    return [v for v in values if v > 0 and math.isfinite(v)]


class ZeroStrip:
    """Zero cannot sit on a log axis. Below the smallest positive value drawn, a grey line marks
    the bottom of the data; under it each algorithm with zero-error points gets a row of hollow
    markers (its slot). The rows' heights carry no value: the axis shows no numbers there, only
    "0", so an exact result never reads as a tiny measured error."""

    def __init__(self, smallest_positive: float, largest_positive: float, algorithms_with_zeros: list[str],
                 slots: dict[str, int] | None = None):
        # Spacing scales with the decades the axis spans, so the strip stays legible on 40 decades.
        decades = max(1.0, math.log10(max(largest_positive, smallest_positive) / smallest_positive))
        step = max(0.2, 0.035 * decades)
        slots = slots if slots is not None else {a: i for i, a in enumerate(algorithms_with_zeros)}
        self.line = smallest_positive / 10 ** (1.5 * step)
        self.rows = {a: self.line / 10 ** (step * (slots[a] + 1)) for a in algorithms_with_zeros}
        depth = max(slots.values(), default=-1) + 1 if algorithms_with_zeros else 0
        self.bottom = self.line / 10 ** (step * (depth + 1.5)) if self.rows else None
        self.middle = self.line / 10 ** (step * (depth + 1) / 2)

    def y(self, algorithm: str) -> float:
        return self.rows[algorithm]

    def decorate(self, ax, label: bool = True) -> None:
        if not self.rows:
            return
        ax.axhline(self.line, color="0.5", lw=0.8)
        if label:
            ax.text(0.01, self.line, " error = 0 below", transform=ax.get_yaxis_transform(),
                    va="top", ha="left", fontsize=7, color="0.35", style="italic")
        lo, hi = ax.get_ylim()
        ax.set_ylim(self.bottom, hi)
        # No decade labels inside the strip: its heights are not errors. One "0" marks it.
        line, middle = self.line, self.middle
        decades = [t for t in matplotlib.ticker.LogLocator(base=10, numticks=8).tick_values(line, hi)
                   if line <= t <= hi]
        ax.yaxis.set_major_locator(matplotlib.ticker.FixedLocator(decades + [middle]))
        ax.yaxis.set_minor_locator(matplotlib.ticker.NullLocator())
        sci = matplotlib.ticker.LogFormatterSciNotation()
        sci.set_axis(ax.yaxis)
        ax.yaxis.set_major_formatter(matplotlib.ticker.FuncFormatter(
            lambda t, pos: "0" if t == middle else (sci(t, pos) if t >= line else "")))
        ax.set_ylim(self.bottom, hi)
