#include "studies/verify_table.hpp"

#include <fmt/format.h>

#include <algorithm>

#include "studies/backend.hpp"
#include "studies/row_backend.hpp"

namespace sumlab {

std::vector<std::string> verify_case_cells(std::vector<std::string> keys, const VerifyOutcome& o, bool gpu) {
  keys.insert(keys.end(), {!o.compared ? "none" : gpu ? "gpu" : "model_first_shape",
                           o.compared ? std::to_string(o.mismatches) : "", o.error ? "1" : "0", o.detail});
  return keys;
}

std::vector<std::string> verify_case_columns(std::vector<std::string> keys) {
  keys.insert(keys.end(), {"compared_with", "mismatches", "error", "detail"});
  return keys;
}

std::pair<bool, std::string> verify_device(bool model_only) {
  std::string why;
  if (!model_only && cuda_backend_available(&why)) return {true, row_backend_description(BackendKind::cuda)};
  return {false, model_only ? std::string("no GPU ran: model only") : "no GPU: model only (" + why + ")"};
}

std::string verify_table(const std::string& title, bool gpu, const std::string& device,
                         const std::vector<std::string>& key_columns, const std::vector<VerifyTableRow>& rows,
                         double seconds) {
  auto keys = [&](const std::vector<std::string>& k) {
    std::string s;
    for (std::size_t i = 0; i < key_columns.size(); ++i)
    {
      const int width = i == 0 ? 20 : (i + 1 == key_columns.size() ? 9 : 10);
      s += fmt::format("{:<{}} ", i < k.size() ? k[i] : std::string(), width);
    }
    return s;
  };
  std::string s = gpu ? fmt::format("{}: GPU bits vs model bits ({})\n", title, device)
                      : fmt::format("{}: {}\n", title, device);
  // Without a GPU the only comparison is the model against itself across launch shapes, for the
  // shape_invariant kernels; the others compare nothing, and print '-'.
  const std::string count_column = gpu ? "mismatches" : "shape-invariance breaks";
  const int width = std::max(11, static_cast<int>(count_column.size()));
  auto count = [](long compared, long n) { return compared == 0 ? std::string("-") : std::to_string(n); };
  s += keys(key_columns) + fmt::format("{:>7} {:>{}} {:>7}\n", "cases", count_column, width, "errors");
  long cases = 0, mismatches = 0, errors = 0, compared = 0;
  for (const auto& r : rows) {
    const VerifyCounts& c = r.counts;
    s += keys(r.key) + fmt::format("{:>7} {:>{}} {:>7}\n", c.cases, count(c.compared, c.mismatches), width, c.errors);
    cases += c.cases;
    mismatches += c.mismatches;
    errors += c.errors;
    compared += c.compared;
  }
  s += keys({"total"}) + fmt::format("{:>7} {:>{}} {:>7}   ({:.1f} s)\n", cases, count(compared, mismatches), width,
                                     errors, seconds);
  if (!gpu)
    s += "(shape-invariance breaks: cases whose model bits differ from the first launch shape's, shape_invariant "
         "kernels only; '-': nothing compared, the others are compared only with a GPU)\n";
  for (const auto& r : rows) {
    if (r.counts.first_failure.empty()) continue;
    std::string k;
    for (const auto& f : r.key) k += (k.empty() ? "" : " ") + f;
    s += fmt::format("  first failure, {}: {}\n", k, r.counts.first_failure);
  }
  return s;
}

}  // namespace sumlab
