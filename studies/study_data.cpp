#include "studies/study_data.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <tuple>

#include "studies/commands.hpp"

namespace sumlab {

nlohmann::ordered_json StudyData::plan() const {
  nlohmann::ordered_json j = {{"source", source}, {"dtype", dtype()}, {"n", size()}, {"fnv1a64", hash}};
  if (!input->origin().empty()) j["widened_from"] = input->origin();
  return j;
}

std::vector<std::string> StudyData::dtypes(const std::vector<std::string>& asked) const {
  const std::string own = dtype();
  const auto names_own = [&](const std::string& d) {  // (a dtype no file holds, as bfloat16, is another)
    try {
      return parse_dtype(d) == parse_dtype(own);
    } catch (const UserError&) {
      return false;
    }
  };
  for (const auto& d : asked)
    if (!names_own(d))
      throw UserError(fmt::format("--input '{}' holds {} but --dtypes {} was given (a study of the user's data "
                                  "runs in the data's own type; leave --dtypes out)",
                                  source, own, fmt::join(asked, ",")));
  return {own};
}

std::vector<std::string> StudyData::row_dtypes(const std::vector<std::string>& asked) const {
  const std::string& origin = input->origin();
  if (asked.empty()) {
    if (origin == "float16")
      throw UserError(fmt::format("--input '{}' holds float16 values and the row kernels take float32, bfloat16 or "
                                  "float64: --dtypes float32 studies the float32 kernels on them (widened exactly)",
                                  source));
    return {origin.empty() ? dtype() : origin};
  }
  for (const auto& d : asked) {
    const bool ok = d == dtype() || (input->is_float32() && (d == "float32" || d == "bfloat16"));
    if (!ok)
      throw UserError(fmt::format("--input '{}' holds {} but --dtypes {} was given (the row kernels run on the data in "
                                  "its own type{})",
                                  source, origin.empty() ? dtype() : origin, fmt::join(asked, ","),
                                  input->is_float32() ? ", float32 or, where its values are bfloat16 values, bfloat16" : ""));
  }
  return asked;
}

void StudyData::check_unchanged() const { input->check_unchanged(fingerprint, source); }

std::optional<StudyData> open_study_data(const std::string& input, const std::string& format, const std::string& flatten,
                                         std::size_t min_values) {
  if (input.empty()) return std::nullopt;
  ReadOptions r;
  r.format = format;
  r.flatten = parse_flatten(flatten);
  StudyData d;
  d.input = std::make_shared<const InputData>(input, r);
  d.source = input.rfind("mem:", 0) == 0 ? "an array from Python" : input;
  if (d.size() < min_values)
    throw UserError(fmt::format("--input '{}' holds {} values: this study needs at least {}", d.source, d.size(), min_values));
  std::tie(d.hash, d.fingerprint) = d.input->identity();
  return d;
}

}  // namespace sumlab
