"""Your own GPU kernel as a sumlab subject, from Python: CuPy compiles a CUDA C++ kernel (NVRTC, at
run time), or Triton compiles a Triton one, and the lab measures it like its own kernels, its
launch parameters swept as the subject's configurations.

    python examples/cuda_kernel_subject.py --out runs/my-kernel      # on a CUDA machine with CuPy
    python examples/cuda_kernel_subject.py --with triton --out runs/my-triton-kernel
    sumlab report runs/my-kernel

Two kernels of the same order inside a block that differ in how the blocks' partial sums meet:
  - block_atomic:   every block adds its partial into the result with an atomic add, in whatever
                    order the blocks finish (the seed blog's atomics: new bits from run to run);
  - block_partials: every block writes its partial, and the partials are summed in index order (a
                    fixed order for a given launch: the same bits every run, other bits at another
                    grid or block size).
CuPy's kernels: each thread a grid-stride loop, then a shared-memory tree; Triton's: one tile of
BLOCK elements per program, tl.sum over the tile. The determinism study should measure them
not_deterministic and run_to_run, and report every configuration's distinct values and ulps from
the exact sum beside sumlab's gpu_atomic and gpu_two_pass. Exit status 1 if a kernel measures a
class other than expected.
"""
from __future__ import annotations

import argparse
import sys

import sumlab

SOURCE = r"""
template <class T>
__device__ T block_tree(T v) {               // blockDim.x a power of two
  extern __shared__ unsigned char raw[];
  T* s = reinterpret_cast<T*>(raw);
  s[threadIdx.x] = v;
  __syncthreads();
  for (unsigned h = blockDim.x / 2; h > 0; h /= 2) {
    if (threadIdx.x < h) s[threadIdx.x] += s[threadIdx.x + h];
    __syncthreads();
  }
  return s[0];
}

template <class T>
__device__ T thread_sum(const T* x, long long n) {
  T v = 0;
  for (long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x; i < n; i += (long long)gridDim.x * blockDim.x)
    v += x[i];
  return v;
}

template <class T>
__global__ void block_atomic(const T* x, long long n, T* out) {
  const T b = block_tree(thread_sum(x, n));
  if (threadIdx.x == 0) atomicAdd(out, b);
}

template <class T>
__global__ void block_partials(const T* x, long long n, T* partials) {
  const T b = block_tree(thread_sum(x, n));
  if (threadIdx.x == 0) partials[blockIdx.x] = b;
}

template <class T>
__global__ void sum_partials(const T* partials, int count, T* out) {   // one block
  T v = 0;
  for (int i = threadIdx.x; i < count; i += blockDim.x) v += partials[i];
  v = block_tree(v);
  if (threadIdx.x == 0) *out = v;
}
"""

KERNELS = ["block_atomic<float>", "block_atomic<double>", "block_partials<float>", "block_partials<double>",
           "sum_partials<float>", "sum_partials<double>"]
CONFIGS = [{"grid": 132, "block": 256}, {"grid": 264, "block": 256}, {"grid": 1056, "block": 128},
           {"grid": 528, "block": 1024}]


def subjects() -> list[sumlab.Subject]:
    import cupy
    import numpy as np

    module = cupy.RawModule(code=SOURCE, options=("--std=c++17", "--fmad=false"), name_expressions=KERNELS)

    def kernel(name, x):
        return module.get_function(f"{name}<{'double' if x.dtype == np.float64 else 'float'}>")

    def launch(name, x, out, grid, block, *extra):
        kernel(name, x)((grid,), (block,), (x, np.int64(x.size), out, *extra), shared_mem=block * x.itemsize)

    def block_atomic(x, grid, block):
        out = cupy.zeros(1, dtype=x.dtype)
        launch("block_atomic", x, out, grid, block)
        return out[0]

    def block_partials(x, grid, block):
        partials = cupy.empty(grid, dtype=x.dtype)
        out = cupy.empty(1, dtype=x.dtype)
        launch("block_partials", x, partials, grid, block)
        kernel("sum_partials", x)((1,), (256,), (partials, np.int32(grid), out), shared_mem=256 * x.itemsize)
        return out[0]

    return [sumlab.Subject(block_atomic, configs=CONFIGS, prepare=cupy.asarray),
            sumlab.Subject(block_partials, configs=CONFIGS, declared="run_to_run", prepare=cupy.asarray)]


