// `sumlab bench`: the CPU part runs anywhere and writes one row per (dtype, algorithm) with the
// ratio to the ordered double loop measured in the same run; bad options are one-line errors.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <set>
#include <string>

#include "core/cpu_algorithms.hpp"
#include "tests/studies/run_sumlab.hpp"

namespace {

using sumlab::test::read_csv;
using sumlab::test::run;

TEST(BenchCli, CpuTimingsCoverEveryAlgorithmWithTheSerialPeer) {
  const auto dir = sumlab::test::temp_dir("bench_test_cpu");
  const auto r = run("bench --no-gpu --cpu-n 4099 --cpu-reps 3 --out " + dir.string());
  ASSERT_EQ(r.code, 0) << r.out;
  EXPECT_FALSE(std::filesystem::exists(dir / "bench_gpu.csv"));
  const auto csv = read_csv(dir / "bench_cpu.csv");
  std::set<std::string> seen;
  for (const auto& row : csv.rows) {
    seen.insert(row.at("dtype") + "/" + row.at("algorithm"));
    EXPECT_EQ(row.at("n"), "4099");
    EXPECT_EQ(row.at("reps"), "3");
    const double ns = std::stod(row.at("ns_per_element"));
    EXPECT_TRUE(std::isfinite(ns) && ns > 0) << row.at("algorithm");
    EXPECT_GT(std::stod(row.at("ratio_serial_double")), 0);
    if (row.at("dtype") == "float64" && row.at("algorithm") == "serial") {
      EXPECT_DOUBLE_EQ(std::stod(row.at("ratio_serial_double")), 1.0);
    }
  }
  std::size_t expected = 0;
  for (const auto& a : sumlab::cpu_algorithms<float>()) expected += seen.count("float32/" + std::string(a.info.name));
  for (const auto& a : sumlab::cpu_algorithms<double>()) expected += seen.count("float64/" + std::string(a.info.name));
  EXPECT_EQ(expected, sumlab::cpu_algorithms<float>().size() + sumlab::cpu_algorithms<double>().size());
  EXPECT_EQ(csv.rows.size(), expected);
  EXPECT_TRUE(std::filesystem::exists(dir / "provenance.json"));
  EXPECT_TRUE(std::filesystem::exists(dir / "summary.json"));
  // The terminal's table: a row per algorithm, the peer at 1.00.
  EXPECT_NE(r.out.find("dtype    algorithm       ns/element  time / serial double\n"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("\nfloat64  serial  "), std::string::npos) << r.out;
  // (the progress line, the title, the heading, the rows, the two closing lines)
  EXPECT_EQ(std::count(r.out.begin(), r.out.end(), '\n'), 3 + static_cast<long>(csv.rows.size()) + 2) << r.out;
}

TEST(BenchCli, BadOptionsAreOneLineErrors) {
  const auto dir = sumlab::test::temp_dir("bench_test_bad");
  for (const std::string args : {"--log2-min 12 --log2-max 8", "--dists nosuch", "--exact-dists uniform:3",
                                 "--samples 0", "--dtypes float16", "--kernels gpu_nosuch", "--scan-shape 256x15",
                                 "--segmented-tile b1024", "--exact-dists lognormal:12/sideways",
                                 "--dists normal:1x", "--dists uniform/", "--row-elements 3", "--row-elements 0",
                                 "--row-elements 2048"}) {
    const auto r = run("bench --no-cpu --out " + dir.string() + " --force " + args);
    EXPECT_NE(r.code, 0) << args;
    EXPECT_NE(r.out.find("sumlab:"), std::string::npos) << args << ": " << r.out;
    EXPECT_EQ(r.out.find('\n'), r.out.size() - 1) << args << ": " << r.out;  // one line
  }
}

// The families' shapes are part of the plan: a resume asking for other rows' shapes is another
// study, refused before anything is timed.
TEST(BenchCli, RowShapesArePartOfThePlan) {
  const auto dir = sumlab::test::temp_dir("bench_test_row_elements");
  const std::string cpu = "bench --no-gpu --cpu-n 100 --cpu-reps 1 --out " + dir.string();
  ASSERT_EQ(run(cpu + " --row-elements 16,64").code, 0);
  const auto r = run(cpu + " --resume");
  EXPECT_EQ(r.code, 2) << r.out;
  EXPECT_NE(r.out.find("row_elements"), std::string::npos) << r.out;
  EXPECT_EQ(run(cpu + " --row-elements 16,64 --resume").code, 0);
}

}  // namespace
