#include "core/error_bound.hpp"

#include <cmath>
#include <limits>

namespace sumlab {
namespace {

constexpr double inf = std::numeric_limits<double>::infinity();

// The evaluated bound, nudged up past the rounding of its own evaluation (see the header).
double upward(double b) { return std::isfinite(b) ? b * (1 + 0x1p-40) : inf; }

}  // namespace

double FloatFormat::unit_roundoff() const { return std::ldexp(1.0, -precision); }
double FloatFormat::half_min_subnormal() const { return std::ldexp(1.0, min_subnormal_exp - 1); }

template <> FloatFormat wider_format<float>() { return format_of<double>(); }
template <> FloatFormat wider_format<double>() {
  return {std::numeric_limits<long double>::digits, std::numeric_limits<long double>::min_exponent - std::numeric_limits<long double>::digits};
}

namespace bound {

double gamma(FloatFormat f, double k) {
  const double ku = k * f.unit_roundoff();
  return ku < 1 ? ku / (1 - ku) : inf;
}

double tree(FloatFormat f, std::uint64_t depth, const BoundInput& in) {
  return upward(gamma(f, static_cast<double>(depth)) * in.sum_abs);
}

double atomic_tree(FloatFormat f, std::uint64_t depth, std::uint64_t adds, const BoundInput& in) {
  const double g = gamma(f, static_cast<double>(depth));
  if (f.precision != format_of<float>().precision) return upward(g * in.sum_abs);
  return upward(g * in.sum_abs + (1 + g) * static_cast<double>(adds) * 0x1p-125);
}

double wide_tree(FloatFormat out, FloatFormat acc, std::uint64_t depth, const BoundInput& in) {
  const double u = out.unit_roundoff();
  return upward(u * in.abs_sum + (1 + u) * gamma(acc, static_cast<double>(depth)) * in.sum_abs +
                out.half_min_subnormal());
}

double bf16_chain(FloatFormat in_format, const BoundInput& in) {
  const double ub = bfloat16_format.unit_roundoff();
  double r = ub, a = bfloat16_format.half_min_subnormal();
  if (in_format.precision > 24) {  // double -> float -> bf16: two roundings of each addend
    const FloatFormat f = format_of<float>();
    r = (1 + f.unit_roundoff()) * (1 + ub) - 1;
    a += f.half_min_subnormal() * (1 + ub);
  }
  if (in.n == 0) return 0;
  const double n = static_cast<double>(in.n);
  const double g = gamma(bfloat16_format, n - 1);
  return upward(r * in.sum_abs + n * a + g * ((1 + r) * in.sum_abs + n * a));
}

// Proof of the Kahan bound (steps i = 1..N, N = n - 1; s_0 = x_0, c_0 = 0).
// Each step computes y = fl(x - c), t = fl(s + y), a = fl(t - s), c' = fl(a - y). Let
// eta = y - (x - c) and eps = t - (s + y). Then (s' - c') - (s - c) - x = eta + (eps - c') =: D, and
// since s_0 - c_0 = x_0, the result is s_N = s + sum D_i + c_N; with the last step written out,
// s_N - s = sum_{i<N} D_i + eta_N + eps_N.
//  (a) |eta| <= u |x - c| <= u (|x| + |c|).
//  (b) If |s| >= |y|, Fast2Sum (Dekker 1971) makes a = t - s exact and then c' = fl(a - y) = eps
//      exactly (the error of a rounded addition is representable), so D = eta and |c'| = |eps|
//      <= u |t| = u |s'|.
//  (c) Else |y| > |s|: |eps| <= u |s + y| <= 2u |y|, |t - s| = |y + eps| <= (1 + 2u) |y|,
//      |a - y| <= |eps| + u |t - s| <= u (3 + 2u) |y|, so |c'| <= (1 + u) u (3 + 2u) |y|
//      <= 3u (1 + 2u) |y| and |eps - c'| <= u |t - s| + u |a - y| <= u (1 + 6u) |y|, while
//      |y| <= (1 + u)(|x| + |c|).
// With C = max |c_i| and kappa = 3u (1 + 2u)(1 + u): in both cases |D_i| <= lambda (|x_i| + C),
// lambda = u (2 + 7u + 6u^2), so E = sum |D_i| <= lambda (S + N C). For C: in case (b)
// |c_i| <= u |s_i| and |s_i| <= S + E + C (s_i - c_i is the exact partial sum plus the D's);
// in case (c) |c_i| <= kappa (S + C). Hence C <= kappa (S + E + C) <= kappa (S + lambda S +
// lambda N C + C), i.e. C <= kappa (1 + lambda) S / (1 - kappa - kappa lambda N). Finally
// |s_N - s| <= lambda (S + N C) + u (|x_N| + C) + u |s_N| and |s_N| <= |s| + |s_N - s| give the
// header's bound (|x_N| <= S is already inside lambda S, whose 2u covers the u |x_N|).
double kahan_chain(FloatFormat f, const BoundInput& in) {
  if (in.n <= 1) return 0;
  const double u = f.unit_roundoff(), N = static_cast<double>(in.n - 1);
  const double lambda = u * (2 + 7 * u + 6 * u * u), kappa = 3 * u * (1 + 2 * u) * (1 + u);
  const double denominator = 1 - kappa - kappa * lambda * N;
  if (!(denominator > 0)) return inf;
  const double c = kappa * (1 + lambda) * in.sum_abs / denominator;
  return upward((u * in.abs_sum + lambda * in.sum_abs + (N * lambda + u) * c) / (1 - u));
}

// Proof of the tree bound. Give every node P (a thread's chain, or a combine of two nodes) over
// terms with sum S_P its pair (s_P, c_P), value v_P = s_P - c_P, and the claims
//   |v_P - sum_P x| <= alpha S_P,  |c_P| <= beta S_P,  |s_P| <= (1 + rho) S_P,
// where alpha, beta, rho depend only on the node's height and grow with it (so two children of
// different heights both satisfy the taller one's constants).
// Leaves: a chain of m terms from (+0, +0) is the Kahan chain above with N = m - 1 steps (its first
// step is exact): beta_0 = C / S, alpha_0 = lambda (1 + N beta_0), rho_0 = alpha_0 + beta_0.
// A combine: s = fl(a.s + b.s) with its exact error e = a.s + b.s - s (Knuth's TwoSum, exact for
// any magnitudes), w = fl(a.c + b.c), c = fl(w - e). Then v - (v_a + v_b) = (a.c + b.c - w) +
// (w - e - c), of size <= u beta S + u (|w| + |e|), with |w| <= (1 + u) beta S, |s| <= (1 + u)(1 +
// rho) S and |e| <= u |s|. So
//   rho' = (1 + u)(1 + rho) - 1,  beta' = (1 + u)^2 (beta + u (1 + rho)),
//   alpha' = alpha + u (2 + u) beta + u^2 (1 + u)(1 + rho).
// The root's result fl(s - c) adds u |v| <= u (|s| + alpha S): |s_hat - s| <= u |s| + (1 + u) alpha S,
// plus half a subnormal spacing in case fl(s - c) underflows.
double kahan_tree(FloatFormat f, std::uint64_t chain, std::uint64_t levels, const BoundInput& in) {
  if (in.n <= 1) return 0;
  const double u = f.unit_roundoff();
  const double N = chain > 0 ? static_cast<double>(chain - 1) : 0;
  const double lambda = u * (2 + 7 * u + 6 * u * u), kappa = 3 * u * (1 + 2 * u) * (1 + u);
  const double denominator = 1 - kappa - kappa * lambda * N;
  if (!(denominator > 0)) return inf;
  double beta = kappa * (1 + lambda) / denominator;
  double alpha = lambda * (1 + N * beta);
  double rho = alpha + beta;
  for (std::uint64_t l = 0; l < levels; ++l) {
    alpha = alpha + u * (2 + u) * beta + u * u * (1 + u) * (1 + rho);
    beta = (1 + u) * (1 + u) * (beta + u * (1 + rho));
    rho = (1 + u) * (1 + rho) - 1;
    if (!std::isfinite(alpha) || beta >= 1) return inf;
  }
  return upward(u * in.abs_sum + (1 + u) * alpha * in.sum_abs + f.half_min_subnormal());
}

double sum2(FloatFormat f, const BoundInput& in) {
  if (in.n <= 1) return 0;
  const double n = static_cast<double>(in.n);
  if (!(n * f.unit_roundoff() < 1)) return inf;
  const double g = gamma(f, n - 1);
  return upward(f.unit_roundoff() * in.abs_sum + g * g * in.sum_abs);
}

double correctly_rounded(FloatFormat f, const BoundInput& in) {
  return upward(std::fmax(f.unit_roundoff() * in.abs_sum, f.half_min_subnormal()));
}

double fixed_point(FloatFormat f, const BoundInput& in) {
  return upward(in.quantisation * (1 + f.unit_roundoff()) +
                std::fmax(f.unit_roundoff() * in.abs_sum, f.half_min_subnormal()));
}

}  // namespace bound

std::string_view to_string(Verdict v) {
  switch (v) {
    case Verdict::within: return "within";
    case Verdict::exceeds: return "exceeds";
    case Verdict::no_bound: return "no_bound";
    case Verdict::special_input: return "special_input";
    case Verdict::exact_overflow: return "exact_overflow";
    case Verdict::intermediate_overflow: return "intermediate_overflow";
    case Verdict::failed: return "failed";
  }
  return "?";
}

Verdict judge(const Judged& m, double bound) {
  if (m.input_special) return Verdict::special_input;
  if (m.exact_overflows) return Verdict::exact_overflow;
  if (!m.result_finite) return Verdict::intermediate_overflow;
  if (!std::isfinite(bound)) return Verdict::no_bound;
  return m.abs_error <= bound ? Verdict::within : Verdict::exceeds;
}

}  // namespace sumlab
