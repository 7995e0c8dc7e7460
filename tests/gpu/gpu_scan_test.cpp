// The GPU scans against their CPU model, bit for bit, for every operator, shape and awkward size
// (label `gpu`: needs a CUDA device and skips with the reason when there is none), and cub's
// exact results on integer-valued inputs.
#include "gpu/scan.hpp"

#include <gtest/gtest.h>

#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "core/counter_rng.hpp"
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

TEST(GpuScan, ChainedIsTheModelOnEveryRunThroughLongLookBacks) {
  // 2^24 + 5 elements in tiles of 32: half a million tiles, so look-backs cross many windows of 32
  // while thousands of tiles are in flight; five timed launches reuse the tile states by epoch, and
  // three separate calls must all give the model's bits.
  SUMLAB_REQUIRE_GPU();
  using Op = PlusOp<float>;
  std::vector<float> x;
  make(x, (std::size_t(1) << 24) + 5);
  const gpu::ScanInput<float> in{std::span<const float>(x)};
  for (const ScanShape& s : {ScanShape{32, 1}, ScanShape{1024, 1}, ScanShape{256, 15},
                             default_scan_shape(GpuScan::warp_hs_chained, sizeof(float))}) {
    const auto m = model_scan<Op>(GpuScan::warp_hs_chained, s, std::span<const float>(x), true);
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
