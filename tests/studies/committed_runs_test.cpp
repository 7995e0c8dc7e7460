// Every committed accuracy run under data/ is re-judged against today's bounds (the registry's,
// core/error_bound.hpp), not against the bound column it was written with: a committed figure that
// a corrected bound no longer covers must fail here, not hide in a CSV.
#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <regex>
#include <string>

#include <nlohmann/json.hpp>

#include "core/cpu_algorithms.hpp"
#include "core/fixed_point_sum.hpp"
#include "core/generators.hpp"
#include "core/gpu_kernel.hpp"
#include "studies/run_folder.hpp"

namespace sumlab {
namespace {

namespace fs = std::filesystem;

// The SM count of the run's GPU (its default shapes depend on it): "(132 SMs" in provenance.json,
// or 132, the model backend's stand-in.
int sm_count(const fs::path& run) {
  std::ifstream in(run / "provenance.json");
  const auto p = nlohmann::json::parse(in, nullptr, false);
  std::smatch m;
  const std::string device = p.is_object() && p.contains("device") ? p["device"].get<std::string>() : "";
  return std::regex_search(device, m, std::regex(R"(\((\d+) SMs)")) ? std::stoi(m[1]) : 132;
}

template <class T> double quantisation(const CsvTable& t, const std::vector<std::string>& r) {
  auto at = [&](const char* c) { return r[static_cast<std::size_t>(t.column(c))]; };
  DistributionSpec spec;
  if (t.column("dist") >= 0) {
    spec.kind = parse_distribution(at("dist"));
  } else {
    spec.kind = Distribution::ill_conditioned;
    spec.condition = std::stod(at("requested_condition"));
  }
  const auto x = generate<T>(spec, std::stoull(at("seed")), std::stoull(at("n")));
  return fixed_point_sum<T>(x).extra_error_bound;
}

// Rows outside today's bound (with a message each).
std::vector<std::string> judge_run(const fs::path& csv) {
  const CsvTable t = read_csv(csv);
  std::vector<std::string> bad;
  const int sms = sm_count(csv.parent_path());
  for (const auto& r : t.rows) {
    auto at = [&](const char* c) { return r[static_cast<std::size_t>(t.column(c))]; };
    const double err = std::stod(at("abs_error")), sum_abs = std::stod(at("sum_abs")),
                 cond = std::stod(at("condition"));
    if (std::isnan(err)) continue;  // special input or result: no bound claimed
    const double abs_sum = std::isfinite(cond) && cond > 0 ? sum_abs / cond : 0.0;
    const std::string name = at("algorithm");
    const bool is_float = at("dtype") == "float32";
    // A subject the user brought (external) claims no bound: nothing to re-judge. It must say so.
    if (!find_gpu_kernel(name) && !find_cpu_algorithm<float>(name)) {
      if (t.column("verdict") >= 0) {
        EXPECT_TRUE(at("verdict") == "no_bound" || at("verdict") == "failed") << name;
      }
      continue;
    }
    BoundInput in{std::stoull(at("n")), sum_abs, abs_sum, 0.0};
    auto bound = [&]() {
      const FloatFormat f = is_float ? format_of<float>() : format_of<double>();
      if (auto k = find_gpu_kernel(name)) return kernel_bound(*k, f, default_shape(*k, sms), in);
      return is_float ? find_cpu_algorithm<float>(name)->bound(in) : find_cpu_algorithm<double>(name)->bound(in);
    };
    double b = bound();
    if (!(err <= b) && (name == "fixed_point" || name == "gpu_fixed_point")) {
      // The a-posteriori quantisation term: regenerate the input (a pure function of seed and index).
      in.quantisation = is_float ? quantisation<float>(t, r) : quantisation<double>(t, r);
      b = bound();
    }
    if (!(err <= b))
      bad.push_back(csv.string() + ": " + name + " " + at("dtype") + " n=" + at("n") + " error " + at("abs_error") +
                    " > bound " + std::to_string(b));
  }
  return bad;
}

TEST(CommittedRuns, EveryAccuracyRowIsWithinTodaysBound) {
  int runs = 0;
  for (const auto& e : fs::recursive_directory_iterator(fs::path(SUMLAB_SOURCE_DIR) / "data")) {
    const auto name = e.path().filename().string();
    if (name != "error_vs_n.csv" && name != "error_vs_cond.csv") continue;
    ++runs;
    for (const auto& b : judge_run(e.path())) ADD_FAILURE() << b;
  }
  EXPECT_GT(runs, 0) << "no accuracy run under data/: nothing was checked";
}

// The committed reports show their figures from figures/ (scripts/render-committed.sh renders them
// with --linked-figures): a self-contained page holds a second copy of every figure, and the
// committed reports' bytes count against the 64 MiB a device call may carry.
TEST(CommittedRuns, EveryCommittedReportLinksItsFigures) {
  int pages = 0;
  for (const auto& e : fs::recursive_directory_iterator(fs::path(SUMLAB_SOURCE_DIR) / "reports")) {
    if (e.path().filename() != "report.html") continue;
    ++pages;
    std::ifstream in(e.path());
    const std::string page((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    EXPECT_EQ(page.find("<svg"), std::string::npos)
        << e.path() << " holds its figures: render it with scripts/render-committed.sh";
  }
  EXPECT_GT(pages, 0) << "no committed report under reports/: nothing was checked";
}

}  // namespace
}  // namespace sumlab
