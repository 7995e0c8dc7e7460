// `sumlab study variance` on the model backend with tiny sizes: the run folder, its columns and
// rows, the textbook formula's negative variances at offset 1e4, and bad shapes refused cleanly.
#include "tests/studies/run_sumlab.hpp"

#include <gtest/gtest.h>
#include <sys/wait.h>

#include <array>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/generators.hpp"
#include "core/row_reduce/row_input.hpp"
#include "studies/run_folder.hpp"
#include "studies/study_driver.hpp"
#include "studies/verify_rows.hpp"

namespace {

using sumlab::test::Result;
using sumlab::test::Csv;
using sumlab::test::read_csv;
using sumlab::test::run;


const std::string kTiny =
    "study variance --backend model --rows 48 --cols 2048 --softmax-rows 4 --argmax-rows 3 "
    "--offsets 0,10000 --scales 1,100 --blocks 64,256";

TEST(VarianceStudy, ModelBackendWritesTheThreeTables) {
  const auto dir = sumlab::test::temp_dir("variance_test_tiny");
  const Result r = run(kTiny + " --out " + dir.string());
  ASSERT_EQ(r.code, 0) << r.out;
  for (const char* f : {"provenance.json", "summary.json", "row_variance.csv", "row_softmax.csv", "row_argmax.csv"})
    EXPECT_TRUE(std::filesystem::exists(dir / f)) << f;
  EXPECT_FALSE(std::filesystem::exists(dir / "row_verify.csv"));  // model backend: nothing to verify

  const Csv v = read_csv(dir / "row_variance.csv");
  const std::vector<std::string> columns = {
      "study", "backend", "dtype", "rows", "cols", "offset", "seed", "method", "layout", "block",
      "median_rel_error", "max_rel_error", "negative_variance_rows", "nan_variance_rows", "nan_output_rows",
      "ms", "us_per_row", "bound_us_per_row", "time_over_bound", "copy_gbps", "bytes", "max_out_abs_error", "runs",
      "distinct_outputs", "note"};
  EXPECT_EQ(v.header, columns);
  // 2 offsets x 4 methods x 3 shapes (warp_per_row/256, block_per_row/64, block_per_row/256).
  ASSERT_EQ(v.rows.size(), 2u * 4u * 3u);
  int textbook_negative_1e4 = 0;
  for (const auto& row : v.rows) {
    EXPECT_EQ(row.at("backend"), "model");
    EXPECT_EQ(row.at("ms"), "");  // no time on the model backend
    EXPECT_EQ(row.at("rows"), "48");
    EXPECT_EQ(row.at("runs"), "");  // the lab's kernels run once: their bits are checked against the model
    EXPECT_EQ(row.at("note"), "");
    if (row.at("method") == "textbook" && row.at("offset") == "10000") {
      textbook_negative_1e4 += std::stoi(row.at("negative_variance_rows"));
      EXPECT_EQ(row.at("nan_output_rows"), row.at("negative_variance_rows"));
    } else if (row.at("method") != "textbook") {
      EXPECT_EQ(row.at("negative_variance_rows"), "0") << row.at("method");
      EXPECT_LT(std::stod(row.at("max_rel_error")), 1e-2) << row.at("method") << " " << row.at("offset");
      // The normalised rows against (x - exact mean) / sqrt(exact variance + eps): float32's rounding
      // of x - mean at |mean| = 1e4 is ~1e4 * 2^-24.
      EXPECT_LT(std::stod(row.at("max_out_abs_error")), row.at("offset") == "0" ? 1e-5 : 1e-2) << row.at("method");
    }
    if (row.at("offset") == "0") {
      EXPECT_LT(std::stod(row.at("max_rel_error")), 1e-4) << row.at("method");
    }
  }
  EXPECT_GT(textbook_negative_1e4, 0) << r.out;

  const Csv s = read_csv(dir / "row_softmax.csv");
  ASSERT_EQ(s.rows.size(), 2u * 2u * 3u);
  for (const auto& row : s.rows) {
    EXPECT_EQ(row.at("nan_rows"), "0");
    EXPECT_LT(std::stod(row.at("max_sum_error")), 1e-5);
  }
  const Csv a = read_csv(dir / "row_argmax.csv");
  ASSERT_EQ(a.rows.size(), 10u * 3u);
  for (const auto& row : a.rows) {
    EXPECT_EQ(row.at("index_mismatches"), "0") << row.at("case");
    EXPECT_EQ(row.at("value_mismatches"), "0") << row.at("case");
  }
  std::ifstream sj(dir / "summary.json");
  const auto j = nlohmann::json::parse(sj);
  EXPECT_EQ(j["backend"], "model");
  EXPECT_EQ(j["argmax_mismatching_rows"], 0);

  // An existing run is not overwritten without --force; --resume skips every finished cell.
  EXPECT_NE(run(kTiny + " --out " + dir.string()).code, 0);
  const Result again = run(kTiny + " --out " + dir.string() + " --resume");
  ASSERT_EQ(again.code, 0) << again.out;
  EXPECT_NE(again.out.find("(14 from an earlier run)"), std::string::npos) << again.out;
  EXPECT_EQ(read_csv(dir / "row_variance.csv").rows.size(), v.rows.size());
  std::filesystem::remove_all(dir);
}

// bfloat16 rounds 1e4 + N(0, 1) to one value (its spacing there is 64): every row is constant, its
// exact variance 0, and a kernel that returns 0 is exact, not infinitely wrong (0/0).
TEST(VarianceStudy, ConstantRowsHaveZeroErrorWhenTheVarianceIsZero) {
  const auto dir = sumlab::test::temp_dir("variance_test_constant");
  const Result r = run("study variance --backend model --rows 8 --cols 256 --softmax-rows 2 --argmax-rows 2 "
                       "--offsets 10000 --scales 1 --dtypes bfloat16 --out " + dir.string());
  ASSERT_EQ(r.code, 0) << r.out;
  int checked = 0;
  for (const auto& row : read_csv(dir / "row_variance.csv").rows) {
    if (row.at("method") != "two_pass" && row.at("method") != "welford") continue;
    EXPECT_EQ(row.at("max_rel_error"), "0") << row.at("method");
    EXPECT_EQ(row.at("max_out_abs_error"), "0") << row.at("method");  // (x - mean) * rstd = 0 exactly
    ++checked;
  }
  EXPECT_EQ(checked, 4);  // two methods x two shapes
  std::filesystem::remove_all(dir);
}

// The user's rows (--input) in every table: a file of the generator's own values (rows offset 0 +
// N(0, 1), softmax scale 1 and argmax's "distinct" case are all N(0, 1) at seed 1, element
// r * cols + j) gives the generated run's rows, with offset, scale and case "data" and no seed.
TEST(VarianceStudy, TheUsersRowsGiveTheRowsOfTheSameValuesGenerated) {
  const auto dir = sumlab::test::fresh_dir("variance_test_data");
  const std::int64_t rows = 6, cols = 1000;
  std::vector<float> x(static_cast<std::size_t>(rows * cols));
  for (std::size_t i = 0; i < x.size(); ++i) x[i] = static_cast<float>(sumlab::standard_normal(1, i));
  sumlab::test::write_npy(dir / "x.npy", x);
  const std::string common = " --backend model --cols 1000 --blocks 64 --out ";
  const Result gen = run("study variance --rows 6 --softmax-rows 6 --argmax-rows 6 --offsets 0 --scales 1" + common +
                         (dir / "gen").string());
  ASSERT_EQ(gen.code, 0) << gen.out;
  const Result dat = run("study variance --input " + (dir / "x.npy").string() + common + (dir / "dat").string());
  ASSERT_EQ(dat.code, 0) << dat.out;
  sumlab::test::expect_rows_of_the_same_values(dir / "gen" / "row_variance.csv", dir / "dat" / "row_variance.csv",
                                               "offset", "0", {"seed"});
  sumlab::test::expect_rows_of_the_same_values(dir / "gen" / "row_softmax.csv", dir / "dat" / "row_softmax.csv",
                                               "scale", "1", {"seed"});
  // argmax: the generated run's "distinct" case against the data's rows, layout by layout.
  std::vector<std::map<std::string, std::string>> distinct;
  for (const auto& row : read_csv(dir / "gen" / "row_argmax.csv").rows)
    if (row.at("case") == "distinct") distinct.push_back(row);
  const Csv arg = read_csv(dir / "dat" / "row_argmax.csv");
  ASSERT_EQ(arg.rows.size(), distinct.size());
  ASSERT_EQ(arg.rows.size(), 2u);  // warp_per_row/256, block_per_row/64
  for (std::size_t i = 0; i < arg.rows.size(); ++i) {
    EXPECT_EQ(arg.rows[i].at("case"), "data");
    EXPECT_EQ(arg.rows[i].at("seed"), "");
    for (const char* c : {"rows", "cols", "layout", "block", "index_mismatches", "value_mismatches",
                          "expected_index_row0", "index_row0"})
      EXPECT_EQ(arg.rows[i].at(c), distinct[i].at(c)) << c;
  }
  for (const auto& row : read_csv(dir / "dat" / "row_variance.csv").rows) EXPECT_EQ(row.at("rows"), "6");
  const std::string plan = sumlab::test::slurp(dir / "dat" / "provenance.json");
  EXPECT_NE(plan.find("\"n\": 6000"), std::string::npos) << plan;
  // Other data under the same folder is refused on --resume; the same data resumes.
  std::vector<float> y(x);
  y[17] = -y[17];
  sumlab::test::write_npy(dir / "y.npy", y);
  const std::string resume = " --backend model --cols 1000 --blocks 64 --resume --out " + (dir / "dat").string();
  const Result other = run("study variance --input " + (dir / "y.npy").string() + resume);
  EXPECT_EQ(other.code, 2) << other.out;
  const Result same = run("study variance --input " + (dir / "x.npy").string() + resume);
  EXPECT_EQ(same.code, 0) << same.out;
  // Options that would measure something else than the data's rows are refused before anything is written.
  const std::string refused = "study variance --backend model --input " + (dir / "x.npy").string() + " --out " +
                              (dir / "refused").string();
  sumlab::test::expect_one_line_refusal(refused + " --cols 1000 --offsets 1e4", "--offsets and --scales have no effect");
  sumlab::test::expect_one_line_refusal(refused + " --cols 1000 --rows 3", "--rows, --softmax-rows and --argmax-rows");
  sumlab::test::expect_one_line_refusal(refused, "--input needs --cols");
  sumlab::test::expect_one_line_refusal(refused + " --cols 7", "holds 6000 values: not a whole number of rows of --cols 7");
  sumlab::test::expect_one_line_refusal(refused + " --cols 1000 --dtypes float64", "holds float32 but --dtypes float64");
  sumlab::test::expect_one_line_refusal(refused + " --cols 1000 --dtypes bfloat16", "value 0 (");
  EXPECT_FALSE(std::filesystem::exists(dir / "refused"));
  // float64 rows are studied as float64.
  sumlab::test::write_npy(dir / "x64.npy", std::vector<double>(x.begin(), x.end()));
  const Result d64 = run("study variance --input " + (dir / "x64.npy").string() + common + (dir / "d64").string());
  ASSERT_EQ(d64.code, 0) << d64.out;
  for (const auto& row : read_csv(dir / "d64" / "row_variance.csv").rows) EXPECT_EQ(row.at("dtype"), "float64");
  std::filesystem::remove_all(dir);
}

// A bfloat16 model's activations reach the lab as float32 (.npy has no bfloat16): with --dtypes
// bfloat16 they are studied by the bfloat16 kernels, on exactly the values the generated bfloat16
// rows hold; float32 data that bfloat16 does not hold is refused, and float16 data, which has no
// row kernels, needs --dtypes float32 (or bfloat16, where bfloat16 holds its values).
TEST(VarianceStudy, Bfloat16ValuesInAFloat32FileAreStudiedAsBfloat16Rows) {
  const auto dir = sumlab::test::fresh_dir("variance_test_bf16");
  std::vector<float> x(6 * 1000);
  for (std::size_t i = 0; i < x.size(); ++i)
    x[i] = sumlab::row_reduce::RowInput<sumlab::row_reduce::bfloat16_bits>::widen(
        sumlab::row_reduce::to_bfloat16_bits(static_cast<float>(sumlab::standard_normal(1, i))));
  sumlab::test::write_npy(dir / "x.npy", x);
  const std::string common = " --backend model --cols 1000 --blocks 64 --out ";
  const Result gen = run("study variance --dtypes bfloat16 --rows 6 --softmax-rows 6 --argmax-rows 6 --offsets 0 "
                         "--scales 1" + common + (dir / "gen").string());
  ASSERT_EQ(gen.code, 0) << gen.out;
  const std::string input = "study variance --input " + (dir / "x.npy").string();
  const Result dat = run(input + " --dtypes bfloat16" + common + (dir / "dat").string());
  ASSERT_EQ(dat.code, 0) << dat.out;
  sumlab::test::expect_rows_of_the_same_values(dir / "gen" / "row_variance.csv", dir / "dat" / "row_variance.csv",
                                               "offset", "0", {"seed"});
  sumlab::test::expect_rows_of_the_same_values(dir / "gen" / "row_softmax.csv", dir / "dat" / "row_softmax.csv",
                                               "scale", "1", {"seed"});
  // Both: the float32 kernels on the same values beside them.
  const Result both = run(input + " --dtypes bfloat16,float32" + common + (dir / "both").string());
  ASSERT_EQ(both.code, 0) << both.out;
  std::set<std::string> dtypes;
  for (const auto& row : read_csv(dir / "both" / "row_variance.csv").rows) dtypes.insert(row.at("dtype"));
  EXPECT_EQ(dtypes, (std::set<std::string>{"bfloat16", "float32"}));
  // A value bfloat16 does not hold is named; float16 rows need --dtypes float32.
  std::vector<float> y(x);
  y[4321] = std::nextafter(y[4321], 1e9f);
  sumlab::test::write_npy(dir / "y.npy", y);
  sumlab::test::expect_one_line_refusal("study variance --input " + (dir / "y.npy").string() +
                                            " --dtypes bfloat16 --backend model --cols 1000 --out " +
                                            (dir / "refused").string(),
                                        "value 4321 (");
  std::vector<std::uint16_t> ones_and_twos(2000, 0x3c00);  // float16 1.0 ...
  for (std::size_t i = 1; i < ones_and_twos.size(); i += 2) ones_and_twos[i] = 0x4000;  // ... and 2.0
  sumlab::test::write_npy(dir / "h.npy", ones_and_twos);
  const std::string h = "study variance --input " + (dir / "h.npy").string() + " --backend model --cols 1000";
  sumlab::test::expect_one_line_refusal(h + " --out " + (dir / "refused").string(),
                                        "holds float16 values and the row kernels take float32, bfloat16 or float64");
  sumlab::test::expect_one_line_refusal(h + " --dtypes float64 --out " + (dir / "refused").string(),
                                        "holds float16 but --dtypes float64");
  EXPECT_FALSE(std::filesystem::exists(dir / "refused"));
  const Result half = run(h + " --dtypes float32 --blocks 64 --out " + (dir / "half").string());
  ASSERT_EQ(half.code, 0) << half.out;
  EXPECT_NE(sumlab::test::slurp(dir / "half" / "provenance.json").find("\"widened_from\": \"float16\""),
            std::string::npos);
  for (const auto& row : read_csv(dir / "half" / "row_variance.csv").rows) {
    EXPECT_EQ(row.at("dtype"), "float32");
    if (row.at("method") != "textbook") {
      EXPECT_LT(std::stod(row.at("max_rel_error")), 1e-6);  // variance 1/4
    }
  }
  std::filesystem::remove_all(dir);
}

TEST(VarianceStudy, BadShapesFailCleanlyBeforeTouchingTheFolder) {
  const auto dir = sumlab::test::temp_dir("variance_test_bad");
  struct Bad {
    std::string args, message;
  };
  const Bad bad[] = {
      {"--backend model --blocks 48", "multiple of 32"},
      {"--backend model --blocks 2048", "32..1024"},
      {"--backend model --warp-block 0", "multiple of 32"},
      {"--backend model --cols 0", "--cols must be >= 1"},
      {"--backend model --rows 0", "must be >= 1"},
      {"--backend model --cols 16777217", "2^24"},
      // -1 is a value like any other, not "not given": refused, never the default.
      {"--backend model --cols -1", "--cols must be >= 1 (got -1)"},
      {"--backend model --softmax-rows -1", "must be >= 1 (got 64, -1, 8)"},
      {"--backend model --rows -1", "must be >= 1 (got -1, 16, 8)"},
      {"--backend model --argmax-rows -1", "must be >= 1 (got 64, 16, -1)"},
      {"--backend model --seed -1", "--seed: '-1' is negative"},
      {"--backend model --dtypes float16", "unknown dtype"},
      {"--backend model --scales 0", "--scales"},
      {"--backend model --verify full", "needs --backend cuda"},
      {"--backend tpu", "unknown backend"},
  };
  for (const auto& b : bad) {
    const Result r = run("study variance --quick --out " + dir.string() + " " + b.args);
    EXPECT_NE(r.code, 0) << b.args;
    EXPECT_NE(r.out.find(b.message), std::string::npos) << b.args << ": " << r.out;
    EXPECT_EQ(r.out.find("terminate"), std::string::npos) << r.out;
    EXPECT_FALSE(std::filesystem::exists(dir)) << b.args;
  }
}

// The row part of `sumlab verify` without a GPU: the model side of every case evaluates and argmax
// is the same under every shape (what the lead's verify prints when no GPU is present).
TEST(VerifyRows, ModelOnlySweepCoversEveryKernelAndDtype) {
  sumlab::RowVerifyOptions o;
  o.quick = true;
  o.model_only = true;
  const sumlab::RowVerifySummary s = sumlab::verify_rows(o);
  EXPECT_FALSE(s.gpu);
  EXPECT_TRUE(s.ok()) << s.table();
  ASSERT_EQ(s.lines.size(), 7u * 3u);
  for (const auto& l : s.lines) EXPECT_EQ(l.cases, 4 * 12 * 3) << l.kernel << " " << l.dtype;  // shapes x matrices x inputs
  EXPECT_NE(s.table().find("argmax"), std::string::npos);
  o.kernels = {"no_such_kernel"};
  EXPECT_THROW(sumlab::verify_rows(o), std::runtime_error);
}

}  // namespace

// A resumed verify cell leaves nothing in memory: summary.json's verify entry is then read back from
// its CSV, marked resumed and without a time, and never null (it was before).
TEST(VerifyEntry, AResumedVerifyCellIsReadBackFromItsCsv) {
  sumlab::CsvTable csv;
  csv.header = {"kernel", "dtype", "cases", "mismatches", "errors", "first_failure"};
  csv.rows = {{"welford", "float32", "288", "0", "0", ""}, {"two_pass", "bfloat16", "144", "2", "1", "n=33"}};
  const auto resumed = sumlab::verify_entry(nullptr, "full", csv);
  EXPECT_EQ(resumed.at("sweep"), "full");
  EXPECT_EQ(resumed.at("cases"), 432);
  EXPECT_EQ(resumed.at("mismatches"), 2);
  EXPECT_EQ(resumed.at("errors"), 1);
  EXPECT_TRUE(resumed.at("seconds").is_null());
  EXPECT_EQ(resumed.at("resumed"), true);
  const nlohmann::ordered_json made = {{"sweep", "quick"}, {"cases", 7}, {"seconds", 1.5}};
  EXPECT_EQ(sumlab::verify_entry(made, "quick", csv), made);  // made in this invocation: as it was
}
