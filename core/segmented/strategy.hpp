#pragma once
// The segmented-sum strategies: one registry for the CPU algorithms (cpu_segmented.hpp), the GPU
// kernels (gpu/segmented.hpp) with their bit-exact CPU models (segmented_model.hpp), and the CUB
// peers (measured, never modelled). Names and descriptions feed CSV columns and plot labels.
//
// GPU strategies and their order (every kernel starts each partial at +0 and adds in IEEE T):
//   block_per_segment  block j of `block` threads sums segment j: thread t chains the elements
//                      begin + t, begin + t + block, ...; then the block stage of the sum kernels
//                      (shfl_down warp trees, warp_of_warps: core/order_model/block_tree.hpp).
//                      The pairing depends on `block`: run_to_run.
//   warp_per_segment   warp w sums segment w: lane l chains begin + l, begin + l + 32, ...; one
//                      shfl_down warp tree (core/order_model/warp_tree.hpp). `block` only packs
//                      block/32 warps per block, so the order is the same for every block size:
//                      shape_invariant over this strategy's shapes.
//   segmented_scan     the (head, value) operator of core/scan/segmented_op.hpp scanned over the
//                      flattened array in tiles of block * items_per_thread elements; a segment's
//                      sum is the scan at its last element (segmented_model.hpp gives the tree).
//                      The tiling decides the tree: run_to_run.
//   cub_segmented_reduce  cub::DeviceSegmentedReduce::Sum (CUB's tuning policy): peer, declared
//                      run_to_run (a fixed block-per-segment tree per GPU and CUB version).
//   cub_reduce_by_key  cub::DeviceReduce::ReduceByKey over (segment id, value) pairs, then a scatter
//                      to the segments (empty ones stay +0): peer, declared not_deterministic (its
//                      decoupled look-back combines whichever predecessor prefix is ready first).
//   cub_scan_by_key    cub::DeviceScan::InclusiveSumByKey over (segment id, value) pairs (all n
//                      prefix sums), then each segment's last one gathered (+0 where empty): the
//                      segmented scan's own peer; not_deterministic for the same reason.
#include <optional>
#include <span>
#include <string>
#include <string_view>

#include "core/determinism.hpp"

namespace sumlab::segmented {

enum class Strategy {
  serial_per_segment,
  prefix_difference,
  reduceat,
  block_per_segment,
  warp_per_segment,
  segmented_scan,
  cub_segmented_reduce,
  cub_reduce_by_key,
  cub_scan_by_key,
};

enum class Where { cpu, gpu_modelled, gpu_peer };

struct StrategyInfo {
  Strategy strategy;
  std::string_view name;
  std::string_view description;
  Where where;
  Determinism determinism;  // declared; the study measures it
  bool known_wrong;         // kept to show a pitfall
};

std::span<const StrategyInfo> strategies();
const StrategyInfo& info(Strategy s);
std::optional<Strategy> find_strategy(std::string_view name);
// "serial_per_segment, prefix_difference, ...": for --help and error messages.
std::string strategy_names();

// The launch shape of a GPU strategy: threads per block (a multiple of 32, 32..1024) and, for the
// segmented scan, items per thread (1, 2, 3, 4, 8 or 16: each is a compiled kernel; a tile is
// block * items_per_thread elements).
// The peers ignore it (CUB picks its own).
struct SegShape {
  int block = 256;
  int items_per_thread = 1;
  friend bool operator==(const SegShape&, const SegShape&) = default;
};
// "b256" or, for the scan, "b256x8".
std::string to_string(const SegShape& s, Strategy st);
// "" when the strategy accepts the shape; else one sentence.
std::string validate_shape(Strategy st, const SegShape& s);
// The shape a caller gets without naming one (bench): segmented_scan's measured best tile (one
// look-back per tile, so large tiles); b256 for the others.
SegShape default_shape(Strategy st);

}  // namespace sumlab::segmented
