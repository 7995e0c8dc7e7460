#pragma once
// The two textbook parallel scans, executed on an array by the CPU with the operations counted:
// work = combine applications, depth = parallel steps (one step = all combines of one round).
//
// Hillis-Steele (inclusive; "step-efficient"): for d = 1, 2, 4, .. < n, every i >= d at once:
//   y[i] = combine(x[i - d], x[i]); y[i] = x[i] for i < d.
//   work = sum_{k < K} (n - 2^k) = n K - (2^K - 1), depth = K = ceil(log2 n)  (0 for n <= 1).
//   Prefix i is a tree of depth <= K, so its PlusOp error is at most gamma_K sum|x_j| (Higham's
//   pairwise bound): it grows with log2 of the position, not linearly as the serial loop's.
//   The exclusive form is the inclusive one shifted right by one (identity at 0): no extra work.
// Blelloch (exclusive; "work-efficient"): pad to m = bit_ceil(n) with the identity, then
//   up-sweep:   for offset = 1, 2, .., m/2: a[o(2i+2)-1] = combine(a[o(2i+1)-1], a[o(2i+2)-1])
//   down-sweep: a[m-1] = identity; for offset = m/2, .., 1: t = a[left]; a[left] = a[right];
//               a[right] = combine(a[right], t)
//   work = 2 (m - 1) counted on the padded array (m - 1 per sweep), depth = 2 log2 m; the
//   inclusive form adds combine(exclusive[i], x[i]): n more combines, one more step.
//   Combines with the padding and with the root identity are counted: they are what a kernel
//   executes. The identity's two floating-point exceptions (scan_ops.hpp) apply.
// Determinism: each has one order for a given n, so the same bits on every run.
#include <bit>
#include <cstddef>
#include <cstdint>
#include <span>
#include <utility>
#include <vector>

namespace sumlab::scan {

struct ScanCost {
  std::uint64_t work = 0;  // combine applications
  int depth = 0;           // parallel steps
};

template <class V> struct TreeScanResult {
  std::vector<V> out;
  ScanCost cost;
};

// The closed forms the counters must meet (tests check both against the executed counts).
inline int ceil_log2(std::size_t n) { return n <= 1 ? 0 : int(std::bit_width(n - 1)); }
inline ScanCost hillis_steele_cost(std::size_t n) {
  const int k = ceil_log2(n);
  return {n <= 1 ? 0 : std::uint64_t(n) * std::uint64_t(k) - ((std::uint64_t(1) << k) - 1), k};
}
inline ScanCost blelloch_cost(std::size_t n, bool inclusive) {
  if (n == 0) return {};
  const std::size_t m = std::bit_ceil(n);
  const int k = ceil_log2(m);
  return {2 * std::uint64_t(m - 1) + (inclusive ? n : 0), 2 * k + (inclusive ? 1 : 0)};
}

template <class Op>
TreeScanResult<typename Op::Value> hillis_steele_scan(std::span<const typename Op::Value> x, bool inclusive) {
  using V = typename Op::Value;
  TreeScanResult<V> r;
  std::vector<V> cur(x.begin(), x.end()), next(x.size());
  for (std::size_t d = 1; d < x.size(); d *= 2) {
    for (std::size_t i = 0; i < d; ++i) next[i] = cur[i];
    for (std::size_t i = d; i < x.size(); ++i) next[i] = Op::combine(cur[i - d], cur[i]);
    r.cost.work += x.size() - d;
    ++r.cost.depth;
    std::swap(cur, next);
  }
  if (inclusive || cur.empty()) {
    r.out = std::move(cur);
  } else {
    r.out.resize(cur.size());
    r.out[0] = Op::identity();
    for (std::size_t i = 1; i < cur.size(); ++i) r.out[i] = cur[i - 1];
  }
  return r;
}

// Blelloch's exclusive scan in place on a (size a power of two, or 0/1); returns the root's value
// after the up-sweep (the total of a). The GPU block kernel runs exactly this on each tile.
template <class Op>
typename Op::Value blelloch_exclusive_in_place(std::span<typename Op::Value> a, ScanCost* cost = nullptr) {
  using V = typename Op::Value;
  const std::size_t m = a.size();
  if (m == 0) return Op::identity();
  std::size_t offset = 1;
  for (std::size_t d = m >> 1; d > 0; d >>= 1, offset <<= 1) {
    for (std::size_t i = 0; i < d; ++i) {
      const std::size_t ai = offset * (2 * i + 1) - 1, bi = offset * (2 * i + 2) - 1;
      a[bi] = Op::combine(a[ai], a[bi]);
    }
    if (cost) cost->work += d, ++cost->depth;
  }
  const V total = a[m - 1];
  a[m - 1] = Op::identity();
  for (std::size_t d = 1; d < m; d <<= 1) {
    offset >>= 1;
    for (std::size_t i = 0; i < d; ++i) {
      const std::size_t ai = offset * (2 * i + 1) - 1, bi = offset * (2 * i + 2) - 1;
      const V t = a[ai];
      a[ai] = a[bi];
      a[bi] = Op::combine(a[bi], t);
    }
    if (cost) cost->work += d, ++cost->depth;
  }
  return total;
}

template <class Op>
TreeScanResult<typename Op::Value> blelloch_scan(std::span<const typename Op::Value> x, bool inclusive) {
  using V = typename Op::Value;
  TreeScanResult<V> r;
  if (x.empty()) return r;
  std::vector<V> a(std::bit_ceil(x.size()), Op::identity());
  for (std::size_t i = 0; i < x.size(); ++i) a[i] = x[i];
  blelloch_exclusive_in_place<Op>(std::span<V>(a), &r.cost);
  a.resize(x.size());
  if (inclusive) {
    for (std::size_t i = 0; i < x.size(); ++i) a[i] = Op::combine(a[i], x[i]);
    r.cost.work += x.size();
    ++r.cost.depth;
  }
  r.out = std::move(a);
  return r;
}

}  // namespace sumlab::scan
