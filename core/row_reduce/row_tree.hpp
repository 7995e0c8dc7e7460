#pragma once
// The CPU model of a row's reduction order (row_kernel.hpp): each thread's strided chain, the XOR
// butterfly of every warp, and for block_per_row the butterfly over the warp totals that every
// warp runs; the result is lane 0's. The warp trees are core/order_model/warp_tree.hpp's, the
// same simulation the summation model uses (every lane's value kept, simultaneous exchange).
// The CUDA side of the same order is gpu/rows/row_tree.cuh.
#include <array>
#include <cstdint>
#include <span>
#include <vector>

#include "core/launch_shape.hpp"
#include "core/order_model/warp_tree.hpp"

namespace sumlab::row_reduce {

// Presents a row op (State, identity, combine) under the name order_model's trees expect (Acc).
template <class Op> struct OrderModelOp {
  using Acc = typename Op::State;
  static Acc identity() { return Op::identity(); }
  static Acc combine(const Acc& a, const Acc& b) { return Op::combine(a, b); }
};

// threads.size() = T, a multiple of 32. block_stage: true for block_per_row.
template <class Op>
typename Op::State group_tree(std::span<const typename Op::State> threads, bool block_stage) {
  using State = typename Op::State;
  using M = OrderModelOp<Op>;
  constexpr int ws = order_model::warp_size;
  const int warps = static_cast<int>(threads.size()) / ws;
  std::vector<State> totals(static_cast<std::size_t>(warps));
  std::array<State, ws> lanes;
  for (int w = 0; w < warps; ++w) {
    for (int l = 0; l < ws; ++l) lanes[l] = threads[static_cast<std::size_t>(w * ws + l)];
    order_model::warp_tree_lanes<M>(lanes, WarpStage::xor_butterfly);
    totals[static_cast<std::size_t>(w)] = lanes[0];
  }
  if (!block_stage) return totals[0];
  for (int l = 0; l < ws; ++l) lanes[l] = l < warps ? totals[static_cast<std::size_t>(l)] : Op::identity();
  order_model::warp_tree_lanes<M>(lanes, WarpStage::xor_butterfly);
  return lanes[0];
}

// One reduction over a row of `cols` columns by T threads: thread t folds step(state, j) over
// j = t, t + T, .. < cols from the identity, then group_tree. `scratch` holds T states (reused
// across rows to avoid an allocation per row).
template <class Op, class Step>
typename Op::State row_reduce(std::int64_t cols, int threads, bool block_stage, std::vector<typename Op::State>& scratch,
                              Step step) {
  scratch.assign(static_cast<std::size_t>(threads), Op::identity());
  for (int t = 0; t < threads; ++t) {
    auto s = scratch[static_cast<std::size_t>(t)];
    for (std::int64_t j = t; j < cols; j += threads) s = step(s, j);
    scratch[static_cast<std::size_t>(t)] = s;
  }
  return group_tree<Op>(std::span<const typename Op::State>(scratch), block_stage);
}

}  // namespace sumlab::row_reduce
