// The registry of segmented strategies (strategy.hpp).
#include "core/segmented/strategy.hpp"

#include <array>

namespace sumlab::segmented {

namespace {
constexpr std::array<StrategyInfo, 9> kStrategies{{
    {Strategy::serial_per_segment, "serial_per_segment",
     "CPU: a left-to-right chain per segment from +0", Where::cpu, Determinism::shape_invariant, false},
    {Strategy::prefix_difference, "prefix_difference",
     "CPU, WRONG: differences of one global prefix sum; a small segment after a large one cancels",
     Where::cpu, Determinism::shape_invariant, true},
    {Strategy::reduceat, "reduceat",
     "CPU, WRONG: numpy.add.reduceat; an empty segment returns the next element instead of 0",
     Where::cpu, Determinism::shape_invariant, true},
    {Strategy::block_per_segment, "block_per_segment",
     "GPU: one block per segment, thread chains then shfl_down warps and warp_of_warps",
     Where::gpu_modelled, Determinism::run_to_run, false},
    {Strategy::warp_per_segment, "warp_per_segment",
     "GPU: one warp per segment, lane chains then one shfl_down tree", Where::gpu_modelled,
     Determinism::shape_invariant, false},
    {Strategy::segmented_scan, "segmented_scan",
     "GPU: tiled scan of (head, value) pairs; the scan at each segment's last element",
     Where::gpu_modelled, Determinism::run_to_run, false},
    {Strategy::cub_segmented_reduce, "cub_segmented_reduce", "GPU peer: cub::DeviceSegmentedReduce::Sum",
     Where::gpu_peer, Determinism::run_to_run, false},
    {Strategy::cub_reduce_by_key, "cub_reduce_by_key",
     "GPU peer: cub::DeviceReduce::ReduceByKey on segment ids, scattered to segments", Where::gpu_peer,
     Determinism::not_deterministic, false},
    {Strategy::cub_scan_by_key, "cub_scan_by_key",
     "GPU peer: cub::DeviceScan::InclusiveSumByKey on segment ids, each segment's last prefix gathered",
     Where::gpu_peer, Determinism::not_deterministic, false},
}};
}  // namespace

std::span<const StrategyInfo> strategies() { return kStrategies; }

const StrategyInfo& info(Strategy s) {
  for (const auto& i : kStrategies)
    if (i.strategy == s) return i;
  return kStrategies[0];
}

std::optional<Strategy> find_strategy(std::string_view name) {
  for (const auto& i : kStrategies)
    if (i.name == name) return i.strategy;
  return std::nullopt;
}

std::string strategy_names() {
  std::string s;
  for (const auto& i : kStrategies) s += (s.empty() ? "" : ", ") + std::string(i.name);
  return s;
}

std::string to_string(const SegShape& s, Strategy st) {
  if (info(st).where == Where::gpu_peer) return "cub";
  if (info(st).where == Where::cpu) return "cpu";
  // Built by appending: GCC 12 warns (-Wrestrict, a false positive) on "b" + std::to_string(..).
  std::string r = "b";
  r += std::to_string(s.block);
  if (st == Strategy::segmented_scan) {
    r += 'x';
    r += std::to_string(s.items_per_thread);
  }
  return r;
}

SegShape default_shape(Strategy st) {
  if (st == Strategy::segmented_scan) return {1024, 16};
  return {};
}

std::string validate_shape(Strategy st, const SegShape& s) {
  if (info(st).where != Where::gpu_modelled) return "";
  if (s.block < 32 || s.block > 1024 || s.block % 32 != 0)
    return "block must be a multiple of 32 in 32..1024 (got " + std::to_string(s.block) + ")";
  if (st == Strategy::segmented_scan) {
    const int i = s.items_per_thread;
    if (i != 1 && i != 2 && i != 3 && i != 4 && i != 8 && i != 16)
      return "items per thread must be 1, 2, 3, 4, 8 or 16 (got " + std::to_string(i) + ")";
  }
  return "";
}

}  // namespace sumlab::segmented
