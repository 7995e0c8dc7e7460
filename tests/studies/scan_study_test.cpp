// `sumlab study scan --quick` on the model backend: the run folder's tables, their columns and the
// facts they must show (max exact everywhere, the serial loop's error, the work formulas), and bad
// options refused with a message and a non-zero exit.
#include "tests/studies/run_sumlab.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <map>
#include <string>
#include <vector>

#include "core/generators.hpp"

namespace {

using sumlab::test::Csv;
using sumlab::test::read_csv;
using sumlab::test::run;


TEST(ScanStudy, QuickModelRunWritesEveryTable) {
  const auto dir = sumlab::test::temp_dir("scan_test_quick");
  const auto r = run("study scan --quick --backend model --out " + dir.string());
  ASSERT_EQ(r.code, 0) << r.out;
  for (const char* f : {"scan_error.csv", "scan_position.csv", "scan_determinism.csv", "scan_throughput.csv",
                        "scan_recurrence.csv", "scan_work.csv", "summary.json", "provenance.json"})
    EXPECT_TRUE(std::filesystem::exists(dir / f)) << f;

  const Csv err = read_csv(dir / "scan_error.csv");
  ASSERT_FALSE(err.rows.empty());
  std::map<std::string, int> algs;
  bool serial_rounds = false;
  for (const auto& row : err.rows) {
    ++algs[row.at("algorithm")];
    if (row.at("operator") == "max") {
      EXPECT_EQ(row.at("max_ulps"), "0") << row.at("algorithm");  // max is exact
    }
    const double f = std::stod(row.at("exact_fraction"));
    EXPECT_GE(f, 0.0);
    EXPECT_LE(f, 1.0);
    if (row.at("algorithm") == "cpu_serial" && row.at("operator") == "plus" && row.at("n") == "4097")
      serial_rounds = std::stod(row.at("max_ulps")) > 0;
    EXPECT_EQ(row.at("gpu_equals_model"), "");  // model backend: nothing to compare
    // Higham's bounds against the running sum of |x|, plus half an ulp because the reference is the
    // exact prefix rounded once: serial (recursive summation, i additions) gamma_(n-1); Hillis-Steele
    // (every prefix a tree of depth <= ceil(log2 n)) gamma_K. float32: u = 2^-24.
    if (row.at("operator") == "plus" || row.at("operator") == "segmented") {
      const double n = std::stod(row.at("n")), u = std::ldexp(1.0, -24);
      const double k = row.at("algorithm") == "cpu_serial" ? n - 1
                       : row.at("algorithm") == "cpu_hillis_steele" ? std::ceil(std::log2(n)) : -1;
      if (k >= 0) {
        EXPECT_LE(std::stod(row.at("max_scaled_error")), k * u / (1 - k * u) + u) << row.at("algorithm");
      }
    }
  }
  EXPECT_TRUE(serial_rounds) << "a float running sum of 4097 uniforms must round somewhere";
  // No GPU ran on the model backend: nothing compared is not 0 mismatches.
  EXPECT_NE(sumlab::test::slurp(dir / "summary.json").find("\"gpu_model_mismatches\": null"), std::string::npos);
  for (const char* a :
       {"cpu_serial", "cpu_hillis_steele", "cpu_blelloch", "warp_hillis_steele", "block_blelloch", "warp_hs_chained"})
    EXPECT_GT(algs[a], 0) << a;
  EXPECT_EQ(algs["cub"], 0);  // a library peer: not modelled

  const Csv det = read_csv(dir / "scan_determinism.csv");
  ASSERT_FALSE(det.rows.empty());
  for (const auto& row : det.rows) {
    EXPECT_EQ(row.at("distinct_across_runs"), "1");
    if (row.at("operator") == "max") {
      EXPECT_EQ(row.at("measured"), "shape_invariant");
    }
    if (row.at("operator") == "plus") {
      EXPECT_EQ(row.at("measured"), "run_to_run") << row.at("algorithm");
    }
  }

  const Csv work = read_csv(dir / "scan_work.csv");
  ASSERT_FALSE(work.rows.empty());
  for (const auto& row : work.rows) {
    EXPECT_EQ(row.at("work"), row.at("formula_work")) << row.at("algorithm") << " " << row.at("n");
    EXPECT_EQ(row.at("depth"), row.at("formula_depth")) << row.at("algorithm") << " " << row.at("n");
  }

  const Csv rec = read_csv(dir / "scan_recurrence.csv");
  std::map<std::string, int> cases;
  for (const auto& row : rec.rows) {
    ++cases[row.at("a_case")];
    EXPECT_GE(std::stod(row.at("max_rel_error")), 0.0);
    // Against the recurrence's scale sum_k |b_k a_k+1 .. a_t| every form stays within a few hundred
    // u (u = 6e-8 in float: tree depth ~log2 n, three roundings per combine, 1000 steps); a wrong
    // combine order or operand would be off by O(1).
    const double scaled = std::stod(row.at("max_scaled_error"));
    EXPECT_LT(scaled, 1e-4) << row.at("a_case") << " " << row.at("algorithm");
    EXPECT_GT(scaled, 0.0) << row.at("a_case") << " " << row.at("algorithm");
  }
  EXPECT_GT(cases["contracting"], 0);
  EXPECT_GT(cases["unit"], 0);
  EXPECT_GT(cases["growing"], 0);

  const Csv pos = read_csv(dir / "scan_position.csv");
  ASSERT_FALSE(pos.rows.empty());
  EXPECT_EQ(pos.rows.front().at("bin_lo"), "1");
  EXPECT_TRUE(read_csv(dir / "scan_throughput.csv").rows.empty());  // model backend: no times

  // The folder holds a run now: a second run without --force is refused.
  const auto again = run("study scan --quick --backend model --out " + dir.string());
  EXPECT_NE(again.code, 0);
  std::filesystem::remove_all(dir);
}

// The user's data in place of the distributions: its prefixes at the --sizes below its length and
// the whole of it, in its own dtype. On the generator's own values (uniform, seed 1) every row is
// the generated run's, the distribution column aside: the data path measures what it is given.
TEST(ScanStudy, TheUsersDataGivesTheRowsOfTheSameValuesGenerated) {
  const auto dir = sumlab::test::fresh_dir("scan_test_data");
  sumlab::DistributionSpec uniform;
  uniform.kind = sumlab::parse_distribution("uniform");
  sumlab::test::write_npy(dir / "x.npy", sumlab::generate<float>(uniform, 1, 4097));
  const std::string common = " --backend model --algorithms cpu_serial,cpu_blelloch,block_blelloch "
                             "--recurrence-sizes 100 --work-log2-max 2 --out ";
  const auto gen = run("study scan --sizes 1000,4097 --dtypes float32 --dists uniform" + common + (dir / "gen").string());
  ASSERT_EQ(gen.code, 0) << gen.out;
  const auto dat = run("study scan --sizes 1000,65537 --input " + (dir / "x.npy").string() + common + (dir / "dat").string());
  ASSERT_EQ(dat.code, 0) << dat.out;
  // The recurrence's rows of scan_position.csv keep their a case: only the generated distribution is renamed.
  for (const char* table : {"scan_error.csv", "scan_determinism.csv", "scan_position.csv"})
    sumlab::test::expect_rows_of_the_same_values(dir / "gen" / table, dir / "dat" / table, "distribution", "uniform");
  const std::string plan = sumlab::test::slurp(dir / "dat" / "provenance.json");
  EXPECT_NE(plan.find("\"distributions\": [\n      \"data\""), std::string::npos) << plan;
  EXPECT_NE(plan.find("\"n\": 4097"), std::string::npos) << plan;
  // Options that would measure something else than the data are refused before anything is written.
  const std::string refused = "study scan --backend model --input " + (dir / "x.npy").string() + " --out " +
                              (dir / "refused").string();
  sumlab::test::expect_one_line_refusal(refused + " --dists normal", "--dists has no effect with --input");
  sumlab::test::expect_one_line_refusal(refused + " --dtypes float64", "holds float32 but --dtypes float64 was given");
  EXPECT_FALSE(std::filesystem::exists(dir / "refused"));
  std::filesystem::remove_all(dir);
}

TEST(ScanStudy, BadOptionsAreRefused) {
  const auto dir = sumlab::test::temp_dir("scan_test_bad");
  struct Case {
    std::string args, message;
  } cases[] = {
      {"--sizes 0", "--sizes must be >= 1"},
      {"--sizes abc", "abc"},
      {"--ops minus", "unknown operator 'minus'"},
      {"--algorithms fastest", "unknown algorithm 'fastest'"},
      {"--dtypes float16", "unknown dtype 'float16'"},
      {"--dists nope", "nope"},
      {"--verify quick", "needs --backend cuda"},
      {"--runs -1 --quick", "--runs, --det-runs and --reps must be >= 1"},
  };
  for (const auto& c : cases) {
    const auto r = run("study scan --backend model --out " + dir.string() + " " + c.args);
    EXPECT_NE(r.code, 0) << c.args;
    EXPECT_NE(r.out.find(c.message), std::string::npos) << c.args << ": " << r.out;
    EXPECT_FALSE(std::filesystem::exists(dir / "scan_error.csv")) << c.args;
  }
  {
    const auto r = run("study scan --backend tpu --out " + dir.string());
    EXPECT_NE(r.code, 0);
    EXPECT_NE(r.out.find("unknown backend 'tpu'"), std::string::npos) << r.out;
  }
  std::filesystem::remove_all(dir);
}

}  // namespace
