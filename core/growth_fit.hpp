#pragma once
// Growth exponent of an error curve: least squares fit of log2(error) = a + b log2(n) (Eigen),
// with a two-sided 95% confidence interval for the slope b from Student's t.
// Points with error <= 0 (exact results) or non-finite values carry no slope information and are
// dropped; fewer than 3 usable points give ok = false.
#include <vector>

namespace sumlab {

struct GrowthFit {
  bool ok = false;
  int points = 0;
  double exponent = 0;      // slope b: error ~ n^b
  double ci_low = 0;        // 95% confidence interval of b
  double ci_high = 0;
  double intercept = 0;     // a (log2 units)
  double r_squared = 0;
};

GrowthFit fit_growth(const std::vector<double>& n, const std::vector<double>& error);

// Two-sided 95% quantile of Student's t with `dof` degrees of freedom (dof >= 1).
double student_t_975(int dof);

}  // namespace sumlab
