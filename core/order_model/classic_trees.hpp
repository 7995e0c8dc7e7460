#pragma once
// The model of the seven classic shared-memory reductions (Harris 2007) as gpu/ implements them.
//
// Kernels 1-6 reduce each block's slice to one partial and are relaunched on the partials until one
// value is left (always at least one pass for n >= 1; n = 0 gives +0 without a launch):
//   1, 2  load w[t] = x[bB+t] (+0 past n); interleaved tree (2 pairs the same words as 1);
//   3     same load; sequential tree;
//   4-6   load w[t] = x[2bB+t], then w[t] += x[2bB+t+B] when that index is < n; sequential tree.
//         5 runs the levels h <= 32 in one warp with __syncwarp, 6 unrolls everything and finishes
//         with __shfl_down_sync; lane 0 pairs the same words in each, so 4, 5 and 6 agree bitwise.
//   7     grid from the shape: thread t of block b sums v += (x[i] + x[i+B]) (or v += x[i] when i+B
//         is past n) for i = 2bB+t, step 2BG, from v = +0; sequential tree; then the same kernel with
//         grid 1 over the G partials (when G > 1).
#include <cstdint>
#include <span>
#include <vector>

#include "core/gpu_kernel.hpp"
#include "core/order_model/block_tree.hpp"
#include "core/order_model/reduce_ops.hpp"

namespace sumlab::order_model {

// Elements one block consumes in one pass of kernels 1-6.
inline std::int64_t classic_elements_per_block(GpuKernel k, int block) {
  return (k == GpuKernel::interleaved || k == GpuKernel::strided || k == GpuKernel::sequential ||
          k == GpuKernel::racy_tree)
             ? block
             : 2 * std::int64_t(block);
}

// One pass of kernels 1-6: ceil(n / elements_per_block) partials.
template <class T>
std::vector<T> classic_pass(GpuKernel k, int block, std::span<const T> x) {
  using Op = PlainSumOp<T>;
  const auto n = static_cast<std::int64_t>(x.size());
  const std::int64_t per_block = classic_elements_per_block(k, block);
  const std::int64_t grid = (n + per_block - 1) / per_block;
  const bool first_add = per_block != block;
  const bool interleaved = k == GpuKernel::interleaved || k == GpuKernel::strided;
  std::vector<T> out(static_cast<std::size_t>(grid));
  std::vector<T> w(static_cast<std::size_t>(block));
  for (std::int64_t b = 0; b < grid; ++b) {
    for (int t = 0; t < block; ++t) {
      const std::int64_t i = b * per_block + t;
      T v = i < n ? x[static_cast<std::size_t>(i)] : T(0);
      if (first_add && i + block < n) v = Op::add(v, x[static_cast<std::size_t>(i + block)]);
      w[static_cast<std::size_t>(t)] = v;
    }
    out[static_cast<std::size_t>(b)] = interleaved ? smem_interleaved_tree<Op>(std::span<T>(w))
                                                   : smem_sequential_tree<Op>(std::span<T>(w));
  }
  return out;
}

// Kernels 1-6, every pass.
template <class T> T classic_sum(GpuKernel k, int block, std::span<const T> x) {
  if (x.empty()) return T(0);
  std::vector<T> cur = classic_pass<T>(k, block, x);
  while (cur.size() > 1) cur = classic_pass<T>(k, block, std::span<const T>(cur));
  return cur[0];
}

// One pass of kernel 7 with `grid` blocks: the per-block partials.
template <class T>
std::vector<T> multi_add_pass(int grid, int block, std::span<const T> x) {
  using Op = PlainSumOp<T>;
  const auto n = static_cast<std::int64_t>(x.size());
  const std::int64_t b2 = 2 * std::int64_t(block);
  const std::int64_t stride = b2 * grid;
  std::vector<T> v(static_cast<std::size_t>(std::int64_t(grid) * block), T(0));
  for (std::int64_t base = 0; base < n; base += stride)
    for (std::int64_t b = 0; b < grid && base + b * b2 < n; ++b)
      for (std::int64_t t = 0; t < block; ++t) {
        const std::int64_t i = base + b * b2 + t;
        if (i >= n) break;
        T& acc = v[static_cast<std::size_t>(b * block + t)];
        acc = (i + block < n)
                  ? Op::add(acc, Op::add(x[static_cast<std::size_t>(i)], x[static_cast<std::size_t>(i + block)]))
                  : Op::add(acc, x[static_cast<std::size_t>(i)]);
      }
  std::vector<T> out(static_cast<std::size_t>(grid));
  for (int b = 0; b < grid; ++b)
    out[static_cast<std::size_t>(b)] = smem_sequential_tree<Op>(
        std::span<T>(v).subspan(static_cast<std::size_t>(b) * static_cast<std::size_t>(block),
                                static_cast<std::size_t>(block)));
  return out;
}

// Kernel 7: first pass with the shape's grid, then (if grid > 1) one block over the partials.
template <class T> T multi_add_sum(int grid, int block, std::span<const T> x) {
  std::vector<T> p = multi_add_pass<T>(grid, block, x);
  if (p.size() == 1) return p[0];
  return multi_add_pass<T>(1, block, std::span<const T>(p))[0];
}

}  // namespace sumlab::order_model
