#pragma once
// Thread level: a block's input brought into shared memory tile by tile by the bulk-copy engine
// (cp.async.bulk, sm_90: one thread issues a whole tile, completion counted in bytes on an
// mbarrier), for the kernels whose bits do not depend on which thread adds which element
// (gpu_exact, gpu_fixed_point: integer totals). Why: those kernels compute much per element; with
// their loads in registers, issued between groups, too few bytes stay in flight for HBM's
// bandwidth, while here every block keeps its next tiles in flight whatever its threads compute,
// without a register. On an H200 the fixed-point quantisation of 2^30 floats ran at 0.87 of CUB's
// speed with register loads and 1.00 with these tiles, and a plain float sum over the same tiles
// at 1.01; on an H100 gpu_exact's float64 whole range with each thread's next three groups in
// registers ran 0.63-0.82 of CUB where these tiles read at 0.97-1.00 (docs/performance-notes.md).
//
// Tiles: blockDim.x * 64 bytes; thread t takes the 16-byte chunks t, t + blockDim.x, ... of each
// (no bank conflicts), a group of 64 bytes. Tile j goes to block j mod gridDim.x. The elements
// before the input's first 16-byte boundary and after the last whole tile go one by one to the
// grid's threads. A tile's stage is refilled once every thread of the block has read it (a
// barrier per tile; or, WarpPaced, by the last warp to read it), with the next tile that stage
// will hold. Measured on an H200 and left out, each slower than these round-robin whole tiles
// (figures in docs/performance-notes.md): claiming
// the later tiles from a counter, so that faster SMs take more (1-1.5% faster only for float32
// fixed point with 1024-thread blocks, 1-3% slower for gpu_exact and for float64); giving every
// block the same bytes, though at 2^24 floats half the blocks read one tile more than the rest:
// each block an even, contiguous share, its last tile partial and padded with -0 (0.87 of CUB's
// speed at 2^30 where these tiles ran at 0.99), whole rounds then one padded partial tile per block
// (2-15% slower, gpu_exact most), whole rounds then at most one 64-byte group per thread loaded
// from global memory (1-5% slower at 2^24 and 2^26); smaller shares, 32 or 16 bytes a thread with
// 2x or 4x the stages (slower at 2^24, where they were meant to help: 0.83 and 0.73 of CUB against
// 0.87 for given-k fixed point).
#include <cstddef>
#include <cstdint>
#include <cstring>

