// gpu/bench.hpp's timing (label `gpu`: skips without a CUDA device). A timed sum must be the sum it
// claims to be: the warm-up's value is the CPU's bits for the standard input, and, for a kernel
// that gives the same bits every run, time_sum's check that back-to-back launches (which rotate
// over input copies and reuse the kernel's counters and totals) end with the same bits passes.
#include "gpu/bench.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <iterator>
#include <map>
#include <span>
#include <string>
#include <vector>

#include "core/exact_sum.hpp"
#include "core/fixed_point_sum.hpp"
#include "core/float_traits.hpp"
#include "core/generators.hpp"
#include "core/gpu_kernel.hpp"
#include "core/order_model/model_sum.hpp"
#include "core/order_model/reduce_ops.hpp"
#include "core/scan/scan_kernel.hpp"
#include "core/segmented/strategy.hpp"
#include "tests/gpu/require_gpu.hpp"

namespace sumlab {
namespace {

template <class T> class GpuBench : public ::testing::Test {};
using FloatTypes = ::testing::Types<float, double>;
TYPED_TEST_SUITE(GpuBench, FloatTypes);

TYPED_TEST(GpuBench, TimedSumsAreTheCpuBitsAfterRepeatedLaunches) {
  SUMLAB_REQUIRE_GPU();
  using T = TypeParam;
  const std::int64_t n = 100003;
  DistributionSpec spec;
  spec.kind = Distribution::cancellation;
  const gpu::BenchInput<T> in(n, spec, 7, std::size_t(8) << 20);  // several copies of 100003 elements
  ASSERT_GT(in.copies(), 1);
  const std::vector<T> x = generate<T>(spec, 7, static_cast<std::size_t>(n));  // copy 0
  const std::span<const T> xs(x);
  gpu::TimingOptions o;
  o.samples = 3;
  o.target_sample_ms = 0.2;
  KernelOptions coarse;  // elements lose bits: the report's counts and the slow path run too
  coarse.fixed_scale = fixed_point_detail::data_scale(xs) - 12;
  const struct {
    GpuKernel k;
    KernelOptions opt;
    T expect;
  } cases[] = {
      {GpuKernel::exact, {}, exact_sum<T>(xs)},
      {GpuKernel::fixed_point, {}, fixed_point_sum<T>(xs).value},
      {GpuKernel::fixed_point, coarse, fixed_point_sum<T>(xs, *coarse.fixed_scale).value},
      {GpuKernel::two_pass, {}, model_sum<T>(GpuKernel::two_pass, default_shape(GpuKernel::two_pass), xs).value},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(std::string(info(c.k).name) + (c.opt.fixed_scale ? " with the caller's scale" : ""));
    const gpu::Timing t = gpu::time_sum<T>(c.k, default_shape(c.k), in, o, c.opt);
    ASSERT_TRUE(t.ok()) << t.error;
    EXPECT_EQ(t.value_hex, hex_bits(c.expect));
    EXPECT_GT(t.ms, 0.0);
    EXPECT_EQ(t.samples, 3);
  }
}

// A sorted bench input (`--dists lognormal:12/magnitude_ascending`): every copy is its own
// generated elements as apply_ordering sorts them on the CPU (the same comparator, OrderLess),
// with ties where a sort that is not stable would differ: -0 and +0 (random_bits), x and -x by
// magnitude (cancellation).
TYPED_TEST(GpuBench, SortedInputsAreTheCpuOrderInEveryCopy) {
  SUMLAB_REQUIRE_GPU();
  using T = TypeParam;
  const std::int64_t n = 30011;
  for (const Distribution kind : {Distribution::cancellation, Distribution::random_bits, Distribution::lognormal})
    for (const Ordering order : {Ordering::ascending, Ordering::descending, Ordering::magnitude_ascending,
                                 Ordering::magnitude_descending}) {
      DistributionSpec spec;
      spec.kind = kind;
      SCOPED_TRACE(std::string(to_string(kind)) + "/" + std::string(to_string(order)));
      const gpu::BenchInput<T> in(n, spec, 5, std::size_t(1) << 20, order);
      ASSERT_GT(in.copies(), 2);
      const std::vector<T> all = in.buffer().download();
      for (int c = 0; c < in.copies(); ++c) {
        std::vector<T> expect(static_cast<std::size_t>(n));
        for (std::int64_t i = 0; i < n; ++i)
          expect[static_cast<std::size_t>(i)] = generate_element<T>(spec, 5, static_cast<std::uint64_t>(c * in.stride() + i));
        apply_ordering(expect, order);
        const auto first = all.begin() + c * in.stride();
        ASSERT_TRUE(std::equal(expect.begin(), expect.end(), first, [](T a, T b) { return same_bits(a, b); }))
            << "copy " << c;
      }
    }
}

// The read roof over part of each copy (the bfloat16 rows' roof reads as many bytes as they do):
// it times, and asking for more than n reads n.
TYPED_TEST(GpuBench, TheReadRoofTimesPartOfItsInput) {
  SUMLAB_REQUIRE_GPU();
  using T = TypeParam;
  const gpu::BenchInput<T> in(std::int64_t(1) << 22, DistributionSpec{}, 5);
  gpu::TimingOptions o;
  o.samples = 3;
  const gpu::Timing whole = gpu::time_read<T>(in, o), half = gpu::time_read<T>(in, o, in.n() / 2),
                    more = gpu::time_read<T>(in, o, 2 * in.n());
  ASSERT_TRUE(whole.ok() && half.ok() && more.ok()) << whole.error << half.error << more.error;
  EXPECT_GT(half.ms, 0.0);
  EXPECT_LT(half.ms, whole.ms);  // half the bytes, past the L2 in both: less time, if not half
  EXPECT_GT(more.ms, half.ms);
}

// time_families: one timed row per GPU algorithm of each family (scan: the modelled scans and
// CUB's for +, the chained scan and CUB's for max and affine; segmented: every GPU strategy and
// peer; variance: each moments kernel in both layouts), each with a peer of its own family and
// problem or none; an n the variance rows cannot split is an error row.
TYPED_TEST(GpuBench, FamiliesAreTimedWithTheirPeers) {
  SUMLAB_REQUIRE_GPU();
  using T = TypeParam;
  DistributionSpec spec;
  const gpu::BenchInput<T> in(16 * gpu::family_cols, spec, 3);
  const std::vector<gpu::FamilyTiming> rows = gpu::time_families<T>(in, 3);
  std::map<std::string, int> per_family;
  for (const auto& r : rows) {
    SCOPED_TRACE(r.family + " " + r.kernel + " " + r.detail);
    EXPECT_TRUE(r.error.empty()) << r.error;
    EXPECT_GT(r.ms, 0.0);
    // At least the element's own bytes: the bfloat16 rows read 2-byte copies of the input.
    const bool bf16 = r.detail.starts_with("bfloat16");
    EXPECT_GE(r.bytes_per_element, bf16 ? 2.0 : double(sizeof(T)));
    // What the bench's roof for the row must read: 2 bytes an element for the bfloat16 rows.
    EXPECT_EQ(r.input_bytes, r.family != "rows" ? 0 : bf16 ? 2 : int(sizeof(T)));
    ++per_family[r.family];
    if (!r.peer.empty()) {
      // The peer times the same problem: its detail is the row's up to the shape.
      const auto found = std::count_if(rows.begin(), rows.end(), [&](const gpu::FamilyTiming& p) {
        return p.family == r.family && p.kernel == r.peer && r.detail.starts_with(p.detail);
      });
      EXPECT_EQ(found, 1) << "peer " << r.peer;
    }
  }
  // + by every scan; max and affine by the chained scan and CUB.
  EXPECT_EQ(per_family["scan"], int(std::size(scan::kAllGpuScans)) + 4);
  const auto gpu_strategies = std::count_if(segmented::strategies().begin(), segmented::strategies().end(),
                                           [](const auto& i) { return i.where != segmented::Where::cpu; });
  EXPECT_EQ(per_family["segmented"], int(gpu_strategies));  // the modelled three and CUB's three
  EXPECT_EQ(per_family["variance"], 8);
  const gpu::BenchInput<T> odd(gpu::family_cols + 1, spec, 3);
  const auto bad = gpu::time_families<T>(odd, 3);
  ASSERT_EQ(bad.size(), 1u);
  EXPECT_NE(bad[0].error.find("multiple of 4096"), std::string::npos) << bad[0].error;
}

// A named shape is the one timed, and says so in the row; a scan that refuses it (block_blelloch
// takes powers of two only) reports why in its row instead of timing something else.
TYPED_TEST(GpuBench, FamilyShapesAreTheOnesTimed) {
  SUMLAB_REQUIRE_GPU();
  using T = TypeParam;
  DistributionSpec spec;
  const gpu::BenchInput<T> in(16 * gpu::family_cols, spec, 3);
  gpu::FamilyShapes shapes;
  shapes.scan = scan::ScanShape{96, 3};
  shapes.segmented_tile = segmented::SegShape{64, 2};
  int seen = 0;
  for (const auto& r : gpu::time_families<T>(in, 2, shapes)) {
    SCOPED_TRACE(r.family + " " + r.kernel + " " + r.detail + " " + r.error);
    if (r.kernel == "warp_hillis_steele" || r.kernel == "warp_hs_chained") {  // chained: +, max, affine
      EXPECT_TRUE(r.error.empty());
      EXPECT_NE(r.detail.find("b96x3"), std::string::npos);
      ++seen;
    } else if (r.kernel == "block_blelloch") {
      EXPECT_NE(r.error.find("power of two"), std::string::npos);
      ++seen;
    } else if (r.kernel == "segmented_scan") {
      EXPECT_TRUE(r.error.empty());
      EXPECT_NE(r.detail.find("b64x2"), std::string::npos);
      ++seen;
    }
  }
  EXPECT_EQ(seen, 6);
}

}  // namespace
}  // namespace sumlab
