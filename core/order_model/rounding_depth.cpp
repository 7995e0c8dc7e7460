#include "core/order_model/rounding_depth.hpp"

#include "core/order_model/classic_trees.hpp"
#include "core/order_model/thread_chain.hpp"

namespace sumlab::order_model {
namespace {

using u64 = std::uint64_t;

u64 ceil_div(u64 a, u64 b) { return (a + b - 1) / b; }

// Levels of a warp stage followed by a block stage over `active` threads of one block: lane 0
// meets ceil(log2 min(active, 32)) partners, warp 0 ceil(log2 warps) (both block stages pair the
// warp totals as a tree over the active warps).
u64 warp_and_block_levels(u64 active) {
  return ceil_log2(std::min<u64>(active, 32)) + ceil_log2(ceil_div(active, 32));
}

// The shuffle family: thread chains, warp and block stages, then the cross-block stage.
TreeDepth shuffle_depth(const LaunchShape& s, u64 n) {
  if (n == 0) return {};
  const u64 threads = static_cast<u64>(s.threads()), v = static_cast<u64>(s.vector);
  TreeDepth d;
  d.chain = s.mapping == Mapping::grid_stride
                ? std::min(n, ceil_div(ceil_div(n, v), threads) * v)
                : std::min(n, static_cast<u64>(contiguous_chunk(static_cast<std::int64_t>(n), s.threads(), s.vector)));
  const u64 active = static_cast<u64>(active_threads(static_cast<std::int64_t>(n), s.threads(), s.vector, s.mapping));
  d.levels = warp_and_block_levels(std::min<u64>(active, static_cast<u64>(s.block)));
  const u64 blocks = ceil_div(active, static_cast<u64>(s.block));
  if (s.cross == CrossBlock::atomic) {
    d.levels += blocks - 1;  // out = ((+0 + p_a) + p_b) + ...
  } else {                   // one block chains the partials (grid-stride), then its warp and block stages
    const u64 reducers = std::min<u64>(blocks, static_cast<u64>(s.block));
    d.levels += (ceil_div(blocks, static_cast<u64>(s.block)) - 1) + warp_and_block_levels(reducers);
  }
  return d;
}

// Harris 1-6: every pass loads (kernels 4-6 add a second element first), then one tree per block;
// relaunched on the partials until one is left.
TreeDepth classic_depth(GpuKernel k, u64 block, u64 n) {
  const u64 per_block = static_cast<u64>(classic_elements_per_block(k, static_cast<int>(block)));
  TreeDepth d;
  d.chain = n > 0 ? 1 : 0;
  for (u64 m = n; m > 1; m = ceil_div(m, per_block))
    d.levels += (per_block != block && m > block ? 1 : 0) + ceil_log2(std::min(block, m));
  return d;
}

// Harris 7: thread 0 of block 0 adds a pair (x_i + x_{i+B}) per trip of its grid-stride loop, then
// a tree over the block; a second pass of one block does the same over the G partials.
u64 multi_add_pass_depth(u64 grid, u64 block, u64 n) {
  if (n == 0) return 0;
  const u64 trips = ceil_div(n, 2 * block * grid);
  return (n > block ? 1 : 0) + (trips - 1) + ceil_log2(std::min(block, n));
}

}  // namespace

TreeDepth tree_depth(GpuKernel k, const LaunchShape& s, std::uint64_t n) {
  switch (info(k).family) {
    case KernelFamily::serial:
    case KernelFamily::library: return {n, 0};
    case KernelFamily::classic: return classic_depth(k, static_cast<u64>(s.block), n);
    case KernelFamily::multi_add: {
      const u64 g = static_cast<u64>(s.grid), b = static_cast<u64>(s.block);
      TreeDepth d{n > 0 ? 1u : 0u, multi_add_pass_depth(g, b, n)};
      if (g > 1) d.levels += multi_add_pass_depth(1, b, std::min(g, ceil_div(n, 2 * b)));
      return d;
    }
    case KernelFamily::shuffle: {
      LaunchShape c = s;
      if (auto x = fixed_cross_block(k)) c.cross = *x;  // gpu_atomic's chain, whatever the shape says
      return shuffle_depth(c, n);
    }
    case KernelFamily::integer: return {};
  }
  return {n, 0};
}

}  // namespace sumlab::order_model
