// The dot family (core/dot/dot_family.hpp, studies/study_dot.cpp): the exact dot against MPFR (and
// where rounding twice would be wrong), the GPU subjects' model against a hand-written warp, FMA
// against separate roundings, the bound where it is tight (large n, every product the same sign),
// and `sumlab study dot`: on the model backend everywhere, on cuda (GPU bits == model bits, or the
// study exits 1) where a GPU is present.
#include "tests/studies/run_sumlab.hpp"

#include <gtest/gtest.h>
#include <mpfr.h>

#include <bit>
#include <cmath>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/counter_rng.hpp"
#include "core/dot/dot_family.hpp"
#include "core/generators.hpp"
#include "studies/backend.hpp"

namespace sumlab::dot {
namespace {

std::vector<Pair> pairs_of(Distribution d, std::uint64_t seed, std::size_t n) {
  DistributionSpec s;
  s.kind = d;
  return interleave(generate<float>(s, seed, n), generate<float>(s, seed + 1000, n));
}

// An independent reference: every product (exact in double) added in MPFR at 700 bits, which holds
// any sum of fewer than 2^64 float products exactly (they are multiples of 2^-298 below 2^256), then
// one rounding to float.
float mpfr_dot(const std::vector<Pair>& p) {
  mpfr_t acc;
  mpfr_init2(acc, 700);
  mpfr_set_zero(acc, 1);
  for (const Pair& q : p) {
    const double prod = static_cast<double>(q.x) * static_cast<double>(q.y);
    EXPECT_EQ(mpfr_add_d(acc, acc, prod, MPFR_RNDN), 0) << "inexact";
  }
  const float r = mpfr_get_flt(acc, MPFR_RNDN);
  mpfr_clear(acc);
  return r;
}

TEST(Dot, ExactIsCorrectlyRoundedWhereRoundingTwiceIsNot) {
  // 1 + 2^-24 + 2^-60: just above the midpoint between 1 and 1 + 2^-23. Rounded to double first it
  // becomes the midpoint itself, which ties to 1; rounded once it is 1 + 2^-23.
  const std::vector<Pair> p = {{1.0f, 1.0f}, {std::ldexp(1.0f, -24), 1.0f}, {std::ldexp(1.0f, -30), std::ldexp(1.0f, -30)}};
  const double twice = 1.0 + std::ldexp(1.0, -24) + std::ldexp(1.0, -60);
  ASSERT_EQ(static_cast<float>(twice), 1.0f) << "the case must be one where rounding twice fails";
  EXPECT_EQ(std::bit_cast<std::uint32_t>(exact_dot(p).value), 0x3f800001u);
  EXPECT_EQ(std::bit_cast<std::uint32_t>(mpfr_dot(p)), 0x3f800001u);
  // And just below the midpoint the other way.
  const std::vector<Pair> q = {{1.0f, 1.0f}, {std::ldexp(1.0f, -24), 1.0f}, {-std::ldexp(1.0f, -30), std::ldexp(1.0f, -30)}};
  EXPECT_EQ(exact_dot(q).value, 1.0f);
}

TEST(Dot, ExactEqualsMpfrBitForBit) {
  for (Distribution d : {Distribution::normal, Distribution::cancellation, Distribution::lognormal, Distribution::uniform})
    for (std::size_t n : {0, 1, 31, 32, 33, 1000, 65537})
      for (std::uint64_t seed : {1, 2, 3}) {
        const auto p = pairs_of(d, seed, n);
        EXPECT_EQ(std::bit_cast<std::uint32_t>(exact_dot(p).value), std::bit_cast<std::uint32_t>(mpfr_dot(p)))
            << to_string(d) << " n=" << n << " seed=" << seed;
      }
  // Products in float's subnormal range and beyond its largest value: exact in double all the same.
  const std::vector<Pair> wide = {{0x1p-149f, 0x1p-149f}, {0x1p127f, 0x1.fffffep127f}, {-0x1p127f, 0x1.fffffep127f},
                                  {0x1p-100f, 0x1.8p-40f}};
  EXPECT_EQ(std::bit_cast<std::uint32_t>(exact_dot(wide).value), std::bit_cast<std::uint32_t>(mpfr_dot(wide)));
  EXPECT_EQ(exact_dot(wide).value, 0x1.8p-140f);
}

// gpu_dot on one warp, by hand: lane t chains its elements t, t+32, ... (grid-stride, one element
// per load), then shfl_down with offsets 16 .. 1 (lane l takes lane l + off), lane 0 holds the
// block total, and the second kernel adds it to +0.
template <class Op> float one_warp_by_hand(const std::vector<Pair>& p) {
  float lane[32];
  for (int t = 0; t < 32; ++t) {
    lane[t] = Op::identity();
    for (std::size_t i = static_cast<std::size_t>(t); i < p.size(); i += 32) lane[t] = Op::add(lane[t], p[i]);
  }
  for (int off = 16; off > 0; off /= 2)
    for (int l = 0; l < off; ++l) lane[l] = lane[l] + lane[l + off];
  return 0.0f + lane[0];
}

TEST(Dot, ModelIsTheHandWrittenWarp) {
  LaunchShape s = default_shape(GpuKernel::two_pass);
  s.grid = 1;
  s.block = 32;
  s.vector = 1;
  s.mapping = Mapping::grid_stride;
  s.warp = WarpStage::shfl_down;
  s.block_stage = BlockStage::warp_of_warps;
  int fma_differs = 0;
  for (Distribution d : {Distribution::normal, Distribution::cancellation})
    for (std::size_t n : {1, 31, 32, 33, 100, 4099}) {
      const auto p = pairs_of(d, 7, n);
      EXPECT_EQ(std::bit_cast<std::uint32_t>(model_dot(Subject::gpu_dot, p, s)),
                std::bit_cast<std::uint32_t>(one_warp_by_hand<DotOp>(p)))
          << n;
      const float fma = model_dot(Subject::gpu_dot_fma, p, s);
      EXPECT_EQ(std::bit_cast<std::uint32_t>(fma), std::bit_cast<std::uint32_t>(one_warp_by_hand<DotFmaOp>(p))) << n;
      fma_differs += fma != model_dot(Subject::gpu_dot, p, s);
    }
  EXPECT_GT(fma_differs, 0) << "one rounding per element instead of two changes some bits";
}

TEST(Dot, ShapesNobodyTunedForRunTheirOwnTrees) {
  const auto p = pairs_of(Distribution::normal, 3, 100003);
  for (const LaunchShape& s : dot_shapes()) {
    ASSERT_EQ(validate_shape(GpuKernel::two_pass, s, "float32", static_cast<std::int64_t>(p.size())), "") << to_string(s);
    const float v = model_dot(Subject::gpu_dot, p, s);
    EXPECT_LE(std::fabs(static_cast<double>(v) - exact_dot(p).value),
              dot_bound(Subject::gpu_dot, s, p.size(), exact_dot(p).sum_abs))
        << to_string(s);
  }
}

// Every product positive and equal: no cancellation, every rounding error of the serial chain the
// same sign, so the error is a sizeable part of gamma_n S (at n = 2^22 about a third).
TEST(Dot, BoundHoldsWhereItIsTight) {
  const std::size_t n = std::size_t(1) << 22;
  const std::vector<Pair> p(n, Pair{0.1f, 1.0f});
  const ExactDot e = exact_dot(p);
  const LaunchShape none{};
  const float serial = serial_dot(p);
  const double err = e.error_of(serial), b = dot_bound(Subject::cpu_serial_dot, none, n, e.sum_abs);
  EXPECT_LE(err, b);
  EXPECT_GT(err, 0.1 * b) << "the test should probe the tight regime";
  for (const LaunchShape& s : dot_shapes())
    for (Subject k : {Subject::gpu_dot, Subject::gpu_dot_fma})
      EXPECT_LE(e.error_of(model_dot(k, p, s)), dot_bound(k, s, n, e.sum_abs)) << to_string(s);
  EXPECT_LE(e.error_of(e.value), dot_bound(Subject::cpu_exact_dot, none, n, e.sum_abs));
}

TEST(DotStudy, QuickModelRunJudgesEveryRow) {
  const auto dir = sumlab::test::temp_dir("dot_quick");
  const auto r = sumlab::test::run("study dot --quick --backend model --out " + dir.string());
  ASSERT_EQ(r.code, 0) << r.out;
  const auto err = sumlab::test::read_csv(dir / "dot_errors.csv");
  ASSERT_EQ(err.rows.size(), 2u * 2u * (2u + 2u * dot_shapes().size()));  // dists x sizes x rows per cell
  for (const auto& row : err.rows) {
    EXPECT_EQ(row.at("verdict"), "within") << row.at("algorithm") << " " << row.at("shape");
    if (row.at("algorithm") == "cpu_exact_dot") {
      EXPECT_EQ(row.at("ulps"), "0");
    }
  }
  const auto det = sumlab::test::read_csv(dir / "dot_determinism.csv");
  for (const auto& row : det.rows) {
    EXPECT_EQ(row.at("consistent"), "1") << row.at("algorithm");
    // runs is the calls each configuration got: one evaluation of the model for a GPU subject,
    // at least 2 calls of a CPU subject; one configuration never shows shape invariance.
    if (row.at("algorithm").rfind("cpu_", 0) == 0) {
      EXPECT_EQ(row.at("shapes"), "1");
      EXPECT_EQ(row.at("runs"), "2") << row.at("algorithm");
      EXPECT_EQ(row.at("measured"), "run_to_run") << row.at("algorithm") << ": one shape is not shape_invariant";
    } else {
      EXPECT_EQ(row.at("runs"), "1") << row.at("algorithm");
    }
  }
  for (const auto& row : err.rows)
    if (row.at("kind") == "cpu") {
      EXPECT_EQ(row.at("distinct_runs"), "1") << row.at("algorithm");
    }
  // No GPU ran on the model backend: nothing was compared, so no count is claimed.
  std::ifstream sj(dir / "summary.json");
  const auto j = nlohmann::json::parse(sj);
  EXPECT_TRUE(j["gpu_model_mismatches"].is_null()) << j["gpu_model_mismatches"];
  EXPECT_EQ(j["no_bound_claimed"], nlohmann::json::array()) << "every dot subject has a theorem";
  EXPECT_NE(r.out.find("GPU-vs-model: not checked (no GPU ran)"), std::string::npos) << r.out;
  EXPECT_EQ(r.out.find("GPU-vs-model mismatches"), std::string::npos) << r.out;
  // Resumed: nothing is measured twice.
  const auto again = sumlab::test::run("study dot --quick --backend model --resume --out " + dir.string());
  ASSERT_EQ(again.code, 0) << again.out;
  EXPECT_EQ(sumlab::test::read_csv(dir / "dot_errors.csv").rows.size(), err.rows.size());
  std::filesystem::remove_all(dir);
}

TEST(DotStudy, GpuBitsAreTheModelsOnShapesNobodyTuned) {
  std::string why;
  if (!cuda_backend_available(&why)) GTEST_SKIP() << why;
  const auto dir = sumlab::test::temp_dir("dot_cuda");
  // Exit 1 on any GPU-vs-model mismatch or a class weaker than declared.
  const auto r = sumlab::test::run("study dot --backend cuda --sizes 1,33,1000,2^20+7 --dists normal,cancellation "
                                   "--out " + dir.string());
  ASSERT_EQ(r.code, 0) << r.out;
  long checked = 0;
  for (const auto& row : sumlab::test::read_csv(dir / "dot_errors.csv").rows)
    if (row.at("kind") == "cuda") {
      EXPECT_EQ(row.at("gpu_equals_model"), "1") << row.at("algorithm") << " " << row.at("shape");
      ++checked;
    }
  EXPECT_EQ(checked, 2 * 4 * 2 * static_cast<long>(dot_shapes().size()));
  std::filesystem::remove_all(dir);
}

TEST(DotStudy, BadOptionsAreRefused) {
  const auto dir = sumlab::test::temp_dir("dot_bad");
  for (const std::string args : {"--sizes 0", "--sizes abc", "--dists nope", "--dists ill_conditioned", "--seeds 0"}) {
    const auto r = sumlab::test::run("study dot --backend model --out " + dir.string() + " " + args);
    EXPECT_EQ(r.code, 2) << args << ": " << r.out;
    EXPECT_FALSE(std::filesystem::exists(dir / "dot_errors.csv")) << args;
  }
}

}  // namespace
}  // namespace sumlab::dot
