// `sumlab study segmented` on the model backend with tiny sizes: the three CSVs and their
// columns, the pitfalls visible in them (reduceat's wrong empty segments, prefix_difference's
// error after the giant segment), determinism measured vs declared, and bad offsets or options
// refused with one line before the folder is touched. Also the segmented part of `sumlab verify`
// on the model side.
#include "tests/studies/run_sumlab.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/generators.hpp"
#include "studies/verify_segmented.hpp"

namespace {

using sumlab::test::Result;
using sumlab::test::Csv;
using sumlab::test::read_csv;
using sumlab::test::run;


const std::string kTiny = "study segmented --backend model --quick --segments 300 --mean-sizes 24";

TEST(SegmentedStudy, QuickModelRunWritesTheThreeTables) {
  const auto dir = sumlab::test::temp_dir("segmented_test_quick");
  const Result r = run(kTiny + " --out " + dir.string());
  ASSERT_EQ(r.code, 0) << r.out;
  for (const char* f : {"provenance.json", "summary.json", "segmented_errors.csv", "segmented_determinism.csv",
                        "segmented_ulp_histogram.csv"})
    EXPECT_TRUE(std::filesystem::exists(dir / f)) << f;
  EXPECT_NE(r.out.find("cub_segmented_reduce: skipped"), std::string::npos) << r.out;

  const Csv e = read_csv(dir / "segmented_errors.csv");
  const std::vector<std::string> columns = {
      "study", "backend", "dtype", "values", "distribution", "segments", "mean_size", "n", "seed", "empty_segments",
      "max_segment", "strategy", "where", "known_wrong", "shape", "max_ulps", "p50_ulps", "p90_ulps", "p99_ulps",
      "inexact_segments", "max_rel_error", "wrong_empty", "gpu_equals_model", "ms", "bytes", "roof_ms",
      "fraction_of_roof", "copy_gbps", "note", "runs", "distinct_runs"};
  EXPECT_EQ(e.header, columns);
  // 2 dtypes x 4 distributions x (3 CPU + 2 block + 2 warp + 2 scan shapes).
  ASSERT_EQ(e.rows.size(), 2u * 4u * 9u);
  std::map<std::string, long> wrong_empty;
  double prefix_giant = 0, serial_giant = 0;
  for (const auto& row : e.rows) {
    EXPECT_EQ(row.at("ms"), "");
    EXPECT_EQ(row.at("gpu_equals_model"), "");
    wrong_empty[row.at("strategy")] += std::stol(row.at("wrong_empty"));
    if (row.at("distribution") == "one_giant" && row.at("dtype") == "float32") {
      if (row.at("strategy") == "prefix_difference") prefix_giant = std::stod(row.at("max_ulps"));
      if (row.at("strategy") == "serial_per_segment") serial_giant = std::stod(row.at("max_ulps"));
    }
    if (row.at("known_wrong") == "0") {
      EXPECT_LT(std::stod(row.at("max_ulps")), 1000) << row.at("strategy");
    }
  }
  EXPECT_GT(wrong_empty["reduceat"], 0);
  for (const char* s : {"serial_per_segment", "prefix_difference", "block_per_segment", "warp_per_segment",
                        "segmented_scan"})
    EXPECT_EQ(wrong_empty[s], 0) << s;
  EXPECT_GT(prefix_giant, 20 * std::max(serial_giant, 1.0)) << "the giant segment's prefix swamps the small ones";

  const Csv d = read_csv(dir / "segmented_determinism.csv");
  ASSERT_EQ(d.rows.size(), 2u * 4u * 6u);
  for (const auto& row : d.rows) {
    EXPECT_EQ(row.at("consistent"), "1") << row.at("strategy");
    EXPECT_EQ(row.at("distinct_across_runs"), "1");
    if (row.at("strategy") == "warp_per_segment") {
      EXPECT_EQ(row.at("measured"), "shape_invariant");
    }
    // One shape cannot show shape invariance (core/determinism_classify.hpp's rule).
    if (row.at("shapes") == "1") {
      EXPECT_NE(row.at("measured"), "shape_invariant") << row.at("strategy");
    }
  }
  const Csv h = read_csv(dir / "segmented_ulp_histogram.csv");
  EXPECT_EQ(h.rows.size(), e.rows.size() * 7u);

  std::ifstream sj(dir / "summary.json");
  const auto j = nlohmann::json::parse(sj);
  EXPECT_EQ(j["backend"], "model");
  EXPECT_EQ(j["wrong_empty_segments_ours"], 0);
  // No GPU ran on the model backend: nothing was compared, so no count is claimed.
  EXPECT_TRUE(j["gpu_model_mismatches"].is_null()) << j["gpu_model_mismatches"];
  EXPECT_NE(r.out.find("GPU-vs-model: not checked (no GPU ran)"), std::string::npos) << r.out;
  EXPECT_EQ(r.out.find("GPU-vs-model mismatches"), std::string::npos) << r.out;
  // No overwrite without --force.
  EXPECT_NE(run(kTiny + " --out " + dir.string()).code, 0);
  std::filesystem::remove_all(dir);
}

TEST(SegmentedStudy, HandMadeOffsetsWithEmptyEnds) {
  const auto dir = sumlab::test::temp_dir("segmented_test_custom");
  const Result r = run("study segmented --backend model --dtypes float64 --offsets 0,0,3,3,40,40 --out " + dir.string());
  ASSERT_EQ(r.code, 0) << r.out;
  const Csv e = read_csv(dir / "segmented_errors.csv");
  ASSERT_FALSE(e.rows.empty());
  for (const auto& row : e.rows) {
    EXPECT_EQ(row.at("distribution"), "custom");
    EXPECT_EQ(row.at("segments"), "5");
    EXPECT_EQ(row.at("empty_segments"), "3");
    // reduceat: the empty first segment gets x[0], the middle one x[3], the last one NaN.
    EXPECT_EQ(row.at("wrong_empty"), row.at("strategy") == "reduceat" ? "3" : "0") << row.at("strategy");
  }
  std::filesystem::remove_all(dir);
}

// The user's values for a hand-made layout (what index_add_ sums on their data): on the generator's
// own values (uniform, seed 1) every row is the generated run's, the values column aside; options
// that would measure other values are refused before the folder is touched.
TEST(SegmentedStudy, TheUsersValuesGiveTheRowsOfTheSameValuesGenerated) {
  const auto dir = sumlab::test::fresh_dir("segmented_test_data");
  sumlab::DistributionSpec uniform;
  uniform.kind = sumlab::parse_distribution("uniform");
  sumlab::test::write_npy(dir / "x.npy", sumlab::generate<float>(uniform, 1, 1000));
  const std::string layout = " --backend model --quick --offsets 0,0,3,3,700,701,1000 --out ";
  const Result gen = run("study segmented --dtypes float32" + layout + (dir / "gen").string());
  ASSERT_EQ(gen.code, 0) << gen.out;
  const Result dat = run("study segmented --input " + (dir / "x.npy").string() + layout + (dir / "dat").string());
  ASSERT_EQ(dat.code, 0) << dat.out;
  for (const char* table : {"segmented_errors.csv", "segmented_determinism.csv", "segmented_ulp_histogram.csv"})
    sumlab::test::expect_rows_of_the_same_values(dir / "gen" / table, dir / "dat" / table, "values", "uniform");
  const std::string refused = "study segmented --backend model --input " + (dir / "x.npy").string() + " --out " +
                              (dir / "refused").string();
  for (const auto& [args, message] : std::vector<std::pair<std::string, std::string>>{
           {" --n 999 --offsets 0,999", "--n 999 but --input"},
           {" --offsets 0,999", "--offsets"},
           {" --offsets 0,1000 --values normal", "--values has no effect with --input"},
           {" --offsets 0,1000 --seeds 2", "--seeds has no effect with --input"},
           {" --offsets 0,1000 --dtypes float64", "holds float32 but --dtypes float64 was given"},
           {"", "it needs --offsets"}})
    sumlab::test::expect_one_line_refusal(refused + args, message);
  EXPECT_FALSE(std::filesystem::exists(dir / "refused"));
  std::filesystem::remove_all(dir);
}

// A layout longer than a command line takes (Linux passes 128 KiB an argument) comes from a file:
// an int64 or int32 .npy, or text; the rows are those of the same layout given as --offsets.
TEST(SegmentedStudy, OffsetsFromAFileAreTheOffsetsGiven) {
  const auto dir = sumlab::test::fresh_dir("segmented_test_offsets_file");
  const std::vector<std::int64_t> offsets = {0, 0, 3, 3, 700, 701, 1000};
  const std::string cmd = "study segmented --backend model --quick --dtypes float32 --out ";
  const Result listed = run(cmd + (dir / "listed").string() + " --offsets 0,0,3,3,700,701,1000");
  ASSERT_EQ(listed.code, 0) << listed.out;
  sumlab::test::write_npy(dir / "o64.npy", offsets);
  sumlab::test::write_npy(dir / "o32.npy", std::vector<std::int32_t>(offsets.begin(), offsets.end()));
  std::ofstream(dir / "o.txt") << "0 0,3\n3\t700\r\n701\n1000\n";
  for (const char* file : {"o64.npy", "o32.npy", "o.txt"}) {
    const Result r = run(cmd + (dir / file).string() + ".run --offsets-file " + (dir / file).string());
    ASSERT_EQ(r.code, 0) << r.out;
    for (const char* table : {"segmented_errors.csv", "segmented_determinism.csv"})
      EXPECT_EQ(sumlab::test::slurp(dir / (std::string(file) + ".run") / table), sumlab::test::slurp(dir / "listed" / table))
          << file << " " << table;
  }
  sumlab::test::write_npy(dir / "f.npy", std::vector<double>{0, 4});
  sumlab::test::write_npy(dir / "x.npy", std::vector<float>(4, 1.0f));
  std::ofstream(dir / "bad.txt") << "0\n1.5\n4\n";
  std::ofstream(dir / "empty.txt") << " \n";
  const std::string refused = "study segmented --backend model --out " + (dir / "refused").string();
  for (const auto& [args, message] : std::vector<std::pair<std::string, std::string>>{
           {" --offsets 0,4 --offsets-file " + (dir / "o64.npy").string(), "give one"},
           {" --offsets-file " + (dir / "f.npy").string(), "holds float64 values, not the int32 or int64 offsets"},
           {" --offsets-file " + (dir / "bad.txt").string(), "line 2: '1.5' is not an integer offset"},
           {" --offsets-file " + (dir / "empty.txt").string(), "holds no offsets"},
           {" --offsets-file " + (dir / "missing.txt").string(), "cannot read"},
           {" --offsets-file " + (dir / "o64.npy").string() + " --input " + (dir / "o64.npy").string(),
            "holds int64 values: sumlab sums float16, float32 and float64 arrays"},
           {" --offsets-file " + (dir / "o64.npy").string() + " --input " + (dir / "x.npy").string(),
            "--offsets: segment offsets: position 4 (value 700) exceeds the number of values 4"}})
    sumlab::test::expect_one_line_refusal(refused + args, message);
  EXPECT_FALSE(std::filesystem::exists(dir / "refused"));
  std::filesystem::remove_all(dir);
}

// A long hand-made layout (a Python caller's segments) is recorded in the plan by its length, last
// boundary and hash, not boundary by boundary; --resume still refuses another layout.
TEST(SegmentedStudy, ALongLayoutIsRecordedByItsHash) {
  const auto dir = sumlab::test::temp_dir("segmented_test_long");
  auto layout = [](int step) {
    std::string offsets = "0";
    for (int i = 1; i <= 2000; ++i) offsets.append(",").append(std::to_string(i * step));
    return offsets;
  };
  const std::string cmd = "study segmented --backend model --quick --dtypes float32 --strategies serial_per_segment "
                          "--out " + dir.string() + " --offsets ";
  const Result first = run(cmd + layout(2));
  ASSERT_EQ(first.code, 0) << first.out;
  const auto plan = nlohmann::json::parse(sumlab::test::slurp(dir / "provenance.json"))["plan"]["offsets"];
  EXPECT_EQ(plan["count"], 2001);
  EXPECT_EQ(plan["last"], 4000);
  EXPECT_EQ(plan["fnv1a64"].get<std::string>().size(), 16u);
  EXPECT_LT(std::filesystem::file_size(dir / "summary.json"), 8000u);
  const Result other = run(cmd + layout(3) + " --resume");
  EXPECT_NE(other.code, 0) << other.out;
  const Result same = run(cmd + layout(2) + " --resume");
  EXPECT_EQ(same.code, 0) << same.out;
  std::filesystem::remove_all(dir);
}

TEST(SegmentedStudy, BadOffsetsAndOptionsFailCleanlyBeforeTouchingTheFolder) {
  const auto dir = sumlab::test::temp_dir("segmented_test_bad");
  struct Bad {
    std::string args, message;
  };
  const Bad bad[] = {
      {"--offsets 1,4", "position 0 (value 1) must be 0"},
      {"--offsets 0,5,3,8", "position 2 (value 3)"},
      {"--offsets 0,4,8 --n 9", "position 2 (value 8) is the last offset"},
      {"--n 5", "needs --offsets"},
      {"--distributions zipf", "unknown segment-size distribution"},
      {"--strategies atomic", "unknown strategy"},
      {"--blocks 48", "multiple of 32"},
      {"--scan-tiles 256x5", "items per thread"},
      {"--scan-tiles 256", "BLOCKxITEMS"},
      {"--segments -1", "--segments"},
      {"--mean-sizes -2", "--mean-sizes"},
      {"--dtypes float16", "unknown dtype"},
      {"--values ill_conditioned", "not a pure function"},
      {"--seeds 0", "--seeds"},
  };
  for (const auto& b : bad) {
    const Result r = run("study segmented --backend model --quick --out " + dir.string() + " " + b.args);
    EXPECT_NE(r.code, 0) << b.args;
    EXPECT_NE(r.out.find(b.message), std::string::npos) << b.args << ": " << r.out;
    EXPECT_EQ(r.out.find("terminate"), std::string::npos) << r.out;
    EXPECT_FALSE(std::filesystem::exists(dir)) << b.args;
  }
}

// A layout whose values this machine cannot hold is refused for memory (exit 3) with one line,
// before the run folder exists: not an internal error from a vector's length (2^61) or a failed
// allocation after provenance.json and the CSV headers are written (10^12). A negative --n is bad
// input, not "not given".
TEST(SegmentedStudy, OffsetsPastMemoryAreRefusedBeforeTheFolder) {
  const auto dir = sumlab::test::temp_dir("segmented_test_memory");
  struct Case {
    std::string args, message;
    int code;
  };
  const Case cases[] = {
      {"--offsets 0,2305843009213693952", "the --offsets layout (2305843009213693952 values in 1 segments)", 3},
      {"--offsets 0,1000000000000", "the --offsets layout (1000000000000 values in 1 segments) needs", 3},
      {"--offsets 0,5,1000000000000", "the --offsets layout (1000000000000 values in 2 segments) needs", 3},
      {"--offsets 0,4 --n -1", "--n must be >= 0 (got -1)", 2},
  };
  for (const auto& c : cases) {
    const Result r = run("study segmented --quick --backend model --dtypes float32 --out " + dir.string() + " " + c.args);
    EXPECT_EQ(r.code, c.code) << c.args << ": " << r.out;
    EXPECT_NE(r.out.find(c.message), std::string::npos) << c.args << ": " << r.out;
    EXPECT_EQ(r.out.rfind("sumlab: ", 0), 0u) << c.args << ": " << r.out;
    EXPECT_EQ(std::count(r.out.begin(), r.out.end(), '\n'), 1) << c.args << ": " << r.out;
    EXPECT_FALSE(std::filesystem::exists(dir)) << c.args;
  }
}

TEST(VerifySegmented, ModelOnlySweepCoversEveryModelledStrategy) {
  sumlab::SegVerifyOptions o;
  o.quick = true;
  o.model_only = true;
  const sumlab::SegVerifySummary s = sumlab::verify_segmented(o);
  EXPECT_FALSE(s.gpu);
  EXPECT_TRUE(s.ok()) << s.table();
  ASSERT_EQ(s.lines.size(), 3u * 2u);
  // 18 layouts x 2 value kinds x 3 shapes.
  for (const auto& l : s.lines) EXPECT_EQ(l.cases, 18 * 2 * 3) << l.strategy << " " << l.dtype;
}

// Without a GPU only the shape_invariant strategy (warp_per_segment) is compared, model against
// model across shapes; the others compared nothing and print '-', never a count of 0.
TEST(VerifySegmented, ModelOnlyTablePrintsDashWhereNothingWasCompared) {
  sumlab::SegVerifyOptions o;
  o.quick = true;
  o.model_only = true;
  const sumlab::SegVerifySummary s = sumlab::verify_segmented(o);
  for (const auto& l : s.lines) {
    if (l.strategy == "warp_per_segment") {
      EXPECT_GT(l.compared, 0) << l.dtype;
    } else {
      EXPECT_EQ(l.compared, 0) << l.strategy << " " << l.dtype;
    }
  }
  const std::string t = s.table();
  EXPECT_EQ(t.find("--model-only"), std::string::npos) << t;
  EXPECT_NE(t.find("no GPU ran: model only"), std::string::npos) << t;
  EXPECT_NE(t.find("shape-invariance breaks"), std::string::npos) << t;
  std::istringstream lines(t);
  std::string line;
  int checked = 0;
  while (std::getline(lines, line)) {
    std::istringstream fields(line);
    std::vector<std::string> f;
    for (std::string w; fields >> w;) f.push_back(w);
    if (f.size() != 5) continue;
    if (f[0] == "block_per_segment" || f[0] == "segmented_scan") {
      EXPECT_EQ(f[3], "-") << line;
      ++checked;
    } else if (f[0] == "warp_per_segment") {
      EXPECT_EQ(f[3], "0") << line;
      ++checked;
    }
  }
  EXPECT_EQ(checked, 6) << t;
}

}  // namespace
