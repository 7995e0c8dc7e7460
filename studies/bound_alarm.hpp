#pragma once
// The tally of bound verdicts that every command prints at its end and every study writes into
// summary.json: how many results were within their bound, how many broke it (an alarm: a bug in an
// algorithm, a bound or a measurement), how many had no bound or hit a special case, and the worst
// few offenders. Built from the rows themselves (a run folder's CSV), so a resumed study counts
// the rows of every invocation, and `report` prints the same numbers the study printed.
#include <cstddef>
#include <map>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/error_bound.hpp"

namespace sumlab {

class CsvTable;

class BoundAlarm {
 public:
  // One result: `what` names it for the worst-offenders list ("neumaier float32 constant n=65536").
  void add(const std::string& what, Verdict v, double abs_error, double bound);
  // Every row of a table with `verdict` (or, in older runs, `within_bound`), `abs_error` and `bound`
  // columns; `what` is built from the identifying columns that exist (algorithm, dtype, n, ...).
  // A table without them adds nothing. A verdict that names no Verdict (an empty cell, a word
  // the lab never writes) throws UserError naming `source` (the table's file) and the row.
  void add_rows(const CsvTable& t, const std::string& source = "");

  std::size_t count(Verdict v) const;
  std::size_t total() const { return total_; }
  bool alarm() const { return count(Verdict::exceeds) > 0; }

  // {"checked": N, "within": .., "exceeds": .., "no_bound": .., "special_input": ..,
  //  "exact_overflow": .., "intermediate_overflow": .., "worst": [{what, abs_error, bound, ratio}]}
  nlohmann::ordered_json json() const;
  // "bounds: 5170 results, 5170 within their bound" or, loudly, "ALARM: 8 of 5170 results EXCEED
  // their bound" and the worst few, one per line; plus counts of the other verdicts when nonzero.
  std::string text(const std::string& prefix = "") const;

 private:
  struct Offender {
    std::string what;
    double abs_error, bound;
  };
  std::map<Verdict, std::size_t> counts_;
  std::vector<Offender> worst_;  // the largest abs_error / bound first, at most max_worst
  std::size_t total_ = 0;
  static constexpr std::size_t max_worst = 5;
};

}  // namespace sumlab
