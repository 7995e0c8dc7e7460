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

// One pass of kernels 1-6: ceil(n / elements_per_block) partials. Op is PlainSumOp<T> for the
// values, or any op with the same interface plus leaf() (the order trace, the depth count).
template <class Op>
std::vector<typename Op::Acc> classic_pass(GpuKernel k, int block, std::span<const typename Op::In> x) {
  using Acc = typename Op::Acc;
  const auto n = static_cast<std::int64_t>(x.size());
  const std::int64_t per_block = classic_elements_per_block(k, block);
  const std::int64_t grid = (n + per_block - 1) / per_block;
  const bool first_add = per_block != block;
  const bool interleaved = k == GpuKernel::interleaved || k == GpuKernel::strided;
  std::vector<Acc> out(static_cast<std::size_t>(grid));
  std::vector<Acc> w(static_cast<std::size_t>(block));
  for (std::int64_t b = 0; b < grid; ++b) {
    for (int t = 0; t < block; ++t) {
      const std::int64_t i = b * per_block + t;
      Acc v = i < n ? Op::leaf(x[static_cast<std::size_t>(i)]) : Op::identity();
      if (first_add && i + block < n) v = Op::add(v, x[static_cast<std::size_t>(i + block)]);
      w[static_cast<std::size_t>(t)] = v;
    }
    out[static_cast<std::size_t>(b)] = interleaved ? smem_interleaved_tree<Op>(std::span<Acc>(w))
                                                   : smem_sequential_tree<Op>(std::span<Acc>(w));
  }
  return out;
}

// An op over the partials of an earlier pass, for the relaunches: its elements are Op::Acc, and a
// chain step over them is Op::combine.
template <class Op> struct OverPartials {
  using In = typename Op::Acc;
  using Acc = typename Op::Acc;
  static Acc identity() { return Op::identity(); }
  static Acc leaf(In a) { return a; }
  static Acc add(Acc a, In b) { return Op::combine(a, b); }
  static Acc combine(Acc a, Acc b) { return Op::combine(a, b); }
};

// Kernels 1-6, every pass: each relaunch reduces the partials of the pass before.
template <class Op> typename Op::Acc classic_reduce(GpuKernel k, int block, std::span<const typename Op::In> x) {
  using Acc = typename Op::Acc;
  if (x.empty()) return Op::identity();
  std::vector<Acc> cur = classic_pass<Op>(k, block, x);
  while (cur.size() > 1) cur = classic_pass<OverPartials<Op>>(k, block, std::span<const Acc>(cur));
  return cur[0];
}
template <class T> T classic_sum(GpuKernel k, int block, std::span<const T> x) {
  if (x.empty()) return T(0);
  return classic_reduce<PlainSumOp<T>>(k, block, x);
}

// One pass of kernel 7 with `grid` blocks: the per-block partials.
template <class Op>
std::vector<typename Op::Acc> multi_add_pass(int grid, int block, std::span<const typename Op::In> x) {
  using Acc = typename Op::Acc;
  const auto n = static_cast<std::int64_t>(x.size());
  const std::int64_t b2 = 2 * std::int64_t(block);
  const std::int64_t stride = b2 * grid;
  std::vector<Acc> v(static_cast<std::size_t>(std::int64_t(grid) * block), Op::identity());
  for (std::int64_t base = 0; base < n; base += stride)
    for (std::int64_t b = 0; b < grid && base + b * b2 < n; ++b)
      for (std::int64_t t = 0; t < block; ++t) {
        const std::int64_t i = base + b * b2 + t;
        if (i >= n) break;
        Acc& acc = v[static_cast<std::size_t>(b * block + t)];
        acc = (i + block < n) ? Op::combine(acc, Op::add(Op::leaf(x[static_cast<std::size_t>(i)]),
                                                         x[static_cast<std::size_t>(i + block)]))
                              : Op::add(acc, x[static_cast<std::size_t>(i)]);
      }
  std::vector<Acc> out(static_cast<std::size_t>(grid));
  for (int b = 0; b < grid; ++b)
    out[static_cast<std::size_t>(b)] = smem_sequential_tree<Op>(
        std::span<Acc>(v).subspan(static_cast<std::size_t>(b) * static_cast<std::size_t>(block),
                                  static_cast<std::size_t>(block)));
  return out;
}

// Kernel 7: first pass with the shape's grid, then (if grid > 1) one block over the partials.
template <class Op> typename Op::Acc multi_add_reduce(int grid, int block, std::span<const typename Op::In> x) {
  using Acc = typename Op::Acc;
  std::vector<Acc> p = multi_add_pass<Op>(grid, block, x);
  if (p.size() == 1) return p[0];
  return multi_add_pass<OverPartials<Op>>(1, block, std::span<const Acc>(p))[0];
}
template <class T> T multi_add_sum(int grid, int block, std::span<const T> x) {
  return multi_add_reduce<PlainSumOp<T>>(grid, block, x);
}

}  // namespace sumlab::order_model
