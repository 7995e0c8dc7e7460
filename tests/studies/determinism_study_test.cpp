// `sumlab study determinism` on the model backend with tiny inputs: the classes the issue asks
// for, the CSV columns data/README.md documents, the golden round trip and drift detection, and
// clean refusals of bad shape lists and run counts.
#include "tests/studies/run_sumlab.hpp"

#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <set>
#include <string>
#include <vector>

namespace {

namespace fs = std::filesystem;

using sumlab::test::Result;
using sumlab::test::run;

fs::path temp_dir(const std::string& name) { return sumlab::test::fresh_dir("determinism_test_" + name); }

using sumlab::test::Csv;
using sumlab::test::read_csv;

// The column names data/README.md documents under "### <csv>": the first cell of each table row
// ("grid, block, vector, mapping" names four), in order.
std::vector<std::string> documented_columns(const std::string& csv) {
  std::ifstream in(fs::path(SUMLAB_SOURCE_DIR) / "data" / "README.md");
  std::string line;
  bool in_section = false;
  std::vector<std::string> cols;
  while (std::getline(in, line)) {
    if (line.rfind("#", 0) == 0) {
      if (in_section && !cols.empty()) break;
      in_section = line == "### " + csv;
      continue;
    }
    if (!in_section || line.rfind("| ", 0) != 0 || line.rfind("| column", 0) == 0 || line.rfind("| ---", 0) == 0)
      continue;
    const std::string first = line.substr(2, line.find(" |", 2) - 2);
    for (std::string name : sumlab::test::split_csv_line(first)) {
      while (!name.empty() && name.front() == ' ') name.erase(0, 1);
      cols.push_back(name);
    }
  }
  return cols;
}

// Expands "study, backend, ..., n" style shared rows ("as above") into the runs table's names.
std::vector<std::string> expand(const std::vector<std::string>& documented, const std::vector<std::string>& header) {
  std::set<std::string> doc(documented.begin(), documented.end());
  std::vector<std::string> out;
  for (const auto& h : header)
    if (doc.count(h)) out.push_back(h);
  return out;
}

class DeterminismStudy : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    // Per process: ctest runs each test of this suite as its own process, possibly in parallel.
    dir_ = temp_dir("run_" + std::to_string(getpid()));
    golden_ = dir_ / "golden.json";
    const Result r = run("study determinism --backend model --quick --sizes 1000,4099 --threads 1,2 --out " +
                         (dir_ / "d").string() + " --save-golden " + golden_.string());
    code_ = r.code;
    out_ = r.out;
  }
  static void TearDownTestSuite() { fs::remove_all(dir_); }
  static fs::path dir_, golden_;
  static int code_;
  static std::string out_;
};
fs::path DeterminismStudy::dir_, DeterminismStudy::golden_;
int DeterminismStudy::code_ = -1;
std::string DeterminismStudy::out_;

TEST_F(DeterminismStudy, ClassesAreTheOnesTheIssueAsksFor) {
  ASSERT_EQ(code_, 0) << out_;
  const Csv classes = read_csv(dir_ / "d" / "determinism_classes.csv");
  std::map<std::string, std::map<std::string, std::string>> by;
  for (const auto& r : classes.rows) by[r.at("kernel")] = r;
  for (const char* k : {"gpu_two_pass", "gpu_fixed_point", "gpu_exact", "gpu_atomic", "std_accumulate"})
    ASSERT_TRUE(by.count(k)) << k << "\n" << out_;
  EXPECT_EQ(by["gpu_two_pass"]["measured"], "run_to_run");
  EXPECT_EQ(by["gpu_fixed_point"]["measured"], "shape_invariant");
  EXPECT_EQ(by["gpu_exact"]["measured"], "shape_invariant");
  EXPECT_EQ(by["gpu_atomic"]["measured"], "not_deterministic");
  EXPECT_EQ(by["gpu_exact"]["spread_ulps_max"], "0");
  EXPECT_EQ(by["gpu_exact"]["max_abs_ulps"], "0");  // correctly rounded, every shape
  // One thread count: the runs agree, but invariance across shapes is not measured.
  EXPECT_EQ(by["std_accumulate"]["measured"], "run_to_run");
  EXPECT_EQ(by["std_accumulate"]["agreement"], "one_shape");
  EXPECT_EQ(by.count("gpu_cub"), 0u);  // no model: not on this backend
  for (const auto& [k, r] : by) EXPECT_NE(r.at("agreement"), "violated") << k;
  const auto summary = nlohmann::json::parse(std::ifstream(dir_ / "d" / "summary.json"));
  for (const auto& e : summary["expectations"]) EXPECT_TRUE(e["ok"].get<bool>()) << e.dump();
  EXPECT_EQ(summary["exact_vs_mpfr_mismatches"], 0);
}

