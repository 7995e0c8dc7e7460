"""Renderers of `sumlab bench` (bench_gpu.csv, bench_families.csv, bench_cpu.csv): each sum's speed
as a ratio against peers measured in the same run, CUB's DeviceReduce::Sum and a read-only kernel on
the GPU (and the scans', segmented sums' and variance kernels' bandwidth against that read kernel),
the ordered double loop on the CPU. Registered in studies.RENDERERS (columns: data/README.md).
"""
from __future__ import annotations

import math
from collections import defaultdict

from . import figures
from .document import Figure, Heading, Paragraph, Table, slug
from .figures import plt
from .run_folder import CsvData, Run, num


def _n_text(n: int) -> str:
    k = n.bit_length() - 1
    return f"2^{k}" if n == 1 << k and k >= 10 else str(n)


def _best(rows: list[dict[str, str]]) -> dict[str, str] | None:
    """The fastest timed row (the default shape and, with --sweep, the swept ones)."""
    timed = [r for r in rows if math.isfinite(num(r.get("ms")))]
    return min(timed, key=lambda r: num(r["ms"])) if timed else None


def render_bench_gpu(run: Run, data: CsvData, ctx) -> list:
    cells: dict[tuple, list] = defaultdict(list)
    for r in data.rows:
        cells[(r["dtype"], r["distribution"], r["kernel"], int(r["n"]))].append(r)
    kernels = [k for k in data.ordered_unique("kernel")]
    for k in kernels:
        ctx.palette.style(k)
    blocks: list = [
        Heading("GPU sums: time against CUB and the read roof", 3, anchor=slug(run.label + "-bench-gpu")),
        Paragraph("What this shows: the median device time of one sum (CUDA events over back-to-back launches "
                  "that rotate through copies of the input larger than L2), as the ratio CUB DeviceReduce::Sum "
                  "time / this sum's time (above 1: faster than CUB) and as bandwidth. `read_roof` is a kernel "
                  "that only loads every byte: no reduction can beat it. Both peers are timed in the same run, "
                  "on the same input. Where the run swept launch shapes, the fastest shape is shown and named."),
    ]
    errors = [r for r in data.rows if r.get("error")]
    if errors:
        blocks.append(Paragraph(f"{len(errors)} measurement(s) failed; the first: {errors[0]['kernel']} "
                                f"{errors[0]['dtype']} n={errors[0]['n']}: {errors[0]['error']}", "alarm"))
    for dtype in data.ordered_unique("dtype"):
        for dist in data.ordered_unique("distribution"):
            ns = sorted({n for (d, di, _, n) in cells if d == dtype and di == dist})
            present = [k for k in kernels if any((dtype, dist, k, n) in cells for n in ns)]
            if not ns or not present:
                continue
            fig, ax = plt.subplots(figsize=(7.5, 4.2))
            for k in present:
                xs, ys = [], []
                for n in ns:
                    b = _best(cells.get((dtype, dist, k, n), []))
                    if b and math.isfinite(num(b.get("gb_per_s"))):
                        xs.append(n)
                        ys.append(num(b["gb_per_s"]))
                if xs:
                    ax.plot(xs, ys, marker=ctx.palette.marker(k), color=ctx.palette.colour(k), label=k,
                            linestyle="--" if k in ("read_roof", "gpu_cub") else "-")
            ax.set_xscale("log", base=2)
            ax.set_xlabel("n (elements)")
            ax.set_ylabel("GB/s (input bytes / time)")
            ax.set_title(f"{dtype}, {dist}")
            ax.legend(fontsize=7, ncol=2, frameon=False)
            fig.tight_layout()
            stem = f"bench_gpu_{dtype}_{slug(dist)}"
            figures.save(fig, ctx.out_dir, ctx.fig_prefix + stem)
            blocks.append(Figure(ctx.fig_prefix + stem, f"Bandwidth, {dtype}, {dist}",
                                 "Fastest shape per kernel and n; dashed: the peers."))
            header = ["kernel"] + [f"n={_n_text(n)}" for n in ns] + ["shape at largest n"]
            rows = []
            for k in present:
                if k in ("read_roof",):
                    continue
                row = [k]
                shape = ""
                for n in ns:
                    b = _best(cells.get((dtype, dist, k, n), []))
                    row.append(f"{num(b['ratio_cub']):.3f}" if b and math.isfinite(num(b.get("ratio_cub"))) else "")
                    if b and n == ns[-1]:
                        shape = b.get("shape", "")
                rows.append(row + [shape])
            roof = ["read_roof"]
            for n in ns:
                b = _best(cells.get((dtype, dist, "read_roof", n), []))
                roof.append(f"{num(b['ratio_cub']):.3f}" if b else "")
            rows.append(roof + [""])
            blocks.append(Table(header, rows, f"CUB time / kernel time, {dtype}, {dist} (1 = CUB's speed; "
                                              "the read roof row is the ceiling)."))
            # A swept run: the shape a caller gets without asking, beside the sweep's best above.
            swept = [k for k in present if any(r.get("role") == "sweep" for n in ns
                                               for r in cells.get((dtype, dist, k, n), []))]
            if swept:
                rows = []
                for k in swept:
                    row, shape = [k], ""
                    for n in ns:
                        d = next((r for r in cells.get((dtype, dist, k, n), []) if r.get("role") == "default"), None)
                        ok = d is not None and math.isfinite(num(d.get("ratio_cub")))
                        row.append(f"{num(d['ratio_cub']):.3f}" if ok else "")
                        if d is not None:
                            shape = d.get("shape", "")
                    rows.append(row + [shape])
                blocks.append(Table(["kernel"] + [f"n={_n_text(n)}" for n in ns] + ["default shape"], rows,
                                    f"CUB time / kernel time at each kernel's default shape, {dtype}, {dist} (what "
                                    "a sum given no shape runs; the table above has the sweep's fastest)."))
    return blocks


