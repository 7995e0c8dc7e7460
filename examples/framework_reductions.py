"""The reductions of PyTorch, CuPy and JAX on the GPU, and of NumPy and math.fsum on the CPU, as
sumlab subjects beside sumlab's own kernels, in every study that has a place for them:

  determinism/  sums (torch.sum over three views, cumsum's last value, index_add_ and scatter_add_
                into one element with and without deterministic algorithms, a cuBLAS dot,
                cupy.sum, jax.numpy.sum, numpy.sum, math.fsum): distinct bits run to run and
                across configurations, 20 runs each, n = 2^16 .. 2^28;
  error-vs-n/   the same sums against the exact sum as n grows, beside serial and pairwise;
  rows/         torch's softmax, layer_norm and var over rows, float32 and bfloat16, beside
                sumlab's row kernels;
  scan/         torch.cumsum, cupy.cumsum, jax.numpy.cumsum against the exact prefix sums;
  segmented/    index_add_ and scatter_add_ into segment ids (deterministic mode on and off) and
                torch.segment_reduce against the exact per-segment sums;
  bf16-*/       bfloat16 sums (torch.sum and jax.numpy.sum of a bfloat16 array, which return
                bfloat16) on data of bfloat16 values (sumlab.bfloat16_round of N(4, 1)), so the
                lab's exact reference is the exact sum of what they add: determinism over 2^24
                values and the error over its prefixes, beside sumlab's kernels on the same values.

    python examples/framework_reductions.py --out runs/frameworks          # on a CUDA machine
    python examples/framework_reductions.py --frameworks numpy --studies determinism,error-vs-n \
        --out runs/frameworks-cpu
    sumlab report runs/frameworks/determinism

Each subject is one line of the framework's own API on the lab's generated data (uploaded once
per input for the GPU frameworks); the lab calls it `runs` times per configuration and compares
every result's bits with the exact one. A framework that is not installed is left out with a
message; so is a study none of the chosen frameworks has a subject for. bfloat16 enters where
the frameworks compute in it: the row study's bfloat16 rows and the bfloat16 sums (scans of
bfloat16 data are not measured: their results are compared in the data's dtype, float32).
"""
from __future__ import annotations

import argparse
import os
import sys

os.environ.setdefault("XLA_PYTHON_CLIENT_PREALLOCATE", "false")  # JAX would take most of the device

import sumlab  # noqa: E402


FSUM_MAX_N = 1 << 24  # math.fsum on a Python list: minutes and tens of GB of objects at 2^28


