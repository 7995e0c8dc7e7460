// The seeds' headline figures, each through the CLI as a user would type it: the lab must print
// them, not only compute them. (The variance and segmented pitfalls are the study tests'
// variance_study_test and segmented_study_test; the core-level figures are seed_figures_test.)
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include <map>
#include <set>
#include <string>

#include "run_sumlab.hpp"

namespace sumlab {
namespace {

// value of each algorithm in `sum --json`'s output
std::map<std::string, nlohmann::json> by_algorithm(const std::string& args) {
  const auto r = test::run("sum " + args + " --json");
  EXPECT_EQ(r.code, 0) << r.out;
  std::map<std::string, nlohmann::json> out;
  for (const auto& j : nlohmann::json::parse(r.out)) out[j["algorithm"].get<std::string>()] = j;
  return out;
}

TEST(SeedFiguresCli, TenMillionTenths) {
  auto r = by_algorithm("--dist constant --value 0.1 --n 10000000 --dtype float32 --algorithm serial,pairwise");
  EXPECT_EQ(r["serial"]["value"].get<double>(), 1087937.0);
  EXPECT_EQ(r["pairwise"]["value"].get<double>(), 1000000.0);
  EXPECT_EQ(r["pairwise"]["hex"], r["pairwise"]["reference_hex"]);  // the tree is the correctly rounded sum
  EXPECT_EQ(r["serial"]["verdict"], "within");
}

TEST(SeedFiguresCli, UniformFloatsStallAtTwoToTheTwentyFour) {
  auto r = by_algorithm("--dist uniform --n 67108864 --dtype float32 --algorithm serial,exact");
  EXPECT_EQ(r["serial"]["value"].get<double>(), 16777216.0);
  EXPECT_NEAR(r["exact"]["value"].get<double>(), 33554432.0, 33554432.0 * 1e-3);
}

// Atomics: the blocks' arrival order is the final chain's order, so 20 runs of the same launch give
// several sums; the two-pass kernel gives one. Needs a GPU (skipped, with the reason, without).
TEST(SeedFiguresCli, AtomicsVaryRunToRunTwoPassDoesNot) {
  const std::string args = "sum --dist uniform --n 1000000 --dtype float32 --backend cuda --json --algorithm ";
  const auto probe = test::run(args + "gpu_two_pass");
  if (probe.code != 0 && probe.out.find("no CUDA device") != std::string::npos) GTEST_SKIP() << probe.out;
  ASSERT_EQ(probe.code, 0) << probe.out;
  std::set<std::string> atomic, two_pass;
  for (int run = 0; run < 20; ++run) {
    for (const auto& j : nlohmann::json::parse(test::run(args + "gpu_atomic,gpu_two_pass").out))
      (j["algorithm"] == "gpu_atomic" ? atomic : two_pass).insert(j["hex"].get<std::string>());
  }
  EXPECT_GE(atomic.size(), 2u);
  EXPECT_EQ(two_pass.size(), 1u);
}

}  // namespace
}  // namespace sumlab
