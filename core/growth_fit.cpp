#include "core/growth_fit.hpp"

#include <Eigen/Dense>
#include <algorithm>
#include <cmath>
#include <map>

namespace sumlab {

double student_t_975(int dof) {
  // Exact table for small dof; beyond 30 the Cornish-Fisher expansion around the normal
  // quantile 1.959964 is accurate to better than 1e-4.
  static const double table[] = {0, 12.706, 4.303, 3.182, 2.776, 2.571, 2.447, 2.365, 2.306, 2.262,
                                 2.228, 2.201, 2.179, 2.160, 2.145, 2.131, 2.120, 2.110, 2.101,
                                 2.093, 2.086, 2.080, 2.074, 2.069, 2.064, 2.060, 2.056, 2.052,
                                 2.048, 2.045, 2.042};
  if (dof < 1) return INFINITY;
  if (dof <= 30) return table[dof];
  const double z = 1.959964, v = dof;
  const double z3 = z * z * z, z5 = z3 * z * z;
  return z + (z3 + z) / (4 * v) + (5 * z5 + 16 * z3 + 3 * z) / (96 * v * v);
}

GrowthFit fit_growth(const std::vector<double>& n, const std::vector<double>& error) {
  std::vector<double> xs, ys;
  for (std::size_t i = 0; i < n.size() && i < error.size(); ++i) {
    if (!(error[i] > 0) || !std::isfinite(error[i]) || !(n[i] > 0)) continue;
    xs.push_back(std::log2(n[i]));
    ys.push_back(std::log2(error[i]));
  }
  GrowthFit f;
  f.points = static_cast<int>(xs.size());
  std::vector<double> distinct = xs;
  std::sort(distinct.begin(), distinct.end());
  f.distinct_n = static_cast<int>(std::unique(distinct.begin(), distinct.end()) - distinct.begin());
  if (xs.size() < 3 || f.distinct_n < 3) return f;
  const Eigen::Index m = static_cast<Eigen::Index>(xs.size());
  Eigen::MatrixXd A(m, 2);
  Eigen::VectorXd y(m);
  for (Eigen::Index i = 0; i < m; ++i) {
    A(i, 0) = 1.0;
    A(i, 1) = xs[static_cast<std::size_t>(i)];
    y(i) = ys[static_cast<std::size_t>(i)];
  }
  const Eigen::Vector2d beta = A.colPivHouseholderQr().solve(y);
  const Eigen::VectorXd resid = y - A * beta;
  const double sse = resid.squaredNorm();
  const double mean_y = y.mean();
  const double sst = (y.array() - mean_y).square().sum();
  const double mean_x = A.col(1).mean();
  const double sxx = (A.col(1).array() - mean_x).square().sum();
  if (!(sxx > 0)) return f;  // all points at one n: no slope
  const int dof = static_cast<int>(m) - 2;
  const double se = std::sqrt(sse / dof / sxx);
  const double t = student_t_975(dof);
  f.ok = true;
  f.intercept = beta(0);
  f.exponent = beta(1);
  f.ci_low = beta(1) - t * se;
  f.ci_high = beta(1) + t * se;
  f.r_squared = sst > 0 ? 1 - sse / sst : 1.0;
  return f;
}

std::string_view to_string(NoGrowthFit r) {
  switch (r) {
    case NoGrowthFit::fitted: return "fitted";
    case NoGrowthFit::no_finite_error: return "no_finite_error";
    case NoGrowthFit::all_zero: return "all_zero";
    case NoGrowthFit::fewer_than_3_n: return "fewer_than_3_n";
  }
  return "?";
}

GrowthOfMedians fit_growth_of_medians(const std::vector<double>& n, const std::vector<double>& error) {
  GrowthOfMedians g;
  std::map<double, std::vector<double>> at;  // n -> its finite errors
  for (std::size_t i = 0; i < n.size() && i < error.size(); ++i) {
    ++g.measurements;
    if (!std::isfinite(error[i]) || !(n[i] > 0)) {
      ++g.nonfinite_errors;
      continue;
    }
    g.zero_errors += error[i] == 0;
    at[n[i]].push_back(std::fabs(error[i]));
  }
  std::vector<double> xs, medians;
  for (auto& [size, e] : at) {
    std::sort(e.begin(), e.end());
    const std::size_t k = e.size() / 2;
    const double median = e.size() % 2 ? e[k] : e[k - 1] / 2 + e[k] / 2;  // halves first: no overflow
    if (!(median > 0)) continue;
    xs.push_back(size);
    medians.push_back(median);
  }
  g.distinct_n = static_cast<int>(xs.size());
  if (!xs.empty()) {
    g.n_min = xs.front();  // std::map: ascending
    g.n_max = xs.back();
  }
  if (at.empty()) {
    g.none_because = NoGrowthFit::no_finite_error;
  } else if (g.zero_errors == g.measurements - g.nonfinite_errors) {
    g.none_because = NoGrowthFit::all_zero;
  } else {
    g.fit = fit_growth(xs, medians);
    g.none_because = g.fit.ok ? NoGrowthFit::fitted : NoGrowthFit::fewer_than_3_n;
  }
  return g;
}

}  // namespace sumlab
