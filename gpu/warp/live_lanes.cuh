#pragma once
// Warp level: the lanes of the calling thread's warp that exist, for blocks that need not be whole
// warps (gpu_exact, gpu_fixed_point: any block size). A *_sync intrinsic given this mask waits for
// every lane of the warp, where __activemask() names only the lanes that happen to run together
// (after divergent code, a part of the warp).
namespace sumlab::gpu::detail {

// 32, except in a block's partial last warp.
__device__ __forceinline__ int live_lanes() {
  const int left = static_cast<int>(blockDim.x) - static_cast<int>(threadIdx.x & ~31u);
  return left < 32 ? left : 32;
}
__device__ __forceinline__ unsigned live_mask() {
  const int live = live_lanes();
  return live == 32 ? 0xffffffffu : (1u << live) - 1u;
}

}  // namespace sumlab::gpu::detail