def torch_subjects() -> list[sumlab.Subject]:
    import torch

    def cuda(a):
        return torch.from_numpy(a).cuda()

    def rows(a):  # the lab's rows on the device; bfloat16 arrives as its uint16 bit patterns
        t = torch.from_numpy(a.view("int16") if a.dtype.kind == "u" else a).cuda()
        return t.view(torch.bfloat16) if a.dtype.kind == "u" else t

    def deterministic(flag, f):
        old = torch.are_deterministic_algorithms_enabled()
        torch.use_deterministic_algorithms(flag)
        try:
            return f()
        finally:
            torch.use_deterministic_algorithms(old)

    def with_index(a):  # every element added into element 0: a reduction through atomics
        x = cuda(a)
        return x, torch.zeros(x.numel(), dtype=torch.long, device="cuda")

    def index_add(xi, deterministic_algorithms=False):
        x, idx = xi
        return deterministic(deterministic_algorithms,
                             lambda: torch.zeros(1, dtype=x.dtype, device="cuda").index_add_(0, idx, x)[0])

    def scatter_add(xi):
        x, idx = xi
        return torch.zeros(1, dtype=x.dtype, device="cuda").scatter_add_(0, idx, x)[0]

    def dot_ones(x):  # the sum as a cuBLAS dot product
        return torch.dot(x, torch.ones_like(x))

    def sum_as_rows(x, rows):  # zeros pad n to a multiple of rows: the exact sum is unchanged
        return torch.sum(torch.nn.functional.pad(x, (0, -x.numel() % rows)).view(rows, -1))

    def segments(data):  # values, segment id of every value, lengths, number of segments
        x, off = data
        lengths = torch.from_numpy(off[1:] - off[:-1]).cuda()
        ids = torch.repeat_interleave(torch.arange(len(lengths), device="cuda"), lengths)
        return cuda(x), ids, lengths

    def segment_index_add(d, deterministic_algorithms=False):
        x, ids, lengths = d
        return deterministic(deterministic_algorithms,
                             lambda: torch.zeros(len(lengths), dtype=x.dtype, device="cuda").index_add_(0, ids, x))

    def segment_scatter_add(d, deterministic_algorithms=False):
        x, ids, lengths = d
        return deterministic(deterministic_algorithms,
                             lambda: torch.zeros(len(lengths), dtype=x.dtype, device="cuda").scatter_add_(0, ids, x))

    def segment_reduce(d):
        x, _, lengths = d
        return torch.segment_reduce(x, "sum", lengths=lengths, unsafe=True)

    both = [{"deterministic_algorithms": False}, {"deterministic_algorithms": True}]
    return [
        # The same data viewed as rows x columns: does the order depend on the view?
        sumlab.Subject(sum_as_rows, name="torch_sum", prepare=cuda,
                       configs=[{"rows": 1}, {"rows": 64}, {"rows": 4096}]),
        sumlab.Subject(lambda x: torch.cumsum(x, 0)[-1], name="torch_cumsum_last", prepare=cuda),
        sumlab.Subject(index_add, name="torch_index_add", prepare=with_index),
        sumlab.Subject(lambda xi: index_add(xi, True), name="torch_index_add_deterministic", prepare=with_index),
        sumlab.Subject(scatter_add, name="torch_scatter_add", prepare=with_index),
        sumlab.Subject(dot_ones, name="torch_dot_ones", prepare=cuda),
        sumlab.Subject(lambda x: torch.cumsum(x, 0), name="torch_cumsum", prepare=cuda, kind="scan"),
        sumlab.Subject(lambda x: torch.softmax(x, dim=1), name="torch_softmax", prepare=rows, kind="softmax"),
        sumlab.Subject(lambda x: torch.nn.functional.layer_norm(x, x.shape[1:]), name="torch_layer_norm",
                       prepare=rows, kind="layer_norm"),
        sumlab.Subject(lambda x: torch.var(x, dim=1, correction=0), name="torch_var", prepare=rows, kind="variance"),
        sumlab.Subject(segment_index_add, name="torch_index_add", prepare=segments, configs=both,
                       kind="segment_sums"),
        sumlab.Subject(segment_scatter_add, name="torch_scatter_add", prepare=segments, configs=both,
                       kind="segment_sums"),
        sumlab.Subject(segment_reduce, name="torch_segment_reduce", prepare=segments, kind="segment_sums"),
        sumlab.Subject(lambda x: torch.sum(x), name="torch_sum_bf16", prepare=lambda a: cuda(a).bfloat16()),
    ]


def cupy_subjects() -> list[sumlab.Subject]:
    import cupy
    return [sumlab.Subject(lambda x: cupy.sum(x), name="cupy_sum", prepare=cupy.asarray),
            sumlab.Subject(lambda x: cupy.cumsum(x), name="cupy_cumsum", prepare=cupy.asarray, kind="scan")]


def jax_subjects() -> list[sumlab.Subject]:
    import jax
    import jax.numpy as jnp
    jax.config.update("jax_enable_x64", True)  # float64 inputs stay float64
    gpu = [d for d in jax.devices() if d.platform == "gpu"]
    if not gpu:
        raise RuntimeError("JAX sees no GPU")
    put = lambda a: jax.device_put(a, gpu[0])  # noqa: E731
    return [sumlab.Subject(jax.jit(jnp.sum), name="jax_sum", prepare=put),
            sumlab.Subject(jax.jit(jnp.cumsum), name="jax_cumsum", prepare=put, kind="scan"),
            sumlab.Subject(jax.jit(jnp.sum), name="jax_sum_bf16", prepare=lambda a: put(a.astype(jnp.bfloat16)))]


