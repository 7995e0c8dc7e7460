// What error-vs-n says about its bounds and growth fits: summary.json's fits rest on the median
// over seeds at each n, at 3 distinct n at least, and say what they rest on or why there is none;
// the report's top line is a ✓ only when every row is within its bound, and otherwise counts the
// rows by cause; the report shows each fit's basis and n, the reason for a missing fit, and places
// an algorithm in a growth group only when its confidence intervals lie inside the group.
// Rendering needs a Python with matplotlib; without one those tests skip (CI installs it).
#include "tests/studies/run_sumlab.hpp"

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>

namespace {

namespace fs = std::filesystem;

using sumlab::test::Result;
using sumlab::test::run;
using sumlab::test::slurp;

const char* kHeader =
    "study,backend,dtype,dist,n,seed,algorithm,value,hex,reference,reference_hex,abs_error,rel_error,ulps,"
    "correct_bits,bound,within_bound,sum_abs,condition,verdict,note\n";

// One error_vs_n.csv row: subject kind and name, n, seed, relative error, bound and verdict.
std::string row(const std::string& kind, const std::string& alg, int n, int seed, const std::string& rel,
                const std::string& bound, const std::string& verdict) {
  const std::string within = verdict == "within" ? "1" : verdict == "exceeds" ? "0" : "";
  return "error-vs-n," + kind + ",float32,uniform," + std::to_string(n) + "," + std::to_string(seed) + "," + alg +
         ",1,0x3f800000,1,0x3f800000," + rel + "," + rel + ",0,24," + bound + "," + within + ",1,1," + verdict +
         (verdict == "failed" ? ",RuntimeError: not implemented\n" : ",\n");
}

// The test's folders, removed when it ends (the pid keeps parallel test processes apart).
struct Scratch {
  fs::path base = sumlab::test::fresh_dir("growth_report_" + std::to_string(getpid()));
  ~Scratch() {
    std::error_code ec;
    fs::remove_all(base, ec);
  }
};

// A run folder of error-vs-n holding `csv_rows` and a summary.json with `fits` (none when null).
fs::path make_run(const Scratch& scratch, const std::string& name, const std::string& csv_rows,
                  const nlohmann::json& fits, const nlohmann::json& no_bound_claimed = nullptr) {
  const fs::path d = scratch.base / name / "run";
  fs::create_directories(d);
  std::ofstream(d / "provenance.json") << R"({"study": "error-vs-n", "backend": "cpu"})";
  std::ofstream(d / "error_vs_n.csv") << kHeader << csv_rows;
  nlohmann::json summary = {{"study", "error-vs-n"}, {"csv", "error_vs_n.csv"}};
  if (!fits.is_null()) summary["growth_fits"] = fits;
  if (!no_bound_claimed.is_null()) summary["no_bound_claimed"] = no_bound_claimed;
  std::ofstream(d / "summary.json") << summary.dump(2);
  return d;
}

std::string render(const fs::path& d, Result& r) {
  r = run("report " + d.string() + " --out " + (d.parent_path() / "out").string());
  return r.code == 0 ? slurp(d.parent_path() / "out" / "report.md") : std::string();
}

// The report's line for `needle`'s paragraph (the Markdown holds one paragraph a line).
std::string line_with(const std::string& md, const std::string& needle) {
  const std::size_t at = md.find(needle);
  if (at == std::string::npos) return "";
  const std::size_t begin = md.rfind('\n', at) + 1, end = md.find('\n', at);
  return md.substr(begin, end - begin);
}

TEST(GrowthReport, BoundCheckIsATickOnlyWhenEveryRowIsWithin) {
  const Scratch scratch;
  std::string rows;
  rows += row("cpu", "pairwise", 256, 1, "1e-8", "1e-6", "within");
  rows += row("cpu", "pairwise", 512, 1, "2e-8", "1e-6", "within");
  rows += row("cpu", "serial_bf16", 512, 1, "1e-3", "inf", "no_bound");
  rows += row("external", "mine", 512, 1, "1e-7", "inf", "no_bound");
  rows += row("external", "broken", 512, 1, "nan", "inf", "failed");
  Result r;
  const std::string md = render(make_run(scratch, "mixed", rows, nullptr, nlohmann::json::array()), r);
  SKIP_WITHOUT_MATPLOTLIB(r);
  ASSERT_EQ(r.code, 0) << r.out;
  const std::string top = line_with(md, "Bound check:");
  EXPECT_EQ(top.find("all 5"), std::string::npos) << top;
  EXPECT_EQ(top.find("✓"), std::string::npos) << top;
  for (const char* part : {"2 within their bound", "1 with no bound at their n (the theorem's condition fails there)",
                           "1 with no bound claimed (", "1 failed calls"})
    EXPECT_NE(top.find(part), std::string::npos) << part << " in: " << top;
  const std::string section = line_with(md, "rows of `error_vs_n.csv`");
  EXPECT_NE(section.find("2 of 5 rows"), std::string::npos) << section;
  EXPECT_NE(section.find("1 failed calls"), std::string::npos) << section;
  EXPECT_NE(section.find("1 with no bound claimed"), std::string::npos) << section;
  EXPECT_EQ(section.find("✓"), std::string::npos) << section;

  // A subject whose every call failed is within nothing.
  rows = row("external", "broken", 256, 1, "nan", "inf", "failed") + row("external", "broken", 512, 1, "nan", "inf", "failed");
  const std::string failed = render(make_run(scratch, "failed", rows, nullptr), r);
  ASSERT_EQ(r.code, 0) << r.out;
  const std::string failed_top = line_with(failed, "Bound check:");
  EXPECT_EQ(failed_top.find("all 2"), std::string::npos) << failed_top;
  EXPECT_NE(failed_top.find("2 failed calls"), std::string::npos) << failed_top;

  // Every row within: the tick.
  rows = row("cpu", "pairwise", 256, 1, "1e-8", "1e-6", "within") + row("cpu", "pairwise", 512, 1, "1e-8", "1e-6", "within");
  const std::string ok = render(make_run(scratch, "ok", rows, nullptr), r);
  ASSERT_EQ(r.code, 0) << r.out;
  EXPECT_NE(ok.find("> ✓ Bound check: all 2 measurements lie within"), std::string::npos) << ok;
}

// A row with no bound has two causes, a theorem whose condition fails at its n or no theorem at
// all, and the report names the cause where the study said which subjects claim none, or where the
// subject has a bound on another row. A
// result farther from the exact sum than sum|x| is shown at the top, bound or not.
TEST(GrowthReport, NoBoundRowsSayTheirCauseAndResultsFartherThanSumAbsAreShownAtTheTop) {
  const Scratch scratch;
  std::string rows;
  rows += row("cpu", "pairwise", 512, 1, "1e-8", "1e-6", "within");
  rows += row("cuda", "gpu_cub", 512, 1, "1e-7", "inf", "no_bound");
  rows += row("cuda", "gpu_cub_gpu_to_gpu", 512, 1, "3e28", "inf", "no_bound");  // abs_error 3e28 > sum|x| = 1
  rows += row("cuda", "gpu_cub_gpu_to_gpu", 256, 1, "0.5", "inf", "no_bound");
  Result r;
  const std::string listed = render(make_run(scratch, "listed", rows, nullptr, {"gpu_cub_gpu_to_gpu"}), r);
  SKIP_WITHOUT_MATPLOTLIB(r);
  ASSERT_EQ(r.code, 0) << r.out;
  const std::string top = line_with(listed, "Bound check:");
  for (const char* part : {"1 within their bound", "1 with no bound at their n (the theorem's condition fails there)",
                           "2 with no bound claimed (a library peer"})
    EXPECT_NE(top.find(part), std::string::npos) << part << " in: " << top;
  const std::string alarm = line_with(listed, "farther from the exact sum than sum|x|");
  EXPECT_NE(alarm.find("⚠"), std::string::npos) << alarm;
  EXPECT_NE(alarm.find(": 1 measurement(s)"), std::string::npos) << alarm;
  // The seed too: with several seeds the worst rows are often one cell's, told apart only by it.
  EXPECT_NE(alarm.find("gpu_cub_gpu_to_gpu (dtype float32, dist uniform, n 512, seed 1) relative error 3e+28"),
            std::string::npos) << alarm;
  EXPECT_LT(listed.find(alarm), listed.find(top)) << "the alarm comes first";

  // A run made before the studies listed them: either cause, not a guess.
  const std::string old = render(make_run(scratch, "old", rows, nullptr), r);
  ASSERT_EQ(r.code, 0) << r.out;
  const std::string old_top = line_with(old, "Bound check:");
  EXPECT_NE(old_top.find("3 with no bound (a theorem's condition fails, or none is claimed"), std::string::npos)
      << old_top;
  EXPECT_EQ(old_top.find("condition fails there"), std::string::npos) << old_top;
  // ... except for a subject with a finite bound on another row: it has a theorem, whose condition
  // failed at this row's n.
  const std::string deduced =
      render(make_run(scratch, "old_bounded", rows + row("cuda", "gpu_cub", 256, 1, "1e-8", "1e-6", "within"), nullptr), r);
  ASSERT_EQ(r.code, 0) << r.out;
  const std::string deduced_top = line_with(deduced, "Bound check:");
  for (const char* part : {"2 within their bound", "1 with no bound at their n (the theorem's condition fails there)",
                           "2 with no bound (a theorem's condition fails, or none is claimed"})
    EXPECT_NE(deduced_top.find(part), std::string::npos) << part << " in: " << deduced_top;

  // Nothing farther than sum|x|: no alarm.
  rows = row("cuda", "gpu_cub_gpu_to_gpu", 512, 1, "0.9", "inf", "no_bound") +
         row("cpu", "pairwise", 512, 1, "1e-8", "1e-6", "within");
  const std::string calm = render(make_run(scratch, "calm", rows, nullptr, {"gpu_cub_gpu_to_gpu"}), r);
  ASSERT_EQ(r.code, 0) << r.out;
  EXPECT_EQ(calm.find("farther from the exact sum"), std::string::npos) << calm;
}

TEST(GrowthReport, TheStudyListsTheKernelsThatClaimNoBound) {
  const Scratch scratch;
  const fs::path d = scratch.base / "claimed";
  const Result r = run("study error-vs-n --backend model --quick --log2-max 10 --seeds 1 --dists uniform --dtypes float32 "
                       "--algorithms none --gpu-kernels gpu_two_pass,gpu_cub,gpu_cub_gpu_to_gpu --out " + d.string());
  ASSERT_EQ(r.code, 0) << r.out;
  const auto summary = nlohmann::json::parse(std::ifstream(d / "summary.json"));
  EXPECT_EQ(summary.at("no_bound_claimed"), nlohmann::json::array({"gpu_cub_gpu_to_gpu"})) << summary.dump();
}

nlohmann::json fit(const std::string& alg, const std::string& dist, nlohmann::json exponent, nlohmann::json ci,
                   nlohmann::json none_because, int distinct_n, nlohmann::json n_min, nlohmann::json n_max) {
  return {{"dtype", "float32"}, {"dist", dist}, {"algorithm", alg},
          {"basis", "median over seeds of rel_error at each n (finite errors, zeros included, n whose median is 0 "
                    "left out)"},
          {"rows", 8}, {"failed_rows", 0}, {"nonfinite_rows", 0}, {"zero_rows", 0}, {"sizes", 4},
          {"distinct_n", distinct_n}, {"n_min", n_min}, {"n_max", n_max}, {"none_because", none_because},
          {"points", distinct_n}, {"exponent", exponent}, {"ci95", ci},
          {"r_squared", exponent.is_null() ? nlohmann::json() : nlohmann::json(0.9)}};
}

TEST(GrowthReport, FitsSayTheirBasisTheirNAndWhyThereIsNone) {
  const Scratch scratch;
  std::string rows;
  for (const char* alg : {"serial", "pairwise", "exact", "kahan"})
    for (int n : {256, 1024, 4096, 16384})
      rows += row("cpu", alg, n, 1, "1e-7", "1e-6", "within");
  for (int n : {256, 1024, 4096, 16384}) rows += row("external", "broken", n, 1, "nan", "inf", "failed");
  const nlohmann::json fits = {
      fit("serial", "uniform", 0.7, {0.6, 0.9}, nullptr, 4, 256, 16384),     // CI inside "n^0.5 or faster"
      fit("pairwise", "uniform", 0.4, {0.2, 0.7}, nullptr, 4, 256, 16384),   // CI across two groups
      fit("exact", "uniform", nullptr, nullptr, "correctly_rounded", 4, 256, 16384),
      fit("kahan", "uniform", nullptr, nullptr, "fewer_than_3_n", 1, 4096, 4096),
      fit("broken", "uniform", nullptr, nullptr, "failed", 0, nullptr, nullptr)};
  Result r;
  const std::string md = render(make_run(scratch, "fits", rows, fits), r);
  SKIP_WITHOUT_MATPLOTLIB(r);
  ASSERT_EQ(r.code, 0) << r.out;
  EXPECT_EQ(md.find("exact at every n"), std::string::npos) << "no series here is exact at every n:\n" << md;
  EXPECT_NE(md.find("| serial | 0.70 [0.60, 0.90] R²=0.90; 4 n in 2^8–2^14 |"), std::string::npos) << md;
  EXPECT_NE(md.find("| exact | — correctly rounded |"), std::string::npos) << md;
  EXPECT_NE(md.find("| kahan | — fewer than 3 n (only n = 2^12) |"), std::string::npos) << md;
  EXPECT_NE(md.find("| broken | — every call failed |"), std::string::npos) << md;
  const std::string caption = line_with(md, "float32: exponent b");
  EXPECT_NE(caption.find("basis: median over seeds of rel_error at each n"), std::string::npos) << caption;
  const std::string summary = line_with(md, "Measured in this run");
  EXPECT_NE(summary.find("grew like n^0.5 or faster: serial 0.70"), std::string::npos) << summary;
  EXPECT_NE(summary.find("95% CI too wide to tell which group: pairwise (b 0.40)"), std::string::npos) << summary;
  EXPECT_EQ(summary.find("grew more slowly"), std::string::npos) << "pairwise's CI is not inside a group: " << summary;
  EXPECT_NE(summary.find("no fit: exact (correctly rounded), kahan (fewer than 3 n), broken (every call failed)"),
            std::string::npos) << summary;
}

TEST(GrowthReport, FitsOfOlderRunsSayTheyPooledTheSeeds) {
  const Scratch scratch;
  // summary.json from before the per-n median: no basis, no counts; the report takes them from the
  // CSV and applies the rule of 3 distinct n (two n fit any two clusters of points exactly).
  std::string rows;
  for (int seed : {1, 2})
    for (int n : {256, 1024, 4096}) {
      rows += row("cpu", "serial", n, seed, n == 256 ? "0" : n == 1024 ? "1e-6" : "4e-6", "1", "within");
      rows += row("cpu", "pairwise", n, seed, n == 4096 ? "0" : "3e-8", "1", "within");
    }
  const nlohmann::json fits = {
      {{"dtype", "float32"}, {"dist", "uniform"}, {"algorithm", "serial"}, {"points", 4}, {"exponent", 1.0},
       {"ci95", {0.9, 1.1}}, {"r_squared", 0.99}},
      {{"dtype", "float32"}, {"dist", "uniform"}, {"algorithm", "pairwise"}, {"points", 4}, {"exponent", 0.0},
       {"ci95", {0.0, 0.0}}, {"r_squared", 1.0}}};
  Result r;
  const std::string md = render(make_run(scratch, "old", rows, fits), r);
  SKIP_WITHOUT_MATPLOTLIB(r);
  ASSERT_EQ(r.code, 0) << r.out;
  EXPECT_NE(line_with(md, "float32: exponent b").find("basis: all seeds' rows pooled"), std::string::npos) << md;
  EXPECT_NE(md.find("| serial | — fewer than 3 n (2 n in 2^10–2^12, 2 of 6 rows exact) |"), std::string::npos) << md;
  EXPECT_NE(md.find("| pairwise | — fewer than 3 n (2 n in 2^8–2^10, 2 of 6 rows exact) |"), std::string::npos) << md;
}

TEST(GrowthReport, StudyFitsTheMedianAtThreeDistinctNAtLeast) {
  const Scratch scratch;
  const fs::path d = scratch.base / "study";
  const Result r = run("study error-vs-n --backend cpu --quick --log2-max 12 --seeds 2 --dists constant,uniform "
                       "--dtypes float32 --out " + d.string());
  ASSERT_EQ(r.code, 0) << r.out;
  const auto summary = nlohmann::json::parse(std::ifstream(d / "summary.json"));
  int fitted = 0, exact = 0, fewer = 0;
  for (const auto& f : summary.at("growth_fits")) {
    const std::string what = f.dump();
    for (const char* key : {"basis", "rows", "failed_rows", "nonfinite_rows", "zero_rows", "sizes", "distinct_n",
                            "n_min", "n_max", "none_because"})
      EXPECT_TRUE(f.contains(key)) << key << " missing in " << what;
    EXPECT_NE(f.at("basis").get<std::string>().find("median over seeds"), std::string::npos) << what;
    if (f.at("algorithm") == "exact") {
      ++exact;
      EXPECT_EQ(f.at("none_because"), "correctly_rounded") << what;
      EXPECT_TRUE(f.at("exponent").is_null()) << what;
      continue;
    }
    if (f.at("exponent").is_null()) {
      const std::string why = f.at("none_because").get<std::string>();
      EXPECT_TRUE(why == "fewer_than_3_n" || why == "all_zero") << what;
      fewer += why == "fewer_than_3_n";
      if (why == "fewer_than_3_n") {
        EXPECT_LT(f.at("distinct_n").get<int>(), 3) << what;
      }
      continue;
    }
    ++fitted;
    EXPECT_TRUE(f.at("none_because").is_null()) << what;
    EXPECT_GE(f.at("distinct_n").get<int>(), 3) << what;
    EXPECT_EQ(f.at("points"), f.at("distinct_n")) << "one point per n: " << what;
    EXPECT_LE(f.at("n_min").get<double>(), f.at("n_max").get<double>()) << what;
    EXPECT_GT(f.at("ci95")[1].get<double>() - f.at("ci95")[0].get<double>(), 0) << what;
  }
  EXPECT_EQ(exact, 2);   // one per distribution
  EXPECT_GE(fitted, 8);  // every tree and chain on uniform input
  EXPECT_GE(fewer, 1);   // the constant input: exact at most n (18 of 22 rows in the audit)
}

}  // namespace