namespace sumlab::gpu::detail {

inline constexpr int bulk_group_bytes = 64;  // a thread's share of a tile
template <class T> inline constexpr int bulk_group = bulk_group_bytes / int(sizeof(T));  // its elements
inline constexpr int bulk_max_stages = 5;
// Tiles in flight per block: 64, 96 and 128 KB of shared memory for blocks of 256, 512 and 1024
// threads (2 to 4 stages did best when the bulk loader was first measured; more stages did not
// help later: docs/performance-notes.md); a kernel may ask for up to bulk_max_stages of its own
// (gpu_exact's whole range, one block an SM: exact_stages).
__host__ __device__ constexpr int bulk_stages(int block) { return block <= 256 ? 4 : block <= 512 ? 3 : 2; }
// Dynamic shared memory a launch must provide (and opt in to, past 48 KB).
__host__ __device__ constexpr std::size_t bulk_smem_bytes(int block) {
  return static_cast<std::size_t>(bulk_stages(block)) * static_cast<std::size_t>(block) * bulk_group_bytes;
}

#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ < 900
#error "bulk loads need sm_90 or later (cmake/SumlabCuda.cmake builds compute_90)"
#endif

namespace bulk {
__device__ __forceinline__ unsigned smem(const void* p) { return static_cast<unsigned>(__cvta_generic_to_shared(p)); }
__device__ __forceinline__ void init(unsigned long long* bar, unsigned count = 1) {
  asm volatile("mbarrier.init.shared::cta.b64 [%0], %1;" ::"r"(smem(bar)), "r"(count) : "memory");
}
// One arrival (release: the caller's earlier reads and writes come before the phase completes).
__device__ __forceinline__ void arrive(unsigned long long* bar) {
  asm volatile("mbarrier.arrive.shared::cta.b64 _, [%0];" ::"r"(smem(bar)) : "memory");
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

// What for_each_bulk_group hands to f one element at a time rather than in whole tiles: [0, head),
// the elements before the input's first 16-byte boundary, and [end, n), those after the last whole
// tile of blockDim.x = block threads (a kernel that skips them can sum them in another).
struct BulkBody {
  std::int64_t head = 0, end = 0;
};
template <class T> __device__ __forceinline__ BulkBody bulk_body(const T* d_in, std::int64_t n, int block) {
  const std::uintptr_t misaligned = reinterpret_cast<std::uintptr_t>(d_in) % 16;
  std::int64_t head = misaligned == 0 ? 0 : static_cast<std::int64_t>((16 - misaligned) / sizeof(T));
  head = head < n ? head : n;
  const std::int64_t per_tile = std::int64_t(block) * bulk_group<T>;
  return {head, head + (n - head) / per_tile * per_tile};
}

// The block's view of the whole tiles (bulk_body): tile j, 0 <= j < count, starts at at(j) and
// fills one stage (`bytes` of shared memory); a block holds `stages` of them at once.
template <class T> struct BulkTiles {
  BulkBody body;
  const T* first;
  std::int64_t per_tile, count;
  unsigned bytes;
  int stages;
  __device__ __forceinline__ const T* at(std::int64_t j) const { return first + j * per_tile; }
};
template <class T> __device__ __forceinline__ BulkTiles<T> bulk_tiles(const T* d_in, std::int64_t n) {
  const int stages = bulk_stages(static_cast<int>(blockDim.x));
  const BulkBody body = bulk_body(d_in, n, static_cast<int>(blockDim.x));
  const std::int64_t per_tile = std::int64_t(blockDim.x) * bulk_group<T>;
  return {body, d_in + body.head, per_tile, (body.end - body.head) / per_tile, blockDim.x * bulk_group_bytes, stages};
}
// This thread's share of a tile (in shared or global memory): its 16-byte chunks t, t + blockDim.x, ...
template <class T> __device__ __forceinline__ void bulk_share(const void* tile, T (&x)[bulk_group<T>]) {
  constexpr int per_chunk = 16 / int(sizeof(T));
  const uint4* chunks = static_cast<const uint4*>(tile);
#pragma unroll
  for (int c = 0; c < bulk_group<T> / per_chunk; ++c) {
    const uint4 v = chunks[c * blockDim.x + threadIdx.x];
    memcpy(&x[c * per_chunk], &v, 16);
  }
}

// Thread 0's start of a block's ring of stages: a barrier a stage, initialised and fenced, and the
// block's first tiles asked for, tile blockIdx.x + s gridDim.x into stage s.
template <class T> __device__ __forceinline__ void bulk_ask_first(const BulkTiles<T>& tiles, int stages, unsigned long long* full) {
  extern __shared__ __align__(128) unsigned char bulk_stage[];
  for (int s = 0; s < stages; ++s) bulk::init(&full[s]);
  bulk::fence_init();
  for (int s = 0; s < stages; ++s) {
    const std::int64_t j = blockIdx.x + std::int64_t(s) * gridDim.x;
    if (j < tiles.count) bulk::load(bulk_stage + s * tiles.bytes, tiles.at(j), tiles.bytes, &full[s]);
  }
}

// WarpPaced: a stage is refilled by the last warp to read it instead of after a block barrier, so a
// warp slowed by its group (gpu_exact's float64 bins: a window raised, elements below it) holds
// no other warp back until the ring of stages comes round. Per stage an mbarrier that every
// thread arrives on once it has read its share (release: each thread orders its own reads, which
// is what compute-sanitizer's racecheck follows; one arrival per warp after a __syncwarp orders
// them as well, but racecheck reported its lanes' reads racing with the refill) and a count that
// elects the last warp to arrive, whose lane 0 waits for the barrier's phase (acquire: every
// thread's reads come before), then issues the refill after the proxy fence, as thread 0 does
// after the block barrier. The words live in their own function so that the kernels that do not
// pace keep their shared memory as it was.
struct WarpPace {
  unsigned long long* read;  // [bulk_max_stages] mbarriers, one arrival per thread
  unsigned* arrived;         // [bulk_max_stages] warps that have read the stage this round (atomicInc wraps)
};
__device__ __forceinline__ WarpPace warp_pace() {
  __shared__ __align__(8) unsigned long long read[bulk_max_stages];
  __shared__ unsigned arrived[bulk_max_stages];
  return {read, arrived};
}

// Calls group(x) (x: T[bulk_group<T>]) for each of this thread's shares of the tiles, and f(x)
// for each element outside whole tiles that this thread owns. Every thread of the block must call
// it (it holds barriers); d_in must be aligned to sizeof(T); the launch provides the stages'
// dynamic shared memory (bulk_smem_bytes(blockDim.x), or Stages x blockDim.x x 64 bytes where the
// kernel asks for its own count), used by nothing else.
// Begun: the caller has run bulk_begin (below) with `begun` as the stages' barriers, so the first
// tiles are on their way (the caller may have read the first one already) and the barriers ready.
// Vote: the block's barrier after each tile is a vote, *vote = whether any thread's *vote was set
// (a flag the group reads, at the cost of the barrier that was there).
template <bool WarpPaced = false, int Stages = 0, bool Begun = false, bool Vote = false, class T, class F, class G>
__device__ __forceinline__ void for_each_bulk_group(const T* __restrict__ d_in, std::int64_t n, F&& f, G&& group,
                                                    unsigned long long* begun = nullptr, bool* vote = nullptr) {
  static_assert(!(WarpPaced && Vote), "a paced loop has no barrier to vote at");
  static_assert(Stages >= 0 && Stages <= bulk_max_stages);
  static_assert(!(WarpPaced && Begun), "bulk_begin sets up no pacing");
  extern __shared__ __align__(128) unsigned char bulk_stage[];
  __shared__ __align__(8) unsigned long long own_full[Begun ? 1 : bulk_max_stages];
  unsigned long long* const full = Begun ? begun : own_full;
  const int stages = Stages > 0 ? Stages : bulk_stages(static_cast<int>(blockDim.x));
  const std::int64_t threads = std::int64_t(gridDim.x) * blockDim.x;
  const std::int64_t g = std::int64_t(blockIdx.x) * blockDim.x + threadIdx.x;
  const BulkTiles<T> tiles = bulk_tiles(d_in, n);
  auto fill = [&](int s, std::int64_t j) {
    if (j < tiles.count) bulk::load(bulk_stage + s * tiles.bytes, tiles.at(j), tiles.bytes, &full[s]);
  };
  const unsigned warps = (blockDim.x + 31u) / 32u;
  WarpPace pace{};
  if constexpr (WarpPaced) pace = warp_pace();
  if constexpr (!Begun) {
    if (threadIdx.x == 0) {  // the first tiles are asked for before anything else
      if constexpr (WarpPaced)
        for (int s = 0; s < stages; ++s) {
          bulk::init(&pace.read[s], blockDim.x);
          pace.arrived[s] = 0;
        }
      bulk_ask_first(tiles, stages, full);  // its fence covers the pace's barriers too
    }
    __syncthreads();  // the barriers are initialised
  }
  int s = 0;
  unsigned parity = 0;
  for (std::int64_t j = blockIdx.x; j < tiles.count; j += gridDim.x) {
    bulk::wait(&full[s], parity);
    T x[bulk_group<T>];
    bulk_share(bulk_stage + s * tiles.bytes, x);
    // Every thread has read its share of stage s: the stage may be refilled, after a proxy fence
    // (the barrier orders the threads' reads before thread 0's, in the generic proxy; the copy
    // writes in the async proxy). Without it, a variant of this loader (plus a last group per
    // thread from global memory) changed the fixed-point sums' bits from launch to launch at 528
    // and 1056 blocks of 256 threads: 11 of 324 stressed measurements, none with the fence. This
    // loader never showed it without the fence, but its refill is just as unordered; with the
    // fence its ratios to CUB stayed within 0.005 of those without it, at every n.
    if constexpr (WarpPaced) {
      bulk::arrive(&pace.read[s]);
      if ((threadIdx.x & 31u) == 0 && atomicInc(&pace.arrived[s], warps - 1u) == warps - 1u) {
        bulk::wait(&pace.read[s], parity);
        asm volatile("fence.proxy.async.shared::cta;" ::: "memory");
        fill(s, j + std::int64_t(stages) * gridDim.x);
      }
    } else {
      if constexpr (Vote) *vote = __syncthreads_or(*vote) != 0;
      else __syncthreads();
      if (threadIdx.x == 0) {
        asm volatile("fence.proxy.async.shared::cta;" ::: "memory");
        fill(s, j + std::int64_t(stages) * gridDim.x);
      }
    }
    group(x);
    if (++s == stages) {
      s = 0;
      parity ^= 1u;
    }
  }
  if (g < tiles.body.head) f(d_in[g]);
  for (std::int64_t i = tiles.body.end + g; i < n; i += threads) f(d_in[i]);
}

// What for_each_bulk_group<false, 0, true> takes as begun: the stages' barriers initialised and the
// block's first tiles asked for, as for_each_bulk_group itself does first. Every thread of the
// block calls it (it holds a barrier); the caller may then wait for stage 0 (phase 0) and read
// the block's first tile there before the loop reads it again.
template <class T> __device__ __forceinline__ void bulk_begin(const T* __restrict__ d_in, std::int64_t n, unsigned long long* full) {
  const BulkTiles<T> tiles = bulk_tiles(d_in, n);
  if (threadIdx.x == 0) bulk_ask_first(tiles, tiles.stages, full);
  __syncthreads();
}

// Held tiles, for a kernel that reads its input twice in one launch (fixed_largest_launch_kernel):
// each block asks for its first tiles, one a stage, at once (bulk_begin on bulk_held_barriers())
// and reads them from shared memory as often as it likes (for_each_held_group), its later tiles
// from global memory each time. Where every block's tiles fit its stages (bulk_holds_all), a
// second read costs no memory traffic. Nothing is refilled, so no stage is written after the
// first read. The launch provides bulk_smem_bytes(blockDim.x). bulk_holds_all: a conservative
// test (the tiles of an aligned input, which a misaligned one's body never exceeds), the same on
// the host and the device.
template <class T> __host__ __device__ constexpr bool bulk_holds_all(std::int64_t n, int grid, int block) {
  return n / (std::int64_t(block) * bulk_group<T>) <= std::int64_t(bulk_stages(block)) * grid;
}
__device__ __forceinline__ unsigned long long* bulk_held_barriers() {
  __shared__ __align__(8) unsigned long long full[bulk_max_stages];
  return full;
}
// for_each_bulk_group's calls, over the tiles bulk_begin asked for on bulk_held_barriers() and,
// past the stages, tiles read from global memory.
template <class T, class F, class G>
__device__ __forceinline__ void for_each_held_group(const T* __restrict__ d_in, std::int64_t n, F&& f, G&& group) {
  unsigned long long* const full = bulk_held_barriers();
  extern __shared__ __align__(128) unsigned char bulk_stage[];
  const BulkTiles<T> tiles = bulk_tiles(d_in, n);
  int s = 0;
  for (std::int64_t j = blockIdx.x; j < tiles.count; j += gridDim.x, ++s) {
    const void* tile = tiles.at(j);
    if (s < tiles.stages) {
      bulk::wait(&full[s], 0);  // at once after the first time: the phase stays complete
      tile = bulk_stage + s * tiles.bytes;
    }
    T x[bulk_group<T>];
    bulk_share(tile, x);
    group(x);
  }
  const std::int64_t threads = std::int64_t(gridDim.x) * blockDim.x;
  const std::int64_t g = std::int64_t(blockIdx.x) * blockDim.x + threadIdx.x;
  if (g < tiles.body.head) f(d_in[g]);
  for (std::int64_t i = tiles.body.end + g; i < n; i += threads) f(d_in[i]);
}

}  // namespace sumlab::gpu::detail