def numpy_subjects() -> list[sumlab.Subject]:
    import math
    import numpy as np

    def fsum(x):
        if x.size > FSUM_MAX_N:
            raise ValueError(f"not run above n = 2^{FSUM_MAX_N.bit_length() - 1} (a Python list of n floats)")
        # Exact, rounded to double, then to the input's dtype (for float32 a second rounding, which
        # can miss the correctly rounded float32 sum when the double lands on a tie).
        return x.dtype.type(math.fsum(x.tolist()))

    return [sumlab.Subject(lambda x: np.sum(x), name="numpy_sum"),  # NumPy's blocked pairwise sum
            sumlab.Subject(fsum, name="math_fsum"),
            sumlab.Subject(lambda x: np.cumsum(x), name="numpy_cumsum", kind="scan")]


GPU_FRAMEWORKS = ("torch", "cupy", "jax")


STUDIES = ("determinism", "error-vs-n", "rows", "scan", "segmented", "bf16")


def of_kind(subjects: list[sumlab.Subject], *kinds: str) -> list[sumlab.Subject]:
    return [s for s in subjects if s.kind in kinds]


def bf16_sums(a: argparse.Namespace, subjects: list[sumlab.Subject], backend: str, kernels: list[str]) -> None:
    """The bfloat16 sums on 2^24 bfloat16 values: determinism, then the error over the prefixes."""
    import numpy as np
    data = sumlab.bfloat16_round(np.random.default_rng(1).standard_normal(1 << 24).astype(np.float32) + 4)
    sumlab.study.determinism(subjects, os.path.join(a.out, "bf16-determinism"), data=data, runs=a.runs,
                             kernels=kernels, backend=backend, grids=["SM", "8SM"], blocks=[256], vectors=[4],
                             mappings=["grid_stride"], force=a.force, resume=a.resume)
    sumlab.study.error_vs_n(os.path.join(a.out, "bf16-error-vs-n"), data=data, subjects=subjects,
                            algorithms=["serial", "pairwise"], gpu_kernels=kernels, seeds=1, log2_min=10,
                            log2_max=24, log2_step=2, backend=backend, force=a.force, resume=a.resume)


