#pragma once
// Stage 3 of the model: the block's trees in shared memory, and the block stage of the shuffle
// kernels (warp trees, then one tree over the warp totals).
//
// Shared-memory trees are simulated level by level. Within a level of sequential addressing the
// active threads t < h write words [0, h) and read words [h, 2h), so no word is both read and
// written in one level and a plain loop over t gives the kernel's values; the barrier between
// levels is what makes that true on the GPU (see smem_race.hpp for what happens without it).
#include <array>
#include <cstdint>
#include <span>
#include <vector>

#include "core/launch_shape.hpp"
#include "core/order_model/warp_tree.hpp"

namespace sumlab::order_model {

// Sequential addressing over W words (any W >= 1): for h = P/2, P/4, .., 1 with P = W rounded up to
// a power of two, word t += word t+h for every t < h with t + h < W. Returns word 0.
template <class Op>
typename Op::Acc smem_sequential_tree(std::span<typename Op::Acc> words) {
  const int w = static_cast<int>(words.size());
  for (int h = pow2_ceil(w) / 2; h > 0; h >>= 1)
    for (int t = 0; t < h && t + h < w; ++t) words[t] = Op::combine(words[t], words[t + h]);
  return words[0];
}

// Interleaved addressing (Harris 1; Harris 2's strided indexing pairs the same words): for
// s = 1, 2, 4, ..: word t += word t+s for every t that is a multiple of 2s (with t + s < W).
template <class Op>
typename Op::Acc smem_interleaved_tree(std::span<typename Op::Acc> words) {
  const int w = static_cast<int>(words.size());
  for (int s = 1; s < w; s <<= 1)
    for (int t = 0; t + s < w; t += 2 * s) words[t] = Op::combine(words[t], words[t + s]);
  return words[0];
}

// The block stage of the shuffle kernels. `threads` holds the block's per-thread chain results
// (block = threads.size(), a multiple of 32). Each warp runs the warp stage; lane 0's total goes
// to word w; then either the sequential shared-memory tree over the W words (smem_tree) or warp 0
// loads them into lanes 0..W-1, identity elsewhere, and runs the warp stage again (warp_of_warps).
template <class Op>
typename Op::Acc block_stage(std::span<const typename Op::Acc> threads, WarpStage warp,
                             BlockStage block) {
  using Acc = typename Op::Acc;
  const int warps = static_cast<int>(threads.size()) / warp_size;
  std::vector<Acc> totals(static_cast<std::size_t>(warps));
  for (int w = 0; w < warps; ++w) {
    std::array<Acc, warp_size> lanes;
    for (int l = 0; l < warp_size; ++l) lanes[l] = threads[static_cast<std::size_t>(w * warp_size + l)];
    totals[static_cast<std::size_t>(w)] = warp_tree<Op>(lanes, warp);
  }
  if (block == BlockStage::smem_tree) return smem_sequential_tree<Op>(std::span<Acc>(totals));
  std::array<Acc, warp_size> lanes;
  for (int l = 0; l < warp_size; ++l) lanes[l] = l < warps ? totals[static_cast<std::size_t>(l)] : Op::identity();
  return warp_tree<Op>(lanes, warp);
}

}  // namespace sumlab::order_model
