// Experiment, run 27 and run 29 (reports/h200-2026-11-30-f/README.md): gpu/thread/bulk_loads.cuh as
// it was then, with whole rounds of tiles and the rest as at most one 64-byte group per thread loaded
// from global memory; no proxy fence before a refill. Its fixed-point sums changed bits from launch
// to launch at 528 and 1056 blocks of 256 threads; with the fence (run 29) they did not. Not built.
#pragma once
// Thread level: a block's input brought into shared memory tile by tile by the bulk-copy engine
// (cp.async.bulk, sm_90: one thread issues a whole tile, completion counted in bytes on an
// mbarrier), for the kernels whose bits do not depend on which thread adds which element
// (gpu_exact, gpu_fixed_point: integer totals). Why: those kernels compute much per element; with
// their loads in registers, issued between groups, too few bytes stay in flight for HBM's
// bandwidth, while here every block keeps its next tiles in flight whatever its threads compute,
// without a register. On the H200 (reports/h200-2026-11-30-e/experiments), the fixed-point
// quantisation of 2^30 floats ran at 0.87 of CUB's time with register loads and 1.00 with these
// tiles, and a plain float sum over the same tiles at 1.01.
//
// Tiles: blockDim.x * 64 bytes; thread t takes the 16-byte chunks t, t + blockDim.x, ... of each
// (no bank conflicts), a group of 64 bytes. Tile j goes to block j mod gridDim.x, in whole rounds
// of gridDim.x tiles. What is left after the last round (less than a round: less than 64 bytes a
// thread) goes to the grid's threads as groups of 64 bytes loaded from global memory, at most one
// each (asked into L2 when the block's last tile is asked for), so that no block reads a whole
// tile more than another; the elements before the input's first 16-byte boundary and after the
// last whole group go one by one to the grid's threads. A tile's stage is refilled once every
// thread of the block has read it (a barrier per tile), with the next tile that stage will hold.
// Measured and left out (H200, float32): each block an even, contiguous share of the input, its
// last tile partial and padded (run 25: 0.87 of CUB's time at 2^30 where these tiles ran at 0.99;
// run 26: whole rounds then one padded partial tile per block, 2-15% slower than whole tiles only,
// both times gpu_exact most); claiming the later tiles from a counter, so that faster SMs take
// more (runs 19-22: 1-1.5% faster for float32 fixed point with 1024-thread blocks, 1-3% slower
// for gpu_exact and for float64).
#include <cstddef>
#include <cstdint>
#include <cstring>

