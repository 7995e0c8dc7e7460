#pragma once
// __global__ kernel of argmax: (value, index) per row, torch.argmax semantics
// (core/row_reduce/argmax.hpp, shared with the CPU model). Exact: the same element wins in every
// layout, so its bits are shape-invariant.
#include <cstdint>

#include "core/row_reduce/argmax.hpp"
#include "core/row_reduce/row_input.hpp"
#include "gpu/rows/row_loads.cuh"
#include "gpu/rows/row_tree.cuh"

namespace sumlab::gpu::rows {

// Registers: a float kernel within 32 (two 1024-thread blocks an SM, no spill) reads rows of 16384
// at /1024 as fast as rows of 4096 at /256; at its own 46 a 1024-thread block had the SM alone and
// read 0.78 of the roof. The other types spill at 32. The element path's batch is 8 for every type
// (not kRowBatch's 16 for bfloat16): its 16 addresses cost the bfloat16 kernel 61 registers where
// it needs 40, and it is the word path that rows of whole words take.
template <class In>
__global__ void __launch_bounds__(1024, sizeof(In) == 4 ? 2 : 1) row_argmax_kernel(const In* __restrict__ d_in, std::int64_t rows, std::int64_t cols,
                                  row_reduce::RowLayout layout, row_reduce::row_acc_t<In>* d_value,
                                  std::int64_t* d_index) {
  using namespace row_reduce;
  using Acc = row_acc_t<In>;
  __shared__ __align__(16) unsigned char smem[smem_state_bytes];
  const RowGroup g = row_group(layout);
  if (g.row >= rows) return;
  const In* row = d_in + g.row * cols;
  // The thread's elements in column order, a batch at a time: the batch's first maximum by a tree
  // (argmax_first_max), then the batch against the best so far. The missing elements of the last
  // batch are -Inf after its present ones, so they never win; the first batch starts the fold, so
  // a thread with any element never compares with the identity. Any order of reading gives the
  // same element, so rows of whole 16-byte words are read in words (64 bytes a thread a batch: a
  // row of 4096 floats at 256 threads is one round trip), other rows element by element, 8 at a
  // time.
  ArgmaxState<Acc> s = argmax_identity<Acc>();
  bool started = false;
  auto take = [&](const auto& v, int count, auto column) {
    constexpr int N = sizeof(v) / sizeof(v[0]);
    Acc x[N];
#pragma unroll
    for (int p = 0; p < N; ++p) x[p] = p < count ? RowInput<In>::widen(v[p]) : -acc_inf<Acc>();
    const ArgmaxState<Acc> b = argmax_first_max(x);
    if (!started || argmax_later_wins(b.value, s.value)) s = ArgmaxState<Acc>{b.value, static_cast<std::int32_t>(column(b.index))};
    started = true;
  };
  const std::int64_t T = g.threads;
  if (row_words_fit(d_in, cols)) {
    constexpr int E = kRowWordItems<In>;
    row_for_each_words<4>(row, cols, g, [&](const In (&v)[4 * E], std::int64_t k, int count) {
      take(v, count, [&](int p) { return (k + (p / E) * T) * E + p % E; });
    });
  } else {
    row_for_each_batch<8>(row, cols, g, [&](const In (&v)[8], std::int64_t j, int count) {
      take(v, count, [&](int p) { return j + p * T; });
    });
  }
  s = group_reduce<ArgmaxOp<Acc>>(s, g.block_stage, reinterpret_cast<ArgmaxState<Acc>*>(smem), false);  // thread 0's
  if (g.t == 0) {
    d_value[g.row] = s.value;
    d_index[g.row] = argmax_index(s.index);
  }
}

}  // namespace sumlab::gpu::rows