def triton_subjects() -> list[sumlab.Subject]:
    import torch
    import triton
    import triton.language as tl

    @triton.jit
    def block_sums(x_ptr, n, out_ptr, BLOCK: tl.constexpr, ATOMIC: tl.constexpr):
        pid = tl.program_id(0)
        offs = pid.to(tl.int64) * BLOCK + tl.arange(0, BLOCK)
        tile = tl.sum(tl.load(x_ptr + offs, mask=offs < n, other=0.0), axis=0)
        if ATOMIC:
            tl.atomic_add(out_ptr, tile)
        else:
            tl.store(out_ptr + pid, tile)

    def block_atomic(x, block):
        out = torch.zeros(1, dtype=x.dtype, device=x.device)
        block_sums[(triton.cdiv(x.numel(), block),)](x, x.numel(), out, BLOCK=block, ATOMIC=True)
        return out[0]

    def block_partials(x, block):
        while x.numel() > 1:  # each pass: one partial per tile, in tile order
            partials = torch.empty(triton.cdiv(x.numel(), block), dtype=x.dtype, device=x.device)
            block_sums[(partials.numel(),)](x, x.numel(), partials, BLOCK=block, ATOMIC=False)
            x = partials
        return x[0] if x.numel() else torch.zeros((), dtype=x.dtype, device=x.device)

    configs = [{"block": 256}, {"block": 1024}, {"block": 4096}]
    cuda = lambda a: torch.from_numpy(a).cuda()  # noqa: E731
    return [sumlab.Subject(block_atomic, name="triton_block_atomic", configs=configs, prepare=cuda),
            sumlab.Subject(block_partials, name="triton_block_partials", configs=configs, declared="run_to_run",
                           prepare=cuda)]


# What each kernel should measure, by the name's ending (CuPy's and Triton's alike).
EXPECTED = {"block_atomic": "not_deterministic", "block_partials": "run_to_run"}


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--out", default="runs/my-kernel", help="the run folder")
    p.add_argument("--runs", type=int, default=20, help="calls per configuration and input")
    p.add_argument("--sizes", default="2^20,2^24", help="input sizes")
    p.add_argument("--with", dest="compilers", default="cupy", help="cupy, triton or both (comma list)")
    p.add_argument("--force", action="store_true", help="replace an existing run folder")
    a = p.parse_args()
    makers = {"cupy": subjects, "triton": triton_subjects}
    if any(c not in makers for c in a.compilers.split(",")):
        print(f"cuda_kernel_subject: --with takes cupy, triton or both (got {a.compilers!r})", file=sys.stderr)
        return 2
    ok, why = sumlab.cuda_available()
    if not ok:
        print(f"cuda_kernel_subject: needs a CUDA device ({why})", file=sys.stderr)
        return 2
    kernels = [s for c in a.compilers.split(",") for s in makers[c]()]
    rows = sumlab.study.determinism(kernels, a.out, runs=a.runs, kernels=["gpu_atomic", "gpu_two_pass"],
                                    backend="cuda", sizes=a.sizes.split(","), dtypes=["float32", "float64"],
                                    dists=["normal"], grids=["SM", "8SM"], blocks=[256], vectors=[1],
                                    mappings=["grid_stride"], force=a.force)
    wrong = 0
    for r in rows:
        want = next((v for k, v in EXPECTED.items() if r["kernel"].endswith(k)), None)
        mark = "" if want in (None, r["measured"]) else f"   (expected {want})"
        wrong += bool(mark)
        print(f"{r['kernel']:22} {r['measured']:18} distinct results: within a configuration "
              f"{r['distinct_within_shape_max']}, across configurations {r['distinct_across_shapes_max']}{mark}")
    return 1 if wrong else 0


if __name__ == "__main__":
    sys.exit(main())