def render_bench_families(run: Run, data: CsvData, ctx) -> list:
    # Runs before the seventeenth session timed the scans and segmented sums over one copy of their
    # input, which the L2 could hold (their CSVs' in_l2 column says where); every family now reads
    # copies in turn, past the L2.
    one_copy = bool(data.rows) and "in_l2" in data.rows[0]
    method = ("over a resident input; * marks sizes whose input fits in L2, where repeated launches may read from "
              "L2 and the ratio flatters." if one_copy else
              "over copies of the input that the launches read in turn, together past the L2.")
    blocks: list = [
        Heading("GPU scans, segmented sums and row kernels: bandwidth against the read roof", 3,
                anchor=slug(run.label + "-bench-families")),
        Paragraph("What this shows: each algorithm's bytes moved per second (a scan reads and writes every "
                  "element; a segmented sum and a row kernel read each once, a bfloat16 row two bytes of it) as a fraction of the read "
                  "roof's bandwidth on the same input in the same run (1 = as fast as a plain read; for a bfloat16 row, "
                  "a plain read of as many bytes), and, in the "
                  "last column, its time against its own family's CUB call at the largest n. Median of samples, "
                  "each a run of launches back to back as the sums are timed, " + method),
    ]
    errors = [r for r in data.rows if r.get("error")]
    if errors:
        blocks.append(Paragraph(f"{len(errors)} measurement(s) failed; the first: {errors[0]['family']} "
                                f"{errors[0]['kernel']} {errors[0]['dtype']} n={errors[0]['n']}: "
                                f"{errors[0]['error']}", "alarm"))
    # One panel per family, for the row kernels per problem ("bfloat16 rows of 4096", the detail's
    # first part) and for the scans per operator but + ("scan, max"), so each figure holds one
    # kernel per line.
    def panel(r: dict[str, str]) -> str:
        if r["family"] == "rows":
            return f"rows, {r['detail'].split(', ')[0]}"
        if r["family"] == "scan" and not r["detail"].startswith("+"):
            return f"scan, {r['detail'].split(' ')[0]}"
        return r["family"]

    cells: dict[tuple, dict[str, str]] = {}
    for r in data.rows:
        if not r.get("error"):
            cells[(r["dtype"], panel(r), r["kernel"], r["detail"], int(r["n"]))] = r
    panels = list(dict.fromkeys(panel(r) for r in data.rows if not r.get("error")))
    for dtype in data.ordered_unique("dtype"):
        for family in panels:
            keys = [(k, d) for (dt, f, k, d, _) in cells if dt == dtype and f == family]
            keys = list(dict.fromkeys(keys))
            ns = sorted({n for (dt, f, _, _, n) in cells if dt == dtype and f == family})
            if not keys or not ns:
                continue
            # A row kernel timed at several shapes is drawn at its fastest one at each n (the
            # tables give every shape and which one that was).
            rows_panel = family.startswith("rows")
            lines: dict[str, list[tuple[str, str]]] = {}
            for k, d in keys:
                label = k if family != "variance" else f"{k}, {d.split(', ')[-1]}"
                lines.setdefault(label, []).append((k, d))
            fig, ax = plt.subplots(figsize=(7.5, 4.2))
            for label, kds in lines.items():
                ctx.palette.style(label)
                pts = []
                for n in ns:
                    v = [num(cells[(dtype, family, k, d, n)]["gb_per_s"]) for k, d in kds if (dtype, family, k, d, n) in cells]
                    if v:
                        pts.append((n, max(v)))
                if pts:
                    ax.plot([p[0] for p in pts], [p[1] for p in pts], marker=ctx.palette.marker(label),
                            color=ctx.palette.colour(label), label=label,
                            linestyle="--" if label == "cub" or label.startswith("cub_") else "-")
            # The roof this panel's ratios are against: over the cell's input, or over as many bytes as
            # a narrower input holds (bfloat16 rows; runs before read_bytes: the cell's input).
            size = 4 if dtype == "float32" else 8
            roof = []
            for n in ns:
                r = next(r for (dt, f, _, _, m), r in cells.items() if dt == dtype and f == family and m == n)
                read_bytes = num(r["read_bytes"]) if r.get("read_bytes") else n * size
                roof.append((n, read_bytes / (num(r["read_ms"]) * 1e-3) / 1e9))
            ax.plot([n for n, _ in roof], [bw for _, bw in roof], color="black", linestyle=":", label="read roof")
            ax.set_xscale("log", base=2)
            ax.set_xlabel("n (elements)")
            ax.set_ylabel("GB/s (bytes moved / time)")
            ax.set_title(f"{family}, {dtype}")
            ax.legend(fontsize=7, ncol=2, frameon=False)
            fig.tight_layout()
            stem = f"bench_{slug(family)}_{dtype}"
            figures.save(fig, ctx.out_dir, ctx.fig_prefix + stem)
            blocks.append(Figure(ctx.fig_prefix + stem, f"Bandwidth, {family}, {dtype}",
                                 "Dashed: the CUB peers; dotted: the read roof."
                                 + (" Each row kernel at its fastest shape at each n." if rows_panel else "")))
            if rows_panel and any(len(kds) > 1 for kds in lines.values()):
                best_rows = []
                for label, kds in lines.items():
                    row = [label]
                    for n in ns:
                        got = [(num(cells[(dtype, family, k, d, n)]["ratio_read"]), d, cells[(dtype, family, k, d, n)])
                               for k, d in kds if (dtype, family, k, d, n) in cells]
                        if not got:
                            row.append("")
                            continue
                        ratio, d, r = max(got, key=lambda g: g[0])
                        star = "*" if r.get("in_l2") == "1" else ""
                        row.append(f"{ratio:.2f}{star} /{d.rsplit('/', 1)[-1]}")
                    best_rows.append(row)
                blocks.append(Table(["kernel"] + [f"n={_n_text(n)}" for n in ns], best_rows,
                                    f"The fastest shape of each row kernel: bandwidth / read-roof bandwidth and the "
                                    f"threads of its block, {family}, {dtype}{' (* input in L2)' if one_copy else ''}; each shape has its own "
                                    f"bits, all modelled."))
            header = ["kernel", "detail"] + [f"n={_n_text(n)}" for n in ns] + ["/ peer at largest n"]
            rows = []
            for k, d in keys:
                row = [k, d]
                for n in ns:
                    r = cells.get((dtype, family, k, d, n))
                    row.append(f"{num(r['ratio_read']):.2f}{'*' if r.get('in_l2') == '1' else ''}" if r else "")
                last = cells.get((dtype, family, k, d, ns[-1]))
                peer = num(last.get("ratio_peer")) if last else math.nan
                row.append(f"{peer:.2f} ({last['peer']})" if last and math.isfinite(peer) else "")
                rows.append(row)
            blocks.append(Table(header, rows, f"Bandwidth / read-roof bandwidth, {family}, {dtype}"
                                              f"{' (* input in L2)' if one_copy else ''}."))
    return blocks


def render_bench_cpu(run: Run, data: CsvData, ctx) -> list:
    rows = [[r["dtype"], r["algorithm"], r["n"], f"{num(r['ns_per_element']):.3g}",
             f"{num(r['ratio_serial_double']):.3g}"] for r in data.rows]
    return [
        Heading("CPU sums: ns per element", 3, anchor=slug(run.label + "-bench-cpu")),
        Paragraph("Median wall time of each CPU algorithm over the same uniform input, per element, and its "
                  "ratio to the ordered double loop (`serial` on float64) timed in the same run. The Google "
                  "Benchmark suites in bench/ measure the same algorithms with more care "
                  "(build/<preset>/bench/sumlab_bench_cpu)."),
        Table(["dtype", "algorithm", "n", "ns/element", "/ serial double"], rows),
    ]


BENCH_RENDERERS = {
    "bench_gpu.csv": render_bench_gpu,
    "bench_families.csv": render_bench_families,
    "bench_cpu.csv": render_bench_cpu,
}
