"""The reductions of PyTorch, CuPy and JAX on the GPU, and of NumPy and math.fsum on the CPU, as
sumlab subjects beside sumlab's own kernels: which give the same bits run to run and across the
shapes of the same data, and how far each is from the exact sum as n grows.

    python examples/framework_reductions.py --out runs/frameworks          # on a CUDA machine
    python examples/framework_reductions.py --frameworks numpy --out runs/frameworks-cpu
    sumlab report runs/frameworks/determinism
    sumlab report runs/frameworks/error-vs-n

Each subject is one line of the framework's own API on a float32 or float64 array (the lab's
generated data, uploaded once per input for the GPU frameworks); the lab calls it `runs` times per
configuration and compares every result's bits with the exact sum. sumlab's kernels named by
--kernels run in the same determinism study on the same inputs (on a GPU). A framework that is
not installed is left out with a message.
"""
from __future__ import annotations

import argparse
import os
import sys

os.environ.setdefault("XLA_PYTHON_CLIENT_PREALLOCATE", "false")  # JAX would take most of the device

import sumlab  # noqa: E402


def torch_subjects() -> list[sumlab.Subject]:
    import torch

    def cuda(a):
        return torch.from_numpy(a).cuda()

    def with_index(a):  # every element added into element 0: a reduction through atomics
        x = cuda(a)
        return x, torch.zeros(x.numel(), dtype=torch.long, device="cuda")

    def index_add(xi, deterministic=False):
        x, idx = xi
        old = torch.are_deterministic_algorithms_enabled()
        torch.use_deterministic_algorithms(deterministic)
        try:
            return torch.zeros(1, dtype=x.dtype, device="cuda").index_add_(0, idx, x)[0]
        finally:
            torch.use_deterministic_algorithms(old)

    def scatter_add(xi):
        x, idx = xi
        return torch.zeros(1, dtype=x.dtype, device="cuda").scatter_add_(0, idx, x)[0]

    def dot_ones(x):  # the sum as a cuBLAS dot product
        return torch.dot(x, torch.ones_like(x))

    def sum_as_rows(x, rows):  # zeros pad n to a multiple of rows: the exact sum is unchanged
        return torch.sum(torch.nn.functional.pad(x, (0, -x.numel() % rows)).view(rows, -1))

    return [
        # The same data viewed as rows x columns: does the order depend on the view?
        sumlab.Subject(sum_as_rows, name="torch_sum", prepare=cuda,
                       configs=[{"rows": 1}, {"rows": 64}, {"rows": 4096}]),
        sumlab.Subject(lambda x: torch.cumsum(x, 0)[-1], name="torch_cumsum_last", prepare=cuda),
        sumlab.Subject(index_add, name="torch_index_add", prepare=with_index),
        sumlab.Subject(lambda xi: index_add(xi, True), name="torch_index_add_deterministic",
                       prepare=with_index),
        sumlab.Subject(scatter_add, name="torch_scatter_add", prepare=with_index),
        sumlab.Subject(dot_ones, name="torch_dot_ones", prepare=cuda),
    ]


def cupy_subjects() -> list[sumlab.Subject]:
    import cupy
    return [sumlab.Subject(lambda x: cupy.sum(x), name="cupy_sum", prepare=cupy.asarray)]


def jax_subjects() -> list[sumlab.Subject]:
    import jax
    import jax.numpy as jnp
    jax.config.update("jax_enable_x64", True)  # float64 inputs stay float64
    gpu = [d for d in jax.devices() if d.platform == "gpu"]
    if not gpu:
        raise RuntimeError("JAX sees no GPU")
    total = jax.jit(jnp.sum)
    return [sumlab.Subject(total, name="jax_sum", prepare=lambda a: jax.device_put(a, gpu[0]))]


def numpy_subjects() -> list[sumlab.Subject]:
    import math
    import numpy as np
    return [sumlab.Subject(lambda x: np.sum(x), name="numpy_sum"),  # NumPy's blocked pairwise sum
            # Exact, rounded to double, then to the input's dtype (for float32 a second rounding,
            # which can miss the correctly rounded float32 sum when the double lands on a tie).
            sumlab.Subject(lambda x: x.dtype.type(math.fsum(x.tolist())), name="math_fsum")]


GPU_FRAMEWORKS = ("torch", "cupy", "jax")


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--out", default="runs/frameworks", help="folder for the two run folders")
    p.add_argument("--runs", type=int, default=20, help="calls per configuration and input")
    p.add_argument("--sizes", default="2^20,2^24", help="determinism study's sizes")
    p.add_argument("--log2-max", type=int, default=24, help="error-vs-n's largest n, 2^k")
    p.add_argument("--frameworks", default="torch,cupy,jax", help="which of torch, cupy, jax, numpy")
    p.add_argument("--kernels", default="gpu_atomic,gpu_two_pass,gpu_cub",
                   help="sumlab's GPU kernels measured beside them on a GPU ('none': only the frameworks)")
    p.add_argument("--force", action="store_true", help="replace existing run folders")
    a = p.parse_args()
    chosen = a.frameworks.split(",")
    makers = {"torch": torch_subjects, "cupy": cupy_subjects, "jax": jax_subjects, "numpy": numpy_subjects}
    for name in chosen:
        if name not in makers:
            print(f"framework_reductions: unknown framework {name!r} (torch, cupy, jax, numpy)", file=sys.stderr)
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
    kernels = a.kernels.split(",") if ok else ["none"]
    det = sumlab.study.determinism(subjects, os.path.join(a.out, "determinism"), runs=a.runs, kernels=kernels,
                                   backend="cuda" if ok else "model",
                                   # sumlab's kernels over a few launch shapes (each shape's 20 runs)
                                   grids=["SM", "8SM"], blocks=[256], vectors=[4], mappings=["grid_stride"],
                                   sizes=a.sizes.split(","), dtypes=["float32", "float64"],
                                   dists=["normal", "cancellation"], force=a.force)
    for r in det:
        print(f"{r['kernel']:30} {r['measured']:18} distinct results: within a configuration "
              f"{r['distinct_within_shape_max']}, across configurations {r['distinct_across_shapes_max']}")
    sumlab.study.error_vs_n(os.path.join(a.out, "error-vs-n"), subjects=subjects, algorithms=["serial", "pairwise"],
                            gpu_kernels=["none"], dtypes=["float32"], dists=["uniform", "normal", "cancellation"],
                            seeds=3, log2_min=10, log2_max=a.log2_max, log2_step=2, force=a.force)
    return 0


if __name__ == "__main__":
    sys.exit(main())