TEST_F(DeterminismStudy, TwoPassDiffersAcrossShapesFixedPointAndExactNever) {
  ASSERT_EQ(code_, 0) << out_;
  const Csv runs = read_csv(dir_ / "d" / "determinism_runs.csv");
  std::map<std::string, std::set<std::string>> hexes;  // kernel|dtype|dist|n -> distinct bits
  std::map<std::string, std::set<std::string>> shapes;
  for (const auto& r : runs.rows) {
    const std::string key = r.at("kernel") + "|" + r.at("dtype") + "|" + r.at("dist") + "|" + r.at("n");
    hexes[key].insert(r.at("hex"));
    shapes[key].insert(r.at("shape"));
  }
  bool two_pass_differs = false;
  int invariant_inputs = 0;
  for (const auto& [key, h] : hexes) {
    if (key.rfind("gpu_two_pass|", 0) == 0 && h.size() > 1) two_pass_differs = true;
    if (key.rfind("gpu_fixed_point|", 0) == 0 || key.rfind("gpu_exact|", 0) == 0) {
      EXPECT_EQ(h.size(), 1u) << key;
      // Every grid x block pair of the study's shapes really ran (6; these kernels read no other
      // shape field, so shapes that differ only there are one launch).
      EXPECT_GE(shapes[key].size(), 6u) << key;
      ++invariant_inputs;
    }
  }
  EXPECT_TRUE(two_pass_differs);
  EXPECT_EQ(invariant_inputs, 2 * 2 * 2);  // 2 kernels x 2 sizes x 2 dists
  // Sources: the model's values and its sampled atomic orders; peers measured.
  std::set<std::string> sources;
  for (const auto& r : runs.rows) sources.insert(r.at("kind") + ":" + r.at("source"));
  EXPECT_TRUE(sources.count("gpu:model"));
  EXPECT_TRUE(sources.count("gpu:model_sampled"));
  EXPECT_TRUE(sources.count("cpu_peer:measured"));
  for (const auto& r : runs.rows)
    if (r.at("kernel") == "gpu_atomic") {
      EXPECT_EQ(r.at("source"), "model_sampled");
    }
}

TEST_F(DeterminismStudy, CsvColumnsAreTheDocumentedOnes) {
  ASSERT_EQ(code_, 0) << out_;
  for (const char* name : {"determinism_runs.csv", "determinism_inputs.csv", "determinism_classes.csv"}) {
    const Csv c = read_csv(dir_ / "d" / name);
    ASSERT_FALSE(c.rows.empty()) << name;
    const auto doc = documented_columns(name);
    ASSERT_FALSE(doc.empty()) << "no section '### " << name << "' in data/README.md";
    // Every documented name is a column, and every column is documented.
    const std::set<std::string> header(c.header.begin(), c.header.end());
    for (const auto& d : doc) EXPECT_TRUE(header.count(d)) << name << " lacks documented column " << d;
    EXPECT_EQ(expand(doc, c.header), c.header) << name << ": a column is not documented";
  }
  EXPECT_TRUE(fs::exists(dir_ / "d" / "provenance.json"));
}

