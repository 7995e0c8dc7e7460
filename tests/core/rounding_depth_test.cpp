// core/order_model/rounding_depth: the analytic longest path of every GPU kernel's tree against
// the same quantity counted by running the model itself with a counting op, over awkward sizes
// and shapes. The tree bounds (gamma_d S) are only as true as this d.
#include "core/order_model/rounding_depth.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <span>
#include <vector>

#include "core/gpu_kernel.hpp"
#include "core/order_model/classic_trees.hpp"
#include "core/order_model/cross_block.hpp"

namespace sumlab::order_model {
namespace {

// Counts, for every value, the longest thread chain under it and the combines above that chain.
struct ChainLevels {
  bool idle = true;
  std::uint64_t chain = 0, levels = 0;
};
struct ChainLevelsOp {
  using In = int;
  using Acc = ChainLevels;
  static Acc identity() { return {}; }
  static Acc leaf(In) { return {false, 1, 0}; }
  static Acc add(Acc a, In) { return a.idle ? Acc{false, 1, 0} : Acc{false, a.chain + 1, a.levels}; }
  static Acc combine(Acc a, Acc b) {
    if (a.idle) return b;
    if (b.idle) return a;
    return {false, std::max(a.chain, b.chain), std::max(a.levels, b.levels) + 1};
  }
};

template <class Op> typename Op::Acc fold_in_launch_order(const std::vector<typename Op::Acc>& partials) {
  typename Op::Acc out = Op::identity();
  for (const auto& p : partials) out = Op::combine(out, p);
  return out;
}

// The model's own longest path, counted.
template <class Op> typename Op::Acc counted(GpuKernel k, const LaunchShape& s, std::size_t n) {
  const std::vector<int> x(n, 1);
  const std::span<const int> xs(x);
  switch (k) {
    case GpuKernel::multi_add: return multi_add_reduce<Op>(s.grid, s.block, xs);
    case GpuKernel::atomic: return fold_in_launch_order<Op>(block_partials<Op>(xs, s));
    case GpuKernel::two_pass:
    case GpuKernel::last_block:
    case GpuKernel::kahan:
    case GpuKernel::double_acc: {
      const auto p = block_partials<Op>(xs, s);
      return reduce_partials<Op>(std::span<const typename Op::Acc>(p), s.block, s.warp, s.block_stage);
    }
    default: return classic_reduce<Op>(k, s.block, xs);
  }
}

const std::size_t sizes[] = {0, 1, 2, 3, 31, 32, 33, 63, 64, 65, 127, 255, 256, 257, 511, 1000, 1023, 1024, 1025,
                             4095, 4097, 8192, 10007, 65537, 100003};

std::vector<LaunchShape> shuffle_shapes() {
  std::vector<LaunchShape> out;
  for (int grid : {1, 2, 3, 7, 40})
    for (int block : {32, 64, 96, 256})
      for (int vector : {1, 2, 4})
        for (Mapping m : {Mapping::grid_stride, Mapping::contiguous})
          for (BlockStage b : {BlockStage::warp_of_warps, BlockStage::smem_tree}) {
            LaunchShape s;
            s.grid = grid;
            s.block = block;
            s.vector = vector;
            s.mapping = m;
            s.block_stage = b;
            out.push_back(s);
          }
  return out;
}

TEST(RoundingDepth, ShuffleKernelsMatchTheModelsLongestPath) {
  for (GpuKernel k : {GpuKernel::two_pass, GpuKernel::atomic, GpuKernel::kahan}) {
    for (LaunchShape s : shuffle_shapes()) {
      if (auto c = fixed_cross_block(k)) s.cross = *c;
      for (std::size_t n : sizes) {
        const TreeDepth d = tree_depth(k, s, n);
        const RoundingDepth model = counted<RoundingDepthOp>(k, s, n);
        const ChainLevels cl = counted<ChainLevelsOp>(k, s, n);
        const std::uint64_t truth = model.idle ? 0 : model.depth;
        // The chain is bounded by whole vectors (the trailing partial vector can make thread 0's
        // chain up to vector - 1 shorter); everything above the chain is exact.
        EXPECT_GE(d.roundings(), truth) << info(k).name << " " << to_string(s) << " n=" << n;
        EXPECT_LE(d.roundings(), truth + static_cast<std::uint64_t>(s.vector - 1))
            << info(k).name << " " << to_string(s) << " n=" << n;
        if (!cl.idle) {
          EXPECT_GE(d.chain, cl.chain) << info(k).name << " " << to_string(s) << " n=" << n;
          EXPECT_EQ(d.levels, cl.levels) << info(k).name << " " << to_string(s) << " n=" << n;
        }
      }
    }
  }
}

TEST(RoundingDepth, ClassicTreesMatchTheModelsLongestPath) {
  for (GpuKernel k : {GpuKernel::interleaved, GpuKernel::strided, GpuKernel::sequential, GpuKernel::first_add,
                      GpuKernel::warp_unrolled, GpuKernel::unrolled})
    for (int block : {32, 64, 128, 1024})
      for (std::size_t n : sizes) {
        LaunchShape s;
        s.block = block;
        const RoundingDepth model = counted<RoundingDepthOp>(k, s, n);
        EXPECT_EQ(tree_depth(k, s, n).roundings(), model.idle ? 0u : model.depth)
            << info(k).name << " block " << block << " n=" << n;
      }
}

TEST(RoundingDepth, MultiAddMatchesTheModelsLongestPath) {
  for (int grid : {1, 2, 5, 64})
    for (int block : {32, 128, 512})
      for (std::size_t n : sizes) {
        LaunchShape s;
        s.grid = grid;
        s.block = block;
        const RoundingDepth model = counted<RoundingDepthOp>(GpuKernel::multi_add, s, n);
        EXPECT_EQ(tree_depth(GpuKernel::multi_add, s, n).roundings(), model.idle ? 0u : model.depth)
            << "grid " << grid << " block " << block << " n=" << n;
      }
}

TEST(RoundingDepth, HandDerivedCases) {
  LaunchShape s;  // 528 x 256, v1, grid-stride, shfl_down, warp_of_warps, second kernel
  s.grid = 528;
  s.block = 256;
  // n = 2^24: 16777216 / 135168 threads -> 125 elements in thread 0's chain (124 roundings),
  // 5 warp levels, 3 levels over 8 warps, then 528 partials: 3 per reducing thread (2 roundings),
  // 5 + 3 levels: 124 + 8 + 2 + 8 = 142.
  EXPECT_EQ(tree_depth(GpuKernel::two_pass, s, std::uint64_t{1} << 24).roundings(), 142u);
  // The serial chain and the library peers: n - 1, whatever the shape.
  EXPECT_EQ(tree_depth(GpuKernel::serial, s, 1000).roundings(), 999u);
  EXPECT_EQ(tree_depth(GpuKernel::cub, s, 1000).roundings(), 999u);
  // Harris 3 with 256 threads: 8 levels per pass; 2^24 -> 65536 -> 256 -> 1 takes three passes.
  EXPECT_EQ(tree_depth(GpuKernel::sequential, s, std::uint64_t{1} << 24).roundings(), 24u);
  // Harris 4 adds one rounding per pass at the load while a pass has more than B elements; its
  // blocks take 512: 2^24 -> 32768 -> 64 -> 1, (1 + 8) + (1 + 8) + 6.
  EXPECT_EQ(tree_depth(GpuKernel::first_add, s, std::uint64_t{1} << 24).roundings(), 24u);
  // Integer sums have no tree.
  EXPECT_EQ(tree_depth(GpuKernel::exact, s, 1000).roundings(), 0u);
}

}  // namespace
}  // namespace sumlab::order_model
