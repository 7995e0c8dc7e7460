#include "studies/verify_table.hpp"

#include <fmt/format.h>

namespace sumlab {

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
  std::string s = fmt::format("{}: {} ({})\n", title, gpu ? "GPU bits vs model bits" : "model only", device);
  s += keys(key_columns) + fmt::format("{:>7} {:>11} {:>7}\n", "cases", "mismatches", "errors");
  long cases = 0, mismatches = 0, errors = 0;
  for (const auto& r : rows) {
    s += keys(r.key) + fmt::format("{:>7} {:>11} {:>7}\n", r.cases, r.mismatches, r.errors);
    cases += r.cases;
    mismatches += r.mismatches;
    errors += r.errors;
  }
  s += keys({"total"}) + fmt::format("{:>7} {:>11} {:>7}   ({:.1f} s)\n", cases, mismatches, errors, seconds);
  for (const auto& r : rows) {
    if (r.first_failure.empty()) continue;
    std::string k;
    for (const auto& f : r.key) k += (k.empty() ? "" : " ") + f;
    s += fmt::format("  first failure, {}: {}\n", k, r.first_failure);
  }
  return s;
}

}  // namespace sumlab
