#pragma once
// The tally that every section of `sumlab verify` (rows, segmented, scans) keeps and prints: one
// line per key (kernel or strategy, dtype, ...) with cases, mismatches, errors and the first
// failure; totals; a fixed-width table.
#include <string>
#include <vector>

namespace sumlab {

// Sum of one counter over a section's lines (Line has long members cases, mismatches, errors).
template <class Line> long verify_total(const std::vector<Line>& lines, long Line::*counter) {
  long n = 0;
  for (const auto& l : lines) n += l.*counter;
  return n;
}

struct VerifyTableRow {
  std::vector<std::string> key;  // one field per key column
  long cases = 0, mismatches = 0, errors = 0;
  long compared = 0;  // cases whose bits were compared with anything (mismatches counts among these)
  std::string first_failure;
};

// "<title>: GPU bits vs model bits (<device>)" (or "<title>: <device>" without a GPU), the key
// columns and the counts per row, a total with the seconds, then the first failure of each row
// that has one. The count column is "mismatches" (GPU vs model) with a GPU and
// "shape-invariance breaks" (model vs model across shapes) without; a row that compared nothing
// prints '-' there, never 0.
std::string verify_table(const std::string& title, bool gpu, const std::string& device,
                         const std::vector<std::string>& key_columns, const std::vector<VerifyTableRow>& rows,
                         double seconds);

}  // namespace sumlab
