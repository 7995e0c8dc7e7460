// gpu/bench.hpp's timing (label `gpu`: skips without a CUDA device). A timed sum must be the sum it
// claims to be: the warm-up's value is the CPU's bits for the standard input, and, for a kernel
// that gives the same bits every run, time_sum's check that back-to-back launches (which rotate
// over input copies and reuse the kernel's counters and totals) end with the same bits passes.
#include "gpu/bench.hpp"

#include <gtest/gtest.h>

#include <span>
#include <string>
#include <vector>

#include "core/exact_sum.hpp"
#include "core/fixed_point_sum.hpp"
#include "core/float_traits.hpp"
#include "core/generators.hpp"
#include "core/gpu_kernel.hpp"
#include "core/order_model/model_sum.hpp"
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

}  // namespace
}  // namespace sumlab
