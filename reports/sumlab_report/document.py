"""The report as a list of blocks, and its two writers: a self-contained HTML file (figures
inline as SVG elements: nothing external, no network) and Markdown (figures as links to the SVGs
next to it).

Text may hold `code` spans in backticks; everything else is plain text and is escaped.
"""
from __future__ import annotations

import html
import re
from dataclasses import dataclass, field
from pathlib import Path


@dataclass
class Heading:
    text: str
    level: int = 2  # 1 is the document title
    anchor: str = ""


@dataclass
class Paragraph:
    text: str
    kind: str = "text"  # text | note | ok | alarm


@dataclass
class Figure:
    stem: str  # path without extension, relative to the output folder; the .svg exists
    title: str
    caption: str


@dataclass
class Table:
    header: list[str]
    rows: list[list[str]]
    caption: str = ""
    alarm_rows: set[int] = field(default_factory=set)  # row indices drawn in red
    numeric: bool = True  # right-align cells that look like numbers


@dataclass
class Document:
    title: str
    blocks: list = field(default_factory=list)

    def add(self, *blocks) -> None:
        self.blocks.extend(blocks)


def slug(text: str) -> str:
    return re.sub(r"[^a-z0-9]+", "-", text.lower()).strip("-") or "x"


# --- HTML ------------------------------------------------------------------------------------

_CSS = """
body { font-family: system-ui, -apple-system, "Segoe UI", sans-serif; max-width: 1200px;
       margin: 2em auto; padding: 0 1em; color: #222; line-height: 1.45; }
h1 { border-bottom: 2px solid #444; padding-bottom: .2em; }
h2 { border-bottom: 1px solid #bbb; margin-top: 2em; }
code { background: #f3f3f3; padding: 0 .2em; border-radius: 3px; }
table { border-collapse: collapse; margin: .5em 0 1.5em; font-size: 0.9em; }
th, td { border: 1px solid #ccc; padding: .25em .5em; vertical-align: top; }
th { background: #eee; text-align: left; }
td.num { text-align: right; font-variant-numeric: tabular-nums; white-space: nowrap; }
div.wide { overflow-x: auto; max-width: 100%; }
table.dense { font-size: .8em; }
table.dense th, table.dense td { padding: .2em .3em; }
tr.alarm td { background: #ffd6d6; color: #900; font-weight: bold; }
caption { caption-side: top; text-align: left; color: #555; padding-bottom: .3em; }
figure { margin: 1em 0 2em; }
figure svg, figure img { max-width: 100%; height: auto; border: 1px solid #ddd; }
figcaption { color: #444; font-size: .92em; margin-top: .4em; }
p.note { color: #555; font-style: italic; }
p.ok { background: #e3f6e3; border-left: 4px solid #2a2; padding: .4em .8em; }
p.alarm { background: #ffd6d6; border: 2px solid #c00; color: #900; font-weight: bold;
          padding: .6em .9em; font-size: 1.1em; }
nav ul { list-style: none; padding-left: 0; }
nav li.toc3 { margin-left: 1.5em; }
"""

_NUMBER = re.compile(r"^[-+]?(\d[\d,]*\.?\d*|\.\d+)([eE][-+]?\d+)?$|^[-+]?inf$|^nan$|^0x[0-9a-f]+$")


def _inline_html(text: str) -> str:
    parts = text.split("`")
    out = []
    for i, part in enumerate(parts):
        esc = html.escape(part)
        out.append(f"<code>{esc}</code>" if i % 2 else esc)
    return "".join(out)


def _cell_html(text: str) -> str:
    """A header or text cell: identifiers may break after their underscores (long column names and
    kernel names are what make a table wider than the page)."""
    return _inline_html(text).replace("_", "_<wbr>")


def _table_html(t: Table) -> str:
    # Many columns (a column per input) are set smaller and tighter; a table still wider than the
    # page after that scrolls inside its own box, never clipped.
    dense = ' class="dense"' if len(t.header) > 10 else ""
    lines = [f'<div class="wide"><table{dense}>']
    if t.caption:
        lines.append(f"<caption>{_inline_html(t.caption)}</caption>")
    lines.append("<tr>" + "".join(f"<th>{_cell_html(h)}</th>" for h in t.header) + "</tr>")
    for i, row in enumerate(t.rows):
        cls = ' class="alarm"' if i in t.alarm_rows else ""
        cells = []
        for c in row:
            is_num = t.numeric and bool(_NUMBER.match(c.strip()))
            cells.append(f'<td class="num">{html.escape(c)}</td>' if is_num else f"<td>{_cell_html(c)}</td>")
        lines.append(f"<tr{cls}>" + "".join(cells) + "</tr>")
    lines.append("</table></div>")
    return "\n".join(lines)


