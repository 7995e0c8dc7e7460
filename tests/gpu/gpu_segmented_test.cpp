// The segmented strategies on the GPU against their CPU models, bit for bit, and the CUB peers
// against the exact sums' empty segments (label `gpu`: these need a CUDA device and skip with the
// reason when there is none, so CI without a GPU stays green).
#include "gpu/segmented.hpp"

#include <gtest/gtest.h>

#include <cstdint>
#include <span>
#include <stdexcept>
#include <string>
#include <vector>

#include "core/float_traits.hpp"
#include "core/generators.hpp"
#include "core/order_model/reduce_ops.hpp"
#include "core/segmented/segment_sizes.hpp"
#include "core/segmented/segmented_model.hpp"
#include "reference/segment_sums.hpp"
#include "tests/gpu/require_gpu.hpp"

namespace sumlab::segmented {
namespace {

const SegShape kShapes[] = {{32, 1}, {64, 3}, {96, 2}, {256, 4}, {256, 16}, {1024, 8}};

std::vector<std::vector<Offset>> layouts() {
  std::vector<std::vector<Offset>> l = {{0}, {0, 0, 0}, {0, 1}, {0, 31}, {0, 32}, {0, 33}, {0, 1025}, {0, 4099}};
  std::vector<Offset> awkward{0};
  for (Offset len : {0, 1, 31, 32, 33, 0, 63, 64, 65, 255, 256, 257, 1023, 1024, 1025, 0})
    awkward.push_back(awkward.back() + len);
  l.push_back(awkward);
  for (auto d : kAllSizeDistributions) l.push_back(make_offsets({d, 300, 40}, 3));
  // About 10^5 elements: over 3 x 1024 tiles of 32, so the segmented scan's look-backs cross
  // windows of 32 tiles (and a segment spans many tiles).
  l.push_back(make_offsets({SizeDistribution::one_giant, 6, 16000}, 5));
  l.push_back(make_offsets({SizeDistribution::uniform, 100, 1000}, 6));
  return l;
}

template <class T> void check_models() {
  for (const auto& off : layouts()) {
    DistributionSpec spec;
    spec.kind = Distribution::cancellation;
    const std::vector<T> x = generate<T>(spec, 4, static_cast<std::size_t>(off.back()));
    const gpu::SegmentedInput<T> in{std::span<const T>(x), std::span<const Offset>(off)};
    for (const auto& i : strategies()) {
      if (i.where != Where::gpu_modelled) continue;
      for (const SegShape& s : kShapes) {
        const auto model = model_segmented<T>(i.strategy, s, x, off);
        for (int cap : {0, 1}) {
          const auto g = gpu::gpu_segmented<T>(i.strategy, s, in, 1, cap);
          ASSERT_TRUE(g.ok()) << i.name << ": " << g.error;
          ASSERT_EQ(g.sums.size(), model.size());
          for (std::size_t j = 0; j < model.size(); ++j)
            ASSERT_TRUE(same_bits(g.sums[j], model[j]))
                << i.name << " " << to_string(s, i.strategy) << " grid cap " << cap << " n " << off.back()
                << " segment " << j << ": " << hex_bits(g.sums[j]) << " vs " << hex_bits(model[j]);
        }
      }
    }
  }
}

TEST(GpuSegmented, ModelledStrategiesEqualTheirModelsFloat32) {
  SUMLAB_REQUIRE_GPU();
  check_models<float>();
}

TEST(GpuSegmented, ModelledStrategiesEqualTheirModelsFloat64) {
  SUMLAB_REQUIRE_GPU();
  check_models<double>();
}

// Every GPU strategy, peers included: +0 for every empty segment, and close to the exact sums.
TEST(GpuSegmented, EmptySegmentsArePositiveZeroEverywhere) {
  SUMLAB_REQUIRE_GPU();
  const std::vector<Offset> off = make_offsets({SizeDistribution::many_empty, 2000, 30}, 8);
  // An empty first segment, those, segments of 1, 1 and 2 elements (CUB's documentation calls a
  // segment with end - 1 <= begin "empty": a length-1 segment must still be summed), an empty last.
  std::vector<Offset> with_ends{0, 0};
  for (std::size_t j = 1; j < off.size(); ++j) with_ends.push_back(off[j]);
  for (Offset len : {1, 1, 2, 0}) with_ends.push_back(with_ends.back() + len);
  std::vector<double> x(static_cast<std::size_t>(with_ends.back()));
  for (std::size_t i = 0; i < x.size(); ++i) x[i] = 1.0 + double(i % 7);  // small integers: every order exact
  const auto exact = reference::exact_segment_sums<double, Offset>(x, with_ends);
  const gpu::SegmentedInput<double> in{std::span<const double>(x), std::span<const Offset>(with_ends)};
  for (const auto& i : strategies()) {
    if (i.where == Where::cpu) continue;
    const auto g = gpu::gpu_segmented<double>(i.strategy, {256, 4}, in, 2);
    ASSERT_TRUE(g.ok()) << i.name << ": " << g.error;
    EXPECT_GE(g.ms, 0.0);
    for (std::size_t j = 0; j < exact.size(); ++j)
      ASSERT_EQ(to_bits(g.sums[j]), to_bits(exact[j])) << i.name << " segment " << j;
  }
}

// The bench's copies (SegmentedInput with copies > 1, read in turn by a timed run): every run's
// sums are the model's for the modelled strategies and the exact sums of small integers for all,
// the CUB peers included, whichever copy the run ended on; the copies lie one after another.
TEST(GpuSegmented, CopiesReadInTurnGiveTheSameSums) {
  const std::vector<Offset> no_segments{0};
  EXPECT_THROW(gpu::SegmentedInput<float>(std::span<const float>(), std::span<const Offset>(no_segments), 0),
               std::invalid_argument);
  SUMLAB_REQUIRE_GPU();
  const std::vector<Offset> off = make_offsets({SizeDistribution::power_law, 3000, 40}, 4);
  std::vector<float> x(static_cast<std::size_t>(off.back()));
  for (std::size_t i = 0; i < x.size(); ++i) x[i] = float(int(i % 9) - 4);  // small integers: every order exact
  const auto exact = reference::exact_segment_sums<float, Offset>(x, off);
  const gpu::SegmentedInput<float> in{std::span<const float>(x), std::span<const Offset>(off), 3};
  ASSERT_EQ(in.copies(), 3);
  EXPECT_EQ(in.device_values(1), in.device_values(0) + off.back());
  EXPECT_EQ(in.device_values(3), in.device_values(0));
  for (const auto& i : strategies()) {
    if (i.where == Where::cpu) continue;
    const SegShape s{256, 4};
    for (int reps : {1, 2, 3, 4}) {
      const auto g = gpu::gpu_segmented<float>(i.strategy, s, in, reps);
      ASSERT_TRUE(g.ok()) << i.name << ": " << g.error;
      ASSERT_EQ(g.sums.size(), exact.size());
      for (std::size_t j = 0; j < exact.size(); ++j)
        ASSERT_EQ(to_bits(g.sums[j]), to_bits(exact[j])) << i.name << " reps " << reps << " segment " << j;
      if (i.where != Where::gpu_modelled) continue;
      const auto model = model_segmented<float>(i.strategy, s, x, off);
      for (std::size_t j = 0; j < model.size(); ++j)
        ASSERT_TRUE(same_bits(g.sums[j], model[j])) << i.name << " reps " << reps << " segment " << j;
    }
  }
}

TEST(GpuSegmented, RunToRunBitsAreIdenticalForTheModelledStrategies) {
  SUMLAB_REQUIRE_GPU();
  const auto off = make_offsets({SizeDistribution::power_law, 5000, 100}, 2);
  DistributionSpec spec;
  spec.kind = Distribution::normal;
  const auto x = generate<float>(spec, 2, static_cast<std::size_t>(off.back()));
  const gpu::SegmentedInput<float> in{std::span<const float>(x), std::span<const Offset>(off)};
  for (Strategy st : {Strategy::block_per_segment, Strategy::warp_per_segment, Strategy::segmented_scan}) {
    const auto a = gpu::gpu_segmented<float>(st, {256, 4}, in);
    const auto b = gpu::gpu_segmented<float>(st, {256, 4}, in);
    ASSERT_TRUE(a.ok() && b.ok()) << a.error << b.error;
    EXPECT_EQ(a.sums, b.sums) << info(st).name;
  }
}

// About 8 x 10^6 elements in tiles of 32 (a quarter of a million tiles): the chained
// look-back folds across many windows, five timed launches reuse the tile states by epoch, and the
// last launch's sums are still the model's, for segments from one element to many tiles long.
TEST(GpuSegmented, ChainedScanIsTheModelThroughLongLookBacks) {
  SUMLAB_REQUIRE_GPU();
  const std::vector<Offset> off = make_offsets({SizeDistribution::power_law, 100000, 80}, 9);
  ASSERT_GT(off.back(), Offset(1) << 22);
  DistributionSpec spec;
  spec.kind = Distribution::normal;
  const auto x = generate<float>(spec, 9, static_cast<std::size_t>(off.back()));
  const gpu::SegmentedInput<float> in{std::span<const float>(x), std::span<const Offset>(off)};
  for (const SegShape& s : {SegShape{32, 1}, SegShape{1024, 16}}) {
    const auto model = model_segmented<float>(Strategy::segmented_scan, s, x, off);
    const auto g = gpu::gpu_segmented<float>(Strategy::segmented_scan, s, in, 5);
    ASSERT_TRUE(g.ok()) << g.error;
    ASSERT_EQ(g.sums.size(), model.size());
    for (std::size_t j = 0; j < model.size(); ++j)
      ASSERT_TRUE(same_bits(g.sums[j], model[j])) << to_string(s, Strategy::segmented_scan) << " segment " << j;
  }
}

TEST(GpuSegmented, BadInputsComeBackAsErrors) {
  SUMLAB_REQUIRE_GPU();
  const std::vector<float> x{1, 2, 3};
  const std::vector<Offset> bad{0, 2, 1, 3};
  const auto r = gpu::gpu_segmented<float>(Strategy::block_per_segment, {256, 1}, std::span<const float>(x),
                                           std::span<const Offset>(bad));
  EXPECT_FALSE(r.ok());
  EXPECT_NE(r.error.find("position 2"), std::string::npos) << r.error;
  const std::vector<Offset> good{0, 3};
  EXPECT_FALSE((gpu::gpu_segmented<float>(Strategy::block_per_segment, {48, 1}, std::span<const float>(x),
                                          std::span<const Offset>(good)).ok()));
  EXPECT_FALSE((gpu::gpu_segmented<float>(Strategy::serial_per_segment, {256, 1}, std::span<const float>(x),
                                          std::span<const Offset>(good)).ok()));
}

}  // namespace
}  // namespace sumlab::segmented
