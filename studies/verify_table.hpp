#pragma once
// What every section of `sumlab verify` past the sums (rows, segmented, scans) shares: its
// options, a case's outcome and its CSV cells, the tally of one line per key (kernel or strategy,
// dtype, ...) with cases, mismatches, errors and the first failure, the section's summary with
// its totals, and the fixed-width table it prints.
#include <cstddef>
#include <cstdint>
#include <exception>
#include <string>
#include <utility>
#include <vector>

namespace sumlab {

struct VerifySectionOptions {
  bool quick = false;
  std::uint64_t seed = 1;
  std::string csv;          // non-empty: one line per case written here
  bool model_only = false;  // skip the GPU even if present
};

// One case: GPU bits against the model's, or without a GPU a shape_invariant kernel's model bits
// against its first shape's.
struct VerifyOutcome {
  std::int64_t mismatches = 0;
  bool error = false;     // the case could not run (detail says why)
  bool compared = false;  // whether the bits were compared with anything (the GPU, or the first shape's model)
  std::string detail;
};
// A case's CSV row: its key cells, then what it was compared with ("gpu", "model_first_shape" or
// "none"), its mismatches (empty where nothing was compared), 1 for an error, and the detail;
// verify_case_columns names them after the key columns.
std::vector<std::string> verify_case_cells(std::vector<std::string> keys, const VerifyOutcome& o, bool gpu);
std::vector<std::string> verify_case_columns(std::vector<std::string> keys);

// Runs one case of a section's sweep, shape si of a kernel's shapes, into c: model() gives the
// model's result, then with a GPU run_gpu() gives the GPU's, compared with it by
// mismatches(result, reference, &detail); without one a shape_invariant kernel's model result is
// compared with its first shape's (kept in `first` at si == 0), the first shape compared with
// nothing. Whatever throws makes the case an error, its message the detail.
template <class R, class Model, class Gpu, class Mismatches>
void verify_shape(VerifyOutcome& c, std::size_t si, bool gpu, bool shape_invariant, R& first, Model&& model,
                  Gpu&& run_gpu, Mismatches&& mismatches) {
  try {
    const R m = model();
    if (gpu) {
      c.mismatches = mismatches(run_gpu(), m, &c.detail);
      c.compared = true;
    } else if (shape_invariant) {
      if (si == 0) first = m;
      c.mismatches = mismatches(m, first, &c.detail);
      c.compared = si > 0;
    }
  } catch (const std::exception& e) {
    c.error = true;
    c.detail = e.what();
  }
}

// One line's tally.
struct VerifyCounts {
  long cases = 0;
  long mismatches = 0;  // cases whose GPU and model bits differ (model only: shape-invariance breaks)
  long errors = 0;      // cases that could not run (a GPU error, or the model refused a valid shape)
  long compared = 0;    // cases whose bits were compared (without a GPU: shape_invariant kernels only)
  std::string first_failure;
  // Counts one case; where() names it in the line's first failure.
  template <class Where> void count(const VerifyOutcome& o, Where&& where) {
    ++cases;
    if (o.compared) ++compared;
    if (o.mismatches) ++mismatches;
    if (o.error) ++errors;
    if ((o.mismatches || o.error) && first_failure.empty()) first_failure = where() + ": " + o.detail;
  }
};

// Whether a section runs the GPU side (not model_only, and a CUDA device is usable), and the
// device it names: the GPU, or why none ran.
std::pair<bool, std::string> verify_device(bool model_only);

// A section's result: Line is its key fields over VerifyCounts.
template <class L> struct VerifySummary {
  using Line = L;
  bool gpu = false;     // whether the GPU side ran
  std::string device;   // the GPU, or why it did not run
  std::vector<L> lines;
  double seconds = 0;
  long cases() const { return total(&VerifyCounts::cases); }
  long mismatches() const { return total(&VerifyCounts::mismatches); }
  long errors() const { return total(&VerifyCounts::errors); }
  bool ok() const { return mismatches() == 0 && errors() == 0; }

 private:
  long total(long VerifyCounts::*counter) const {
    long n = 0;
    for (const auto& l : lines) n += l.*counter;
    return n;
  }
};

struct VerifyTableRow {
  std::vector<std::string> key;  // one field per key column
  VerifyCounts counts;
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
