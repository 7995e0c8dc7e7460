// Host dispatch of gpu_fixed_point.
// Scale from the data (opt.fixed_scale empty), float: pass 1 is gpu_exact's kernel, also tracking
// the largest finite and smallest nonzero magnitude; pass 2 (fixed_point_kernel) derives the scale
// k from them (order_model::fixed_one_pass: core/fixed_point_sum.hpp's rule) on the device. When
// every element sits on the grid 2^-k (always so when the smallest nonzero magnitude is within
// 2^(62 - p) of the largest: 2^38 for float), each q_i = x_i 2^k is exact and the fixed-point
// result is the exact sum rounded once, so pass 1 is the whole sum, in one read of the input, and
// pass 2 returns at once. Otherwise pass 2 quantises and adds.
// Scale from the data, double: double data is nearly never on that grid (every element within 2^9
// of the largest), so pass 1 is fixed_window_kernel instead, which quantises against a guess of k
// that pass 2 checks (fixed_point_kernels.cuh): where the guess held, pass 2's block 0 takes the
// blocks' integers at E from the window pass's table and the sum took one read; elsewhere pass 2
// quantises. On inputs far wider than its window the pass writes out the elements within 2^62 of
// the largest it knows of (n / 4 at most) and counts the others, and pass 2 quantises those.
// Small inputs, both types: one launch that finds the largest magnitude, meets at a barrier over
// the grid (a cooperative launch: the whole grid resident) and quantises
// (fixed_largest_launch_kernel: its second read from the tiles its blocks still hold, and past
// those from the L2). Float, larger: both passes in one launch where the grid can be resident
// (fixed_one_launch_kernel: the same barrier in place of the second launch; there a block whose
// first tile is far wider than its own grid, its largest not alone in its binade
// (order_model::fixed_tile_guess), quantises at that tile's k instead of adding exactly, and keeps
// that integer where the gate's k is the same: one read of every bit pattern). Otherwise pass 2 runs as pass 1's programmatic dependent (below). The integers are
// the same either way.
// The caller's scale: fixed_point_kernel alone, one read of the input.
// Either way the host converts the 128-bit total with order_model::fixed_point_from_integer
// (fixed_point_sum's conversion).
#include <cmath>

#include "core/fixed_point_sum.hpp"
#include "core/order_model/fixed_point_model.hpp"
#include "gpu/device/dispatch.cuh"
#include "gpu/device/kernels/dependent_launch.cuh"
#include "gpu/device/kernels/exact_kernel.cuh"
#include "gpu/device/kernels/fixed_point_kernels.cuh"

