#pragma once
// Bit-exact CPU models of the GPU segmented strategies (gpu/segmented.hpp): each executes its
// kernel's additions in the kernel's order, so GPU bits == model bits (tested under the `gpu`
// label, checked by `sumlab verify`). The warp and block trees are the sum kernels' own
// (core/order_model/warp_tree.hpp, block_tree.hpp), so one tree code serves both features.
//
// segmented_scan, the tiled scan of (head, value) pairs (core/scan/segmented_op.hpp's combine):
//   heads     element i is a head when it is the first element of a non-empty segment;
//   tiles     tile b is elements [b * B * I, (b + 1) * B * I) (B threads, I items per thread);
//             thread t owns the I consecutive elements from b * B * I + t * I ("blocked");
//   thread    folds its in-range items left to right with combine (a thread with none holds the
//             identity (false, +0));
//   warp      Hillis-Steele inclusive scan of the 32 thread folds: for d = 1, 2, 4, 8, 16, lane
//             l >= d takes combine(lane l - d's value, its own) (all lanes read before any writes:
//             a shuffle); a lane's exclusive prefix is lane l - 1's inclusive value;
//   block     one thread folds the W = B / 32 warp totals left to right: warp w's prefix is the
//             fold of warps 0..w-1, and a thread's in-tile prefix is combine(warp prefix, lane
//             prefix) (whichever exist); the fold of all W is the tile's aggregate;
//   tiles     the tile aggregates folded left to right (on the GPU by the chained look-back,
//             gpu/block/chained_lookback.cuh, whose fold is this one): tile b's carry is the fold of
//             tiles 0..b-1; a thread's prefix is combine(carry, in-tile prefix);
//   items     the thread walks its items again: run = combine(prefix, item), then
//             run = combine(run, next item), ...; scan[i] = run.value;
//   segments  sum_j = scan[o_{j+1} - 1] for a non-empty segment, +0 for an empty one.
// Assumptions: IEEE T, round-to-nearest-even, no contraction (reduce_ops.hpp).
#include <span>
#include <vector>

#include "core/order_model/order_trace.hpp"
#include "core/segmented/offsets.hpp"
#include "core/segmented/strategy.hpp"

namespace sumlab::segmented {

// The per-segment sums the GPU strategy `st` computes with shape `s`. Throws
// std::invalid_argument for bad offsets, a shape the strategy refuses (validate_shape), or a
// strategy with no model (CPU algorithms and CUB peers).
template <class T>
std::vector<T> model_segmented(Strategy st, const SegShape& s, std::span<const T> x, std::span<const Offset> offsets);

// The same model run on traced numbers (core/order_model/order_trace.hpp): `trace` is reset and
// receives every addition with its stage (a per-segment strategy's threads are its block's or
// warp's; the scan's are its tiles'), and each segment's sum comes back with its node (-1 for an
// empty segment of the scan, whose sum is the constant +0). The values are model_segmented's bits.
template <class T> struct TracedSegment {
  T value{};
  int id = -1;
};
template <class T>
std::vector<TracedSegment<T>> trace_segmented(Strategy st, const SegShape& s, std::span<const T> x,
                                              std::span<const Offset> offsets, order_model::Trace<T>& trace);

}  // namespace sumlab::segmented
