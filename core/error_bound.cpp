#include "core/error_bound.hpp"

#include <cmath>
#include <limits>

namespace sumlab {
namespace {

constexpr double inf = std::numeric_limits<double>::infinity();

// Directed rounding for the bounds' own arithmetic. Every quantity below is a nonnegative real that
// the theorems combine with +, * and / and a few subtractions; an Up holds a double >= that real, a
// Down a double <= it. Each operation rounds to nearest and then steps one ulp outward when the
// nearest value fell on the wrong side, which an error-free transformation tells exactly (TwoSum's
// error for + and -, an fma's residual for * and /, exact unless the result is within 2^53 ulps of
// underflow, where the step is always taken). So each result is the real result rounded outward,
// and the evaluation is an upper bound of the theorem's expression at its double arguments. Exact
// constants (small integers, powers of two, the u of a format) enter as either kind.
struct Down;
struct Up {
  double v;
  Up(double x) : v(x) {}  // implicit only for exact constants and values already rounded up
};
struct Down {
  double v;
  explicit Down(double x) : v(x) {}
};
// The exact a + b - s of s = fl(a + b) (Knuth's TwoSum; exact whatever the magnitudes).
double sum_error(double a, double b, double s) {
  const double bb = s - a;
  return (a - (s - bb)) + (b - bb);
}
// Whether an fma gives the residual of a product or quotient r exactly: r is at least 2^53 ulps
// above underflow (a result that underflowed, to zero too, steps outward always).
bool exact_residual(double r) { return std::fabs(r) >= 0x1p-969; }
// r = fl(real) with `residual` the sign of real - r: r moved to the side `to` if real lies there.
double outward(double r, double residual, double to) {
  if (!std::isfinite(r)) return r;
  return residual == 0 ? r : (residual > 0) == (to > 0) ? std::nextafter(r, to) : r;
}
double add(double a, double b, double to) {
  const double s = a + b;
  return outward(s, sum_error(a, b, s), to);
}
double mul(double a, double b, double to) {
  const double p = a * b;
  if (a == 0 || b == 0) return p;
  return exact_residual(p) ? outward(p, std::fma(a, b, -p), to) : std::nextafter(p, to);
}
Up operator+(Up a, Up b) { return add(a.v, b.v, inf); }
Up operator*(Up a, Up b) { return mul(a.v, b.v, inf); }
Up operator-(Up a, Down b) { return add(a.v, -b.v, inf); }
Down operator-(Down a, Up b) { return Down(add(a.v, -b.v, -inf)); }
// A quotient's upper bound needs its divisor's lower bound; a divisor that may be <= 0 is no bound.
// q = fl(a / b) is below a / b exactly when a - q b > 0 (b > 0), a residual an fma gives exactly.
Up operator/(Up a, Down b) {
  if (!(b.v > 0)) return inf;
  const double q = a.v / b.v;
  if (a.v == 0) return q;
  const bool exact = exact_residual(q) && exact_residual(a.v) && std::isfinite(q);
  return exact ? outward(q, std::fma(-q, b.v, a.v), inf) : std::nextafter(q, inf);
}
Up max(Up a, Up b) { return std::fmax(a.v, b.v); }
// A count as a double no smaller than it (counts past 2^53 do not convert exactly).
Up count(std::uint64_t k) {
  const double d = static_cast<double>(k);
  return d < 0x1p64 && static_cast<std::uint64_t>(d) < k ? std::nextafter(d, inf) : d;
}

// The evaluated bound, nudged up past the rounding of S and |s| to double (see the header).
double upward(Up b) { return std::isfinite(b.v) ? (b * (1 + 0x1p-40)).v : inf; }

}  // namespace

double FloatFormat::unit_roundoff() const { return std::ldexp(1.0, -precision); }
double FloatFormat::half_min_subnormal() const { return std::ldexp(1.0, min_subnormal_exp - 1); }

template <> FloatFormat wider_format<float>() { return format_of<double>(); }
template <> FloatFormat wider_format<double>() {
  return {std::numeric_limits<long double>::digits, std::numeric_limits<long double>::min_exponent - std::numeric_limits<long double>::digits};
}

namespace bound {

namespace {
Up gamma_up(FloatFormat f, Up k) {
  const Up ku = k * f.unit_roundoff();
  return ku.v < 1 ? ku / (Down(1) - ku) : Up(inf);
}
}  // namespace

double gamma(FloatFormat f, double k) { return gamma_up(f, k).v; }

double tree(FloatFormat f, std::uint64_t depth, const BoundInput& in) {
  return upward(gamma_up(f, count(depth)) * in.sum_abs);
}

double atomic_tree(FloatFormat f, std::uint64_t depth, std::uint64_t adds, const BoundInput& in) {
  const Up g = gamma_up(f, count(depth));
  if (f.precision != format_of<float>().precision) return upward(g * in.sum_abs);
  return upward(g * in.sum_abs + (1 + g) * count(adds) * 0x1p-125);
}

double wide_tree(FloatFormat out, FloatFormat acc, std::uint64_t depth, const BoundInput& in) {
  const Up u = out.unit_roundoff();
  return upward(u * in.abs_sum + (1 + u) * gamma_up(acc, count(depth)) * in.sum_abs + out.half_min_subnormal());
}

double bf16_chain(FloatFormat in_format, const BoundInput& in) {
  const Up ub = bfloat16_format.unit_roundoff();
  Up r = ub, a = bfloat16_format.half_min_subnormal();
  if (in_format.precision > 24) {  // double -> float -> bf16: two roundings of each addend
    const FloatFormat f = format_of<float>();
    r = (1 + f.unit_roundoff()) * (1 + ub) - Down(1);
    a = a + f.half_min_subnormal() * (1 + ub);
  }
  if (in.n == 0) return 0;
  const Up n = count(in.n), g = gamma_up(bfloat16_format, count(in.n - 1));
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
  const Up u = f.unit_roundoff(), N = count(in.n - 1);
  const Up lambda = u * (2 + 7 * u + 6 * u * u), kappa = 3 * u * (1 + 2 * u) * (1 + u);
  const Down denominator = Down(1) - kappa - kappa * lambda * N;
  if (!(denominator.v > 0)) return inf;
  // C / S, so that S multiplies once, last: a tiny S then costs one subnormal step, not N of them.
  const Up c_per_S = kappa * (1 + lambda) / denominator;
  return upward((u * in.abs_sum + (lambda + (N * lambda + u) * c_per_S) * in.sum_abs) / (Down(1) - u));
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
  const Up u = f.unit_roundoff(), N = chain > 0 ? count(chain - 1) : Up(0);
  const Up lambda = u * (2 + 7 * u + 6 * u * u), kappa = 3 * u * (1 + 2 * u) * (1 + u);
  const Down denominator = Down(1) - kappa - kappa * lambda * N;
  if (!(denominator.v > 0)) return inf;
  Up beta = kappa * (1 + lambda) / denominator;
  Up alpha = lambda * (1 + N * beta);
  Up rho = alpha + beta;
  for (std::uint64_t l = 0; l < levels; ++l) {
    alpha = alpha + u * (2 + u) * beta + u * u * (1 + u) * (1 + rho);
    beta = (1 + u) * (1 + u) * (beta + u * (1 + rho));
    rho = (1 + u) * (1 + rho) - Down(1);
    if (!std::isfinite(alpha.v) || beta.v >= 1) return inf;
  }
  return upward(u * in.abs_sum + (1 + u) * alpha * in.sum_abs + f.half_min_subnormal());
}

double sum2(FloatFormat f, const BoundInput& in) {
  if (in.n <= 1) return 0;
  if (!((count(in.n) * f.unit_roundoff()).v < 1)) return inf;
  const Up g = gamma_up(f, count(in.n - 1));
  return upward(Up(f.unit_roundoff()) * in.abs_sum + g * g * in.sum_abs);
}

double correctly_rounded(FloatFormat f, const BoundInput& in) {
  return upward(max(Up(f.unit_roundoff()) * in.abs_sum, f.half_min_subnormal()));
}

double fixed_point(FloatFormat f, const BoundInput& in) {
  const Up u = f.unit_roundoff();
  return upward(Up(in.quantisation) * (1 + u) + max(u * in.abs_sum, f.half_min_subnormal()));
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
