#pragma once
// How many roundings the longest path of a kernel's summation tree holds, for n terms and a launch
// shape: the d of the tree bound gamma_d * sum|x| (core/error_bound.hpp), read off the order this
// folder models, without running it.
//
// A thread's chain of m terms starts from the identity, so its first addition is exact and the
// chain holds m - 1 roundings; a tree level whose partner is an idle thread's identity is exact
// too, so the levels count only partners that cover terms: ceil(log2 a) levels over a active
// lanes, warps or words. Every term of the fullest block (block 0) meets every level of its tree,
// so the longest path is that of x_0: thread 0's chain, lane 0, warp 0, block 0, and, across
// blocks, thread 0 of the second kernel. tests/core/rounding_depth_test.cpp checks these formulas
// against RoundingDepthOp below run through the model itself.
#include <algorithm>
#include <cstdint>

#include "core/gpu_kernel.hpp"
#include "core/launch_shape.hpp"

namespace sumlab::order_model {

// ceil(log2 a) for a >= 1 (0 for a <= 1).
constexpr std::uint64_t ceil_log2(std::uint64_t a) {
  std::uint64_t levels = 0;
  while ((std::uint64_t{1} << levels) < a) ++levels;
  return levels;
}

// A tree's longest path: `chain` terms in one thread's chain, then `levels` combines above it.
struct TreeDepth {
  std::uint64_t chain = 0;
  std::uint64_t levels = 0;
  std::uint64_t roundings() const { return (chain > 0 ? chain - 1 : 0) + levels; }
};

// nullopt-free: for kernels without a tree (exact, fixed point) the depth is 0; for the library
// peers (their order is theirs) and gpu_serial it is n - 1, the longest chain any order can have.
TreeDepth tree_depth(GpuKernel k, const LaunchShape& s, std::uint64_t n);

// The op that counts: a value is the number of roundings on the longest path into it, or idle
// (an identity, exact to add). Run through the model (block_partials, classic_reduce, ...) it
// gives the depth by construction.
struct RoundingDepth {
  bool idle = true;
  std::uint64_t depth = 0;
};
struct RoundingDepthOp {
  using In = int;  // any element: only its presence matters
  using Acc = RoundingDepth;
  static Acc identity() { return {}; }
  static Acc leaf(In) { return {false, 0}; }
  static Acc add(Acc a, In x) { return combine(a, leaf(x)); }
  static Acc combine(Acc a, Acc b) {
    if (a.idle) return b;
    if (b.idle) return a;
    return {false, std::max(a.depth, b.depth) + 1};
  }
  static Acc finish(Acc a) { return a; }
};

}  // namespace sumlab::order_model
