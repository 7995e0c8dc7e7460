#pragma once
// __global__ kernel of the softmax family: softmax_online (one pass for (m, l), one for the
// output) and softmax_three_pass (max, sum of exp, output). Arithmetic: core/row_reduce/
// online_softmax.hpp and three_pass_softmax.hpp (shared with the CPU model); exp is acc_exp, the
// portable exp (float arithmetic for float and bfloat16 rows), never CUDA's expf (which the CPU
// could not reproduce). Staged: the row is copied into the dynamic shared memory the host sized for
// it and every pass folds from there (row_loads.cuh), an instance of its own. Threads: the group's
// thread count where the instance fixes it (row_group in row_tree.cuh), else 0.
#include <cstdint>

#include "core/row_reduce/online_softmax.hpp"
#include "core/row_reduce/row_input.hpp"
#include "core/row_reduce/three_pass_softmax.hpp"
#include "core/row_reduce/two_pass_moments.hpp"
#include "gpu/rows/row_loads.cuh"
#include "gpu/rows/row_tree.cuh"

namespace sumlab::gpu::rows {

template <row_reduce::RowKernel K, class In, bool Staged, int Threads = 0>
__global__ void __launch_bounds__(1024) row_softmax_kernel(const In* __restrict__ d_in, std::int64_t rows, std::int64_t cols,
                                   row_reduce::RowLayout layout, row_reduce::row_acc_t<In>* d_max,
                                   row_reduce::row_acc_t<In>* d_sum, row_reduce::row_acc_t<In>* d_out) {
  using namespace row_reduce;
  using Acc = row_acc_t<In>;
  __shared__ __align__(16) unsigned char smem[smem_state_bytes];
  const RowGroup g = row_group<Threads>(layout);
  if (g.row >= rows) return;
  const In* row = d_in + g.row * cols;
  with_row<RowLoop::plain, Staged>(row, cols, g, false, layout, [&](auto&& read, auto&& reread, auto&&) {
    Acc m, l;
    if constexpr (K == RowKernel::softmax_online) {
      SoftmaxState<Acc> s = softmax_identity<Acc>();
      read([&](In x, std::int64_t) { s = online_softmax_step(s, RowInput<In>::widen(x)); });
      // Thread 0 alone needs the last reduction's result unless the output pass follows.
      s = group_reduce<OnlineSoftmaxOp<Acc>>(s, g.block_stage, reinterpret_cast<SoftmaxState<Acc>*>(smem), d_out != nullptr);
      m = s.m;
      l = s.l;
    } else {
      static_assert(K == RowKernel::softmax_three_pass, "a softmax kernel");
      m = MaxOp<Acc>::identity();
      read([&](In x, std::int64_t) { m = max_step(m, RowInput<In>::widen(x)); });
      m = group_reduce<MaxOp<Acc>>(m, g.block_stage, reinterpret_cast<Acc*>(smem));
      l = Acc(0);
      reread([&](In x, std::int64_t) { l = sum_exp_step(l, RowInput<In>::widen(x), m); });
      // Broadcast even without the output pass, where thread 0 alone needs l: with group_reduce's
      // shortcut the double kernel took 42 registers, not 40, so that an SM held two 512-thread
      // blocks, not three (rows of 16384 at 2^28 0.29 -> 0.22 of the read roof).
      l = group_reduce<PlainSumOp<Acc>>(l, g.block_stage, reinterpret_cast<Acc*>(smem));
    }
    if (g.t == 0) {
      d_max[g.row] = m;
      d_sum[g.row] = l;
    }
    if (d_out == nullptr) return;
    Acc* out = d_out + g.row * cols;
    reread([&](In x, std::int64_t j) { out[j] = softmax_probability(RowInput<In>::widen(x), m, l); });
  });
}

}  // namespace sumlab::gpu::rows
