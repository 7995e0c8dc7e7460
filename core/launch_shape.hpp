#pragma once
// The launch shape: one value that fixes a GPU reduction's order of operations.
//
// A parallel sum is three stages stacked (as the seed text on GPU reductions lays out): each
// thread adds its own elements in a sequential chain, each warp and then each block combine their
// threads' partials in a tree, and the blocks meet in a final cross-block step. Which elements a
// thread owns (grid, block, elements per load, mapping), which tree a warp and a block use, and how
// blocks meet decide every rounding, so the same value is handed to the CUDA launcher and to the
// CPU order model (core/order_model/), which is what makes bit-exact prediction possible.
//
// Definitions used by both sides (T = grid * block threads, V = elements per load):
//   grid_stride  the input is cut into V-element vectors; vector j belongs to thread j mod T, and a
//                thread walks its vectors in increasing j, adding each vector's elements in index
//                order. The trailing partial vector (n mod V elements) is read with scalar loads by
//                the thread that owns it, at the end of its chain.
//   contiguous   thread g owns the chunk [g*C, min((g+1)*C, n)), C = ceil(ceil(n/T)/V)*V, in order.
//   shfl_down    five steps off = 16,8,4,2,1: lane i += value of lane i+off; lanes i+off >= 32 get
//                their own value back (and add it to itself). Lane 0 holds the warp total.
//   xor_butterfly five steps m = 16..1: lane i += value of lane i^m. Every lane holds the total.
//   smem_tree    lane 0 of each warp writes the warp total to shared word w; a sequential-addressing
//                tree (word t += word t+h, h = P/2..1, P = W rounded up to a power of two, only
//                where t+h < W) with a barrier between levels reduces the W = block/32 words.
//   warp_of_warps warp 0 loads the W warp totals into lanes 0..W-1 (identity elsewhere) and runs the
//                warp stage once more.
//   second_kernel block b writes partial p_b; a second launch of one block of `block` threads reduces
//                p_0..p_{grid-1} with the same thread chain (V = 1, grid-stride), warp and block
//                stages.
//   last_block   as second_kernel, but inside the same launch: the last block to increment a
//                device-scope acquire/release counter reduces the partials (same order, same bits),
//                then resets the counter for the next launch.
//   atomic       block b does atomicAdd(out, p_b): the blocks' arrival order is the order of the
//                final chain, so the result is not deterministic.
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "core/hd.hpp"

namespace sumlab {

enum class Mapping { grid_stride, contiguous };
enum class WarpStage { shfl_down, xor_butterfly };
enum class BlockStage { smem_tree, warp_of_warps };
enum class CrossBlock { second_kernel, atomic, last_block };

std::string_view to_string(Mapping m);
std::string_view to_string(WarpStage w);
std::string_view to_string(BlockStage b);
std::string_view to_string(CrossBlock c);

// Parse the names printed by to_string; nullopt for anything else.
std::optional<Mapping> parse_mapping(std::string_view s);
std::optional<WarpStage> parse_warp_stage(std::string_view s);
std::optional<BlockStage> parse_block_stage(std::string_view s);
std::optional<CrossBlock> parse_cross_block(std::string_view s);

// "grid_stride|contiguous" and so on, for --help texts and error messages.
std::string_view mapping_names();
std::string_view warp_stage_names();
std::string_view block_stage_names();
std::string_view cross_block_names();

struct LaunchShape {
  int grid = 528;  // blocks (4 x the 132 SMs of an H200)
  int block = 256; // threads per block
  int vector = 1;  // elements per load: 1, 2 or 4 (scalar, 2-wide or 4-wide vector loads)
  Mapping mapping = Mapping::grid_stride;
  WarpStage warp = WarpStage::shfl_down;
  BlockStage block_stage = BlockStage::warp_of_warps;
  CrossBlock cross = CrossBlock::second_kernel;

  friend bool operator==(const LaunchShape&, const LaunchShape&) = default;
  std::int64_t threads() const { return std::int64_t(grid) * block; }
};

// "528x256 v1 grid_stride shfl_down warp_of_warps second_kernel": compact, stable, one CSV field.
std::string to_string(const LaunchShape& s);
// Inverse of to_string(LaunchShape); nullopt when the text is not in that form.
std::optional<LaunchShape> parse_launch_shape(std::string_view s);

// Limits every kernel shares. Kernel-specific rules (multiple of 32, power of two, which
// cross-block stages a kernel accepts) live in core/gpu_kernel.hpp's validate_shape.
inline constexpr int max_block = 1024;
inline constexpr int max_grid = 1 << 24;

// "" when the shape is valid for every kernel that takes one; otherwise one sentence saying what
// is wrong and what would be accepted.
std::string validate(const LaunchShape& s);

// Smallest power of two >= x (x >= 1).
SUMLAB_HD constexpr int pow2_ceil(int x) {
  int p = 1;
  while (p < x) p <<= 1;
  return p;
}
SUMLAB_HD constexpr bool is_pow2(int x) { return x > 0 && (x & (x - 1)) == 0; }

// Chunk length of the contiguous mapping: ceil(ceil(n / threads) / vector) * vector, so that every
// chunk starts on a vector boundary.
SUMLAB_HD constexpr std::int64_t contiguous_chunk(std::int64_t n, std::int64_t threads, int vector) {
  if (n <= 0) return 0;
  const std::int64_t per_thread = (n + threads - 1) / threads;
  return (per_thread + vector - 1) / vector * vector;
}

}  // namespace sumlab
