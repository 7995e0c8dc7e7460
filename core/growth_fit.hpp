#pragma once
// Growth exponent of an error curve: least squares fit of log2(error) = a + b log2(n) (Eigen),
// with a two-sided 95% confidence interval for the slope b from Student's t.
// Points with error <= 0 (exact results) or non-finite values carry no slope information and are
// dropped; fewer than 3 usable points, or usable points at fewer than 3 distinct n (two sizes fix a
// line exactly, whatever the scatter at each, so its interval says nothing about growth), give
// ok = false.
#include <optional>
#include <string_view>
#include <vector>

namespace sumlab {

struct GrowthFit {
  bool ok = false;
  int points = 0;           // usable points (error > 0 and finite, n > 0)
  int distinct_n = 0;       // distinct n among them
  double exponent = 0;      // slope b: error ~ n^b
  double ci_low = 0;        // 95% confidence interval of b
  double ci_high = 0;
  double intercept = 0;     // a (log2 units)
  double r_squared = 0;
};

GrowthFit fit_growth(const std::vector<double>& n, const std::vector<double>& error);

// Why a series has no growth exponent (GrowthOfMedians::none_because; summary.json's names).
enum class NoGrowthFit {
  fitted,             // a fit exists
  no_finite_error,    // no measurement has a finite error (NaN/Inf inputs, an exact sum of 0)
  all_zero,           // every finite error is exactly 0: exact at every n and seed
  fewer_than_3_n,     // fewer than 3 distinct n with a positive median error
};
std::string_view to_string(NoGrowthFit r);

// The growth of the median error: at each n, the median over that n's measurements (the seeds) of
// the finite errors, zeros included (the mean of the two middle values for an even count); a fit
// of log2(median) on log2(n) over the n whose median is positive (fit_growth, one point per n).
// The median keeps one outlying seed from steering the slope, and one point per n keeps a value
// repeated across seeds (a constant input) from passing for agreement. Non-finite errors are
// counted and left out.
struct GrowthOfMedians {
  GrowthFit fit;
  NoGrowthFit none_because = NoGrowthFit::no_finite_error;
  int measurements = 0;     // every (n, error) given
  int zero_errors = 0;      // error exactly 0
  int nonfinite_errors = 0; // NaN or +-Inf: left out
  // The n whose median is positive (the fit's points): how many, and their range (empty: none).
  int distinct_n = 0;
  std::optional<double> n_min, n_max;
};
GrowthOfMedians fit_growth_of_medians(const std::vector<double>& n, const std::vector<double>& error);

// Two-sided 95% quantile of Student's t with `dof` degrees of freedom (dof >= 1).
double student_t_975(int dof);

}  // namespace sumlab