def run_studies(a: argparse.Namespace, subjects: list[sumlab.Subject], on_gpu: bool) -> None:
    studies = a.studies.split(",")
    backend = "cuda" if on_gpu else "model"
    bf16 = [s for s in subjects if s.name.endswith("_bf16")]  # sums of bfloat16 data: their own inputs
    subjects = [s for s in subjects if s not in bf16]
    if "bf16" in studies and bf16:
        bf16_sums(a, bf16, backend, a.kernels.split(",") if on_gpu else ["none"])
    sums = of_kind(subjects, "sum")
    if "determinism" in studies and sums:
        kernels = a.kernels.split(",") if on_gpu else ["none"]
        det = sumlab.study.determinism(sums, os.path.join(a.out, "determinism"), runs=a.runs, kernels=kernels,
                                       backend=backend,
                                       # sumlab's kernels over a few launch shapes (each shape's runs)
                                       grids=["SM", "8SM"], blocks=[256], vectors=[4], mappings=["grid_stride"],
                                       sizes=a.sizes.split(","), dtypes=["float32", "float64"],
                                       dists=["normal", "cancellation"], force=a.force, resume=a.resume)
        for r in det:
            print(f"{r['kernel']:30} {r['measured']:18} distinct results: within a configuration "
                  f"{r['distinct_within_shape_max']}, across configurations {r['distinct_across_shapes_max']}")
    if "error-vs-n" in studies and sums:
        sumlab.study.error_vs_n(os.path.join(a.out, "error-vs-n"), subjects=sums, algorithms=["serial", "pairwise"],
                                gpu_kernels=["none"], dtypes=["float32"], dists=["uniform", "normal", "cancellation"],
                                seeds=3, log2_min=10, log2_max=a.log2_max, log2_step=2, force=a.force, resume=a.resume)
    if "rows" in studies and of_kind(subjects, "variance", "layer_norm", "softmax"):
        sumlab.study.variance(os.path.join(a.out, "rows"), subjects=of_kind(subjects, "variance", "layer_norm", "softmax"),
                              dtypes=["float32", "bfloat16"], runs=a.runs, backend=backend, force=a.force, resume=a.resume)
    if "scan" in studies and of_kind(subjects, "scan"):
        sumlab.study.scan(os.path.join(a.out, "scan"), subjects=of_kind(subjects, "scan"), ops=["plus"],
                          sizes=a.scan_sizes.split(","), dtypes=["float32", "float64"], dists=["uniform", "normal"],
                          runs=a.runs, backend=backend, force=a.force, resume=a.resume)
    if "segmented" in studies and of_kind(subjects, "segment_sums"):
        sumlab.study.segmented(os.path.join(a.out, "segmented"), subjects=of_kind(subjects, "segment_sums"),
                               dtypes=["float32", "float64"], runs=a.runs, backend=backend, force=a.force, resume=a.resume)


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--out", default="runs/frameworks", help="folder for the run folders")
    p.add_argument("--runs", type=int, default=20, help="calls per configuration and input")
    p.add_argument("--sizes", default="2^16,2^20,2^24,2^28", help="determinism study's sizes")
    p.add_argument("--log2-max", type=int, default=28, help="error-vs-n's largest n, 2^k")
    p.add_argument("--scan-sizes", default="2^16,2^20,2^24", help="scan study's sizes")
    p.add_argument("--studies", default=",".join(STUDIES), help="which of " + ", ".join(STUDIES))
    p.add_argument("--frameworks", default="torch,cupy,jax,numpy", help="which of torch, cupy, jax, numpy")
    p.add_argument("--kernels", default="gpu_atomic,gpu_two_pass,gpu_cub",
                   help="sumlab's GPU kernels measured beside them on a GPU ('none': only the frameworks)")
    p.add_argument("--force", action="store_true", help="replace existing run folders")
    p.add_argument("--resume", action="store_true", help="continue run folders an earlier call left unfinished")
    a = p.parse_args()
    if a.force and a.resume:
        print("framework_reductions: --force and --resume exclude each other", file=sys.stderr)
        return 2
    chosen = a.frameworks.split(",")
    makers = {"torch": torch_subjects, "cupy": cupy_subjects, "jax": jax_subjects, "numpy": numpy_subjects}
    for name in chosen:
        if name not in makers:
            print(f"framework_reductions: unknown framework {name!r} (torch, cupy, jax, numpy)", file=sys.stderr)
            return 2
    for name in a.studies.split(","):
        if name not in STUDIES:
            print(f"framework_reductions: unknown study {name!r} ({', '.join(STUDIES)})", file=sys.stderr)
            return 2
    ok, why = sumlab.cuda_available()
    if not ok and any(f in GPU_FRAMEWORKS for f in chosen):
        print(f"framework_reductions: torch, cupy and jax need a CUDA device ({why})", file=sys.stderr)
        return 2
    subjects: list[sumlab.Subject] = []
    for name, make in makers.items():
        if name not in chosen:
            continue
        try:
            subjects += make()
        except Exception as e:  # an absent framework is left out, not fatal
            print(f"framework_reductions: {name} left out: {e}", file=sys.stderr)
    run_studies(a, subjects, ok)
    return 0


if __name__ == "__main__":
    sys.exit(main())
