// The GPU kernels against the CPU order model and the CPU algorithms (label `gpu`: these need a
// CUDA device and skip with the reason when there is none, so CI without a GPU stays green).
#include "gpu/gpu_sum.hpp"

#include <gtest/gtest.h>

#include <array>
#include <cmath>
#include <cstdint>
#include <limits>
#include <set>
#include <span>
#include <string>
#include <vector>

#include "core/exact_sum.hpp"
#include "core/fixed_point_sum.hpp"
#include "core/float_traits.hpp"
#include "core/generators.hpp"
#include "core/gpu_kernel.hpp"
#include "core/order_model/fixed_point_model.hpp"
#include "core/order_model/model_sum.hpp"
#include "core/order_model/reduce_ops.hpp"
#include "gpu/host/device_rates.hpp"
#include "reference/mpfr_sum.hpp"
#include "tests/gpu/require_gpu.hpp"

namespace sumlab {
namespace {

const std::int64_t kSizes[] = {0, 1, 2, 31, 32, 33, 63, 64, 65, 255, 256, 257, 1000, 1023, 1024, 1025, 4099, 100003};

std::vector<LaunchShape> shapes() {
  std::vector<LaunchShape> out;
  auto add = [&](int g, int b, int v, Mapping m, WarpStage w, BlockStage bs, CrossBlock c) {
    LaunchShape s;
    s.grid = g;
    s.block = b;
    s.vector = v;
    s.mapping = m;
    s.warp = w;
    s.block_stage = bs;
    s.cross = c;
    out.push_back(s);
  };
  add(1, 32, 1, Mapping::grid_stride, WarpStage::shfl_down, BlockStage::warp_of_warps, CrossBlock::second_kernel);
  add(3, 96, 2, Mapping::contiguous, WarpStage::xor_butterfly, BlockStage::smem_tree, CrossBlock::last_block);
  add(132, 256, 4, Mapping::grid_stride, WarpStage::shfl_down, BlockStage::smem_tree, CrossBlock::last_block);
  add(7, 1024, 4, Mapping::contiguous, WarpStage::shfl_down, BlockStage::warp_of_warps, CrossBlock::second_kernel);
  add(1056, 64, 1, Mapping::grid_stride, WarpStage::xor_butterfly, BlockStage::warp_of_warps, CrossBlock::second_kernel);
  add(1, 1024, 2, Mapping::grid_stride, WarpStage::shfl_down, BlockStage::smem_tree, CrossBlock::second_kernel);
  return out;
}

// shapes() plus blocks whose last warp is partial (1 x 33, 2 x 47), which verify's shapes never have.
std::vector<LaunchShape> shapes_with_partial_warps() {
  std::vector<LaunchShape> all = shapes();
  for (const auto [grid, block, vector] : {std::array<int, 3>{1, 33, 1}, std::array<int, 3>{2, 47, 2}}) {
    LaunchShape s = all[0];
    s.grid = grid;
    s.block = block;
    s.vector = vector;
    all.push_back(s);
  }
  return all;
}

template <class T> std::vector<T> input(Distribution d, std::int64_t n, std::uint64_t seed = 3) {
  DistributionSpec spec;
  spec.kind = d;
  return generate<T>(spec, seed, static_cast<std::size_t>(n));
}

template <class T> void check_against_model(const std::vector<T>& x_all) {
  for (std::int64_t n : kSizes) {
    const std::span<const T> x(x_all.data(), static_cast<std::size_t>(n));
    gpu::DeviceBuffer<T> buf(n);
    buf.upload(x);
    for (const auto& base : shapes())
      for (const auto& k : gpu_kernels()) {
        if (!k.modelled || k.diagnostic_only) continue;
        if (k.float_input_only && sizeof(T) != 4) continue;
        const LaunchShape s = canonicalize(k.kernel, base);
        if (k.kernel == GpuKernel::atomic && s.grid != 1) continue;  // one arrival order only at grid 1
        if (!validate_shape(k.kernel, s, FloatTraits<T>::dtype, n).empty()) continue;
        SCOPED_TRACE(std::string(k.name) + " [" + to_string(s) + "] n=" + std::to_string(n));
        const auto g = gpu::gpu_sum<T>(k.kernel, s, buf);
        ASSERT_TRUE(g.ok()) << g.error;
        const auto m = model_sum<T>(k.kernel, s, x);
        ASSERT_TRUE(m.has_value) << m.error;
        EXPECT_TRUE(same_bits(g.value, m.value)) << hex_bits(g.value) << " vs model " << hex_bits(m.value);
        if (k.kernel == GpuKernel::double_acc) {
          EXPECT_TRUE(same_bits(g.accumulator, m.accumulator));
        }
      }
  }
}

template <class T> void check_against_model(Distribution d) {
  check_against_model<T>(input<T>(d, kSizes[std::size(kSizes) - 1]));
}

// Subnormal data: the kernels keep subnormals (-ftz=false), except a float atomicAdd on global
// memory, which flushes its operands and result to zero whatever the flag says; the model adds as
// each does (order_model/cross_block.hpp).
TEST(GpuVsModel, SubnormalData) {
  SUMLAB_REQUIRE_GPU();
  std::vector<float> f(static_cast<std::size_t>(kSizes[std::size(kSizes) - 1]));
  std::vector<double> d(f.size());
  for (std::size_t i = 0; i < f.size(); ++i) {
    f[i] = std::ldexp(i % 7 == 3 ? -1.0f : 1.0f, -149 + static_cast<int>(i % 5));
    d[i] = std::ldexp(i % 7 == 3 ? -1.0 : 1.0, -1074 + static_cast<int>(i % 5));
  }
  check_against_model<float>(f);
  check_against_model<double>(d);
}

TEST(GpuVsModel, FloatUniform) {
  SUMLAB_REQUIRE_GPU();
  check_against_model<float>(Distribution::uniform);
}
TEST(GpuVsModel, FloatCancellation) {
  SUMLAB_REQUIRE_GPU();
  check_against_model<float>(Distribution::cancellation);
}
TEST(GpuVsModel, DoubleLognormal) {
  SUMLAB_REQUIRE_GPU();
  check_against_model<double>(Distribution::lognormal);
}
TEST(GpuVsModel, DoubleNormal) {
  SUMLAB_REQUIRE_GPU();
  check_against_model<double>(Distribution::normal);
}

TEST(GpuExact, CorrectlyRoundedOnEdgeTablesForEveryShape) {
  SUMLAB_REQUIRE_GPU();
  const float inf = std::numeric_limits<float>::infinity();
  const float big = std::numeric_limits<float>::max();
  const float tiny = std::numeric_limits<float>::denorm_min();
  const std::vector<std::vector<float>> tables = {
      {},
      {-0.0f},
      {-0.0f, -0.0f, -0.0f},
      {-0.0f, 0.0f},
      {1.0f, 1e-8f, -1.0f},
      {big, big, -big},                 // exact sum fits after cancellation
      {big, big},                       // overflows to +Inf
      {tiny, tiny, -tiny, tiny},        // subnormal result
      {16777216.0f, 1.0f, 1.0f},        // the serial sum loses both ones
      {inf, 1.0f},
      {inf, -inf},
      {std::nanf(""), 1.0f},
  };
  for (const auto& t : tables)
    for (const auto& s : shapes()) {
      const auto g = gpu::gpu_sum<float>(GpuKernel::exact, canonicalize(GpuKernel::exact, s), std::span<const float>(t));
      ASSERT_TRUE(g.ok()) << g.error;
      const float ref = reference::correctly_rounded_sum<float>(std::span<const float>(t));
      EXPECT_TRUE(same_bits(g.value, ref)) << hex_bits(g.value) << " vs MPFR " << hex_bits(ref) << " n=" << t.size();
    }
}

// The sum left on the device (rounded there by the host's code) has gpu_sum's bits: the edge
// tables, both dtypes over several n and shapes, and calls back to back with nothing in between
// (each round kernel must leave the totals reset for the next sum, on another input too).
template <class T> T exact_into_once(std::span<const T> x, const LaunchShape& s) {
  gpu::DeviceBuffer<T> in(static_cast<std::int64_t>(x.size())), out(1);
  in.upload(x);
  const std::string why = gpu::gpu_exact_into<T>(in.device_data(), in.size(), out.device_data(), s);
  EXPECT_EQ(why, "");
  return out.download()[0];
}

TEST(GpuExact, SumLeftOnTheDeviceHasTheSameBits) {
  SUMLAB_REQUIRE_GPU();
  const float inf = std::numeric_limits<float>::infinity(), big = std::numeric_limits<float>::max();
  const std::vector<std::vector<float>> tables = {{},          {-0.0f},     {-0.0f, 0.0f}, {1.0f, 1e-8f, -1.0f},
                                                  {big, big},  {inf, 1.0f}, {inf, -inf},   {std::nanf(""), 1.0f},
                                                  {big, big, -big}};
  for (const auto& t : tables) {
    const float want = reference::correctly_rounded_sum<float>(std::span<const float>(t));
    EXPECT_TRUE(same_bits(exact_into_once<float>(t, default_shape(GpuKernel::exact)), want)) << "n=" << t.size();
  }
  for (std::size_t n : {1u, 33u, 1000u, 100003u, 3000017u}) {
    DistributionSpec spec;
    spec.kind = Distribution::lognormal;
    spec.sigma = 6;
    const auto f = generate<float>(spec, 5, n);
    const auto d = generate<double>(spec, 5, n);
    for (const auto& s : shapes()) {
      const LaunchShape c = canonicalize(GpuKernel::exact, s);
      EXPECT_TRUE(same_bits(exact_into_once<float>(f, c), exact_sum<float>(std::span<const float>(f)))) << n;
      EXPECT_TRUE(same_bits(exact_into_once<double>(d, c), exact_sum<double>(std::span<const double>(d)))) << n;
    }
  }
  // Back to back: 20 sums alternating two inputs into 20 outputs, one synchronisation at the end.
  const auto a = generate<float>({Distribution::normal}, 1, 1 << 20), b = generate<float>({Distribution::cancellation}, 2, 777777);
  gpu::DeviceBuffer<float> da(static_cast<std::int64_t>(a.size())), db(static_cast<std::int64_t>(b.size())), outs(20);
  da.upload(a);
  db.upload(b);
  for (int i = 0; i < 20; ++i) {
    const auto& x = i % 2 ? db : da;
    ASSERT_EQ(gpu::gpu_exact_into<float>(x.device_data(), x.size(), outs.device_data() + i, default_shape(GpuKernel::exact)), "");
  }
  const auto got = outs.download();
  for (int i = 0; i < 20; ++i)
    EXPECT_TRUE(same_bits(got[i], exact_sum<float>(std::span<const float>(i % 2 ? b : a)))) << i;
  LaunchShape bad = default_shape(GpuKernel::exact);
  bad.block = 2048;
  EXPECT_NE(gpu::gpu_exact_into<float>(da.device_data(), da.size(), outs.device_data(), bad), "");
}

TEST(GpuExactAndFixedPoint, SameBitsAsTheCpuForEveryShape) {
  SUMLAB_REQUIRE_GPU();
  for (Distribution d : {Distribution::uniform, Distribution::cancellation, Distribution::lognormal}) {
    const auto x = input<double>(d, 300007, 5);
    const auto f = input<float>(d, 300007, 5);
    const double ex = exact_sum<double>(std::span<const double>(x));
    const double fx = fixed_point_sum<double>(std::span<const double>(x)).value;
    const float exf = exact_sum<float>(std::span<const float>(f));
    const float fxf = fixed_point_sum<float>(std::span<const float>(f)).value;
    gpu::DeviceBuffer<double> bd(static_cast<std::int64_t>(x.size()));
    bd.upload(std::span<const double>(x));
    gpu::DeviceBuffer<float> bf(static_cast<std::int64_t>(f.size()));
    bf.upload(std::span<const float>(f));
    for (const auto& s : shapes()) {
      EXPECT_EQ(to_bits(gpu::gpu_sum<double>(GpuKernel::exact, canonicalize(GpuKernel::exact, s), bd).value), to_bits(ex));
      EXPECT_EQ(to_bits(gpu::gpu_sum<double>(GpuKernel::fixed_point, canonicalize(GpuKernel::fixed_point, s), bd).value),
                to_bits(fx));
      EXPECT_EQ(to_bits(gpu::gpu_sum<float>(GpuKernel::exact, canonicalize(GpuKernel::exact, s), bf).value), to_bits(exf));
      EXPECT_EQ(to_bits(gpu::gpu_sum<float>(GpuKernel::fixed_point, canonicalize(GpuKernel::fixed_point, s), bf).value),
                to_bits(fxf));
    }
  }
}

// gpu_exact's fast path (error-free additions on per-thread double grids) covers a range of 2^60
// (float) / 2^73 (double) below each thread's anchor; everything else takes the exact digit path:
// re-anchors on growing magnitudes, remainders below the last grid (a whole group redone element
// by element), doubles above 2^1012, subnormals, specials. Inputs that exercise all of them, at a
// size where every thread runs many groups and flushes, against MPFR, for every shape.
template <class T> std::vector<T> wide_range_input(std::size_t n, int every_tiny) {
  using Traits = FloatTraits<T>;
  std::uint64_t state = 0x9e3779b97f4a7c15ull;
  auto next = [&state] {  // splitmix64: the test's own pure sequence
    std::uint64_t z = (state += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
  };
  std::vector<T> x(n);
  for (std::size_t i = 0; i < n; ++i) {
    const double m = 1.0 + static_cast<double>(next() >> 11) * 0x1p-53;  // [1, 2)
    const double sign = (next() & 1) ? -1.0 : 1.0;
    int e;
    if (every_tiny > 0) e = i % static_cast<std::size_t>(every_tiny) == 0 ? Traits::min_subnormal_exp + 3 : -1 - int(next() % 8);
    else e = Traits::min_subnormal_exp + int(next() % static_cast<std::uint64_t>(Traits::emax - Traits::min_subnormal_exp - 1));
    x[i] = static_cast<T>(sign * std::ldexp(m, e));
  }
  return x;
}

template <class T> void check_exact_wide(std::size_t n, int every_tiny) {
  const auto x = wide_range_input<T>(n, every_tiny);
  const T ref = reference::correctly_rounded_sum<T>(std::span<const T>(x));
  const T fixed = fixed_point_sum<T>(std::span<const T>(x)).value;
  gpu::DeviceBuffer<T> buf(static_cast<std::int64_t>(n));
  buf.upload(std::span<const T>(x));
  // With partial last warps: these inputs are off the fixed-point grid, so gpu_fixed_point's
  // quantising pass runs there too.
  const std::vector<LaunchShape> all = shapes_with_partial_warps();
  for (const auto& s : all) {
    SCOPED_TRACE(to_string(s) + " tiny every " + std::to_string(every_tiny));
    const auto g = gpu::gpu_sum<T>(GpuKernel::exact, canonicalize(GpuKernel::exact, s), buf);
    ASSERT_TRUE(g.ok()) << g.error;
    EXPECT_TRUE(same_bits(g.value, ref)) << hex_bits(g.value) << " vs MPFR " << hex_bits(ref);
    const auto f = gpu::gpu_sum<T>(GpuKernel::fixed_point, canonicalize(GpuKernel::fixed_point, s), buf);
    ASSERT_TRUE(f.ok()) << f.error;
    EXPECT_TRUE(same_bits(f.value, fixed)) << hex_bits(f.value) << " vs CPU fixed point " << hex_bits(fixed);
  }
}

// The wide path (ExactThread::bin_group): groups whose span the levels cannot hold go to per-thread
// integer bins. Every finite bit pattern (float, and double on a grid that one block of up to 256
// threads an SM holds at once: every bin; other double grids and the |x| kernel: windows raised as
// larger elements come, the elements below a window into the warp's cells), lognormal sigma 12 (spans of
// 2^180 and more), the same sorted by magnitude (every thread's magnitudes drift up: re-anchors
// that keep narrow groups on the levels), and a mix of narrow groups with rare huge elements, each
// against the CPU's exact sum, for gpu_exact and for the totals a study's reference reads (the
// |x| kernel), at every shape.
// The CPU's exact Σx and Σ|x| of x, as gpu_exact_totals returns them.
template <class T> void host_totals(const std::vector<T>& x, Superaccumulator<T>& sum, Superaccumulator<T>& sum_abs) {
  sum.add(std::span<const T>(x));
  std::vector<T> magnitudes(x.size());
  for (std::size_t i = 0; i < x.size(); ++i) magnitudes[i] = std::fabs(x[i]);
  sum_abs.add(std::span<const T>(magnitudes));
}

template <class T> void check_exact_bins() {
  std::vector<std::pair<std::string, std::vector<T>>> inputs;
  DistributionSpec bits;
  bits.kind = Distribution::random_bits;
  inputs.emplace_back("random_bits", generate<T>(bits, 11, (1 << 20) + 3));
  DistributionSpec wide;
  wide.kind = Distribution::lognormal;
  wide.sigma = 12;
  inputs.emplace_back("lognormal sigma 12", generate<T>(wide, 12, (1 << 20) + 5));
  auto sorted = generate<T>(wide, 13, (1 << 19) + 1);
  apply_ordering(sorted, Ordering::magnitude_ascending);
  inputs.emplace_back("lognormal sigma 12, ascending |x|", sorted);
  DistributionSpec narrow;
  narrow.kind = Distribution::normal;
  auto spikes = generate<T>(narrow, 14, (1 << 20) + 7);
  for (std::size_t i = 0; i < spikes.size(); i += 9973) spikes[i] = static_cast<T>(std::ldexp(double(spikes[i]), 90));
  inputs.emplace_back("normal with a 2^90 spike every 9973", spikes);
  for (const auto& [name, x] : inputs) {
    const T ref = exact_sum<T>(std::span<const T>(x));
    Superaccumulator<T> host_sum, host_abs;
    host_totals(x, host_sum, host_abs);
    gpu::DeviceBuffer<T> buf(static_cast<std::int64_t>(x.size()));
    buf.upload(std::span<const T>(x));
    std::vector<LaunchShape> all = shapes_with_partial_warps();
    LaunchShape windowed = all[0];  // double: the 512-thread build's window
    windowed.grid = 2;
    windowed.block = 512;
    all.push_back(windowed);
    for (const auto& s : all) {
      const LaunchShape c = canonicalize(GpuKernel::exact, s);
      SCOPED_TRACE(name + " [" + to_string(c) + "]");
      const auto g = gpu::gpu_sum<T>(GpuKernel::exact, c, buf);
      ASSERT_TRUE(g.ok()) << g.error;
      EXPECT_TRUE(same_bits(g.value, ref)) << hex_bits(g.value) << " vs CPU " << hex_bits(ref);
      if (c.block > 512) continue;  // the totals take blocks of at most 512 threads
      Superaccumulator<T> sum, sum_abs;
      ASSERT_EQ(gpu::gpu_exact_totals<T>(buf.device_data(), buf.size(), c, sum, sum_abs), "");
      EXPECT_EQ(sum.limbs(), host_sum.limbs());
      EXPECT_EQ(sum_abs.limbs(), host_abs.limbs());
    }
  }
}

// Which path double's middling spans take depends on the card (device_rates.hpp): an H100's
// memory the whole range's bins keep up with (they ran at 0.98-0.99 of CUB there), the H200's they
// do not (0.68). No device needed: the figures are the cards' attributes and datasheets.
TEST(GpuExactPath, BinsKeepUpWithAnH100NotWithTheH200) {
  const double h100_sxm = gpu::memory_bytes_per_sm_cycle(2619000, 5120, 132, 1980000);
  EXPECT_NEAR(h100_sxm, 12.83, 0.01);
  EXPECT_TRUE(gpu::exact_bins_keep_up(h100_sxm));
  EXPECT_TRUE(gpu::exact_bins_keep_up(gpu::memory_bytes_per_sm_cycle(1593000, 5120, 114, 1755000)));  // H100 PCIe, 10.2
  EXPECT_FALSE(gpu::exact_bins_keep_up(4.8e12 / (132 * 1.98e9)));  // the H200: 4.8 TB/s, 132 SMs at 1980 MHz
  // An attribute the device does not report keeps the span that needs no rate.
  EXPECT_EQ(gpu::memory_bytes_per_sm_cycle(2619000, 5120, 0, 1980000), 0.0);
  EXPECT_FALSE(gpu::exact_bins_keep_up(0.0));
}

TEST(GpuExact, WideSpansThroughTheBinsStayExact) {
  SUMLAB_REQUIRE_GPU();
  check_exact_bins<float>();
  check_exact_bins<double>();
}

// Double's wide path at its bounds: 2^22 copies of one value, but the first 64 groups of 8 hold
// +-2^1000 (they cancel), so the warps that take them first (every lane of a one-warp block) send
// their groups to the bins; also in one-block launches whose lanes each take 2^17 (1 x 32) or 2^13
// (1 x 512) elements.
// - The windowed builds (blocks of more than 256 threads; smaller ones where the grid exceeds one
//   block an SM, as 1056 x 64 does) keep a window of bins far above the value, whose digits go to
//   the warp's cells (exact_kernel.cuh, ExactCells): -(2^53 - 1) 2^-260, whose largest digit,
//   -2^16, lands in the same cell for every element, so between two emptyings a cell holds up to
//   32 * 1023 such digits, 2^21 from an int32's limit. Twice: as it is, every warp's elements
//   share their cells, so its lanes add them first (cells_together); with one element in 64 from
//   far below, every warp's group mixes two cells, so each element takes its own five atomics.
// - The other shapes hold every bin (no cells), in radix 2^48: -(2^53 - 1) 2^-20, exponent field
//   1055 (47 above a multiple of 48), gives each element's high digit its largest magnitude, about
//   2^52, so between two normalisings a bin gathers 1016 of them, 2^62, half an int64's limit.
//   -(2^53 - 1) 2^-52 (exponent field 1023, 31 above a multiple of 32) does the same for a window's
//   bins, radix 2^32.
// A larger count between emptyings or normalisings, or a digit or weight wrong, changes the sum.
TEST(GpuExact, DoubleCellsAndBinsAtTheirBoundsStayExact) {
  SUMLAB_REQUIRE_GPU();
  const std::size_t n = std::size_t(1) << 22;
  struct Case {
    const char* name;
    double value;
    bool mixed;
  };
  for (const Case& k : {Case{"one cell", -std::ldexp(0x1p53 - 1, -260), false},
                        Case{"one element in 64 in other cells", -std::ldexp(0x1p53 - 1, -260), true},
                        Case{"a window's largest high digit", -std::ldexp(0x1p53 - 1, -52), false},
                        Case{"the whole range's largest high digit", -std::ldexp(0x1p53 - 1, -20), false}}) {
    SCOPED_TRACE(k.name);
    std::vector<double> x(n, k.value);
    for (std::size_t i = 0; i < 512; i += 8) x[i] = i < 256 ? 0x1p1000 : -0x1p1000;
    if (k.mixed)
      for (std::size_t i = 63; i < n; i += 64) x[i] = -std::ldexp(0x1p53 - 1, -600);
    const double ref = exact_sum<double>(std::span<const double>(x));
    gpu::DeviceBuffer<double> buf(static_cast<std::int64_t>(n));
    buf.upload(std::span<const double>(x));
    std::vector<LaunchShape> all = shapes_with_partial_warps();
    for (const int block : {32, 512}) {
      LaunchShape one = all[0];
      one.grid = 1;
      one.block = block;
      all.push_back(one);
    }
    for (const auto& s : all) {
      const LaunchShape c = canonicalize(GpuKernel::exact, s);
      SCOPED_TRACE(to_string(c));
      const auto g = gpu::gpu_sum<double>(GpuKernel::exact, c, buf);
      ASSERT_TRUE(g.ok()) << g.error;
      EXPECT_TRUE(same_bits(g.value, ref)) << hex_bits(g.value) << " vs CPU " << hex_bits(ref);
    }
  }
}

TEST(GpuExact, WideRangesAndTheSlowPathsStayExact) {
  SUMLAB_REQUIRE_GPU();
  check_exact_wide<float>(1 << 18, 0);      // every exponent of float, random signs
  check_exact_wide<double>(1 << 18, 0);     // every exponent of double, up to 2^1023
  check_exact_wide<float>(1 << 18, 4099);   // [2^-9, 1) with rare subnormals: groups redone
  check_exact_wide<double>(1 << 18, 4099);
  check_exact_wide<float>(1 << 18, 1 << 30);  // one subnormal (element 0), then a narrow range
}

// Threads long enough to push their flushed integers to the block mid-run, and blocks whose last
// warp is partial (the pushes and the range reductions are warp-aggregated over the lanes present),
// against MPFR. The first 1024 elements, which hold the first group of every thread of the
// grid-stride 1 x 32 and 1 x 33 shapes, lie in [0.5, 1): those threads anchor at B = 4 (2^4 above),
// level 0's grid is 2^-37, and the later elements, in [8, 16), add at least 512 * 8 * 2^37 = 2^49
// grid units per flush, so each thread passes 2^55 (a push) every 64 flushes or fewer: about 4
// times in its 2^17 elements.
template <class T> void check_long_threads() {
  const std::size_t n = std::size_t(1) << 22;
  std::vector<T> x(n);
  for (std::size_t i = 0; i < n; ++i)
    x[i] = (i < 1024 ? T(0.5) : T(8)) * (T(1) + static_cast<T>(i % 4093) / T(4096));
  const T ref = reference::correctly_rounded_sum<T>(std::span<const T>(x));
  const T fixed = fixed_point_sum<T>(std::span<const T>(x)).value;
  gpu::DeviceBuffer<T> buf(static_cast<std::int64_t>(n));
  buf.upload(std::span<const T>(x));
  const struct { int grid, block, vector; Mapping mapping; } cases[] = {
      {1, 32, 4, Mapping::grid_stride}, {1, 33, 1, Mapping::grid_stride},
      {2, 47, 2, Mapping::contiguous}, {3, 1000, 4, Mapping::grid_stride}};
  for (const auto& c : cases) {
    LaunchShape s;
    s.grid = c.grid;
    s.block = c.block;
    s.vector = c.vector;
    s.mapping = c.mapping;
    for (GpuKernel k : {GpuKernel::exact, GpuKernel::fixed_point}) {
      SCOPED_TRACE(std::string(info(k).name) + " [" + to_string(canonicalize(k, s)) + "]");
      const auto g = gpu::gpu_sum<T>(k, canonicalize(k, s), buf);
      ASSERT_TRUE(g.ok()) << g.error;
      EXPECT_TRUE(same_bits(g.value, k == GpuKernel::exact ? ref : fixed)) << hex_bits(g.value);
    }
  }
}

TEST(GpuExact, LongThreadsAndPartialWarpsStayExact) {
  SUMLAB_REQUIRE_GPU();
  check_long_threads<float>();
  check_long_threads<double>();
}

// Past 2^31 elements the integer kernels sum in several launches into the same totals
// (core/gpu_kernel.hpp, exact_launch_elements): n = 2^31 + 7 float32 (8.6 GB on the device and on
// the host) gives the CPU's bits, for gpu_exact and for gpu_fixed_point with the scale from the
// data (whose first pass is gpu_exact's kernel), on lognormal input spanning a wide range.
TEST(GpuExact, BeyondTwoTo31ElementsSameBitsAsTheCpu) {
  SUMLAB_REQUIRE_GPU();
  const std::int64_t n = (std::int64_t(1) << 31) + 7;
  const double need = double(n) * sizeof(float) + double(std::int64_t(1) << 30);
  if (double(gpu::device_info().free_memory) < need) GTEST_SKIP() << "needs 9 GB of free device memory";
  DistributionSpec spec;
  spec.kind = Distribution::lognormal;
  gpu::DeviceBuffer<float> buf(n);
  gpu::fill<float>(buf, spec, 3);
  const std::vector<float> x = buf.download();
  const std::span<const float> xs(x);
  ASSERT_GT(x.size(), std::size_t(1) << 31);
  const float exact = exact_sum<float>(xs), fixed = fixed_point_sum<float>(xs).value;
  for (GpuKernel k : {GpuKernel::exact, GpuKernel::fixed_point}) {
    const auto r = gpu::gpu_sum<float>(k, default_shape(k), buf);
    ASSERT_TRUE(r.ok()) << info(k).name << ": " << r.error;
    EXPECT_EQ(to_bits(r.value), to_bits(k == GpuKernel::exact ? exact : fixed)) << info(k).name;
  }
  // A study's reference from the device: the same limbs as the host's, over several launches.
  Superaccumulator<float> sum, sum_abs, host_sum, host_abs;
  ASSERT_EQ(gpu::gpu_exact_totals<float>(buf.device_data(), n, default_shape(GpuKernel::exact), sum, sum_abs), "");
  host_sum.add(xs);
  host_abs.add(xs);  // lognormal: every element positive, so sum|x| = sum x
  EXPECT_EQ(sum.limbs(), host_sum.limbs());
  EXPECT_EQ(sum_abs.limbs(), host_abs.limbs());
}

// A study's exact reference computed where its data lies (gpu_exact_totals): the limbs of the sum
// and of the magnitudes, and the sum's special counts, are the host superaccumulator's, for every
// shape the magnitudes' kernel takes, on awkward sizes, the whole exponent range with random signs,
// cancellation, signed zeros and specials; a block past 512 threads is refused with the reason.
template <class T> void check_exact_totals() {
  std::vector<std::vector<T>> inputs;
  for (std::int64_t n : kSizes) inputs.push_back(generate<T>({Distribution::cancellation}, 5, static_cast<std::size_t>(n)));
  std::vector<T> wide(100003);
  std::uint64_t state = 99;
  for (auto& v : wide) {
    state = state * 6364136223846793005ull + 1442695040888963407ull;
    v = static_cast<T>(std::ldexp(static_cast<double>(state >> 40), static_cast<int>((state >> 3) % 240) - 120) *
                       ((state & 1) ? -1.0 : 1.0));
  }
  inputs.push_back(wide);
  inputs.push_back(std::vector<T>(1000, T(-0.0)));
  inputs.push_back({T(1), std::numeric_limits<T>::infinity(), T(-0.0), std::numeric_limits<T>::quiet_NaN()});
  inputs.push_back({-std::numeric_limits<T>::infinity(), std::numeric_limits<T>::max(), std::numeric_limits<T>::max()});
  std::vector<LaunchShape> all;
  for (const auto [grid, block] : {std::array<int, 2>{132, 512}, {1, 32}, {3, 96}, {7, 256}, {2, 47}}) {
    LaunchShape s;
    s.grid = grid;
    s.block = block;
    all.push_back(canonicalize(GpuKernel::exact, s));
  }
  for (const auto& x : inputs) {
    Superaccumulator<T> host_sum, host_abs;
    host_totals(x, host_sum, host_abs);
    gpu::DeviceBuffer<T> buf(static_cast<std::int64_t>(x.size()));
    buf.upload(std::span<const T>(x));
    for (const auto& s : all) {
      SCOPED_TRACE("n=" + std::to_string(x.size()) + " [" + to_string(s) + "]");
      Superaccumulator<T> sum, sum_abs;
      ASSERT_EQ(gpu::gpu_exact_totals<T>(buf.device_data(), buf.size(), s, sum, sum_abs), "");
      EXPECT_EQ(sum.limbs(), host_sum.limbs());
      EXPECT_EQ(sum_abs.limbs(), host_abs.limbs());
      EXPECT_EQ(sum.specials(), host_sum.specials());
      EXPECT_TRUE(same_bits(sum.round(), host_sum.round()));
    }
  }
  LaunchShape big;
  big.grid = 2;
  big.block = 1024;
  Superaccumulator<T> sum, sum_abs;
  gpu::DeviceBuffer<T> buf(4);
  buf.upload(std::vector<T>(4, T(1)));
  EXPECT_NE(gpu::gpu_exact_totals<T>(buf.device_data(), 4, canonicalize(GpuKernel::exact, big), sum, sum_abs)
                .find("at most 512 threads"),
            std::string::npos);
}

TEST(GpuExactTotals, SameLimbsAsTheHostForEveryShape) {
  SUMLAB_REQUIRE_GPU();
  check_exact_totals<float>();
  check_exact_totals<double>();
}

// gpu_fixed_point with the caller's k (one pass: fixed_point_kernel alone) against
// fixed_point_sum(x, k): the bits and the report (the note is the CPU's describe() of the same
// counts), for scales that put every element on the grid, drop low bits (ties included: the
// elements have few significand bits), saturate, are negative (at -100 elements fall below half a
// step, or below the subnormals, once scaled) or are past the floating-point path (the integer
// steps), over awkward sizes, shapes with partial last warps, and specials.
template <class T> class GpuFixedPointGivenScale : public ::testing::Test {};
using FloatTypes = ::testing::Types<float, double>;
TYPED_TEST_SUITE(GpuFixedPointGivenScale, FloatTypes);

TYPED_TEST(GpuFixedPointGivenScale, SameBitsAndReportAsTheCpu) {
  SUMLAB_REQUIRE_GPU();
  using T = TypeParam;
  const std::size_t n_max = 100003;
  std::vector<T> x(n_max);
  for (std::size_t i = 0; i < n_max; ++i)  // multiples of 2^-12 in (-64, 64): ties at k = 11
    x[i] = static_cast<T>(static_cast<double>(static_cast<long long>((i * 2654435761u) % 524287) - 262143) * 0x1p-12);
  const int k_data = 61 - 5;  // max|x| in [32, 64)
  // The lowest k whose vanished elements x 2^62 normalises (fixed_vanishing_scale)
  constexpr int edge = static_cast<int>(order_model::fixed_vanishing_min_k<T>);
  const std::vector<LaunchShape> all = shapes_with_partial_warps();
  std::vector<T> specials(1000, T(-0.0));
  const std::vector<std::vector<T>> inputs{
      x, std::vector<T>(x.begin(), x.begin() + 1025), std::vector<T>(x.begin(), x.begin() + 33),
      std::vector<T>(x.begin(), x.begin() + 1), {}, specials,
      [&] {
        auto s = specials;
        s[7] = std::numeric_limits<T>::infinity();
        s[500] = T(3.5);
        s[999] = std::numeric_limits<T>::quiet_NaN();
        return s;
      }(),
      input<T>(Distribution::normal, 4099, 3),  // every bit set somewhere: bits lost at each k
      // Negative and tiny: at k = -100 each y = x 2^k falls below the smallest subnormal (y = -0),
      // yet no element is -0, so a zero total is +0.
      std::vector<T>(3001, -std::numeric_limits<T>::min() * T(4)),
      // At that edge and one below it: the largest that vanishes there, subnormals, and the ones
      // between.
      [&] {
        std::vector<T> w(4099);
        for (std::size_t i = 0; i < w.size(); ++i) {
          const T top = std::nextafter(std::ldexp(T(1), -edge - (i % 3 == 0 ? 1 : 0)), T(0));
          const T sub = std::numeric_limits<T>::denorm_min() * static_cast<T>(1 + i % 97);
          w[i] = (i % 2 ? T(-1) : T(1)) * (i % 5 == 0 ? sub : i % 5 == 1 ? T(i) : top);
        }
        return w;
      }()};
  for (const auto& in : inputs) {
    gpu::DeviceBuffer<T> buf(static_cast<std::int64_t>(in.size()));
    buf.upload(std::span<const T>(in));
    for (const int k : {k_data, 11, 3, k_data + 3, -2, -100, FloatTraits<T>::emax + 5, edge, edge - 1}) {
      const auto cpu = fixed_point_sum<T>(std::span<const T>(in), k);
      KernelOptions opt;
      opt.fixed_scale = k;
      for (const auto& s : all) {
        SCOPED_TRACE("n=" + std::to_string(in.size()) + " k=" + std::to_string(k) + " [" + to_string(s) + "]");
        const auto g = gpu::gpu_sum<T>(GpuKernel::fixed_point, canonicalize(GpuKernel::fixed_point, s), buf, opt);
        ASSERT_TRUE(g.ok()) << g.error;
        EXPECT_TRUE(same_bits(g.value, cpu.value)) << hex_bits(g.value) << " vs CPU " << hex_bits(cpu.value);
        EXPECT_EQ(g.note, cpu.diagnostics);
        EXPECT_EQ(g.quantisation, cpu.extra_error_bound);  // the bound a study draws from the kernel's count
      }
    }
  }
  // Only gpu_fixed_point takes a scale.
  KernelOptions opt;
  opt.fixed_scale = 10;
  const auto bad = gpu::gpu_sum<T>(GpuKernel::exact, default_shape(GpuKernel::exact), std::span<const T>(x), opt);
  EXPECT_NE(bad.error.find("takes no fixed-point scale"), std::string::npos) << bad.error;
}

// gpu_fixed_point with the scale from the data. A double is quantised in one read at each block's
// guess of the largest exponent, at most 2 binades above the largest of the grid's first tiles, or
// 6 where those tiles look heavy-tailed (fixed_window_kernel's anchor and margins), which
// pass 2 checks; where a guess fails, pass 2 quantises everything. Either way: the CPU's bits, note
// and bound. The inputs put the largest magnitude where the anchors see it (uniform, normal: one
// read), one or two binades above the anchors (each block's sum taken at a grid finer than its
// guess, in a late tile or after the last whole tile), past the margin (two reads, or one where a
// block's first tile holds it), behind leading zeros, -0s, NaN and infinities,
// among subnormals (a block gives up: two reads) and log-uniformly over 2^-30..1; elements that
// lose only a few bits (0 to 9) or fall below half a step, whose counts and bits lost each grid
// must get right; a heavy tail (the wide margin, its sum taken 4 binades finer than its guess); and
// tiles of elements far below half a step among heavy ones (the blocks that read them give up).
// A grid resident whole with blocks of up to 512 threads takes fixed_largest_launch_kernel instead
// here (a small input; float where its tiles fill at most half the stages): the largest magnitude,
// the gate, then every element quantised at k, from the tiles its blocks still hold (one read) or,
// where they do not all fit, the rest again from the L2 (two; double only).
template <class T> class GpuFixedPointFromData : public ::testing::Test {};
TYPED_TEST_SUITE(GpuFixedPointFromData, FloatTypes);

TYPED_TEST(GpuFixedPointFromData, OneReadWhereTheGuessHoldsAndTheCpuBitsEverywhere) {
  SUMLAB_REQUIRE_GPU();
  using T = TypeParam;
  const int sms = gpu::device_info().sm_count;
  const std::int64_t n = (std::int64_t(1) << 18) + 37;
  const auto uniform = input<T>(Distribution::uniform, n, 5);
  auto scaled = [&](double f) {
    std::vector<T> v(uniform);
    for (T& e : v) e = static_cast<T>(static_cast<double>(e) * f);
    return v;
  };
  auto with = [](std::vector<T> v, std::int64_t i, T value) {
    v[static_cast<std::size_t>(i)] = value;
    return v;
  };
  std::vector<T> log_uniform(static_cast<std::size_t>(n));
  for (std::size_t i = 0; i < log_uniform.size(); ++i)
    log_uniform[i] = static_cast<T>((i % 3 == 0 ? -1.0 : 1.0) * static_cast<double>(uniform[i] + T(1)) *
                                    std::ldexp(1.0, -static_cast<int>((i * 2654435761u) % 31)));
  const auto normal = input<T>(Distribution::normal, n, 6);
  std::vector<T> few_bits_lost(uniform);
  for (std::size_t i = 1; i < few_bits_lost.size(); i += 2) {
    const double m = static_cast<double>((1u << 19) | (static_cast<unsigned>(i * 2654435761u >> 13) & 0x7ffffu) | 1u);
    few_bits_lost[i] = static_cast<T>((i % 4 == 1 ? -m : m) * std::ldexp(1.0, -54 - static_cast<int>(i / 2 % 12)));
  }
  std::vector<T> heavy_tail(few_bits_lost);
  for (std::size_t i = 0; i < heavy_tail.size(); i += 2)
    if (i % 128 != 0) heavy_tail[i] = static_cast<T>(static_cast<double>(heavy_tail[i]) * 0x1p-12);
  // The heavy tail with a 16 in block 0's first tile (the wide margin over the grid), and elements
  // 8193 to 16388 far below half a step of its grid (uniform * 2^-80). Where they fill a block's
  // first tile, the block goes sparse (order_model::fixed_window_sparse): blocks 2 and 3 at 531 x
  // 512, whose only tiles they are (one read), and block 1 at 3 x 1024, which then writes out its
  // later, heavy tiles, more than the room (two reads). In a later tile of a block that took a
  // window (elements 32769 to 40964: block 1's second at 3 x 1024) each goes to the integer steps,
  // and the block gives up (two reads).
  std::vector<T> tiny_among_heavy(heavy_tail), tiny_late(heavy_tail);
  for (std::size_t i = 8193; i < 16389; ++i) tiny_among_heavy[i] = static_cast<T>(static_cast<double>(uniform[i]) * 0x1p-80);
  for (std::size_t i = 32769; i < 40965; ++i) tiny_late[i] = static_cast<T>(static_cast<double>(uniform[i]) * 0x1p-80);
  tiny_among_heavy[5] = tiny_late[5] = T(16);
  std::vector<T> leading_zeros(uniform);
  for (std::size_t i = 0; i < 70000; ++i) leading_zeros[i] = i % 2 ? T(-0.0) : T(0);
  DistributionSpec wide;
  wide.kind = Distribution::lognormal;
  wide.sigma = 12;
  // Elements below half a step in nearly every group: each group by the floating-point unit
  // (fixed_quantise_group), the bits they lost counted from their significands; and subnormals
  // below half a step, whose groups take the integer steps.
  const auto wide_lognormal = generate<T>(wide, 9, n);
  // Wider still (double): 1 to 2% of each first tile lies within 2^62 of the grid's first tiles'
  // largest, so every block goes sparse (order_model::fixed_window_sparse): it counts the others and
  // writes these out, and pass 2 quantises them at E: one read. Every finite bit pattern as well.
  // The same first tiles before dense ones (every element from n / 2 on within 2^10 of the largest)
  // write out more than the room, n / 4: two reads. And tiles of 4096 that alternate between
  // lognormal sigma 4 ones and sparse ones (9 in 10 elements far below half a step): in blocks of
  // 512 the even blocks take a window and the odd ones go sparse, and the sum is the table's entry
  // and the elements written out and counted, in one read.
  wide.sigma = 4;
  std::vector<T> alternating = generate<T>(wide, 11, n);  // (lognormal sigma 4: heavy-tailed first tiles)
  for (std::size_t i = 0; i < alternating.size(); ++i)
    if (i / 4096 % 2 == 1 && i % 10 != 0) alternating[i] = static_cast<T>(static_cast<double>(alternating[i]) * 0x1p-80);
  wide.sigma = 24;
  const auto wider_lognormal = generate<T>(wide, 9, n);
  const auto every_bit_pattern = input<T>(Distribution::random_bits, n, 10);
  std::vector<T> sparse_then_dense(wider_lognormal);
  for (std::size_t i = sparse_then_dense.size() / 2; i < sparse_then_dense.size(); ++i)
    sparse_then_dense[i] = static_cast<T>(static_cast<double>(uniform[i]) * (sizeof(T) == 8 ? 0x1p180 : 0x1p100));
  std::vector<T> subnormals_below(uniform);
  for (std::size_t i = 5; i < subnormals_below.size(); i += 4099)
    subnormals_below[i] = static_cast<T>((i % 2 ? -1.0 : 1.0) * static_cast<double>(std::numeric_limits<T>::denorm_min()) *
                                         static_cast<double>(i % 1000 + 1));
  // Float, in one launch (fixed_one_launch_kernel, here at 7 x 96 and 2 x 47): a block whose
  // first tile (blockDim.x * 16 elements, for_each_bulk_group's first for the block) is far wider
  // than its own grid, with 4 or more elements in its top binade, quantises at its largest
  // exponent's k and keeps that integer where it was the sum's. Every bit pattern with a largest
  // magnitude in every 64 elements: every block's guess holds (one read); the same below 2^60 but
  // for a late 2^100 (every guess fails: two reads), or with four of the largest in block 0's first
  // tile alone (block 0's integer kept, the others read again); uniform with tiny elements in
  // block 1's first tile at 7 x 96 (block 1 guesses, the others take the exact pass: all read
  // again but block 1; at 2 x 47 a second tile holds them). Lognormal sigma 12's tiles, whose
  // largest stands alone, take the exact pass (above).
  std::vector<T> planted(every_bit_pattern);
  for (std::size_t i = 0; i < planted.size(); i += 64) planted[i] = (i % 128 ? -1 : 1) * std::numeric_limits<T>::max();
  std::vector<T> bits_below_2_60(every_bit_pattern);
  for (T& e : bits_below_2_60)
    if (std::isfinite(e) && std::fabs(static_cast<double>(e)) >= 0x1p60) e = static_cast<T>(static_cast<double>(e) * 0x1p-80);
  std::vector<T> tiny_in_block_1(uniform);
  for (std::size_t i = 1540; i < 1580; ++i) tiny_in_block_1[i] = static_cast<T>(static_cast<double>(uniform[i]) * 0x1p-70);
  struct Case {
    std::string name;
    std::vector<T> x;
    bool one_read;              // for double
    bool reads_checked = true;  // whether one_read is asserted
    std::int64_t late = -1;     // where one_read is false: the element past the guess (a first tile may hold it)
    int reads_block = 0;        // where nonzero: one_read is asserted for blocks of this size only
    int float_reads = 0;        // where nonzero: float's reads in one launch (7 x 96 and 2 x 47)
  };
  const std::vector<Case> cases{
      {"uniform", uniform, true},
      {"normal", normal, true},
      {"quarter range, 0.9 late", with(scaled(0.25), n - 5000, T(0.9)), true},
      {"quarter range, 0.9 after the tiles", with(scaled(0.25), n - 1, T(0.9)), true},
      {"eighth range, 3 late", with(scaled(0.125), n / 2, T(3)), false, true, n / 2},
      {"spike 2^40", with(uniform, 12345, T(0x1p40)), false, true, 12345},
      {"log-uniform 2^-30..2", log_uniform, true},
      {"leading zeros", leading_zeros, true},
      {"NaN and Inf", with(with(with(uniform, 3, std::numeric_limits<T>::infinity()), n - 2, -std::numeric_limits<T>::infinity()),
                           n / 3, std::numeric_limits<T>::quiet_NaN()), true},
      {"subnormal", scaled(static_cast<double>(std::numeric_limits<T>::denorm_min()) * 0x1p20), false},
      {"-0 only", std::vector<T>(static_cast<std::size_t>(n), T(-0.0)), true},
      {"up to half the largest finite", scaled(static_cast<double>(std::numeric_limits<T>::max()) / 2), false},
      {"lognormal", input<T>(Distribution::lognormal, n, 7), false, false},
      {"lognormal sigma 12", wide_lognormal, false, false},
      {"uniform, subnormals below half a step", subnormals_below, true, false},
      // Subnormals on the grid (double: the anchor -963, kf = 1022): x is subnormal where
      // y = x 2^kf is not, so the window pass takes x's exponent from y's less kf.
      {"subnormals on the grid", [&] {
         auto v = scaled(static_cast<double>(std::numeric_limits<T>::min()) * 0x1p60);
         const double low = std::ldexp(1.0, std::numeric_limits<T>::digits - 2);  // (x in [min / 2, min))
         for (std::size_t i = 2; i < v.size(); i += 997)
           v[i] = static_cast<T>((i % 2 ? -1.0 : 1.0) * static_cast<double>(std::numeric_limits<T>::denorm_min()) *
                                 (low + static_cast<double>(i % 8)));
         return v;
       }(), true},
      // Off every grid (double): full doubles lose bits at each; the elements below half a step go
      // by the integer steps.
      {"normal, NaN and Inf", with(with(normal, 1000, std::numeric_limits<T>::quiet_NaN()), n - 9, -std::numeric_limits<T>::infinity()), true},
      {"normal, below half a step", [&] {
         auto v = normal;
         for (std::size_t i = 3; i < v.size(); i += 997) v[i] = static_cast<T>(static_cast<double>(v[i]) * 0x1p-75);
         return v;
       }(), true},
      {"normal, 100 late", with(normal, n / 2, T(100)), false, true, n / 2},
      // Every other element is an odd 20-bit integer that sits 0 to 5 bits below the coarsest grid
      // where the anchor is -1 (it loses them there, fewer at finer grids); a late 1.5 makes the
      // sum's grid one binade finer than the guess.
      {"few bits lost", few_bits_lost, true},
      {"few bits lost, 1.5 late", with(few_bits_lost, n - 3000, T(1.5)), true},
      // 1 in 128 elements near the top of each tile and a 16 in block 0's first, which puts the
      // grid's anchor 5 binades above the other tiles' largest (a heavy tail: the wide margin, 6
      // binades), the few-bits elements above losing 3 to 14 bits at its coarsest grid, and a late
      // 64: 2 binades above the anchor.
      {"heavy tail, few bits lost, 64 late", with(with(heavy_tail, 5, T(16)), n / 2 + 1, T(64)), true},
      {"tiny tiles among heavy ones", tiny_among_heavy, true, true, -1, 512},
      {"a tiny late tile among heavy ones", tiny_late, false, true, -1, 1024},
      {"lognormal sigma 24 (sparse blocks)", wider_lognormal, true},
      {"every finite bit pattern (sparse blocks)", every_bit_pattern, true},
      {"sparse first tiles, dense later (no room)", sparse_then_dense, false},
      {"heavy and sparse tiles in turn", alternating, true, true, -1, 512},
      {"every finite bit pattern, a largest magnitude in every 64 elements", planted, true, false, -1, 0, 1},
      {"bit patterns below 2^60, 2^100 late", with(bits_below_2_60, n / 2 + 7, T(0x1p100)), false, false, -1, 0, 2},
      {"bit patterns below 2^60, four of the largest in block 0's first tile",
       with(with(with(with(bits_below_2_60, 8, std::numeric_limits<T>::max()), 16, -std::numeric_limits<T>::max()), 24,
                 std::numeric_limits<T>::max()), 32, -std::numeric_limits<T>::max()),
       false, false, -1, 0, 2},
      {"uniform, tiny elements in block 1's first tile", tiny_in_block_1, true, false, -1, 0, 2},
  };
  for (const auto& c : cases) {
    const auto cpu = fixed_point_sum<T>(std::span<const T>(c.x));
    for (const int offset : {0, 1}) {
      gpu::DeviceBuffer<T> buf(n, offset);
      buf.upload(std::span<const T>(c.x));
      // Grids resident whole of blocks up to 512 threads take one launch (a barrier over the grid);
      // 1024-thread blocks and more 512-thread blocks than the SMs hold (4 an SM at most: 2048
      // threads) take two launches.
      for (const auto [grid, block] : {std::array<int, 2>{132, 512}, std::array<int, 2>{7, 96}, std::array<int, 2>{3, 1024},
                                       std::array<int, 2>{2, 47}, std::array<int, 2>{4 * sms + 3, 512}}) {
        LaunchShape s = default_shape(GpuKernel::fixed_point);
        s.grid = grid;
        s.block = block;
        s.vector = 1;
        SCOPED_TRACE(c.name + " offset=" + std::to_string(offset) + " [" + to_string(s) + "]");
        const auto g = gpu::gpu_sum<T>(GpuKernel::fixed_point, canonicalize(GpuKernel::fixed_point, s), buf);
        ASSERT_TRUE(g.ok()) << g.error;
        EXPECT_TRUE(same_bits(g.value, cpu.value)) << hex_bits(g.value) << " vs CPU " << hex_bits(cpu.value);
        EXPECT_EQ(g.note, cpu.diagnostics);
        EXPECT_EQ(g.quantisation, cpu.extra_error_bound);
        if (sizeof(T) == 4 && c.float_reads != 0 && (block == 96 || block == 47)) {
          EXPECT_EQ(g.input_reads, c.float_reads);
        }
        // One block an SM of up to 512 threads is always resident; 4 sms + 3 of 512 never are.
        // Held: every block's tiles fit its stages (bulk_holds_all: 4 stages of 64 bytes a thread
        // up to 256 threads, 3 up to 512), as at 132 x 512, not at 7 x 96 or 2 x 47.
        const bool largest_launch = block <= 512 && grid <= sms;
        const bool held = n / (block * (64 / std::int64_t(sizeof(T)))) <= (block <= 256 ? 4 : 3) * grid;
        if (sizeof(T) == 8 && largest_launch) {
          EXPECT_EQ(g.input_reads, held ? 1 : 2);
        } else if (sizeof(T) == 8 && c.reads_checked && (c.reads_block == 0 || c.reads_block == block)) {
          // The anchor is the largest of the grid's first tiles (every block here that holds a
          // whole tile is resident): tile j of blockDim.x * 8 doubles, from the first 16-byte
          // boundary, is block j's first where j < grid.
          const std::int64_t per_tile = std::int64_t(block) * 8, head = offset, late_tile = (c.late - head) / per_tile;
          const bool seen = c.late >= head && late_tile < grid && late_tile < (n - head) / per_tile;
          EXPECT_EQ(g.input_reads, c.one_read || seen ? 1 : 2);
        }
      }
    }
  }
}

// The window pass's sparse blocks write the elements that can matter to slots in the launch's
// workspace, which outlives a sum, and a warp fills the slots it reserved but did not use with
// zeros. A partial last warp (blocks of 1000 threads: 8 lanes) once filled them by a stride of 32,
// leaving most of them as an earlier sum had left them, and pass 2 quantised those. Here the
// earlier sum (4 x 1024, the window pass, with room for more slots than the next, so that the
// workspace stays where it is) writes out a fifth of its input, doubles 2^600 times larger than
// the next input's largest, spread over 40 binades below the top of their tiles so that its blocks
// go sparse; any one of them read by the next sum (3 x 1000) saturates at its grid: the report
// would say overflow and the bits would change.
TEST(GpuFixedPointSparseSlots, HoldNothingFromAnEarlierSum) {
  SUMLAB_REQUIRE_GPU();
  const std::int64_t n = (std::int64_t(1) << 18) + 37;
  DistributionSpec wide;
  wide.kind = Distribution::lognormal;
  wide.sigma = 24;
  const auto x = generate<double>(wide, 9, n);
  std::vector<double> earlier(x);
  for (std::size_t i = 0; i < earlier.size(); ++i)
    earlier[i] = i % 5 == 0 ? std::ldexp(1.0 + static_cast<double>(i % 7) / 8, 773 - static_cast<int>(i / 5 % 40))
                            : earlier[i] * 0x1p600;
  const auto cpu = fixed_point_sum<double>(std::span<const double>(x));
  gpu::DeviceBuffer<double> buf(n, 0);
  auto shape = [](int grid, int block) {
    LaunchShape s = default_shape(GpuKernel::fixed_point);
    s.grid = grid;
    s.block = block;
    s.vector = 1;
    return canonicalize(GpuKernel::fixed_point, s);
  };
  for (int round = 0; round < 3; ++round) {
    SCOPED_TRACE(round);
    buf.upload(std::span<const double>(earlier));
    const auto e = gpu::gpu_sum<double>(GpuKernel::fixed_point, shape(4, 1024), buf);
    ASSERT_TRUE(e.ok()) << e.error;
    EXPECT_EQ(e.input_reads, 1);  // (its blocks went sparse and found room: the slots hold its elements)
    buf.upload(std::span<const double>(x));
    const auto g = gpu::gpu_sum<double>(GpuKernel::fixed_point, shape(3, 1000), buf);
    ASSERT_TRUE(g.ok()) << g.error;
    EXPECT_TRUE(same_bits(g.value, cpu.value)) << hex_bits(g.value) << " vs CPU " << hex_bits(cpu.value);
    EXPECT_EQ(g.note, cpu.diagnostics);
    EXPECT_EQ(g.input_reads, 1);
  }
}

// gpu_exact and gpu_fixed_point read their input as tiles of blockDim.x * 64 bytes, copied to
// shared memory by the bulk-copy engine from the first 16-byte boundary on; the elements before it
// and after the last whole tile are read one by one. Views that start 1 to 3 floats (1 double) past
// a 16-byte boundary, sizes at the edges of a tile, of a round of tiles over the grid and of the
// stages in flight, blocks of 33 threads (a tile of 2112 bytes) up to 1024, inputs of -0 only: the
// bits of the CPU algorithms every time.
template <class T> class GpuBulkLoads : public ::testing::Test {};
TYPED_TEST_SUITE(GpuBulkLoads, FloatTypes);

TYPED_TEST(GpuBulkLoads, MisalignedViewsAndTileEdgesKeepTheBits) {
  SUMLAB_REQUIRE_GPU();
  using T = TypeParam;
  const int per_thread = 64 / static_cast<int>(sizeof(T));
  const struct { int grid, block, stages; } cases[] = {{1, 33, 4}, {3, 64, 4}, {132, 256, 4}, {2, 1024, 2}};
  for (const auto& c : cases) {
    const std::int64_t tile = std::int64_t(c.block) * per_thread, round = tile * c.grid;
    for (const std::int64_t n : {std::int64_t(0), std::int64_t(1), std::int64_t(5), tile - 1, tile, tile + 1, round - 1,
                                 round + 3, round + tile / 2 * c.grid + 1, (c.stages + 1) * round + 7}) {
      for (const bool minus_zeros : {false, true}) {
        const auto x = minus_zeros ? std::vector<T>(static_cast<std::size_t>(n), T(-0.0))
                                   : input<T>(Distribution::cancellation, n, 11);
        const T exact = exact_sum<T>(std::span<const T>(x));
        const auto fixed = fixed_point_sum<T>(std::span<const T>(x));
        KernelOptions coarse;  // 12 bits coarser than the data's scale: elements lose bits
        coarse.fixed_scale = fixed_point_detail::data_scale(std::span<const T>(x)) - 12;
        const auto fixed_coarse = fixed_point_sum<T>(std::span<const T>(x), *coarse.fixed_scale);
        for (int offset = 0; offset < 16 / static_cast<int>(sizeof(T)); ++offset) {
          gpu::DeviceBuffer<T> buf(n, offset);
          buf.upload(std::span<const T>(x));
          LaunchShape s;
          s.grid = c.grid;
          s.block = c.block;
          s.vector = 1;  // any alignment
          SCOPED_TRACE("n=" + std::to_string(n) + " offset=" + std::to_string(offset) + " [" + to_string(s) + "]");
          const auto e = gpu::gpu_sum<T>(GpuKernel::exact, canonicalize(GpuKernel::exact, s), buf);
          ASSERT_TRUE(e.ok()) << e.error;
          EXPECT_TRUE(same_bits(e.value, exact)) << hex_bits(e.value) << " vs CPU " << hex_bits(exact);
          const auto f = gpu::gpu_sum<T>(GpuKernel::fixed_point, canonicalize(GpuKernel::fixed_point, s), buf);
          ASSERT_TRUE(f.ok()) << f.error;
          EXPECT_TRUE(same_bits(f.value, fixed.value)) << hex_bits(f.value) << " vs CPU " << hex_bits(fixed.value);
          EXPECT_EQ(f.note, fixed.diagnostics);
          const auto fc = gpu::gpu_sum<T>(GpuKernel::fixed_point, canonicalize(GpuKernel::fixed_point, s), buf, coarse);
          ASSERT_TRUE(fc.ok()) << fc.error;
          EXPECT_TRUE(same_bits(fc.value, fixed_coarse.value)) << hex_bits(fc.value) << " vs CPU " << hex_bits(fixed_coarse.value);
          EXPECT_EQ(fc.note, fixed_coarse.diagnostics);
        }
      }
    }
  }
}

TEST(GpuFill, DeviceGeneratorMatchesTheCpu) {
  SUMLAB_REQUIRE_GPU();
  for (Distribution d : {Distribution::uniform, Distribution::normal, Distribution::cancellation,
                         Distribution::lognormal, Distribution::constant, Distribution::random_bits}) {
    DistributionSpec spec;
    spec.kind = d;
    gpu::DeviceBuffer<float> bf(100003);
    gpu::fill<float>(bf, spec, 9);
    gpu::DeviceBuffer<double> bd(100003);
    gpu::fill<double>(bd, spec, 9);
    const auto hf = generate<float>(spec, 9, 100003);
    const auto hd = generate<double>(spec, 9, 100003);
    const auto gf = bf.download();
    const auto gd = bd.download();
    for (std::size_t i = 0; i < hf.size(); ++i) {
      ASSERT_EQ(to_bits(gf[i]), to_bits(hf[i])) << to_string(d) << " float element " << i;
      ASSERT_EQ(to_bits(gd[i]), to_bits(hd[i])) << to_string(d) << " double element " << i;
    }
  }
  DistributionSpec ill;
  ill.kind = Distribution::ill_conditioned;
  // The strided copy the studies' spot check reads: every step-th element, the last included when
  // it falls on the stride, nothing past the end.
  {
    DistributionSpec spec;
    spec.kind = Distribution::lognormal;
    gpu::DeviceBuffer<double> bd(100003);
    gpu::fill<double>(bd, spec, 4);
    const auto hd = generate<double>(spec, 4, 100003);
    for (const auto& [step, count] : {std::pair<std::int64_t, std::int64_t>{1, 100003}, {97, 1031}, {100002, 2},
                                      {7, 0}, {100003, 1}}) {
      const auto got = bd.strided(step, count);
      ASSERT_EQ(got.size(), static_cast<std::size_t>(count));
      for (std::int64_t k = 0; k < count; ++k)
        ASSERT_EQ(to_bits(got[static_cast<std::size_t>(k)]), to_bits(hd[static_cast<std::size_t>(k * step)]))
            << "step " << step << " element " << k;
    }
    EXPECT_THROW(bd.strided(97, 1032), gpu::GpuError);  // 1031 * 97 = 100007: past the end
    EXPECT_THROW(bd.strided(0, 3), gpu::GpuError);
  }
  gpu::DeviceBuffer<float> b(10);
  EXPECT_THROW(gpu::fill<float>(b, ill, 1), gpu::GpuError);
}

TEST(GpuDeterminism, TwoPassLastBlockAndPeersRepeat) {
  SUMLAB_REQUIRE_GPU();
  const auto x = input<float>(Distribution::uniform, 1 << 22, 1);
  gpu::DeviceBuffer<float> buf(1 << 22);
  buf.upload(std::span<const float>(x));
  for (GpuKernel k : {GpuKernel::two_pass, GpuKernel::last_block, GpuKernel::cub, GpuKernel::thrust}) {
    std::set<std::uint32_t> seen;
    for (int r = 0; r < 10; ++r) seen.insert(to_bits(gpu::gpu_sum<float>(k, default_shape(k), buf).value));
    EXPECT_EQ(seen.size(), 1u) << info(k).name;
  }
  // two_pass and last_block share the order: same bits for the same stages.
  LaunchShape s = default_shape(GpuKernel::two_pass);
  const float a = gpu::gpu_sum<float>(GpuKernel::two_pass, s, buf).value;
  s.cross = CrossBlock::last_block;
  const float b = gpu::gpu_sum<float>(GpuKernel::last_block, s, buf).value;
  EXPECT_EQ(to_bits(a), to_bits(b));
}

TEST(GpuLibraryPeers, CloseToTheExactSum) {
  SUMLAB_REQUIRE_GPU();
  const auto x = input<double>(Distribution::uniform, 1 << 20, 2);
  const double ex = exact_sum<double>(std::span<const double>(x));
  for (GpuKernel k : {GpuKernel::cub, GpuKernel::thrust}) {
    const auto g = gpu::gpu_sum<double>(k, LaunchShape{}, std::span<const double>(x));
    ASSERT_TRUE(g.ok()) << g.error;
    EXPECT_NEAR(g.value, ex, 1e-9 * ex) << info(k).name;
  }
  const auto e = gpu::gpu_sum<double>(GpuKernel::cub, LaunchShape{}, std::span<const double>());
  ASSERT_TRUE(e.ok());
  EXPECT_EQ(e.value, 0.0);
}

// CUB's gpu_to_gpu (RFA) reduction, where the build has it: one value in repeated calls, empty and
// tiny inputs included, and within the any-order bound gamma(n-1) sum|x| of the exact sum (no
// tighter bound is claimed for it). Skips, saying why, in a build without CCCL >= 3.1 headers.
template <class T> void expect_cub_gpu_to_gpu_repeats() {
  constexpr GpuKernel k = GpuKernel::cub_gpu_to_gpu;
  for (const std::size_t n : {std::size_t{0}, std::size_t{1}, std::size_t{33}, std::size_t{100003}, (std::size_t{1} << 22) + 5})
    for (Distribution d : {Distribution::cancellation, Distribution::lognormal}) {
      const auto x = input<T>(d, n, 3);
      gpu::DeviceBuffer<T> buf(static_cast<std::int64_t>(n));
      if (n > 0) buf.upload(std::span<const T>(x));
      std::set<std::uint64_t> seen;
      T v{};
      for (int r = 0; r < 5; ++r) {
        const auto g = gpu::gpu_sum<T>(k, LaunchShape{}, buf);
        ASSERT_TRUE(g.ok()) << g.error;
        v = g.value;
        seen.insert(static_cast<std::uint64_t>(to_bits(v)));
      }
      EXPECT_EQ(seen.size(), 1u) << to_string(d) << " n = " << n;
      const double ex = reference::exact_sum_as_double<T>(std::span<const T>(x));
      double abs_sum = 0;
      for (const T e : x) abs_sum += std::fabs(static_cast<double>(e));
      const double u = std::ldexp(1.0, -FloatTraits<T>::precision);
      const double nu = static_cast<double>(n > 0 ? n - 1 : 0) * u;
      EXPECT_LE(std::fabs(static_cast<double>(v) - ex), nu / (1 - nu) * abs_sum * (1 + 1e-9) + std::fabs(ex) * u)
          << to_string(d) << " n = " << n;
      if (n == 0) {
        EXPECT_EQ(static_cast<double>(v), 0.0);
      }
    }
}
TEST(GpuLibraryPeers, CubGpuToGpuRepeatsAndStaysNearTheExactSum) {
  SUMLAB_REQUIRE_GPU();
  if (const std::string why = gpu::kernel_not_built(GpuKernel::cub_gpu_to_gpu); !why.empty()) GTEST_SKIP() << why;
  expect_cub_gpu_to_gpu_repeats<float>();
  expect_cub_gpu_to_gpu_repeats<double>();
}

TEST(GpuBadInput, ClearErrorsNeverACrash) {
  SUMLAB_REQUIRE_GPU();
  const std::vector<float> x(1000, 1.0f);
  LaunchShape s = default_shape(GpuKernel::two_pass);
  s.block = 2048;
  auto r = gpu::gpu_sum<float>(GpuKernel::two_pass, s, std::span<const float>(x));
  EXPECT_FALSE(r.ok());
  EXPECT_NE(r.error.find("1024"), std::string::npos);
  s.block = 100;
  r = gpu::gpu_sum<float>(GpuKernel::two_pass, s, std::span<const float>(x));
  EXPECT_NE(r.error.find("multiple of 32"), std::string::npos);
  s = default_shape(GpuKernel::two_pass);
  s.grid = 0;
  r = gpu::gpu_sum<float>(GpuKernel::two_pass, s, std::span<const float>(x));
  EXPECT_NE(r.error.find("grid"), std::string::npos);
  s = default_shape(GpuKernel::sequential);
  s.block = 96;
  r = gpu::gpu_sum<float>(GpuKernel::sequential, s, std::span<const float>(x));
  EXPECT_NE(r.error.find("power of two"), std::string::npos);
  const std::vector<double> xd(10, 1.0);
  const auto rd = gpu::gpu_sum<double>(GpuKernel::double_acc, default_shape(GpuKernel::double_acc), std::span<const double>(xd));
  EXPECT_NE(rd.error.find("float32"), std::string::npos);
  // Far more than any GPU holds: a message, not a crash.
  EXPECT_THROW(gpu::DeviceBuffer<double> huge(std::int64_t(1) << 40), gpu::GpuError);
  try {
    gpu::DeviceBuffer<double> huge(std::int64_t(1) << 40);
  } catch (const gpu::GpuError& e) {
    EXPECT_NE(std::string(e.what()).find("free"), std::string::npos);
  }
  // The device still works afterwards.
  EXPECT_TRUE(gpu::gpu_sum<float>(GpuKernel::two_pass, default_shape(GpuKernel::two_pass), std::span<const float>(x)).ok());
}

TEST(GpuInfo, DeviceQuery) {
  SUMLAB_REQUIRE_GPU();
  const auto d = gpu::device_info();
  EXPECT_FALSE(d.name.empty());
  EXPECT_GT(d.sm_count, 0);
  EXPECT_GE(d.cc_major, 9) << "built for sm_90 (+ compute_90 PTX)";
  EXPECT_FALSE(d.driver_version.empty());
}

TEST(GpuRacyTree, LaunchesAndIsNeverModelled) {
  SUMLAB_REQUIRE_GPU();
  const auto x = input<float>(Distribution::uniform, 4096);
  const auto r = gpu::gpu_sum<float>(GpuKernel::racy_tree, default_shape(GpuKernel::racy_tree), std::span<const float>(x));
  EXPECT_TRUE(r.ok()) << r.error;
  EXPECT_NE(r.note.find("meaningless"), std::string::npos);
  EXPECT_FALSE(model_sum<float>(GpuKernel::racy_tree, default_shape(GpuKernel::racy_tree), std::span<const float>(x)).has_value);
}

TEST(GpuAvailability, SaysWhyWhenThereIsNoDevice) {
  std::string why;
  if (gpu::gpu_available(&why)) GTEST_SKIP() << "a device is present";
  EXPECT_NE(why.find("no CUDA device"), std::string::npos);
  const std::vector<float> x(10, 1.0f);
  const auto r = gpu::gpu_sum<float>(GpuKernel::two_pass, default_shape(GpuKernel::two_pass), std::span<const float>(x));
  EXPECT_FALSE(r.ok());
  EXPECT_FALSE(r.error.empty());
}

}  // namespace
}  // namespace sumlab