TEST_F(DeterminismStudy, GoldenRoundTripAndDrift) {
  ASSERT_EQ(code_, 0) << out_;
  ASSERT_TRUE(fs::exists(golden_)) << out_;
  auto g = nlohmann::json::parse(std::ifstream(golden_));
  ASSERT_GT(g["cases"].size(), 100u);
  std::set<std::string> kernels;
  for (const auto& c : g["cases"]) kernels.insert(c["kernel"].get<std::string>());
  EXPECT_TRUE(kernels.count("gpu_two_pass"));
  EXPECT_FALSE(kernels.count("gpu_atomic"));  // not deterministic: nothing golden

  const Result same = run("study determinism --backend model --check-golden " + golden_.string());
  EXPECT_EQ(same.code, 0) << same.out;
  EXPECT_NE(same.out.find(" 0 drifted"), std::string::npos) << same.out;

  // One edited bit pattern is reported, with what changed, and fails the command.
  std::string hex = g["cases"][5]["hex"].get<std::string>();
  hex.back() = hex.back() == '0' ? '1' : '0';
  g["cases"][5]["hex"] = hex;
  const fs::path edited = dir_ / "edited.json";
  std::ofstream(edited) << g.dump(1);
  const Result drift = run("study determinism --backend model --check-golden " + edited.string());
  EXPECT_NE(drift.code, 0) << drift.out;
  EXPECT_NE(drift.out.find("DRIFT " + g["cases"][5]["kernel"].get<std::string>()), std::string::npos) << drift.out;
  EXPECT_NE(drift.out.find("1 of "), std::string::npos) << drift.out;

  std::ofstream(dir_ / "bad.json") << "{\"format\": \"other\"}";
  const Result bad = run("study determinism --backend model --check-golden " + (dir_ / "bad.json").string());
  EXPECT_NE(bad.code, 0);
  EXPECT_NE(bad.out.find("not a sumlab golden file"), std::string::npos) << bad.out;
}

TEST_F(DeterminismStudy, RefusesToOverwriteAndResumesOnlyTheSamePlan) {
  ASSERT_EQ(code_, 0) << out_;
  const std::string args = "study determinism --backend model --quick --sizes 1000,4099 --threads 1,2 --out " +
                           (dir_ / "d").string();
  const Result again = run(args);
  EXPECT_EQ(again.code, 2);
  EXPECT_NE(again.out.find("--resume"), std::string::npos) << again.out;
  const std::size_t rows_before = read_csv(dir_ / "d" / "determinism_runs.csv").rows.size();
  const Result resumed = run(args + " --resume");
  EXPECT_EQ(resumed.code, 0) << resumed.out;
  EXPECT_NE(resumed.out.find("4 cells (4 from an earlier run)"), std::string::npos) << resumed.out;
  EXPECT_EQ(read_csv(dir_ / "d" / "determinism_runs.csv").rows.size(), rows_before);
  // Another plan into the same folder would mix two studies: refused, naming what differs.
  const Result other = run(args + " --resume --runs 6");
  EXPECT_EQ(other.code, 2) << other.out;
  EXPECT_NE(other.out.find("runs: 5 -> 6"), std::string::npos) << other.out;
  // Summarize only: nothing runs, the classes are rewritten from what the folder holds.
  const Result summary = run(args + " --resume --summarize-only");
  EXPECT_EQ(summary.code, 0) << summary.out;
  EXPECT_NE(summary.out.find("determinism: 0 cells in"), std::string::npos) << summary.out;
  // 16 modelled GPU kernels (the library peers have no model) and 4 CPU peers.
  EXPECT_EQ(read_csv(dir_ / "d" / "determinism_classes.csv").rows.size(), 20u);
  // Every invocation is in the provenance.
  const auto prov = nlohmann::json::parse(std::ifstream(dir_ / "d" / "provenance.json"));
  EXPECT_EQ(prov["invocations"].size(), 3u);
}