def _inline_svg(svg: str, title: str) -> str:
    """A figure's SVG file as an element of the HTML page. Inline rather than a base64 data URI,
    which made each figure a third larger again and was committed beside the SVG file itself. The
    XML declaration, DOCTYPE, namespace declarations (implied in HTML) and matplotlib's metadata
    go; ids may repeat across figures without harm, since matplotlib derives each from its
    content (a clip box, a glyph, a marker), so equal ids name equal definitions."""
    svg = svg[svg.index("<svg"):]
    svg = re.sub(r"\s*<metadata>.*?</metadata>", "", svg, count=1, flags=re.S)
    svg = re.sub(r'\s+xmlns(:\w+)?="[^"]*"', "", svg[:svg.index(">") + 1]) + svg[svg.index(">") + 1:]
    return svg.replace("<svg", f'<svg role="img" aria-label="{html.escape(title)}"', 1)


def write_html(doc: Document, out_dir: Path, linked_figures: bool = False) -> Path:
    """report.html: self-contained (each figure's SVG inline), or with linked_figures each figure an
    <img> of its file under figures/, which the page then needs beside it: half the bytes of a
    folder that keeps both (the Markdown links the files either way), for reports kept in a
    repository."""
    body = []
    toc = [b for b in doc.blocks if isinstance(b, Heading) and b.level in (2, 3) and b.anchor]
    for b in doc.blocks:
        if isinstance(b, Heading):
            anchor = f' id="{html.escape(b.anchor)}"' if b.anchor else ""
            body.append(f"<h{b.level}{anchor}>{_inline_html(b.text)}</h{b.level}>")
            if b.level == 1 and toc:
                items = "".join(f'<li class="toc{h.level}"><a href="#{html.escape(h.anchor)}">'
                                f"{_inline_html(h.text)}</a></li>" for h in toc)
                body.append(f"<nav><ul>{items}</ul></nav>")
        elif isinstance(b, Paragraph):
            body.append(f'<p class="{b.kind}">{_inline_html(b.text)}</p>')
        elif isinstance(b, Table):
            body.append(_table_html(b))
        elif isinstance(b, Figure):
            if linked_figures:
                svg = f'<img src="{html.escape(b.stem)}.svg" alt="{html.escape(b.title)}">'
            else:
                svg = _inline_svg((out_dir / (b.stem + ".svg")).read_text(encoding="utf-8"), b.title)
            body.append(f"<figure>{svg}"
                        f"<figcaption><b>{_inline_html(b.title)}.</b> {_inline_html(b.caption)}</figcaption></figure>")
    page = ("<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
            f"<title>{html.escape(doc.title)}</title>\n<style>{_CSS}</style>\n</head>\n<body>\n"
            + "\n".join(body) + "\n</body>\n</html>\n")
    path = out_dir / "report.html"
    path.write_text(page, encoding="utf-8")
    return path


# --- Markdown --------------------------------------------------------------------------------

def _md_text(text: str) -> str:
    """Markdown text with no live HTML: <, > and & are escaped outside `code` spans (where
    Markdown shows them as they are). A run's command line or a CSV value can hold anything."""
    parts = text.split("`")
    for i in range(0, len(parts), 2):  # even parts lie outside backticks
        parts[i] = html.escape(parts[i], quote=False)
    return "`".join(parts)


def _md_cell(text: str) -> str:
    return _md_text(text).replace("|", "\\|").replace("\n", " ")


def write_markdown(doc: Document, out_dir: Path) -> Path:
    out = []
    for b in doc.blocks:
        if isinstance(b, Heading):
            out.append("#" * b.level + " " + _md_text(b.text))
        elif isinstance(b, Paragraph):
            text = _md_text(b.text)
            if b.kind == "alarm":
                out.append(f"> **⚠ {text}**")
            elif b.kind == "ok":
                out.append(f"> ✓ {text}")
            elif b.kind == "note":
                out.append(f"_{text}_")
            else:
                out.append(text)
        elif isinstance(b, Table):
            lines = []
            if b.caption:
                lines.append(_md_text(b.caption))
                lines.append("")
            lines.append("| " + " | ".join(_md_cell(h) for h in b.header) + " |")
            lines.append("|" + "|".join(" --- " for _ in b.header) + "|")
            for i, row in enumerate(b.rows):
                cells = [_md_cell(c) for c in row]
                if i in b.alarm_rows:
                    cells = [f"**{c}**" if c else c for c in cells]
                    cells[0] = "⚠ " + cells[0]
                lines.append("| " + " | ".join(cells) + " |")
            out.append("\n".join(lines))
        elif isinstance(b, Figure):
            out.append(f"![{_md_text(b.title)}]({b.stem}.svg)\n\n**{_md_text(b.title)}.** {_md_text(b.caption)}")
    path = out_dir / "report.md"
    path.write_text("\n\n".join(out) + "\n", encoding="utf-8")
    return path
