"""What the Python face adds to the C++ call it makes (a benchmark, not a test).

CPU: sumlab.sum(x, "exact") and sumlab.value(x, "exact") on 10^7 float64 NumPy values, against the
same C++ calls (sum_report, sum_value) timed in C++ on the same array in the same process. Goal:
the Python call within 5% of the C++ call. And a Python subject in a study: the time between the
calls of a function that returns at once, run back to back on 2^26 float32 values, against one
copy of those values (numpy.copy), which sumlab.Subject must make so that the function may change
or keep its input. Goal: within 1.5x of that copy.

GPU (when a CUDA device and PyTorch are here): sumlab.value on a PyTorch CUDA array of 2^26
elements read in place by gpu_exact (float32 and float64), against the same C++ call timed in C++
and against the kernel's time in `sumlab bench` (CUDA events, inputs rotated past the L2). Goal:
within 10% of the bench's kernel time. A call that returns a host float waits for the kernel and
copies its result back (a round trip of tens of µs); the repeatable form, value(x, 'gpu_exact',
out=o), leaves the sum on the device, so it is timed as a framework's reduction is: --calls sums
back to back, one synchronisation, the wall time per sum.

    build/venv/bin/python bench/python_overhead.py [--repeats 15] [--binary build/release/sumlab] [--json FILE]

Each figure is the median over --repeats calls, the Python and the C++ call in alternation after
one untimed round of each.
"""
from __future__ import annotations

import argparse
import csv
import json
import pathlib
import statistics
import subprocess
import tempfile
import time

import numpy as np

import sumlab
from sumlab import _sumlab


def paired_medians(python_call, x, what: str, algorithm: str, backend: str, repeats: int) -> tuple[float, float]:
    """Median seconds of the Python call and of the same C++ call timed in C++, measured in
    alternation (one of each per round, after one untimed round), so that drift of the machine
    (clocks, caches, other load) falls on both alike."""
    def python_once() -> float:
        t0 = time.perf_counter()
        python_call()
        return time.perf_counter() - t0

    def cpp_once() -> float:
        return _sumlab.time_in_cpp(x, "", what, [algorithm], backend, {}, 1)[0]

    python_once(), cpp_once()  # warm-up: first-touch pages, CUDA context, caches
    py, cpp = [], []
    for _ in range(repeats):
        py.append(python_once())
        cpp.append(cpp_once())
    return statistics.median(py), statistics.median(cpp)


def cpu_rows(repeats: int) -> list[dict]:
    x = np.random.default_rng(1).random(10_000_000)
    rows = []
    for what, call in (("sum", lambda: sumlab.sum(x, "exact")), ("value", lambda: sumlab.value(x, "exact"))):
        py, cpp = paired_medians(call, x, what, "exact", "", repeats)
        rows.append({"case": f"sumlab.{what}(x, 'exact'), 10^7 float64 NumPy", "python_ms": py * 1e3,
                     "cpp_ms": cpp * 1e3, "python_over_cpp": py / cpp, "goal": 1.05})
    return rows


def subject_row(repeats: int) -> dict:
    x = np.random.default_rng(1).random(1 << 26, dtype=np.float32)
    copies = []
    for _ in range(repeats):
        t0 = time.perf_counter()
        np.copy(x)
        copies.append(time.perf_counter() - t0)
    entered, left = [], []

    def at_once(a):
        entered.append(time.perf_counter())
        r = np.float32(0)
        left.append(time.perf_counter())
        return r

    with tempfile.TemporaryDirectory() as d:
        sumlab.study.determinism(sumlab.Subject(at_once, name="at_once"), str(pathlib.Path(d) / "d"), runs=repeats + 1,
                                 dtypes=["float32"], dists=["uniform"], sizes=[str(1 << 26)], kernels=["gpu_two_pass"],
                                 backend="model")
    gap = statistics.median(b - a for a, b in zip(left, entered[1:]))
    copy = statistics.median(copies)
    return {"case": "a sumlab.Subject's calls in a study, 2^26 float32: the time between them", "python_ms": gap * 1e3,
            "copy_ms": copy * 1e3, "python_over_copy": gap / copy, "goal": 1.5}


