"""Reading a run folder: provenance.json, summary.json and tidy CSVs (written by `sumlab study`).

Nothing here calls the C++ code: a run folder is the whole interface between the lab and its
reports. Numbers stay strings until a renderer asks for them, so a report never reformats a value
it only shows (hex bits, exact figures).
"""
from __future__ import annotations

import csv
import io
import json
import math
from dataclasses import dataclass, field
from pathlib import Path


class RunError(Exception):
    """A folder that cannot be rendered (not a run, unreadable files): one line for the user."""


def num(text: str | None) -> float:
    """A CSV field as a float: 'inf', '-inf', 'nan' as IEEE values, an empty field as NaN."""
    if text is None or text == "":
        return math.nan
    try:
        return float(text)
    except ValueError:
        return math.nan


@dataclass
class CsvData:
    name: str
    columns: list[str]
    rows: list[dict[str, str]]
    torn: int = 0  # rows dropped because their field count is not the header's

    def values(self, column: str) -> list[str]:
        return [r.get(column, "") for r in self.rows]

    def ordered_unique(self, column: str) -> list[str]:
        """Distinct values in order of first appearance (the order the study wrote them, which for
        algorithms is the registry order in code)."""
        seen: dict[str, None] = {}
        for r in self.rows:
            seen.setdefault(r.get(column, ""), None)
        return list(seen)


def read_csv(path: Path, limit: int | None = None) -> CsvData:
    """The rows whose field count is the header's; a torn row (cut by a kill in a folder written
    before sumlab's atomic appends, or edited by hand) is counted and left out, never half-read.
    limit: read only the first `limit` bytes (the table's size after its last finished cell)."""
    try:
        with path.open("rb") as raw:
            data = raw.read() if limit is None else raw.read(limit)
        with io.StringIO(data.decode("utf-8"), newline="") as f:
            reader = csv.reader(f)
            header = next(reader, [])
            rows, torn = [], 0
            for fields in reader:
                if not fields or all(v == "" for v in fields):
                    continue
                if len(fields) != len(header):
                    torn += 1
                    continue
                rows.append(dict(zip(header, fields)))
            return CsvData(path.name, header, rows, torn)
    except (OSError, UnicodeDecodeError, csv.Error) as e:
        raise RunError(f"cannot read {path}: {e}") from e


def read_json(path: Path) -> dict | None:
    if not path.exists():
        return None
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as e:
        raise RunError(f"cannot read {path}: {e}") from e


@dataclass
class Run:
    path: Path
    label: str
    provenance: dict
    summary: dict | None
    csv_paths: list[Path] = field(default_factory=list)
    # Appendable tables' sizes after the last finished cell (cells.log's last whole line): rows past
    # them belong to a cell that a kill cut short, which --resume runs again.
    finished_sizes: dict[str, int] = field(default_factory=dict)

    def read(self, path: Path) -> CsvData:
        return read_csv(path, self.finished_sizes.get(path.name))

    @property
    def study(self) -> str:
        return str(self.provenance.get("study", "unknown"))


def load_run(path: Path, label: str) -> Run:
    if not path.is_dir():
        raise RunError(f"'{path}' is not a folder")
    prov = read_json(path / "provenance.json")
    if prov is None:
        raise RunError(f"'{path}' holds no run (no provenance.json)")
    if not isinstance(prov, dict):
        raise RunError(f"{path / 'provenance.json'} is not a JSON object")
    summary = read_json(path / "summary.json")
    return Run(path, label, prov, summary if isinstance(summary, dict) else None,
               sorted(p for p in path.glob("*.csv") if p.is_file()), finished_sizes(path / "cells.log"))


def finished_sizes(journal: Path) -> dict[str, int]:
    """The table sizes of cells.log's last whole line ({} without a journal)."""
    sizes: dict[str, int] = {}
    try:
        text = journal.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError):
        return sizes
    for line in text.split("\n")[:-1]:  # the part after the last newline is not a whole line
        try:
            entry = json.loads(line)
            got = {str(k): int(v) for k, v in entry["sizes"].items()}
        except (ValueError, TypeError, KeyError, AttributeError):
            break
        sizes = got
    return sizes
