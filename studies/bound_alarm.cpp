#include "studies/bound_alarm.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <optional>
#include <stdexcept>

#include "studies/commands.hpp"
#include "studies/input_error.hpp"
#include "studies/run_folder.hpp"

namespace sumlab {
namespace {

constexpr Verdict all_verdicts[] = {Verdict::within,         Verdict::exceeds,
                                    Verdict::no_bound,       Verdict::special_input,
                                    Verdict::exact_overflow, Verdict::intermediate_overflow,
                                    Verdict::failed};

std::optional<Verdict> parse_verdict(const std::string& s) {
  for (Verdict v : all_verdicts)
    if (to_string(v) == s) return v;
  return std::nullopt;
}

std::string verdict_names() {
  std::string out;
  for (Verdict v : all_verdicts) out += (out.empty() ? "" : ", ") + std::string(to_string(v));
  return out;
}

double to_double(const std::string& s) {
  try {
    return std::stod(s);
  } catch (const std::exception&) {
    return std::nan("");
  }
}

}  // namespace

void BoundAlarm::add(const std::string& what, Verdict v, double abs_error, double bound) {
  ++counts_[v];
  ++total_;
  if (v != Verdict::exceeds) return;
  worst_.push_back({what, abs_error, bound});
  std::stable_sort(worst_.begin(), worst_.end(), [](const Offender& a, const Offender& b) {
    return a.abs_error / a.bound > b.abs_error / b.bound;
  });
  if (worst_.size() > max_worst) worst_.pop_back();
}

void BoundAlarm::add_rows(const CsvTable& t, const std::string& source) {
  // Runs written before the verdict column have within_bound 1/0 only.
  const int vi = t.column("verdict"), wi = t.column("within_bound"), ei = t.column("abs_error"),
            bi = t.column("bound");
  if ((vi < 0 && wi < 0) || ei < 0 || bi < 0) return;
  std::vector<int> ids;
  for (const char* c : {"algorithm", "backend", "dtype", "dist", "n", "seed", "requested_condition", "shape"})
    if (t.column(c) >= 0) ids.push_back(t.column(c));
  for (std::size_t k = 0; k < t.rows.size(); ++k) {
    const auto& r = t.rows[k];
    std::string what;
    for (int i : ids) what += (what.empty() ? "" : " ") + r[static_cast<std::size_t>(i)];
    std::optional<Verdict> v =
        vi >= 0 ? parse_verdict(r[static_cast<std::size_t>(vi)])
                : std::optional(r[static_cast<std::size_t>(wi)] == "0" ? Verdict::exceeds : Verdict::within);
    // The rows come from a file, which a user (or a damaged disk) may have changed: bad input,
    // not a bug.
    if (!v)
      throw UserError(fmt::format("{}, data row {} ({}): the verdict {} is none of {}; the table is damaged or "
                                  "was edited",
                                  source.empty() ? "a results table" : "'" + source + "'", k + 1, what,
                                  excerpt(r[static_cast<std::size_t>(vi)]), verdict_names()));
    add(what, *v, to_double(r[static_cast<std::size_t>(ei)]), to_double(r[static_cast<std::size_t>(bi)]));
  }
}

std::size_t BoundAlarm::count(Verdict v) const {
  const auto it = counts_.find(v);
  return it == counts_.end() ? 0 : it->second;
}

nlohmann::ordered_json BoundAlarm::json() const {
  nlohmann::ordered_json j;
  j["checked"] = total_;
  for (Verdict v : all_verdicts) j[std::string(to_string(v))] = count(v);
  nlohmann::ordered_json worst = nlohmann::ordered_json::array();
  for (const auto& o : worst_)
    worst.push_back({{"what", o.what}, {"abs_error", o.abs_error}, {"bound", o.bound},
                     {"ratio", o.abs_error / o.bound}});
  j["worst"] = worst;
  return j;
}

std::string BoundAlarm::text(const std::string& prefix) const {
  std::string out;
  const std::size_t bad = count(Verdict::exceeds);
  if (bad > 0) {
    out += fmt::format("{}ALARM: {} of {} results EXCEED their error bound (a bug in the algorithm, its bound "
                       "or the measurement); worst:\n", prefix, bad, total_);
    for (const auto& o : worst_)
      out += fmt::format("{}  {}: error {:.4g} > bound {:.4g} ({:.3g}x)\n", prefix, o.what, o.abs_error, o.bound,
                         o.abs_error / o.bound);
  } else {
    out += fmt::format("{}bounds: {} results, {} within their error bound", prefix, total_, count(Verdict::within));
    std::vector<std::string> others;
    if (count(Verdict::no_bound))
      others.push_back(fmt::format("{} with no proven bound (a subject the lab cannot analyse, an n past where "
                                   "its bound holds, or the bound's inputs overflow)",
                                   count(Verdict::no_bound)));
    if (count(Verdict::special_input)) others.push_back(fmt::format("{} with NaN/Inf input", count(Verdict::special_input)));
    if (count(Verdict::exact_overflow)) others.push_back(fmt::format("{} whose exact sum overflows", count(Verdict::exact_overflow)));
    for (std::size_t i = 0; i < others.size(); ++i) out += (i == 0 ? "; " : ", ") + others[i];
    out += "\n";
  }
  if (count(Verdict::failed))
    out += fmt::format("{}{} calls of external subjects failed (their rows say why)\n", prefix, count(Verdict::failed));
  if (count(Verdict::intermediate_overflow))
    out += fmt::format("{}{} results overflowed although their exact sum is finite\n", prefix,
                       count(Verdict::intermediate_overflow));
  return out;
}

}  // namespace sumlab