namespace sumlab::gpu::detail {

template <class T>
LaunchOutcome<T> dispatch_fixed_point(const LaunchShape& s, const LaunchInputs<T>& in, std::int64_t n,
                                      const KernelOptions& opt) {
  const bool from_data = !opt.fixed_scale.has_value();
  const bool window = from_data && sizeof(T) == 8;
  ExactBuffers exact;
  FixedBuffers fixed;
  unsigned long long* gate = nullptr;
  unsigned long long* exchange = nullptr;  // the window pass's words and tables (FixedExchange): a set a launch, by parity
  unsigned long long* tables = nullptr;
  // The window pass's sparse blocks' elements: n / 4 of them (2n bytes), and room for each warp's
  // last slots, which it fills with zeros.
  double* sparse = nullptr;
  const long long sparse_capacity = window ? n / 4 + static_cast<long long>(s.grid) * ((s.block + 31) / 32) * fixed_sparse_slots : 0;
  Carver c;
  if (window)
    c.add(&fixed.scale, 2).add(&exchange, 2 * fixed_exchange_words).add(&tables, 2 * static_cast<std::size_t>(fixed_table_words))
        .add(&sparse, static_cast<std::size_t>(sparse_capacity));
  else if (from_data) c.add(&exact.sets, 2 * static_cast<std::size_t>(exact_set_words<T>)).add(&fixed.scale, 2);
  if (from_data) c.add(&gate, fixed_gate_all_words);
  c.add(&fixed.sets, 2 * static_cast<std::size_t>(fixed_set_words));
  c.commit();
  // Small inputs (fixed_largest_launch_kernel): blocks of up to 512 threads and a grid resident
  // whole. Its serial order (every tile, the max, the gate, then the quantising) against the
  // two-launch paths, A/B on an H100 at 264 x 256 (docs/performance-notes.md): double, whose first
  // pass is the window pass, gained up to 2^22 (32 of the L2's 50 MB, the tiles past the stages
  // read again from there), so it takes inputs up to two thirds of the L2; float, whose first pass
  // is gpu_exact's, gained where its blocks' tiles filled half their stages (2^21) and lost where
  // they filled all (2^22), so it takes inputs of at most half the stages.
  void (*largest_launch)(const T*, std::int64_t, FixedBuffers, unsigned long long*) = nullptr;
  bool held = false;  // largest_launch's second pass reads every tile from its block's stages
  std::size_t one_launch_smem = 0;
  const bool fits = bulk_holds_all<T>(n, s.grid, s.block);
  const bool small = sizeof(T) == 4 ? bulk_holds_all<T>(2 * n, s.grid, s.block)
                                    : fits || static_cast<std::size_t>(n) * sizeof(T) * 3 <= l2_cache_bytes() * 2;
  if (from_data && s.block <= 512 && small) {
    largest_launch = s.block <= 256 ? fixed_largest_launch_kernel<T, 256, 2> : fixed_largest_launch_kernel<T, 512, 1>;
    one_launch_smem = bulk_smem_bytes(s.block);
    opt_in_shared(reinterpret_cast<const void*>(largest_launch), one_launch_smem);
    if (s.grid > resident_blocks(reinterpret_cast<const void*>(largest_launch), s.block, one_launch_smem))
      largest_launch = nullptr;
    held = fits && largest_launch != nullptr;
  }
  // Otherwise float takes both passes in one launch (fixed_one_launch_kernel) where gpu_exact's
  // kernel takes the input in one launch, blocks of up to 512 threads, and a grid that is resident
  // whole (its blocks wait for each other).
  void (*one_launch)(const T*, std::int64_t, ExactBuffers, FixedBuffers, unsigned long long*) = nullptr;
  if constexpr (sizeof(T) == 4) {
    if (largest_launch == nullptr && from_data && s.block <= 512 && n <= exact_launch_elements) {
      one_launch = s.block <= 256 ? fixed_one_launch_kernel<T, 256, 2> : fixed_one_launch_kernel<T, 512, 1>;
      one_launch_smem = s.block <= 256 ? exact_tile_bytes<T>(256, 2, s.block) + ExactBins<T>::bytes(256, 2, s.block)
                                       : exact_tile_bytes<T>(512, 1, s.block) + ExactBins<T>::bytes(512, 1, s.block);
      opt_in_shared(reinterpret_cast<const void*>(one_launch), one_launch_smem);
      if (s.grid > resident_blocks(reinterpret_cast<const void*>(one_launch), s.block, one_launch_smem))
        one_launch = nullptr;
    }
  }
  const bool fused = one_launch != nullptr || largest_launch != nullptr;
  if (fused)
    SUMLAB_CUDA_CHECK(cudaMemset(gate, 0, fixed_gate_all_words * sizeof(unsigned long long)));
  fixed.k = opt.fixed_scale.value_or(0);
  // Set 0 of each before the first launch; then each launch resets the next one's set.
  if (from_data && !window) exact_reset_sets<T>(exact);
  SUMLAB_CUDA_CHECK(cudaMemset(fixed.sets, 0, fixed_set_words * sizeof(unsigned long long)));
  // Blocks over 512 threads need the build with 64 registers; the tiles' shared memory passes the
  // default 48 KB, so the launch opts in to its size.
  auto* const kernel = s.block > 512 ? fixed_point_kernel<T, 1024> : fixed_point_kernel<T, 512>;
  const std::size_t smem = bulk_smem_bytes(s.block);
  opt_in_shared(reinterpret_cast<const void*>(kernel), smem);
  // The window pass (double only: no float instantiation).
  void (*window_kernel)(const T*, std::int64_t, FixedExchange) = nullptr;
  FixedExchange ex;
  if constexpr (sizeof(T) == 8) {
    if (window) {
      SUMLAB_CUDA_CHECK(cudaMemset(exchange, 0, 2 * fixed_exchange_words * sizeof(unsigned long long)));
      SUMLAB_CUDA_CHECK(cudaMemset(tables, 0, 2 * fixed_table_words * sizeof(unsigned long long)));
      window_kernel = s.block > 512 ? fixed_window_kernel<T, 1024> : fixed_window_kernel<T, 512>;
      opt_in_shared(reinterpret_cast<const void*>(window_kernel), smem);
      ex.resident = static_cast<int>(resident_blocks(reinterpret_cast<const void*>(window_kernel), s.block, smem));
      ex.sparse = sparse;
      ex.capacity = sparse_capacity;
      fixed.sparse = sparse;
      fixed.capacity = sparse_capacity;
    }
  }
  auto launch_window = [&](const T* d_in, unsigned parity) {
    ex.words = exchange + fixed_exchange_words * parity;
    ex.next = exchange + fixed_exchange_words * (parity ^ 1u);
    ex.table = tables + std::size_t(fixed_table_words) * parity;
    ex.table_next = tables + std::size_t(fixed_table_words) * (parity ^ 1u);
    fixed.window = ex.words;
    fixed.table = ex.table;
    window_kernel<<<s.grid, s.block, smem>>>(d_in, n, ex);
    SUMLAB_CUDA_CHECK_LAUNCH("fixed_window_kernel");
  };
  // Scale from the data: pass 2 as pass 1's programmatic dependent (sm_90+), so its launch overlaps
  // pass 1's end, where pass 2 usually only decides and returns: float data is nearly always on the
  // grid (every nonzero |x| within 2^38 of the largest): on the H200 at 2^24 that took the pair
  // from about 25.7 to 24.9 us. (When doubles had only the range pass, pass 2 quantised nearly
  // always, and its blocks starting early made it 1.5-14% slower at 2^24 - 2^26:
  // docs/performance-notes.md.)
  cudaLaunchAttribute dependent{};
  dependent.id = cudaLaunchAttributeProgrammaticStreamSerialization;
  dependent.val.programmaticStreamSerializationAllowed = 1;
  cudaLaunchConfig_t pass2{};
  pass2.gridDim = dim3(static_cast<unsigned>(s.grid));
  pass2.blockDim = dim3(static_cast<unsigned>(s.block));
  pass2.dynamicSmemBytes = smem;
  pass2.attrs = &dependent;
  pass2.numAttrs = from_data && dependent_launch_supported() ? 1 : 0;
  cudaLaunchAttribute cooperative{};
  cooperative.id = cudaLaunchAttributeCooperative;
  cooperative.val.cooperative = 1;
  cudaLaunchConfig_t both = pass2;
  both.dynamicSmemBytes = one_launch_smem;
  both.attrs = &cooperative;
  both.numAttrs = 1;
  EventTimer timer;
  timer.start();
  for (int l = 0; l < in.launches; ++l) {
    const T* d_in = in.at(l);
    exact.parity = fixed.parity = static_cast<unsigned>(l & 1);
    if (largest_launch != nullptr) {
      SUMLAB_CUDA_CHECK(cudaLaunchKernelEx(&both, largest_launch, d_in, n, fixed, gate));
      SUMLAB_CUDA_CHECK_LAUNCH("fixed_largest_launch_kernel");
      continue;
    }
    if (fused) {
      fixed.range = exact.sets + exact.parity * exact_set_words<T> + exact_range_at<T>;
      SUMLAB_CUDA_CHECK(cudaLaunchKernelEx(&both, one_launch, d_in, n, exact, fixed, gate));
      SUMLAB_CUDA_CHECK_LAUNCH("fixed_one_launch_kernel");
      continue;
    }
    // Pass 1: the exact sum and the range, from which pass 2 decides k and whether it has work
    // (the decision stays on the device: no copy to the host between the passes).
    if (window) {
      launch_window(d_in, fixed.parity);
    } else if (from_data) {
      if constexpr (sizeof(T) == 4) {  // double takes the window pass: no range kernel compiled for it
        launch_exact_chunks<T, true>(s, d_in, n, exact);
        fixed.range = exact.sets + exact.parity * exact_set_words<T> + exact_range_at<T>;
      }
    }
    SUMLAB_CUDA_CHECK(cudaLaunchKernelEx(&pass2, kernel, d_in, n, fixed));
    SUMLAB_CUDA_CHECK_LAUNCH("fixed_point_kernel");
  }
  LaunchOutcome<T> r;
  r.ms = timer.stop() / in.launches;
  long long scale[2] = {fixed.k, 0};
  if (from_data) SUMLAB_CUDA_CHECK(cudaMemcpy(scale, fixed.scale, sizeof scale, cudaMemcpyDeviceToHost));
  const long long k = scale[0];
  const bool on_grid = scale[1] == fixed_on_grid;
  // A second read of the input where pass 1 could not decide the sum (but for tiles still held, and
  // for the one launch's blocks whose guess held: a second read only where some block read again).
  bool read_again = from_data && scale[1] == fixed_quantised && !held;
  if (read_again && one_launch != nullptr) {
    unsigned long long rereads = 0;
    SUMLAB_CUDA_CHECK(cudaMemcpy(&rereads, gate + fixed_reread_at + fixed.parity, sizeof rereads, cudaMemcpyDeviceToHost));
    read_again = rereads != 0;
  }
  r.input_reads = read_again ? 2 : 1;
  FixedPointReport rep;
  rep.scale_exponent = static_cast<int>(k);
  rep.scale_from_data = from_data;
  if (on_grid) {
    // Every q_i = x_i 2^k exactly, so S 2^-k is the exact sum: round it once, nothing was lost.
    r.value = exact_read_set<T>(exact, n, rep.specials);
  } else {
    unsigned long long set[fixed_set_words];
    SUMLAB_CUDA_CHECK(cudaMemcpy(set, fixed.sets + fixed.parity * fixed_set_words, sizeof set, cudaMemcpyDeviceToHost));
    const sumlab::detail::uint128 sum = order_model::fixed_total_from_digits(set);
    const unsigned long long* const stats = set + order_model::fixed_digits;
    rep.specials.count = static_cast<std::uint64_t>(n);
    rep.specials.nan = stats[fixed_nan];
    rep.specials.pos_inf = stats[fixed_pos_inf];
    rep.specials.neg_inf = stats[fixed_neg_inf];
    rep.specials.all_negative_zero = stats[fixed_not_negative_zero] == 0;
    rep.inexact_elements = stats[fixed_inexact];
    rep.saturated_elements = stats[fixed_saturated];
    rep.overflow = stats[fixed_saturated] != 0;
    rep.max_bits_lost = static_cast<int>(stats[fixed_max_bits_lost]);
    r.value = order_model::fixed_point_from_integer<T>(sum, k, rep.specials);
  }
  r.accumulator = static_cast<double>(r.value);
  r.note = fixed_point_detail::describe(rep, !std::isfinite(r.value));
  r.quantisation = fixed_point_detail::grid_error_bound(rep, k);
  return r;
}

template LaunchOutcome<float> dispatch_fixed_point<float>(const LaunchShape&, const LaunchInputs<float>&, std::int64_t,
                                                          const KernelOptions&);
template LaunchOutcome<double> dispatch_fixed_point<double>(const LaunchShape&, const LaunchInputs<double>&, std::int64_t,
                                                            const KernelOptions&);

}  // namespace sumlab::gpu::detail
