#pragma once
// Serial scans: the sequential loop every parallel scan is compared with.
//
// Order: inclusive out[0] = x[0], out[i] = combine(out[i-1], x[i]); exclusive out[0] = identity
// (no operation), out[1] = x[0] (no operation), out[i] = combine(out[i-1], x[i-1]). So, bit for
// bit, exclusive[i+1] == inclusive[i] and inclusive[i] == combine(exclusive[i], x[i]) for i >= 1.
// Bound (PlusOp): prefix i is a recursive sum of i+1 terms, |error| <= gamma_i * sum_{j<=i} |x_j|
// (Higham, (4.4)), so the worst-case error grows linearly with the position; for random-sign
// rounding errors it grows like sqrt(i).
// Determinism: one order, so the same bits on every run (shape_invariant: it has no shape).
// Work n - 1 combines, depth n - 1.
#include <cstddef>
#include <span>
#include <vector>

namespace sumlab::scan {

template <class Op>
void serial_inclusive_scan(std::span<const typename Op::Value> x, std::span<typename Op::Value> out) {
  if (x.empty()) return;
  out[0] = x[0];
  for (std::size_t i = 1; i < x.size(); ++i) out[i] = Op::combine(out[i - 1], x[i]);
}

template <class Op>
void serial_exclusive_scan(std::span<const typename Op::Value> x, std::span<typename Op::Value> out) {
  if (x.empty()) return;
  out[0] = Op::identity();
  if (x.size() > 1) out[1] = x[0];
  for (std::size_t i = 2; i < x.size(); ++i) out[i] = Op::combine(out[i - 1], x[i - 1]);
}

template <class Op>
std::vector<typename Op::Value> serial_scan(std::span<const typename Op::Value> x, bool inclusive) {
  std::vector<typename Op::Value> out(x.size());
  if (inclusive) serial_inclusive_scan<Op>(x, out);
  else serial_exclusive_scan<Op>(x, out);
  return out;
}

}  // namespace sumlab::scan