// On the model backend a deterministic kernel's order is evaluated once per shape: one evaluation
// is written as one run (not R), its class is called modelled, and the headline counts what the
// run shows instead of calling every declaration held.
TEST_F(DeterminismStudy, ModelEvaluationsAreCountedAsOneRunAndCalledModelled) {
  ASSERT_EQ(code_, 0) << out_;
  int model_rows = 0;
  for (const auto& r : read_csv(dir_ / "d" / "determinism_inputs.csv").rows) {
    if (r.at("source") == "model") {
      EXPECT_EQ(r.at("runs_per_shape"), "1") << r.at("kernel");
      EXPECT_EQ(r.at("runs"), r.at("shapes")) << r.at("kernel");
      ++model_rows;
    } else if (r.at("source") == "model_sampled") {
      EXPECT_EQ(r.at("runs_per_shape"), "5") << r.at("kernel");  // --quick: 5 sampled orders a shape
    } else {
      EXPECT_EQ(r.at("runs_per_shape"), "5") << r.at("kernel");  // the CPU peers ran R = 5 times
    }
  }
  EXPECT_GT(model_rows, 0);
  std::map<std::string, std::map<std::string, std::string>> by;
  for (const auto& r : read_csv(dir_ / "d" / "determinism_classes.csv").rows) by[r.at("kernel")] = r;
  EXPECT_EQ(by["gpu_two_pass"]["runs_per_shape_min"], "1");
  EXPECT_EQ(by["std_accumulate"]["runs_per_shape_min"], "5");
  EXPECT_NE(by["gpu_two_pass"]["note"].find("modelled"), std::string::npos) << by["gpu_two_pass"]["note"];
  // Only a one-thread kernel has its order by construction.
  EXPECT_NE(by["gpu_serial"]["note"].find("one fixed order"), std::string::npos) << by["gpu_serial"]["note"];
  EXPECT_EQ(out_.find("every declared class holds"), std::string::npos) << out_;
  EXPECT_NE(out_.find("declared classes: "), std::string::npos) << out_;
  EXPECT_NE(out_.find("one_shape (one shape run: invariance not measured)"), std::string::npos) << out_;
  EXPECT_NE(out_.find("modelled, not measured"), std::string::npos) << out_;
}

// An input holding a NaN: every sum is NaN, so there are no ulp figures. The classes say nan (not 0
// ulps) and keep the NaN patterns.
TEST(DeterminismStudyInput, NanResultsAreNotZeroUlps) {
  const auto d = temp_dir("nan");
  {
    std::ofstream in(d / "x.csv");
    for (int i = 0; i < 1000; ++i) in << (i == 5 ? std::string("nan") : std::to_string(0.001 * (i % 97))) << "\n";
  }
  const Result r = run("study determinism --backend model --kernels std_accumulate,omp_reduction --runs 3 --threads 1,2 "
                       "--input " + (d / "x.csv").string() + " --out " + (d / "out").string());
  ASSERT_EQ(r.code, 0) << r.out;
  const Csv classes = read_csv(d / "out" / "determinism_classes.csv");
  ASSERT_EQ(classes.rows.size(), 2u);
  for (const auto& row : classes.rows) {
    EXPECT_EQ(row.at("spread_ulps_max"), "nan") << row.at("kernel");
    EXPECT_EQ(row.at("max_abs_ulps"), "nan") << row.at("kernel");
    EXPECT_EQ(row.at("nan_patterns_max"), "1") << row.at("kernel");
  }
  for (const auto& row : read_csv(d / "out" / "determinism_inputs.csv").rows) {
    EXPECT_EQ(row.at("spread_ulps"), "nan");
    EXPECT_EQ(row.at("max_rel_error"), "nan") << "no pattern has a relative error";
  }
  fs::remove_all(d);
}

TEST(DeterminismStudyInput, BadShapeListsAndRunCountsFailCleanly) {
  const auto d = temp_dir("bad");
  const std::pair<const char*, const char*> cases[] = {
      {"--blocks 33", "--blocks"},       {"--blocks 2048", "--blocks"},  {"--grids 0", "--grids"},
      {"--grids x", "--grids"},          {"--grids 2SMx", "--grids"},    {"--vectors 3", "--vectors"},
      {"--mappings diagonal", "--mappings"}, {"--runs 0", "--runs"},     {"--runs 1", "--runs"},
      {"--runs abc", "--runs"},          {"--sizes 2^x", "--sizes"},     {"--kernels gpu_nope", "--kernels"},
      {"--threads 0", "--threads"},      {"--dists nope", "--dists"},    {"--dtypes float16", "--dtypes"},
  };
  for (const auto& [arg, word] : cases) {
    const fs::path out = d / "never";
    const Result r = run(std::string("study determinism --backend model --quick --out ") + out.string() + " " + arg);
    EXPECT_EQ(r.code, 2) << arg << "\n" << r.out;
    EXPECT_NE(r.out.find(word), std::string::npos) << arg << "\n" << r.out;
    EXPECT_EQ(std::count(r.out.begin(), r.out.end(), '\n'), 1) << arg << ": one line\n" << r.out;
    EXPECT_FALSE(fs::exists(out)) << arg << ": nothing is created for a bad command";
  }
  const Result both = run("study determinism --backend model --check-golden a.json --save-golden b.json");
  EXPECT_NE(both.code, 0);
}

}  // namespace
