#pragma once
// __global__ kernel of the moments family: textbook, two_pass, welford, welford_equal, each
// followed by the normalised output (x - mean) * rstd. Arithmetic: core/row_reduce/ (shared with
// the CPU model), order: core/row_reduce/row_kernel.hpp, trees: row_tree.cuh.
#include <cstdint>
#include <type_traits>

#include "core/row_reduce/layer_norm.hpp"
#include "core/row_reduce/one_pass_moments.hpp"
#include "core/row_reduce/row_input.hpp"
#include "core/row_reduce/two_pass_moments.hpp"
#include "core/row_reduce/welford.hpp"
#include "gpu/rows/row_loads.cuh"
#include "gpu/rows/row_tree.cuh"

namespace sumlab::gpu::rows {

// Out: the kernel writes the normalised output where d_out is not null (a second pass over the
// row); without it the kernel is the statistics alone, a separate instantiation so that the output
// pass's registers (a slice of the row) are not held by a kernel that never runs it. Staged: the
// row is copied into the dynamic shared memory the host sized for it and every pass folds from
// there (row_loads.cuh), an instance of its own so that the kernels without a stage keep theirs.
// Exact (Welford's float and bfloat16 rows only, where the host found row_exact_steps): every
// thread holds exactly kRowExactSteps or half as many elements (from a stage also
// kRowExactStagedSteps or half as many), and its steps are unrolled whole (row_for_each_exact):
// each count and its reciprocal a constant the compiler folds (no table read, no count add) and,
// from memory, every load in flight before the first step, for the same operations on
// the same values, so the same bits. An instance of its own: its registers (the loads in flight)
// would cost the other launches warps. Threads: the group's thread count where the instance fixes
// it (row_group in row_tree.cuh), else 0.
// exact(S, step) for the first S of Steps that the group's threads hold exactly (holds(S)), the
// last where none earlier does.
template <int S, int... Rest, class Holds, class Exact, class Step>
__device__ __forceinline__ void exact_steps(Holds&& holds, Exact&& exact, Step&& step) {
  if constexpr (sizeof...(Rest) == 0)
    exact(std::integral_constant<int, S>{}, step);
  else if (holds(S))
    exact(std::integral_constant<int, S>{}, step);
  else
    exact_steps<Rest...>(holds, exact, step);
}

template <row_reduce::RowKernel K, class In, bool Out, bool Staged, bool Exact = false, int Threads = 0>
__device__ __forceinline__ void row_moments(const In* __restrict__ d_in, std::int64_t rows, std::int64_t cols,
                                            row_reduce::RowLayout layout, row_reduce::row_acc_t<In>* d_mean,
                                            row_reduce::row_acc_t<In>* d_variance, row_reduce::row_acc_t<In>* d_out) {
  using namespace row_reduce;
  using Acc = row_acc_t<In>;
  __shared__ __align__(16) unsigned char smem[smem_state_bytes];
  constexpr bool welford = K == RowKernel::welford || K == RowKernel::welford_equal;
  // Welford's step k divides by the count k through RN(1/k) (core/row_reduce/welford.hpp): read
  // here, where computing it costs a reciprocal, two fmas and a check an element. Where a thread's
  // steps outnumber the table, it computes them (welford_step's two-argument form); the bits are
  // the same either way. Filled before any group leaves, since every thread meets the barrier.
  static_assert(!Exact || (welford && sizeof(In) <= 4), "Welford's float and bfloat16 rows");
  __shared__ Acc count_rcp[welford && !Exact ? kRowCountTable : 1];
  const RowGroup g = row_group<Threads>(layout);
  [[maybe_unused]] bool tabled = false;
  if constexpr (welford && !Exact) {
    const std::int64_t steps = (cols + g.threads - 1) / g.threads;  // the most of any thread
    tabled = steps <= kRowCountTable;
    if (tabled) {
      for (int k = int(threadIdx.x); k < int(steps); k += int(blockDim.x)) count_rcp[k] = count_reciprocal(Acc(k + 1));
      __syncthreads();
    }
  }
  if (g.row >= rows) return;  // warp_per_row only: the whole warp leaves together
  const In* row = d_in + g.row * cols;
  const Acc n = static_cast<Acc>(cols);
  const bool many_passes = K == RowKernel::two_pass || (Out && d_out != nullptr);
  constexpr bool cheap = K == RowKernel::textbook || K == RowKernel::two_pass;  // no division an element
  // The last reduction's result is needed by thread 0 alone (it writes the statistics) unless the
  // output pass follows (group_reduce's everyone).
  const bool everyone = Out && d_out != nullptr;
  with_row<cheap ? RowLoop::batched : RowLoop::ahead, Staged>(row, cols, g, many_passes, layout, [&](auto&& read, auto&& reread,
                                                                                                    [[maybe_unused]] auto&& exact) {
    MeanVariance<Acc> mv;
    if constexpr (K == RowKernel::textbook) {
      SumSquares<Acc> s = SumSquaresOp<Acc>::identity();
      read([&](In x, std::int64_t) { s = sum_squares_step(s, RowInput<In>::widen(x)); });
      s = group_reduce<SumSquaresOp<Acc>>(s, g.block_stage, reinterpret_cast<SumSquares<Acc>*>(smem), everyone);
      mv = textbook_finish(s, n);
    } else if constexpr (K == RowKernel::two_pass) {
      Acc s = Acc(0);
      read([&](In x, std::int64_t) { s = sum_step(s, RowInput<In>::widen(x)); });
      s = group_reduce<PlainSumOp<Acc>>(s, g.block_stage, reinterpret_cast<Acc*>(smem));
      const Acc mean = s / n;
      Acc q = Acc(0);
      reread([&](In x, std::int64_t) { q = squared_deviation_step(q, RowInput<In>::widen(x), mean); });
      q = group_reduce<PlainSumOp<Acc>>(q, g.block_stage, reinterpret_cast<Acc*>(smem), everyone);
      mv = MeanVariance<Acc>{mean, q / n};
    } else {
      static_assert(K == RowKernel::welford || K == RowKernel::welford_equal, "a moments kernel");
      using Op = std::conditional_t<K == RowKernel::welford, ChanMergeOp<Acc>, ChanEqualMergeOp<Acc>>;
      RowMoments<Acc> s = Op::identity();
      if constexpr (Exact) {
        // Step k + 1 of a run from the identity: the count k + 1 and RN(1 / (k + 1)) are constants.
        const auto step = [&](In x, int k) { s = welford_step(s, RowInput<In>::widen(x), count_reciprocal(Acc(k + 1))); };
        // The steps row_exact_steps found: 32 or 16, and from a stage 128 or 64 too.
        const auto holds = [&](int steps) { return cols == std::int64_t(steps) * g.threads; };
        if constexpr (Staged)
          exact_steps<kRowExactStagedSteps, kRowExactStagedSteps / 2, kRowExactSteps, kRowExactSteps / 2>(holds, exact, step);
        else
          exact_steps<kRowExactSteps, kRowExactSteps / 2>(holds, exact, step);
      } else if (tabled) {
        int k = 0;
        read([&](In x, std::int64_t) { s = welford_step(s, RowInput<In>::widen(x), count_rcp[k++]); });
      } else {
        read([&](In x, std::int64_t) { s = welford_step(s, RowInput<In>::widen(x)); });
      }
      s = group_reduce<Op>(s, g.block_stage, reinterpret_cast<RowMoments<Acc>*>(smem), everyone);
      mv = welford_finish(s);
    }
    if (g.t == 0) {
      d_mean[g.row] = mv.mean;
      d_variance[g.row] = mv.variance;
    }
    if (!Out || d_out == nullptr) return;
    const Acc rstd = layer_norm_rstd(mv.variance);
    Acc* out = d_out + g.row * cols;
    reread([&](In x, std::int64_t j) { out[j] = layer_norm_apply(RowInput<In>::widen(x), mv.mean, rstd); });
  });
}

// Every moments kernel launches at up to 1024 threads, so it must hold at most 64 registers. The
// batched ones (textbook, two_pass) need __launch_bounds__(1024) for that, and float Welford gains
// from it. Welford on doubles stays unbounded: it took 48 registers unbounded and 50 bounded, one
// 256-thread block fewer an SM for its chain-bound loop (docs/performance-notes.md); with its
// division a table read it takes 50 either way. The statistics alone of textbook on float and
// bfloat16 rows fit 32 registers, two 1024-thread blocks an SM (rows of 16384 at /1024 had the SM
// to one block); two_pass (its slice) and the double ones would spill there. Welford's statistics
// take up to 64: its 8 loads ahead (row_loads.cuh) need about 53, and the loads in flight are
// worth more than the warps (float rows of 4096 at 2^28 0.75 -> 0.90 of the read roof).
template <row_reduce::RowKernel K, class In> constexpr bool row_moments_bounded() {
  return !(std::is_same_v<In, double> && (K == row_reduce::RowKernel::welford || K == row_reduce::RowKernel::welford_equal));
}
template <row_reduce::RowKernel K, class In> constexpr int row_stats_min_blocks() {
  using row_reduce::RowKernel;
  return !std::is_same_v<In, double> && K != RowKernel::two_pass && K != RowKernel::welford && K != RowKernel::welford_equal ? 2 : 1;
}

// The statistics, and the normalised output where d_out is not null.
template <row_reduce::RowKernel K, class In, bool Staged, bool Exact = false, int Threads = 0>
__global__ void __launch_bounds__(1024) row_moments_kernel(const In* __restrict__ d_in, std::int64_t rows, std::int64_t cols,
                                                           row_reduce::RowLayout layout, row_reduce::row_acc_t<In>* d_mean,
                                                           row_reduce::row_acc_t<In>* d_variance, row_reduce::row_acc_t<In>* d_out) {
  row_moments<K, In, true, Staged, Exact, Threads>(d_in, rows, cols, layout, d_mean, d_variance, d_out);
}

// The statistics alone (d_out is ignored).
template <row_reduce::RowKernel K, class In, bool Staged, bool Exact = false, int Threads = 0>
__global__ void __launch_bounds__(1024, row_stats_min_blocks<K, In>())
    row_stats_kernel(const In* __restrict__ d_in, std::int64_t rows, std::int64_t cols, row_reduce::RowLayout layout,
                     row_reduce::row_acc_t<In>* d_mean, row_reduce::row_acc_t<In>* d_variance, row_reduce::row_acc_t<In>* d_out) {
  row_moments<K, In, false, Staged, Exact, Threads>(d_in, rows, cols, layout, d_mean, d_variance, d_out);
}

template <row_reduce::RowKernel K, class In, bool Out, bool Staged>
__global__ void row_moments_unbounded_kernel(const In* __restrict__ d_in, std::int64_t rows, std::int64_t cols,
                                             row_reduce::RowLayout layout, row_reduce::row_acc_t<In>* d_mean,
                                             row_reduce::row_acc_t<In>* d_variance, row_reduce::row_acc_t<In>* d_out) {
  row_moments<K, In, Out, Staged>(d_in, rows, cols, layout, d_mean, d_variance, d_out);
}

}  // namespace sumlab::gpu::rows