namespace sumlab::gpu::detail {

inline constexpr int bulk_group_bytes = 64;  // a thread's share of a tile
template <class T> inline constexpr int bulk_group = bulk_group_bytes / int(sizeof(T));  // its elements
inline constexpr int bulk_max_stages = 4;
// Tiles in flight per block: 64, 96 and 128 KB of shared memory for blocks of 256, 512 and 1024
// threads (the experiment's best were 2 to 4 stages).
__host__ __device__ constexpr int bulk_stages(int block) { return block <= 256 ? 4 : block <= 512 ? 3 : 2; }
// Dynamic shared memory a launch must provide (and opt in to, past 48 KB).
constexpr std::size_t bulk_smem_bytes(int block) {
  return static_cast<std::size_t>(bulk_stages(block)) * static_cast<std::size_t>(block) * bulk_group_bytes;
}

#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ < 900
#error "bulk loads need sm_90 or later (cmake/SumlabCuda.cmake builds compute_90)"
#endif

namespace bulk {
__device__ __forceinline__ unsigned smem(const void* p) { return static_cast<unsigned>(__cvta_generic_to_shared(p)); }
__device__ __forceinline__ void init(unsigned long long* bar) {
  asm volatile("mbarrier.init.shared::cta.b64 [%0], 1;" ::"r"(smem(bar)) : "memory");
}
__device__ __forceinline__ void fence_init() {
  asm volatile("fence.mbarrier_init.release.cluster;" ::: "memory");
}
// The barrier's phase completes when `bytes` have landed at dst (dst, src, bytes: multiples of 16).
__device__ __forceinline__ void load(void* dst, const void* src, unsigned bytes, unsigned long long* bar) {
  asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;" ::"r"(smem(bar)), "r"(bytes) : "memory");
  asm volatile("cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1], %2, [%3];" ::"r"(smem(dst)),
               "l"(src), "r"(bytes), "r"(smem(bar))
               : "memory");
}
__device__ __forceinline__ void wait(unsigned long long* bar, unsigned parity) {
  asm volatile(
      "{\n.reg .pred done;\nwait_%=:\n"
      "mbarrier.try_wait.parity.shared::cta.b64 done, [%0], %1;\n"
      "@!done bra wait_%=;\n}" ::"r"(smem(bar)),
      "r"(parity)
      : "memory");
}
}  // namespace bulk

// Calls group(x) (x: T[bulk_group<T>]) for each of this thread's shares of the tiles and of the
// rest, and f(x) for each element outside them that this thread owns. Every thread of the block
// must call it (it holds barriers); d_in must be aligned to sizeof(T); the launch provides
// bulk_smem_bytes(blockDim.x) of dynamic shared memory, used by nothing else.
template <class T, class F, class G>
__device__ __forceinline__ void for_each_bulk_group(const T* __restrict__ d_in, std::int64_t n, F&& f, G&& group) {
  constexpr int per_thread = bulk_group<T>;
  constexpr int per_chunk = 16 / int(sizeof(T));
  constexpr int chunks_per_thread = per_thread / per_chunk;
  extern __shared__ __align__(128) unsigned char bulk_stage[];
  __shared__ __align__(8) unsigned long long full[bulk_max_stages];
  const int stages = bulk_stages(static_cast<int>(blockDim.x));
  const std::int64_t threads = std::int64_t(gridDim.x) * blockDim.x;
  const std::int64_t g = std::int64_t(blockIdx.x) * blockDim.x + threadIdx.x;
  const std::uintptr_t misaligned = reinterpret_cast<std::uintptr_t>(d_in) % 16;
  std::int64_t head = misaligned == 0 ? 0 : static_cast<std::int64_t>((16 - misaligned) / sizeof(T));
  head = head < n ? head : n;
  const uint4* base = reinterpret_cast<const uint4*>(d_in + head);
  const std::int64_t chunks = (n - head) / per_chunk;  // whole 16-byte chunks after the head
  const std::int64_t tile_chunks = std::int64_t(blockDim.x) * chunks_per_thread;
  const std::int64_t tiles = chunks / (tile_chunks * gridDim.x) * gridDim.x;  // whole rounds
  const std::int64_t rest_at = tiles * tile_chunks;
  // This thread's share of the rest (less than a share each), if whole: chunks [mine, mine + 4).
  const std::int64_t mine = rest_at + g * chunks_per_thread;
  const bool has_share = mine + chunks_per_thread <= chunks;
  const unsigned tile_bytes = blockDim.x * bulk_group_bytes;
  auto fill = [&](int s, std::int64_t j) {
    if (j < tiles) bulk::load(bulk_stage + s * tile_bytes, base + j * tile_chunks, tile_bytes, &full[s]);
  };
  if (threadIdx.x == 0) {  // the first tiles are asked for before anything else
    for (int s = 0; s < stages; ++s) bulk::init(&full[s]);
    bulk::fence_init();
    for (int s = 0; s < stages; ++s) fill(s, blockIdx.x + std::int64_t(s) * gridDim.x);
  }
  __syncthreads();  // the barriers are initialised
  int s = 0;
  unsigned parity = 0;
  for (std::int64_t j = blockIdx.x; j < tiles; j += gridDim.x) {
    bulk::wait(&full[s], parity);
    T x[per_thread];
    const uint4* chunk = reinterpret_cast<const uint4*>(bulk_stage + s * tile_bytes);
#pragma unroll
    for (int c = 0; c < chunks_per_thread; ++c) {
      const uint4 v = chunk[c * blockDim.x + threadIdx.x];
      memcpy(&x[c * per_chunk], &v, 16);
    }
    // Every thread has read its share of stage s: the stage may be refilled. No proxy fence: the
    // copy only writes what the barrier's reads have finished with (as CUTLASS's TMA pipelines;
    // fence.proxy.async compiles to MEMBAR.ALL.CTA, a wait for all of thread 0's memory operations).
    __syncthreads();
    if (threadIdx.x == 0) fill(s, j + std::int64_t(stages) * gridDim.x);
    // When the last tile is asked for (or already was), the share of the rest into L2.
    if (has_share && j + std::int64_t(stages) * gridDim.x >= tiles &&
        (j < gridDim.x || j + std::int64_t(stages - 1) * gridDim.x < tiles))
      asm volatile("prefetch.global.L2 [%0];" ::"l"(base + mine));
    group(x);
    if (++s == stages) {
      s = 0;
      parity ^= 1u;
    }
  }
  if (has_share) {
    T x[per_thread];
#pragma unroll
    for (int c = 0; c < chunks_per_thread; ++c) {
      const uint4 v = __ldg(base + mine + c);
      memcpy(&x[c * per_chunk], &v, 16);
    }
    group(x);
  }
  if (g < head) f(d_in[g]);
  const std::int64_t shares_end = head + (rest_at + (chunks - rest_at) / chunks_per_thread * chunks_per_thread) * per_chunk;
  for (std::int64_t i = shares_end + g; i < n; i += threads) f(d_in[i]);
}

}  // namespace sumlab::gpu::detail
