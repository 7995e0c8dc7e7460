// The GPU scans against their CPU model, bit for bit, for every operator, shape and awkward size
// (label `gpu`: needs a CUDA device and skips with the reason when there is none), and cub's
// exact results on integer-valued inputs.
#include "gpu/scan.hpp"

#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>
#include <limits>
#include <type_traits>
#include <span>
#include <stdexcept>
#include <string>
#include <vector>

#include "core/counter_rng.hpp"
#include "core/float_traits.hpp"
#include "core/generators.hpp"
#include "core/scan/scan_kernel.hpp"
#include "core/scan/scan_model.hpp"
#include "core/scan/scan_ops.hpp"
#include "core/scan/serial_scan.hpp"
#include "tests/gpu/require_gpu.hpp"

namespace sumlab::scan {
namespace {

const std::int64_t kSizes[] = {0, 1, 31, 32, 33, 255, 256, 257, 1023, 1025, 4097, 100003, (1 << 20) + 3};

template <class T> void make(std::vector<T>& x, std::size_t n) {
  x.resize(n);
  for (std::size_t i = 0; i < n; ++i) x[i] = T(2.0 * uniform_double(31, i, 0) - 1.0);
}
template <class T> void make(std::vector<Flagged<T>>& x, std::size_t n) {
  x.resize(n);
  for (std::size_t i = 0; i < n; ++i) x[i] = {i == 0 || random_bits(31, i, 1) % 9 == 0, T(standard_normal(31, i))};
}
template <class T> void make(std::vector<Affine<T>>& x, std::size_t n) {
  x.resize(n);
  for (std::size_t i = 0; i < n; ++i) x[i] = {T(0.5 + uniform_double(31, i, 2)), T(standard_normal(31, i))};
}

template <class Op> void check_all_shapes() {
  using V = typename Op::Value;
  for (std::int64_t n : kSizes) {
    std::vector<V> x;
    make(x, std::size_t(n));
    const gpu::ScanInput<V> in{std::span<const V>(x)};
    for (GpuScan alg : kModelledGpuScans)
      for (const ScanShape& s : scan_shapes(alg, false, sizeof(V)))
        for (bool inclusive : {true, false}) {
          const auto g = gpu::gpu_scan<Op>(alg, s, in, inclusive);
          ASSERT_TRUE(g.ok()) << g.error;
          const auto m = model_scan<Op>(alg, s, std::span<const V>(x), inclusive);
          ASSERT_EQ(g.out.size(), m.size());
          for (std::size_t i = 0; i < m.size(); ++i)
            ASSERT_TRUE(same_bits(g.out[i], m[i]))
                << Op::name << " " << to_string(alg) << " " << to_string(s) << " n=" << n
                << (inclusive ? " inclusive" : " exclusive") << " at " << i;
        }
  }
}

TEST(GpuScan, PlusMatchesModel) {
  SUMLAB_REQUIRE_GPU();
  check_all_shapes<PlusOp<float>>();
  check_all_shapes<PlusOp<double>>();
}
TEST(GpuScan, MaxMatchesModel) {
  SUMLAB_REQUIRE_GPU();
  check_all_shapes<MaxOp<float>>();
  check_all_shapes<MaxOp<double>>();
}
TEST(GpuScan, SegmentedMatchesModel) {
  SUMLAB_REQUIRE_GPU();
  check_all_shapes<SegmentedOp<float>>();
  check_all_shapes<SegmentedOp<double>>();
}
TEST(GpuScan, AffineMatchesModel) {
  SUMLAB_REQUIRE_GPU();
  check_all_shapes<AffineOp<float>>();
  check_all_shapes<AffineOp<double>>();
}

// 2^24 + 5 elements in tiles of 32: half a million tiles, so look-backs cross many windows of 32
// while thousands of tiles are in flight; five timed launches reuse the tile states by epoch, and
// three separate calls must all give the model's bits. For doubles every shape's launch has more
// tiles than the GPU holds at once, so its first wave is staggered (gpu/scan.cu).
template <class T> void check_long_look_backs() {
  using Op = PlusOp<T>;
  std::vector<T> x;
  make(x, (std::size_t(1) << 24) + 5);
  const gpu::ScanInput<T> in{std::span<const T>(x)};
  for (const ScanShape& s : {ScanShape{32, 1}, ScanShape{1024, 1}, ScanShape{256, 15},
                             default_scan_shape(GpuScan::warp_hs_chained, sizeof(T))}) {
    const auto m = model_scan<Op>(GpuScan::warp_hs_chained, s, std::span<const T>(x), true);
    gpu::ScanRunOptions o;
    o.reps = 5;
    for (int call = 0; call < 3; ++call) {
      const auto g = gpu::gpu_scan<Op>(GpuScan::warp_hs_chained, s, in, true, o);
      ASSERT_TRUE(g.ok()) << g.error;
      ASSERT_EQ(g.out.size(), m.size());
      for (std::size_t i = 0; i < m.size(); ++i)
        ASSERT_TRUE(same_bits(g.out[i], m[i])) << to_string(s) << " call " << call << " at " << i;
    }
  }
}

TEST(GpuScan, ChainedIsTheModelOnEveryRunThroughLongLookBacks) {
  SUMLAB_REQUIRE_GPU();
  check_long_look_backs<float>();
  check_long_look_backs<double>();
}

// The look-back on chains prepared to order (gpu_chain_look_back): the nearest published P at
// distances from 1 to past the 8 windows the stash holds and the 8 the block polls at once, tiles up
// to 1000 back, blocks of 1, 8 and 32 warps, all warps polling or warp 0 alone. The carry and the
// published P_t must be the left fold's bits: for max, NaN payloads and signed zeros included, which
// its tree over each window must keep.
template <class Op> std::vector<typename Op::Value> probe_values(std::size_t n) {
  using V = typename Op::Value;
  std::vector<V> a;
  make(a, n);
  if constexpr (std::is_same_v<Op, MaxOp<float>> || std::is_same_v<Op, MaxOp<double>>) {
    using Bits = typename FloatTraits<V>::Bits;
    for (std::size_t i = 0; i < n; ++i) {
      const std::uint64_t r = random_bits(37, i, 0) % 40;
      if (r == 0) a[i] = V(0);
      if (r == 1) a[i] = -V(0);
      if (r == 2) a[i] = std::numeric_limits<V>::infinity();
      if (r == 3) a[i] = -std::numeric_limits<V>::infinity();
      if (r == 4 && i > 600) {  // quiet NaNs of two payloads, late enough that most prefixes have none
        Bits u;
        const V q = std::numeric_limits<V>::quiet_NaN();
        std::memcpy(&u, &q, sizeof u);
        u |= Bits(1 + i % 2);
        std::memcpy(&a[i], &u, sizeof u);
      }
    }
  }
  return a;
}

// Bit for bit, NaN payloads included (same_bits takes any NaN for any other); a (head, value) pair
// field by field (its padding is not a value).
template <class T> bool identical(const T& x, const T& y) { return std::memcmp(&x, &y, sizeof(T)) == 0; }
template <class T> bool identical(const Flagged<T>& x, const Flagged<T>& y) {
  return x.head == y.head && identical(x.value, y.value);
}
template <class T> bool identical(const Affine<T>& x, const Affine<T>& y) { return identical(x.a, y.a) && identical(x.b, y.b); }

template <class Op> void check_look_back() {
  using V = typename Op::Value;
  const std::vector<V> a = probe_values<Op>(1001);
  for (std::int64_t t : {1, 2, 33, 257, 300, 1000}) {
    V expect = a[0];
    for (std::int64_t k = 1; k < t; ++k) expect = Op::combine(expect, a[std::size_t(k)]);
    const V published = Op::combine(expect, a[std::size_t(t)]);
    const std::span<const V> chain(a.data(), std::size_t(t) + 1);
    for (std::int64_t d : {std::int64_t(1), std::int64_t(32), std::int64_t(33), std::int64_t(256), std::int64_t(257), t}) {
      if (d > t) continue;
      // The nearest P at t - d; a farther one too, which the look-back must not need.
      const std::vector<std::int64_t> at = {t - d, t - d - 40};
      for (int block : {32, 256, 1024})
        for (bool by_block : {true, false}) {
          const auto r = gpu::gpu_chain_look_back<Op>(chain, at, block, by_block);
          ASSERT_TRUE(r.ok()) << r.error;
          const std::string where = std::string(Op::name) + " t=" + std::to_string(t) + " nearest P " +
                                    std::to_string(d) + " back, block " + std::to_string(block) +
                                    (by_block ? " (all warps)" : " (warp 0)");
          EXPECT_TRUE(identical(r.carry, expect)) << where;
          EXPECT_TRUE(identical(r.published, published)) << where;
        }
    }
  }
}

TEST(GpuScan, LookBackFoldsFromTheNearestPublishedPrefixAtAnyDistance) {
  SUMLAB_REQUIRE_GPU();
  check_look_back<PlusOp<float>>();
  check_look_back<PlusOp<double>>();
  check_look_back<MaxOp<float>>();
  check_look_back<MaxOp<double>>();
  check_look_back<SegmentedOp<float>>();
  check_look_back<SegmentedOp<double>>();
  check_look_back<AffineOp<float>>();
  check_look_back<AffineOp<double>>();
}

TEST(GpuScan, LookBackProbeRefusesBadArguments) {
  SUMLAB_REQUIRE_GPU();
  const std::vector<float> one = {1.0f};
  const std::vector<float> two = {1.0f, 2.0f};
  EXPECT_FALSE((gpu::gpu_chain_look_back<PlusOp<float>>(one, {}, 32, true).ok()));
  EXPECT_FALSE((gpu::gpu_chain_look_back<PlusOp<float>>(two, {}, 48, true).ok()));
  EXPECT_FALSE((gpu::gpu_chain_look_back<PlusOp<float>>(two, {}, 2048, false).ok()));
}

TEST(GpuScan, CubIsExactOnIntegers) {
  SUMLAB_REQUIRE_GPU();
  for (std::int64_t n : kSizes) {
    std::vector<float> x(static_cast<std::size_t>(n));
    for (std::size_t i = 0; i < x.size(); ++i) x[i] = float(int(random_bits(5, i, 0) % 9) - 4);
    for (bool inclusive : {true, false}) {
      const auto g = gpu::gpu_scan<PlusOp<float>>(GpuScan::cub, ScanShape{}, std::span<const float>(x), inclusive);
      ASSERT_TRUE(g.ok()) << g.error;
      const auto s = serial_scan<PlusOp<float>>(std::span<const float>(x), inclusive);
      for (std::size_t i = 0; i < s.size(); ++i) ASSERT_EQ(g.out[i], s[i]) << n << " " << i;
    }
  }
}

// The bench's copies (ScanInput with copies > 1, read in turn by a timed run): every scan's outputs
// are the model's (CUB's: the exact prefixes of small integers) whichever copy the run ended on,
// and the copies lie one after another and wrap.
TEST(GpuScan, CopiesReadInTurnGiveTheSameOutputs) {
  EXPECT_THROW(gpu::ScanInput<float>(std::span<const float>(), 0), std::invalid_argument);
  SUMLAB_REQUIRE_GPU();
  for (std::int64_t n : {std::int64_t(1), std::int64_t(33), std::int64_t(4097), std::int64_t(100003)}) {
    std::vector<float> x(static_cast<std::size_t>(n));
    for (std::size_t i = 0; i < x.size(); ++i) x[i] = float(int(random_bits(6, i, 0) % 9) - 4);
    const gpu::ScanInput<float> in{std::span<const float>(x), 3};
    ASSERT_EQ(in.copies(), 3);
    EXPECT_EQ(in.device_data(2), in.device_data(0) + 2 * n);
    EXPECT_EQ(in.device_data(3), in.device_data(0));
    const auto exact = serial_scan<PlusOp<float>>(std::span<const float>(x), true);
    const ScanShape chained = default_scan_shape(GpuScan::warp_hs_chained, sizeof(float));
    const auto model = model_scan<PlusOp<float>>(GpuScan::warp_hs_chained, chained, std::span<const float>(x), true);
    for (int reps : {1, 2, 3, 4, 5}) {
      gpu::ScanRunOptions o;
      o.reps = reps;
      const auto g = gpu::gpu_scan<PlusOp<float>>(GpuScan::warp_hs_chained, chained, in, true, o);
      const auto c = gpu::gpu_scan<PlusOp<float>>(GpuScan::cub, ScanShape{}, in, true, o);
      ASSERT_TRUE(g.ok() && c.ok()) << g.error << c.error;
      for (std::size_t i = 0; i < model.size(); ++i) {
        ASSERT_TRUE(same_bits(g.out[i], model[i])) << "n=" << n << " reps " << reps << " at " << i;
        ASSERT_EQ(c.out[i], exact[i]) << "cub n=" << n << " reps " << reps << " at " << i;
      }
    }
  }
}

TEST(GpuScan, BadShapesAreMessages) {
  SUMLAB_REQUIRE_GPU();
  const std::vector<float> x(100, 1.0f);
  const auto a = gpu::gpu_scan<PlusOp<float>>(GpuScan::warp_hillis_steele, ScanShape{100, 1}, std::span<const float>(x), true);
  EXPECT_FALSE(a.ok());
  EXPECT_NE(a.error.find("multiple of 32"), std::string::npos) << a.error;
  const auto b = gpu::gpu_scan<PlusOp<float>>(GpuScan::block_blelloch, ScanShape{96, 2}, std::span<const float>(x), true);
  EXPECT_FALSE(b.ok());
  gpu::ScanRunOptions o;
  o.reps = 0;
  EXPECT_FALSE(gpu::gpu_scan<PlusOp<float>>(GpuScan::block_blelloch, ScanShape{64, 2}, std::span<const float>(x), true, o).ok());
}

TEST(GpuScan, TimedRunsReportATime) {
  SUMLAB_REQUIRE_GPU();
  std::vector<float> x(1 << 22);
  for (std::size_t i = 0; i < x.size(); ++i) x[i] = float(uniform_double(3, i, 0));
  gpu::ScanRunOptions o;
  o.reps = 5;
  o.want_out = false;
  for (GpuScan alg : kAllGpuScans) {
    const auto r = gpu::gpu_scan<PlusOp<float>>(alg, ScanShape{256, 4}, std::span<const float>(x), true, o);
    ASSERT_TRUE(r.ok()) << r.error;
    EXPECT_GT(r.ms, 0.0) << to_string(alg);
    EXPECT_TRUE(r.out.empty());
  }
}

}  // namespace
}  // namespace sumlab::scan
