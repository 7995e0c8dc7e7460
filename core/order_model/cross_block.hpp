#pragma once
// Stage 4 of the model: the first pass's block partials and the cross-block stage.
//
// block_partials runs stages 1-3 for every block of a shuffle-family kernel. The cross-block
// stages:
//   second_kernel and last_block  reduce_partials: one block of `block` threads, each chaining the
//       partials p_t, p_{t+block}, .. with Op::combine (grid-stride, one element per load), then the
//       same warp and block stages. The last-block kernel runs this code in the last-arriving block,
//       so both give the same bits for the same shape.
//   atomic  atomic_fold: out = +0, then out = out + p_b for the blocks in arrival order (atomicAdd
//       computes old + val; for float, with subnormal operands and results flushed to zero). The order is the hardware's; sample_atomic_results draws orders from a
//       seed and returns the distribution of results they give.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <map>
#include <span>
#include <type_traits>
#include <vector>

#include "core/launch_shape.hpp"
#include "core/order_model/block_tree.hpp"
#include "core/order_model/thread_chain.hpp"

namespace sumlab::order_model {

// Stages 1-3 for every block of the first pass: `shape.grid` partials.
template <class Op>
std::vector<typename Op::Acc> block_partials(std::span<const typename Op::In> x,
                                             const LaunchShape& shape) {
  using Acc = typename Op::Acc;
  const std::int64_t block = shape.block;
  std::vector<Acc> per_thread = thread_partials<Acc>(
      x, shape.threads(), shape.vector, shape.mapping, Op::identity(),
      [](Acc a, typename Op::In v) { return Op::add(a, v); });
  // Pad the last active block with idle threads; blocks past it are all idle and give the value of
  // an all-identity block (computed, not assumed: for a sum it is +0).
  const std::int64_t active_blocks = (static_cast<std::int64_t>(per_thread.size()) + block - 1) / block;
  per_thread.resize(static_cast<std::size_t>(active_blocks * block), Op::identity());
  const std::vector<Acc> idle(static_cast<std::size_t>(block), Op::identity());
  const Acc idle_block = block_stage<Op>(std::span<const Acc>(idle), shape.warp, shape.block_stage);

  std::vector<Acc> partials(static_cast<std::size_t>(shape.grid), idle_block);
  for (std::int64_t b = 0; b < active_blocks; ++b)
    partials[static_cast<std::size_t>(b)] = block_stage<Op>(
        std::span<const Acc>(per_thread).subspan(static_cast<std::size_t>(b * block),
                                                 static_cast<std::size_t>(block)),
        shape.warp, shape.block_stage);
  return partials;
}

// The second kernel's (and the last block's) reduction of the partials.
template <class Op>
typename Op::Acc reduce_partials(std::span<const typename Op::Acc> partials, int block,
                                 WarpStage warp, BlockStage block_st) {
  using Acc = typename Op::Acc;
  std::vector<Acc> per_thread = thread_partials<Acc>(
      partials, block, 1, Mapping::grid_stride, Op::identity(),
      [](Acc a, Acc p) { return Op::combine(a, p); });
  per_thread.resize(static_cast<std::size_t>(block), Op::identity());
  return block_stage<Op>(std::span<const Acc>(per_thread), warp, block_st);
}

// atomicAdd of the partials in the given arrival order, starting from the +0 the launcher stores.
// A float atomicAdd on global memory flushes subnormal inputs and results to zero of the same sign,
// whatever -ftz says (PTX ISA, atom/red .add.f32 on global memory; double's, and shared memory's,
// keep them): the model flushes where the hardware does. A subnormal sum of two floats is exact,
// so a flushed result is the only change.
template <class T> T atomic_add_as_the_gpu(T out, T v) {
  if constexpr (std::is_same_v<T, float>) {
    const auto flush = [](float a) { return std::fabs(a) < std::numeric_limits<float>::min() ? std::copysign(0.0f, a) : a; };
    return flush(out + flush(v));
  } else {
    return out + v;
  }
}

template <class T> T atomic_fold(std::span<const T> partials, std::span<const int> order) {
  T out = T(0);
  for (int b : order) out = atomic_add_as_the_gpu(out, partials[static_cast<std::size_t>(b)]);
  return out;
}

// Whether every arrival order provably gives atomic_fold the same bits. A partial that the fold
// sees as zero (+-0, or a float subnormal, flushed) leaves out unchanged, except that +0 turns an
// out of -0 into +0; out starts at +0 and stays +0 until the first nonzero partial a, then is a
// (zeros after it change nothing), and after the second, b, is a + b = b + a (addition commutes;
// one NaN operand gives that NaN either way). So with at most one nonzero partial the result is
// fixed, and with exactly two it is fixed unless a + b is -0 (a float sum flushed from a negative
// subnormal: a later +0 partial then gives +0, an earlier one -0) or both are NaN (the payload
// kept can depend on the order). With three or more the rounding of (a + b) + c depends on the
// order: false, the bits may differ.
template <class T> bool atomic_fold_order_free(std::span<const T> partials) {
  std::vector<T> nonzero;
  for (const T v : partials)
    if (atomic_add_as_the_gpu(T(0), v) != T(0) || std::isnan(v)) {
      nonzero.push_back(v);
      if (nonzero.size() > 2) return false;
    }
  if (nonzero.size() < 2) return true;
  if (std::isnan(nonzero[0]) && std::isnan(nonzero[1])) return false;
  const T s = atomic_add_as_the_gpu(atomic_add_as_the_gpu(T(0), nonzero[0]), nonzero[1]);
  return !(s == T(0) && std::signbit(s));
}

// The launch order 0, 1, .., grid-1: one of the possible arrival orders.
inline std::vector<int> launch_order(int grid) {
  std::vector<int> o(static_cast<std::size_t>(grid));
  for (int i = 0; i < grid; ++i) o[static_cast<std::size_t>(i)] = i;
  return o;
}

// How block arrival orders are drawn.
struct ArrivalModel {
  // 0: every permutation equally likely. w > 0: blocks arrive in launch order by windows of w
  // consecutive blocks (one wave of resident blocks), in random order within a window.
  int window = 0;
};

// A small, well-mixed generator (splitmix64), so the sampling needs nothing outside this header.
struct SplitMix64 {
  std::uint64_t state;
  std::uint64_t next() {
    std::uint64_t z = (state += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
  }
  // Uniform in [0, bound) by rejection (no modulo bias).
  std::uint64_t below(std::uint64_t bound) {
    const std::uint64_t limit = ~std::uint64_t(0) - (~std::uint64_t(0) % bound);
    std::uint64_t r;
    do r = next(); while (r >= limit);
    return r % bound;
  }
};

inline void shuffle_range(std::vector<int>& v, std::size_t begin, std::size_t end, SplitMix64& rng) {
  for (std::size_t i = end; i > begin + 1; --i) {
    const std::size_t j = begin + static_cast<std::size_t>(rng.below(i - begin));
    std::swap(v[i - 1], v[j]);
  }
}

template <class T> struct AtomicOutcome {
  T value;
  int count;  // how many of the sampled orders gave this value
};

// The distribution of atomic_fold over `samples` arrival orders drawn from `seed`, most frequent
// first (ties by value bits).
template <class T>
std::vector<AtomicOutcome<T>> sample_atomic_results(std::span<const T> partials, int samples,
                                                    std::uint64_t seed, ArrivalModel model = {}) {
  SplitMix64 rng{seed};
  const int grid = static_cast<int>(partials.size());
  std::map<T, int> counts;  // totally ordered for the finite values a sum of finite partials gives
  std::vector<AtomicOutcome<T>> nan_bucket;
  std::vector<int> order = launch_order(grid);
  for (int s = 0; s < samples; ++s) {
    order = launch_order(grid);
    const std::size_t w = model.window > 0 ? static_cast<std::size_t>(model.window) : order.size();
    for (std::size_t b = 0; b < order.size(); b += w) shuffle_range(order, b, std::min(order.size(), b + w), rng);
    const T v = atomic_fold<T>(partials, order);
    if (v != v) {
      if (nan_bucket.empty()) nan_bucket.push_back({v, 0});
      ++nan_bucket[0].count;
    } else {
      ++counts[v];
    }
  }
  std::vector<AtomicOutcome<T>> out;
  for (const auto& [v, c] : counts) out.push_back({v, c});
  out.insert(out.end(), nan_bucket.begin(), nan_bucket.end());
  std::stable_sort(out.begin(), out.end(), [](const auto& a, const auto& b) { return a.count > b.count; });
  return out;
}

}  // namespace sumlab::order_model
