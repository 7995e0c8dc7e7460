#pragma once
// Stage 2 of the model: the warp tree over 32 lanes, exactly as the shuffles execute it.
//
// Each step reads every lane's value before any lane writes (a shuffle is a simultaneous exchange),
// then lane i computes combine(own, partner):
//   shfl_down, off = 16, 8, 4, 2, 1: partner = lane i + off, or lane i itself when i + off >= 32
//     (__shfl_down_sync returns the caller's own value there, so those lanes add their value to
//     itself; the results are garbage that never reaches lane 0, and the model keeps them anyway
//     so that every lane's bits are the kernel's);
//   xor_butterfly, m = 16, 8, 4, 2, 1: partner = lane i ^ m; every lane ends with the total.
// For lane 0 the two trees pair the same operands at every level (lane 0's partner is lane off in
// both), so lane 0's bits are the same under either stage; the other lanes differ.
#include <array>

#include "core/launch_shape.hpp"

namespace sumlab::order_model {

inline constexpr int warp_size = 32;

// The partner lane a shuffle step hands to `lane`.
constexpr int warp_partner(WarpStage w, int lane, int offset) {
  if (w == WarpStage::xor_butterfly) return lane ^ offset;
  return lane + offset < warp_size ? lane + offset : lane;
}

// One step (one shuffle + one combine in every lane).
template <class Op>
void warp_tree_step(std::array<typename Op::Acc, warp_size>& lanes, WarpStage w, int offset) {
  const auto before = lanes;
  for (int i = 0; i < warp_size; ++i) lanes[i] = Op::combine(before[i], before[warp_partner(w, i, offset)]);
}

// All five steps; every lane's final value.
template <class Op>
void warp_tree_lanes(std::array<typename Op::Acc, warp_size>& lanes, WarpStage w) {
  for (int off = warp_size / 2; off > 0; off >>= 1) warp_tree_step<Op>(lanes, w, off);
}

// Lane 0's final value: the warp total.
template <class Op>
typename Op::Acc warp_tree(std::array<typename Op::Acc, warp_size> lanes, WarpStage w) {
  warp_tree_lanes<Op>(lanes, w);
  return lanes[0];
}

}  // namespace sumlab::order_model
