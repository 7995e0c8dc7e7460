#pragma once
// The CPU executing the modelled GPU scans' exact order (core/scan/scan_kernel.hpp describes it;
// gpu/scan/*.cuh are the kernels). Same combines, same operands, same order, so GPU bits == model
// bits for every operator (checked by tests/gpu/scan_test.cpp and `sumlab verify`).
// Positions past n in the last tile hold the identity in both; they only ever feed lanes, tree
// nodes or warps to their right, never an output at a position < n.
// Throws std::invalid_argument with validate_scan_shape's sentence for a shape the kernel cannot
// run (and for cub, which is not modelled).
#include <algorithm>
#include <cstdint>
#include <optional>
#include <span>
#include <stdexcept>
#include <string>
#include <vector>

#include "core/scan/scan_kernel.hpp"
#include "core/scan/tree_scans.hpp"

namespace sumlab::scan {
namespace detail {

// warp_hillis_steele's block scan of one tile, x[0 .. count) (count <= tile; identity past it):
// each thread's serial inclusive prefixes, its in-tile prefix (absent for thread 0), and the last
// warp's value in the Hillis-Steele scan of the warp totals (warp_hs_chained's tile aggregate).
template <class V> struct WarpHsBlock {
  std::vector<V> serial;                 // thread t's k-th prefix at t * items + k
  std::vector<std::optional<V>> prefix;  // per thread
  V aggregate{};
};

template <class Op>
WarpHsBlock<typename Op::Value> warp_hs_block(const typename Op::Value* x, std::int64_t count, const ScanShape& s) {
  using V = typename Op::Value;
  const int block = s.block, items = s.items, warps = block / 32;
  WarpHsBlock<V> b;
  b.serial.resize(std::size_t(block) * items);
  std::vector<V> lane(block);  // thread totals, then the warps' inclusive scans
  for (int t = 0; t < block; ++t) {
    for (int k = 0; k < items; ++k) {
      const std::int64_t i = std::int64_t(t) * items + k;
      const V v = i < count ? x[i] : Op::identity();
      b.serial[std::size_t(t) * items + k] = k == 0 ? v : Op::combine(b.serial[std::size_t(t) * items + k - 1], v);
    }
    lane[t] = b.serial[std::size_t(t) * items + items - 1];
  }
  auto hillis_steele = [](V* v, int width) {  // width lanes at once, as the shuffles do
    std::vector<V> old(v, v + width);
    for (int off = 1; off < 32; off *= 2) {
      std::copy(v, v + width, old.begin());
      for (int l = off; l < width; ++l) v[l] = Op::combine(old[l - off], old[l]);
    }
  };
  for (int w = 0; w < warps; ++w) hillis_steele(lane.data() + 32 * w, 32);
  std::vector<V> warp_total(warps);
  for (int w = 0; w < warps; ++w) warp_total[w] = lane[32 * w + 31];
  hillis_steele(warp_total.data(), warps);
  b.aggregate = warp_total[warps - 1];
  b.prefix.resize(block);
  for (int t = 1; t < block; ++t) {
    const int w = t / 32, l = t % 32;
    if (w == 0) b.prefix[t] = lane[t - 1];
    else if (l == 0) b.prefix[t] = warp_total[w - 1];
    else b.prefix[t] = Op::combine(warp_total[w - 1], lane[t - 1]);
  }
  return b;
}

// A thread's outputs from its prefix (absent: none) and its serial prefixes; returns the inclusive
// value at x[count - 1] when the thread owns it.
template <class Op>
void warp_hs_outputs(const WarpHsBlock<typename Op::Value>& b, const ScanShape& s, std::int64_t count, bool inclusive,
                     int t, const std::optional<typename Op::Value>& prefix, typename Op::Value* out,
                     typename Op::Value* total) {
  using V = typename Op::Value;
  for (int k = 0; k < s.items; ++k) {
    const std::int64_t i = std::int64_t(t) * s.items + k;
    if (i >= count) break;
    const V& own = b.serial[std::size_t(t) * s.items + k];
    const V incl = prefix ? Op::combine(*prefix, own) : own;
    if (i == count - 1 && total) *total = incl;
    if (inclusive) {
      out[i] = incl;
    } else if (k == 0) {
      out[i] = prefix ? *prefix : Op::identity();
    } else {
      const V& before = b.serial[std::size_t(t) * s.items + k - 1];
      out[i] = prefix ? Op::combine(*prefix, before) : before;
    }
  }
}

// One tile of warp_hillis_steele: writes out[0 .. count) and returns the tile's total (the
// inclusive value at x[count - 1]).
template <class Op>
typename Op::Value warp_hs_tile(const typename Op::Value* x, std::int64_t count, const ScanShape& s, bool inclusive,
                                typename Op::Value* out) {
  const auto b = warp_hs_block<Op>(x, count, s);
  typename Op::Value total = Op::identity();
  for (int t = 0; t < s.block; ++t) warp_hs_outputs<Op>(b, s, count, inclusive, t, b.prefix[t], out, &total);
  return total;
}

// warp_hs_chained over all of x: each tile's carry is the left fold of the aggregates before it,
// combined before the thread's in-tile prefix.
template <class Op>
void chained_scan_into(const ScanShape& s, std::span<const typename Op::Value> x, bool inclusive,
                       typename Op::Value* out) {
  using V = typename Op::Value;
  const auto n = static_cast<std::int64_t>(x.size());
  const std::int64_t tile = s.tile();
  std::optional<V> carry;  // P_{t-1}
  for (std::int64_t begin = 0; begin < n; begin += tile) {
    const std::int64_t count = std::min(tile, n - begin);
    const auto b = warp_hs_block<Op>(x.data() + begin, count, s);
    for (int t = 0; t < s.block; ++t) {
      std::optional<V> prefix = b.prefix[t];
      if (carry) prefix = prefix ? Op::combine(*carry, *prefix) : *carry;
      warp_hs_outputs<Op>(b, s, count, inclusive, t, prefix, out + begin, nullptr);
    }
    carry = carry ? Op::combine(*carry, b.aggregate) : b.aggregate;
  }
}

// One tile of block_blelloch (tree_scans.hpp's in-place Blelloch on the whole tile, padded with
// the identity); returns the root after the up-sweep.
template <class Op>
typename Op::Value blelloch_tile(const typename Op::Value* x, std::int64_t count, const ScanShape& s, bool inclusive,
                                 typename Op::Value* out) {
  using V = typename Op::Value;
  std::vector<V> a(std::size_t(s.tile()), Op::identity());
  std::copy(x, x + count, a.begin());
  const V total = blelloch_exclusive_in_place<Op>(std::span<V>(a));
  for (std::int64_t i = 0; i < count; ++i) out[i] = inclusive ? Op::combine(a[std::size_t(i)], x[i]) : a[std::size_t(i)];
  return total;
}

template <class Op>
void model_scan_into(GpuScan alg, const ScanShape& s, std::span<const typename Op::Value> x, bool inclusive,
                     typename Op::Value* out) {
  using V = typename Op::Value;
  const auto n = static_cast<std::int64_t>(x.size());
  if (n == 0) return;
  if (alg == GpuScan::warp_hs_chained) return chained_scan_into<Op>(s, x, inclusive, out);
  const std::int64_t tile = s.tile(), tiles = (n + tile - 1) / tile;
  std::vector<V> totals(static_cast<std::size_t>(tiles));
  for (std::int64_t t = 0; t < tiles; ++t) {
    const std::int64_t begin = t * tile, count = std::min(tile, n - begin);
    totals[std::size_t(t)] = alg == GpuScan::warp_hillis_steele
                                 ? warp_hs_tile<Op>(x.data() + begin, count, s, inclusive, out + begin)
                                 : blelloch_tile<Op>(x.data() + begin, count, s, inclusive, out + begin);
  }
  if (tiles == 1) return;
  std::vector<V> carry(totals.size());
  model_scan_into<Op>(alg, s, std::span<const V>(totals), false, carry.data());
  for (std::int64_t i = tile; i < n; ++i) {
    const V& c = carry[std::size_t(i / tile)];
    out[i] = (!inclusive && i % tile == 0) ? c : Op::combine(c, out[i]);
  }
}

}  // namespace detail

template <class Op>
std::vector<typename Op::Value> model_scan(GpuScan alg, const ScanShape& s, std::span<const typename Op::Value> x,
                                           bool inclusive) {
  if (!is_modelled(alg)) throw std::invalid_argument(std::string(to_string(alg)) + " is a library peer: not modelled");
  const std::string why = validate_scan_shape(alg, s, static_cast<std::int64_t>(x.size()), sizeof(typename Op::Value));
  if (!why.empty()) throw std::invalid_argument(why);
  std::vector<typename Op::Value> out(x.size());
  detail::model_scan_into<Op>(alg, s, x, inclusive, out.data());
  return out;
}

}  // namespace sumlab::scan
