#pragma once
// Segmented sums on the CPU: the honest serial one and two tempting shortcuts that are wrong in
// instructive ways (the seed text on segmented reductions), kept as named algorithms so the study
// can show HOW they fail. Offsets are validated first (offsets.hpp; std::invalid_argument).
// Assumptions: IEEE binary32/64, round-to-nearest-even, no contraction (-ffp-contract=off).
#include <span>
#include <vector>

#include "core/segmented/offsets.hpp"

namespace sumlab::segmented {

// serial_per_segment: for each segment, acc = +0, then acc += x[i] for i in index order.
// Order: a left-to-right chain per segment, independent of every other segment.
// Bound (Higham): |computed - exact| <= gamma_{m-1} * sum |x_i| over the segment's m elements,
// gamma_k = k u / (1 - k u); so a segment's error depends only on that segment.
// Empty segment: +0. A segment of only -0 values gives +0 (the +0 start), where the exact sum is -0.
// Determinism: one order, shape_invariant.
template <class T> std::vector<T> serial_per_segment(std::span<const T> x, std::span<const Offset> offsets);

// prefix_difference [WRONG]: c_0 = +0, c_{i+1} = c_i + x_i (one running sum in T over the whole
// array), then sum_j = c_{o_{j+1}} - c_{o_j}.
// What goes wrong: each c_i carries an absolute rounding error up to ~ i u max|c|, accumulated
// over EVERY earlier segment, and the difference cancels the large common part, so a small
// segment after a large one gets the large one's rounding error: absolute error up to
// ~ gamma_{o_{j+1}} * sum_{i < o_{j+1}} |x_i|, i.e. relative error ~ (prefix mass / segment mass) u,
// unbounded in the segment's own terms (the mean(x^2) - mu^2 disease). Once c exceeds 2^p times
// a segment's elements, the segment vanishes entirely (difference 0).
// Empty segment: c - c = +0 (correct). Determinism: one order.
template <class T> std::vector<T> prefix_difference(std::span<const T> x, std::span<const Offset> offsets);

// reduceat [WRONG]: numpy.add.reduceat(x, offsets[:-1]) semantics: for segment j with
// o_j < o_{j+1}, the left-to-right sum of x[o_j : o_{j+1}] (the same chain as serial_per_segment,
// but starting from x[o_j] instead of +0); for an EMPTY segment, x[o_j], the first element of the
// NEXT non-empty segment, instead of 0. The last segment runs to the end of the array.
// When an empty segment starts at n (no next element) numpy raises IndexError; this routine
// returns a quiet NaN there, so the study counts it as a wrong empty segment instead of stopping.
template <class T> std::vector<T> reduceat(std::span<const T> x, std::span<const Offset> offsets);

}  // namespace sumlab::segmented
