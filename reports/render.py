#!/usr/bin/env python3
"""Render sumlab run folders into figures (SVG) and a report (report.html, report.md).

    render.py RUN_DIR... --out DIR [--force] [--quiet] [--linked-figures]

Reads only the run folders (provenance.json, summary.json, the study CSVs); never runs the lab.
Each CSV with a renderer in sumlab_report.studies.RENDERERS is drawn; any other CSV (a new family's
study, before it has a renderer) is shown as its table, with the bound check where it has a verdict. Exit status: 0 done, 2 bad input (not a run, nothing to render, report exists without
--force). `sumlab report` calls this script with a fresh --out folder and moves the result into place (so a
failed rendering never leaves half a report); see reports/README.md.
"""
from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

sys.dont_write_bytecode = True  # no __pycache__ in the source tree
sys.path.insert(0, str(Path(__file__).resolve().parent))

from sumlab_report.document import Document, Heading, Paragraph, slug, write_html, write_markdown  # noqa: E402
from sumlab_report.figures import Palette  # noqa: E402
from sumlab_report.run_folder import Run, RunError, load_run  # noqa: E402
from sumlab_report.studies import RENDERERS, Context, provenance_blocks, render_table, tally_phrases  # noqa: E402

FIGURES = "figures"


def run_labels(paths: list[Path]) -> list[str]:
    """Folder names, or the paths as given where two folders share a name."""
    names = [p.resolve().name or str(p) for p in paths]
    return [str(p) if names.count(n) > 1 else n for p, n in zip(paths, names)]


def build(runs: list[Run], out_dir: Path) -> Document:
    palette = Palette()
    doc = Document("sumlab report")
    doc.add(Heading("sumlab report", 1))
    intro = Paragraph("")
    checks_at = len(doc.blocks) + 1
    doc.add(intro)
    rendered = 0
    ctx_checks = []
    tallies: list[tuple[str, str, dict[str, int]]] = []
    alarms: list[str] = []
    for run in runs:
        ctx = Context(out_dir, f"{FIGURES}/{slug(run.label)}-" if len(runs) > 1 else f"{FIGURES}/", palette)
        doc.add(Heading(f"Run {run.label} ({run.study})", 2, anchor=slug(run.label)))
        doc.add(*provenance_blocks(run))
        order = list(RENDERERS)
        known = sorted((p for p in run.csv_paths if p.name in RENDERERS), key=lambda p: order.index(p.name))
        plain = sorted((p for p in run.csv_paths if p.name not in RENDERERS), key=lambda p: p.name)
        for p in known + plain:
            data = run.read(p)
            rendered += 1
            if data.torn:
                doc.add(Paragraph(f"`{p.name}`: {data.torn} torn row(s) (wrong field count) left out.", "alarm"))
            if not data.rows:
                doc.add(Paragraph(f"`{p.name}` has no rows yet (the study had not finished a cell).", "note"))
                continue
            doc.add(*RENDERERS.get(p.name, render_table)(run, data, ctx))
        ctx_checks += ctx.bound_checks
        tallies += ctx.bound_tallies
        alarms += ctx.alarms
    if rendered == 0:
        raise RunError("nothing to render: no folder holds a CSV")

    listing = "; ".join(f"{r.label} ({r.study})" for r in runs)
    intro.text = (f"Rendered by `reports/render.py` from {len(runs)} run folder(s): {listing}. Every figure "
                  "and table is regenerated from the run folders' files only; names in legends and tables "
                  "are the algorithm, dtype and distribution names the lab wrote.")
    checks = [Paragraph(text, "alarm") for text in alarms]
    bad = [(lbl, name, n, total) for lbl, name, n, total in ctx_checks if n]
    if bad:
        for lbl, name, n, total in bad:
            checks.append(Paragraph(f"{n} of {total} measurements in {lbl}/{name} exceed their algorithm's "
                                    "documented error bound. See the red rows below.", "alarm"))
    elif tallies:
        # ✓ only when every measurement was judged and is within; otherwise the counts by cause
        # (a row with no bound, a failed call or a special input is not "within" anything).
        total: dict[str, int] = {}
        for *_, counts in tallies:
            for k, v in counts.items():
                total[k] = total.get(k, 0) + v
        rows = sum(total.values())
        if total.get("within", 0) == rows:
            checks.append(Paragraph(f"Bound check: all {rows} measurements lie within their algorithm's "
                                    "documented error bound.", "ok"))
        else:
            checks.append(Paragraph(f"Bound check: none of the {rows} measurements exceeds its algorithm's "
                                    "documented error bound, but not every one was judged against a bound: "
                                    + "; ".join(tally_phrases(total)) + "."))
    doc.blocks[checks_at:checks_at] = checks
    return doc


def main(argv: list[str]) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("runs", nargs="+", type=Path, metavar="RUN_DIR")
    ap.add_argument("--out", type=Path, required=True, help="output folder (created)")
    ap.add_argument("--force", action="store_true", help="replace an existing report in --out")
    ap.add_argument("--quiet", action="store_true", help="do not print the HTML path")
    ap.add_argument("--linked-figures", action="store_true",
                    help="report.html shows the figures from figures/ (not inline): the page needs the folder")
    a = ap.parse_args(argv)
    try:
        runs = [load_run(p, lbl) for p, lbl in zip(a.runs, run_labels(a.runs))]
        out = a.out
        if ((out / "report.html").exists() or (out / "report.md").exists()) and not a.force:
            raise RunError(f"'{out}' already holds a report; pass --force to replace it")
        out.mkdir(parents=True, exist_ok=True)
        doc = build(runs, out)
        html = write_html(doc, out, a.linked_figures)
        write_markdown(doc, out)
    except RunError as e:
        print(f"render.py: {e}", file=sys.stderr)
        return 2
    except OSError as e:
        print(f"render.py: cannot write the report: {e}", file=sys.stderr)
        return 2
    except Exception as e:  # a bug, or data no renderer expected: one line, the traceback on request
        if os.environ.get("SUMLAB_DEBUG"):
            raise
        print(f"render.py: cannot render {', '.join(map(str, a.runs))}: {type(e).__name__}: {e} "
              "(SUMLAB_DEBUG=1 shows the traceback)", file=sys.stderr)
        return 1
    if not a.quiet:
        print(html)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