def bench_kernel_ms(binary: str, dtype: str, log2: int) -> float:
    with tempfile.TemporaryDirectory() as d:
        out = pathlib.Path(d) / "bench"
        subprocess.run([binary, "bench", "--no-cpu", "--no-families", "--kernels", "gpu_exact", "--dtypes", dtype,
                        "--dists", "uniform", "--exact-dists", "uniform", "--log2-min", str(log2), "--log2-max",
                        str(log2), "--out", str(out)], check=True, capture_output=True, text=True)
        with open(out / "bench_gpu.csv") as f:
            rows = [r for r in csv.DictReader(f) if r["kernel"] == "gpu_exact" and r["distribution"] == "uniform"]
        return float(rows[0]["ms"])


def into_row(x, dtype: str, kernel: float, calls: int, repeats: int) -> dict:
    """value(x, 'gpu_exact', out=o) back to back: the median over `repeats` rounds of the wall time of
    `calls` sums and one synchronisation, per sum."""
    import torch
    out = torch.empty((), dtype=x.dtype, device=x.device)
    sumlab.value(x, "gpu_exact", out=out)
    torch.cuda.synchronize()
    per_sum = []
    for _ in range(repeats):
        t0 = time.perf_counter()
        for _ in range(calls):
            sumlab.value(x, "gpu_exact", out=out)
        torch.cuda.synchronize()
        per_sum.append((time.perf_counter() - t0) / calls)
    assert float(out) == sumlab.value(x, "gpu_exact")  # the same bits as the round trip
    py = statistics.median(per_sum)
    return {"case": f"sumlab.value(x, 'gpu_exact', out=o) x{calls} back to back, 2^26 {dtype} PyTorch CUDA",
            "python_ms": py * 1e3, "bench_kernel_ms": kernel * 1e3, "python_over_bench": py / kernel, "goal": 1.10}


def gpu_rows(binary: str, repeats: int, calls: int) -> list[dict]:
    import torch
    rows = []
    for dtype in ("float32", "float64"):
        g = torch.Generator(device="cuda").manual_seed(1)
        x = torch.rand(1 << 26, dtype=getattr(torch, dtype), device="cuda", generator=g)
        torch.cuda.synchronize()
        py, cpp = paired_medians(lambda: sumlab.value(x, "gpu_exact", backend="cuda"), x, "value", "gpu_exact",
                                 "cuda", repeats)
        kernel = bench_kernel_ms(binary, dtype, 26) / 1e3
        rows.append({"case": f"sumlab.value(x, 'gpu_exact'), 2^26 {dtype} PyTorch CUDA", "python_ms": py * 1e3,
                     "cpp_ms": cpp * 1e3, "bench_kernel_ms": kernel * 1e3, "python_over_cpp": py / cpp,
                     "python_over_bench": py / kernel, "goal": 1.10})
        rows.append(into_row(x, dtype, kernel, calls, repeats))
        del x
        torch.cuda.empty_cache()
    return rows


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--repeats", type=int, default=31)
    p.add_argument("--binary", default="build/release/sumlab", help="the sumlab CLI (for the bench's kernel time)")
    p.add_argument("--calls", type=int, default=100, help="back-to-back sums per round of the out= form")
    p.add_argument("--json", help="also write the rows here")
    a = p.parse_args()
    rows = cpu_rows(a.repeats) + [subject_row(a.repeats)]
    ok, why = sumlab.cuda_available()
    if ok:
        rows += gpu_rows(a.binary, a.repeats, a.calls)
    else:
        print(f"GPU part skipped: {why}")
    for r in rows:
        extra = f", bench kernel {r['bench_kernel_ms']:.4f} ms -> {r['python_over_bench']:.3f}x" \
            if "bench_kernel_ms" in r else ""
        cpp = f", C++ {r['cpp_ms']:.4f} ms -> {r['python_over_cpp']:.3f}x" if "cpp_ms" in r else ""
        if "copy_ms" in r:
            cpp = f", one copy {r['copy_ms']:.4f} ms -> {r['python_over_copy']:.3f}x"
        print(f"{r['case']}: Python {r['python_ms']:.4f} ms{cpp}{extra} (goal <= {r['goal']:.2f}x)")
    if a.json:
        pathlib.Path(a.json).write_text(json.dumps({"sumlab": sumlab.__version__, "rows": rows}, indent=2) + "\n")


if __name__ == "__main__":
    main()
