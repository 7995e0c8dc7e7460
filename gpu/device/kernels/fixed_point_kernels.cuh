#pragma once
// __global__ kernel of gpu_fixed_point's quantising pass (core/order_model/fixed_point_model.hpp
// says why its bits equal core/fixed_point_sum.hpp's for every shape):
//   fixed_point_kernel  q_i = RNE(x_i 2^k) (fixed_quantise_group, or the integer steps where that
//                       cannot tell), summed as wrapping 128-bit integers per thread, warp and
//                       block, each block's sum added to the launch's by 64-bit atomics (any
//                       grouping: integer addition is exact), with the quantisation report's counts.
//   fixed_window_kernel the scale from the data in one read (below): each element quantised once
//                       at the coarsest k a guess allows, which gives it at every finer one;
//                       each block's integers added into the launch's table, an entry per E;
//                       on inputs far wider than a window, the elements that can matter written
//                       out for pass 2 instead, the others counted.
// With the scale from the data fixed_point_kernel is pass 2, after gpu_exact's kernel with range
// tracking (float) or after fixed_window_kernel (double): it decides k from pass 1's range or
// words, and returns at once when pass 1 was the whole sum (every element on the grid 2^-k, or
// every block's guess held; block 0 then takes the table's entry, gpu/device/dispatch_fixed_point.cu);
// otherwise it quantises every element. With the caller's k it is the whole sum, one read.
// Float where the grid is resident whole takes both passes in one launch (fixed_one_launch_kernel:
// a barrier over the grid in place of the second launch), whose blocks with wide first tiles
// quantise at a guess of k in the first read instead of adding exactly (fixed_guess_block).
#include <cstdint>

#include "core/float_traits.hpp"
#include "core/order_model/fixed_point_model.hpp"
#include "gpu/device/kernels/dependent_launch.cuh"
#include "gpu/device/kernels/exact_kernel.cuh"
#include "gpu/thread/bulk_loads.cuh"
#include "gpu/warp/live_lanes.cuh"

namespace sumlab::gpu::detail {

// Counters of the report.
enum FixedStat { fixed_nan = 0, fixed_pos_inf, fixed_neg_inf, fixed_not_negative_zero, fixed_inexact,
                 fixed_saturated, fixed_max_bits_lost, fixed_stats };
// A launch's results: the 128-bit total as order_model::fixed_digits words (the blocks' 32-bit
// digits summed, order_model::fixed_digit), then the counts.
inline constexpr int fixed_set_words = order_model::fixed_digits + fixed_stats;

// Two sets of results, as gpu_exact's (exact_kernel.cuh): a launch adds to set `parity` and its
// block 0 resets the other to 0 for the next launch; no block waits for another.
// What pass 2 (or the one launch's gate) tells the host in scale[1]: how the sum was made.
enum FixedPass2 : long long { fixed_quantised = 0, fixed_on_grid = 1, fixed_window_held = 2 };

struct FixedBuffers {
  const unsigned long long* range = nullptr;    // pass 1's range (its set's, exact_range_at)
  const unsigned long long* window = nullptr;   // or the window pass's words (its FixedExchange's)
  const unsigned long long* table = nullptr;    // and table; neither: the caller's k
  const void* sparse = nullptr;                 // and the elements its sparse blocks wrote out (FixedExchange's)
  long long capacity = 0;                       // of which there is room for this many
  long long* scale = nullptr;                   // from the data: (k, FixedPass2), for the host
  long long k = 0;                            // the caller's k (a kernel argument: no load to wait for)
  unsigned long long* sets = nullptr;         // 2 * fixed_set_words; set 0 is 0 before the first launch
  unsigned parity = 0;                        // the set this launch adds to
};

// Lane 0 of each warp receives op over the warp's lanes that exist. Every shuffle names only
// existing lanes and reads an existing lane (a partial last warp's missing lanes take no part).
// U: a 64-bit word, or unsigned __int128 (shuffled as two words).
template <class U, class Op> __device__ __forceinline__ U warp_reduce_live(U v, Op op) {
  const int live = live_lanes(), lane = static_cast<int>(threadIdx.x & 31u);
  const unsigned mask = live_mask();
#pragma unroll
  for (int off = 16; off > 0; off >>= 1) {
    const bool has = lane + off < live;
    const int src = has ? lane + off : lane;
    U o;
    if constexpr (sizeof(U) == 16) {
      const unsigned long long lo = __shfl_sync(mask, static_cast<unsigned long long>(v), src);
      const unsigned long long hi = __shfl_sync(mask, static_cast<unsigned long long>(v >> 64), src);
      o = (static_cast<U>(hi) << 64) | lo;
    } else {
      o = __shfl_sync(mask, v, src);
    }
    if (has) v = op(v, o);
  }
  return v;
}

// Thread 0 receives the block's wrapping 128-bit total. Every thread calls it (it holds a barrier).
__device__ __forceinline__ unsigned __int128 block_sum_u128(unsigned __int128 v, unsigned long long* s_lo,
                                                            unsigned long long* s_hi) {
  v = warp_reduce_live(v, [](unsigned __int128 a, unsigned __int128 b) { return a + b; });
  const int lane = static_cast<int>(threadIdx.x & 31u), warp = static_cast<int>(threadIdx.x >> 5);
  if (lane == 0) {
    s_lo[warp] = static_cast<unsigned long long>(v);
    s_hi[warp] = static_cast<unsigned long long>(v >> 64);
  }
  __syncthreads();
  unsigned __int128 total = 0;
  if (threadIdx.x == 0)
    for (int w = 0; w < static_cast<int>(blockDim.x + 31) / 32; ++w)
      total += (static_cast<unsigned __int128>(s_hi[w]) << 64) | s_lo[w];
  return total;
}

// ---- The scale from the data in one read: fixed_window_kernel (used for double) ----
//
// fixed_point_sum's k = 61 - E, E = floor(log2 max|x_i|), is known only once every element has
// been read; a double element sits on the grid 2^-k only when it is within 2^9 of the largest, so
// quantising after a range pass costs a second read of nearly every double input. The window pass
// quantises before it knows E, at a guess it can check afterwards and at every grid the guess
// allows:
// - Each block takes as anchor A the exponent floor(log2 |x|) of the largest finite magnitude in
//   the first tiles of the blocks that could meet it (fixed_exchange_first_tiles: its own first tile's,
//   and the others' that arrive within a few microseconds; A <= E), and guesses E <= L = A + M:
//   then k = kf + j for one j in 0..M, kf = 61 - L, j = L - E. The margin M is 2, or 6 where those
//   tiles look heavy-tailed: fewer than 1 in 8 of their elements within 2^3 of their own largest,
//   and A more than 2 binades above their own largest on average (a tail whose largest lies
//   further up still). Neither A nor M changes a bit, only which inputs one read covers and the
//   cost.
// - An ordinary element, y = x 2^kf with 1/2 <= |y| < 2^62 or y = 0 (every finite element within
//   the guess but those below half a step of kf), is quantised once, q = RNE(y) by the conversion,
//   and added at kf to the block's sum. Its lost part d = y - q gives it at the finer grids:
//   RNE(2^j y) = 2^j q + RNE(2^j d) (order_model::fixed_finer_part, one fused multiply-add, added
//   up as integers R_j), computed only in the groups where some element lost bits. It lost bits
//   at kf + j exactly when it lost more than j at kf, and j fewer: the thread counts those that
//   lost 1..M bits there (fixed_finer_grids).
// - The other elements take the integer steps at every candidate grid (fixed_quantise_bits) into
//   the block's shared totals: NaN, Inf, elements beyond the guess (|y| >= 2^62: E shows them, and
//   the thread then only tracks the range), and nonzero |y| < 1/2 (their bits lost are capped by
//   their width), and every element before the anchor. A block whose kf lies outside 0..emax
//   (an anchor from 2^60 up or below 2^-964), or one of whose threads meets many such elements
//   after the anchor (fixed_window_too_slow), gives up and tracks the range.
// - A block whose first tile, once A is known, holds at most half its elements at or above
//   2^(A - 62) goes sparse instead (order_model::fixed_window_sparse: inputs far wider than any
//   window, lognormal sigma 12 or every bit pattern, whose largest lies 12 to 20 binades above A).
//   It takes no window. An element below 2^(G - 62), G = floor(log2) of the largest magnitude its
//   thread knows of (A at first, then the largest it meets, and every 8 groups the launch's,
//   which sparse threads raise as they meet larger ones), vanishes at every E >= G, losing every
//   bit of its significand whatever E is (order_model::fixed_vanishes_below): the thread counts
//   it. It writes the others (NaN, infinities and subnormals among them) out, a warp's at once,
//   for pass 2 to quantise at k; a block that finds no room in the n / 4 gives up. On the bench's
//   lognormal sigma 12 input a few per cent of the elements go out.
// Each block adds, at each candidate E = A + c (j = M - c), its integer there, sum_b 2^j + R_j plus
// the integer steps' total, with the counts of lost bits, to the launch's table entry for E (by
// atomics); its largest magnitude, L and specials to the launch's words, and a sparse block its
// counts. Pass 2 (fixed_window_decide) takes E from the words; when E <= L for every window block
// and no sparse block gave up, fixed_point_sum's integer is the table's entry at E (every window
// block with an anchor has A <= E <= L, so it added there) plus the elements written out and those
// outside whole tiles, which pass 2 quantises at k; the entry and the sparse blocks' counts have
// the counts of lost bits too. Otherwise pass 2 quantises every element at k: two reads. Integer
// additions wrap modulo 2^128
// in any order, so the bits do not depend on the launch. The guess holds when the first tiles of
// the grid come within 2^M of the largest magnitude: uniform, normal and lognormal inputs (sigma 1
// with the narrow margin, sigma 2 with the wide one) up to 2^30 elements.
using order_model::fixed_window_narrow;
using order_model::fixed_window_wide;
inline constexpr int fixed_window_candidates = fixed_window_wide + 1;
// The table: an entry for every candidate E of a block that did not give up (0 <= kf = 61 - L <=
// emax, A >= L - M), each the blocks' integers at that E added up by atomics (wrapping, so in any
// order): the 128-bit total as fixed_digits digit sums (order_model::fixed_digit), then the count
// of elements that lost bits and the most bits lost.
enum FixedEntryWord { fixed_entry_inexact = order_model::fixed_digits, fixed_entry_max_lost, fixed_entry_words };
inline constexpr int fixed_table_low = 61 - FloatTraits<double>::emax - fixed_window_wide;
inline constexpr int fixed_table_entries = 61 - fixed_table_low + 1;
inline constexpr int fixed_table_words = fixed_table_entries * fixed_entry_words;
template <class P> __device__ __forceinline__ P* fixed_table_entry(P* table, int e) {
  return table + std::size_t(e - fixed_table_low) * fixed_entry_words;
}
inline constexpr int fixed_no_anchor = -(1 << 20), fixed_no_limit = 1 << 20;
inline constexpr int fixed_gave_up = -(1 << 20);  // a limit below every E: the block's guess cannot hold
// The smallest L over the blocks, by atomic maxima on a word that starts at 0: 2^21 - L, above 0
// for every L.
__host__ __device__ constexpr unsigned long long fixed_limit_code(int limit) {
  return static_cast<unsigned long long>((1ll << 21) - limit);
}
__host__ __device__ constexpr int fixed_limit_of(unsigned long long code) {
  return static_cast<int>((1ll << 21) - static_cast<long long>(code));
}
static_assert(fixed_limit_code(fixed_no_limit) > 0 && fixed_limit_code(fixed_gave_up) > fixed_limit_code(fixed_no_limit) &&
              fixed_limit_of(fixed_limit_code(fixed_gave_up)) == fixed_gave_up);
// A thread that sends more than 2 + 1/32 of the elements it has read since its block's anchor to
// the integer steps (each a shared-memory atomic at every candidate grid) gives up, and its block
// with it: pass 2 quantises every element, by the floating-point path. Wide inputs (lognormal sigma
// 12: most elements far below half a step of the guessed grid) took 4.3 ms at 2^24 doubles on an
// H100 that way, 0.011 of CUB, and still 0.8 ms on an H200 with a fixed limit of 16 a thread, the
// atomics of each block's first elements contending; stray elements (NaN, Inf, tiny ones) keep the
// one read.
inline constexpr int fixed_window_slow_limit = 2;
__host__ __device__ constexpr bool fixed_window_too_slow(int slow, long long seen) {
  return slow > fixed_window_slow_limit + (seen >> 5);
}

// The window pass's anchor and margin from the grid's first tiles. A block's first tile gives the
// largest magnitude of blockDim.x * 8 doubles, and the largest of a lognormal (sigma 1) input of 2^26
// comes 3 to 5 binades above that: past the narrow margin, so the blocks whose tile looked
// heavy-tailed took the wide one (about 10 instructions an element more), and the rare one whose tile
// looked light failed its guess, which sent pass 2 to read every element again. The first tiles of
// the whole grid (half a million doubles at 264 blocks of 256) come within 2 binades of it up to
// 2^30. So thread 0 of each block, once its first tile is read, adds what that tile showed to the
// launch's words (FixedExchangeWord: its largest magnitude by an atomic max; its exponent and its
// elements near it by atomic adds), arrives (release: those before it), and waits until the blocks
// that can be resident have arrived, or fixed_exchange_wait_ns have passed (a grid not resident
// whole, a shared GPU, a sanitizer), then reads the words. Every block that saw the same arrivals
// takes the same anchor and margin, so none runs the wide margin's loop alone while the others wait
// for it at the end, and none keeps a guess of its own that fails. Thread 0's round trips to the L2
// (the atomics, the fence, the loads) cost a few microseconds a launch, during which the other
// blocks' first tiles arrive (not waiting for them cost as much), and light-tailed inputs, whose own
// anchors served, pay them as well: a light tile that did not take part failed often enough on
// lognormal data to lose more (docs/performance-notes.md). It changes no bit: each block adds its
// integers at the E its own anchor and margin allow. Block 0 zeroes the next launch's words (next),
// and every block a part of the next launch's table: the launch before, which used them, has ended.
enum FixedExchangeWord {
  fixed_ex_largest = 0,  // the largest finite magnitude of the first tiles, as bits
  fixed_ex_arrived,      // blocks arrived
  fixed_ex_near,         // elements within 2^3 of their own tile's largest, over the tiles with one
  fixed_ex_exponents,    // sum of floor(log2) of those tiles' largest, each + fixed_ex_bias
  fixed_ex_tiles,        // tiles with a finite nonzero element
  fixed_ex_first_words,  // (the words above: what the first tiles showed)
  // At each block's end, for pass 2:
  fixed_ex_grid_largest = fixed_ex_first_words,  // the largest finite magnitude of the tiles, as bits
  fixed_ex_limits,       // fixed_limit_code of the smallest L (0: no block has one)
  fixed_ex_nan,          // the tiles' NaN, +Inf and -Inf
  fixed_ex_pos_inf,
  fixed_ex_neg_inf,
  fixed_ex_not_negative_zero,  // 1 where a tile's element is not -0
  fixed_ex_sparse_count,       // the elements the sparse blocks wrote out (past FixedExchange::capacity: they gave up)
  fixed_ex_sparse_inexact,     // the sparse blocks' elements that vanish at every grid E can take
  fixed_ex_sparse_lost,        // and the most bits one of them lost
  fixed_exchange_words
};
inline constexpr long long fixed_ex_bias = 2048;
struct FixedExchange {
  unsigned long long* words = nullptr;  // this launch's fixed_exchange_words
  unsigned long long* next = nullptr;   // the next launch's
  unsigned long long* table = nullptr;  // this launch's table (fixed_table_words)
  unsigned long long* table_next = nullptr;  // the next launch's
  int resident = 0;                     // blocks of this launch that can be resident at once
  double* sparse = nullptr;             // the sparse blocks' elements for pass 2 (fixed_window_sparse, below)
  long long capacity = 0;               // its length (0: no block goes sparse)
};
inline constexpr unsigned long long fixed_exchange_wait_ns = 20000;
// The slots a sparse block's warp takes at a time: a group's elements at most (fixed_window_kernel).
inline constexpr int fixed_sparse_slots = 32 * bulk_group<double>;
__device__ __forceinline__ unsigned long long fixed_globaltimer() {
  unsigned long long t;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
  return t;
}
// Thread 0 of each block with a whole tile, once. own: its first tile's largest finite magnitude
// (0: none), near: that tile's elements within 2^3 of it, tiles: the launch's whole tiles (a block
// without one never arrives). Fills seen[FixedExchangeWord] with what the arrived blocks added
// (own's among them).
__device__ __forceinline__ void fixed_exchange_first_tiles(const FixedExchange& ex, unsigned long long own,
                                                           unsigned long long near, long long tiles,
                                                           unsigned long long (&seen)[fixed_ex_first_words]) {
  unsigned long long* const w = ex.words;
  if (own != 0) {
    const long long e = order_model::floor_log2_magnitude<double>(own) + fixed_ex_bias;
    asm volatile("red.relaxed.gpu.global.max.u64 [%0], %1;" ::"l"(w + fixed_ex_largest), "l"(own) : "memory");
    asm volatile("red.relaxed.gpu.global.add.u64 [%0], %1;" ::"l"(w + fixed_ex_near), "l"(near) : "memory");
    asm volatile("red.relaxed.gpu.global.add.u64 [%0], %1;" ::"l"(w + fixed_ex_exponents), "l"(e) : "memory");
    asm volatile("red.relaxed.gpu.global.add.u64 [%0], %1;" ::"l"(w + fixed_ex_tiles), "l"(1ull) : "memory");
  }
  // (acq_rel: this block's words go before it, and the others' that it counts come before the loads below)
  unsigned long long arrived;
  asm volatile("atom.acq_rel.gpu.global.add.u64 %0, [%1], 1;" : "=l"(arrived) : "l"(w + fixed_ex_arrived) : "memory");
  ++arrived;
  long long expected = ex.resident < static_cast<int>(gridDim.x) ? ex.resident : static_cast<int>(gridDim.x);
  expected = tiles < expected ? tiles : expected;
  const unsigned long long start = fixed_globaltimer();
  while (static_cast<long long>(arrived) < expected && fixed_globaltimer() - start < fixed_exchange_wait_ns) {
    __nanosleep(64);
    asm volatile("ld.acquire.gpu.global.u64 %0, [%1];" : "=l"(arrived) : "l"(w + fixed_ex_arrived) : "memory");
  }
  for (int i = 0; i < fixed_ex_first_words; ++i)
    asm volatile("ld.relaxed.gpu.global.u64 %0, [%1];" : "=l"(seen[i]) : "l"(w + i) : "memory");
}

// Adds v to the wrapping 128-bit total in w[0] (low word) and w[1] by atomics: each addition's
// carry out of the low word goes to the high one, so the words hold the sum of every v modulo
// 2^128, in any order.
__device__ __forceinline__ void atomic_add_u128(unsigned long long* w, unsigned __int128 v) {
  const unsigned long long lo = static_cast<unsigned long long>(v);
  const unsigned long long old = atomicAdd(&w[0], lo);
  atomicAdd(&w[1], static_cast<unsigned long long>(v >> 64) + (old + lo < old ? 1ull : 0ull));
}

// The finer grids of a group's elements under margin Mb, from their lost parts d (fixed_window_kernel,
// below): adds their parts RNE(2^j d), j = 1..Mb, to finer[j - 1] and the count of those that lost
// b = 1..Mb bits at kf to shallow[b - 1]. Mb = 2: d is +-1/2 or +-1/4. Otherwise: an element lost
// at most Mb bits exactly when 2^Mb d is the integer r (the last part, exact), and then
// b = Mb - ctz(r); its lowest set bit 2^(Mb - b), raised to the fourth power, is a one in the
// 4-bit lane Mb - b of the group's counts (N <= 15 elements: no lane overflows).
template <int Mb, class T, int N, int MW>
__device__ __forceinline__ void fixed_finer_grids(const T (&d)[N], long long (&finer)[MW], unsigned (&shallow)[MW]) {
  static_assert(Mb <= MW && Mb <= 8 && N <= 15, "4-bit lanes in 32 bits");
  int part[Mb] = {};
  if constexpr (Mb == 2) {
    int ones = 0, twos = 0;
#pragma unroll
    for (int i = 0; i < N; ++i) {
#pragma unroll
      for (int j = 1; j <= Mb; ++j) part[j - 1] += order_model::fixed_finer_part(d[i], T(1 << j));
      ones += fabs(d[i]) == T(0.5) ? 1 : 0;
      twos += fabs(d[i]) == T(0.25) ? 1 : 0;
    }
    shallow[0] += static_cast<unsigned>(ones);
    shallow[1] += static_cast<unsigned>(twos);
  } else {
    unsigned lanes = 0;
#pragma unroll
    for (int i = 0; i < N; ++i) {
#pragma unroll
      for (int j = 1; j < Mb; ++j) part[j - 1] += order_model::fixed_finer_part(d[i], T(1 << j));
      const T t = __fma_rn(d[i], T(1 << Mb), T(0x1.8p52));  // (fixed_finer_part's sum)
      const int r = __double2loint(t);
      part[Mb - 1] += r;
      const unsigned l = static_cast<unsigned>(r & -r), l2 = l * l;
      lanes += t - T(0x1.8p52) == d[i] * T(1 << Mb) ? l2 * l2 : 0u;
    }
#pragma unroll
    for (int b = 1; b <= Mb; ++b) shallow[b - 1] += (lanes >> (4 * (Mb - b))) & 15u;
  }
#pragma unroll
  for (int j = 0; j < Mb; ++j) finer[j] += part[j];
}

// Every thread of every block of fixed_window_kernel calls it (it holds barriers); the launch
// provides bulk_smem_bytes(blockDim.x) of dynamic shared memory. ex's words and table are 0 (the
// launch before this one's parity, or the host, reset them).
template <class T, int MaxThreads>
__global__ void __launch_bounds__(MaxThreads) fixed_window_kernel(const T* __restrict__ d_in, std::int64_t num_items,
                                                                  FixedExchange ex) {
  static_assert(sizeof(T) == 8, "the finer grids' parts are doubles' (order_model::fixed_finer_part)");
  using Bits = typename FloatTraits<T>::Bits;
  constexpr int MW = fixed_window_wide, C = fixed_window_candidates, N = bulk_group<T>;
  static_assert(fixed_window_narrow == 2 && MW <= 8, "the counts of the elements that lost 1..M bits (below)");
  constexpr int frac_bits = FloatTraits<T>::precision - 1;
  constexpr Bits magnitude_mask = ~FloatTraits<T>::sign_bit, inf_bits = FloatTraits<T>::inf_bits;
  constexpr Bits negative_zero = FloatTraits<T>::sign_bit;
  // The block's shared words: the anchor's search, and the totals of the elements that take the
  // integer steps (rare: by shared atomics, not in every thread's registers).
  struct Rare {
    unsigned long long steps[C][4];  // per candidate: sum low, high words, inexact count, most bits lost
    unsigned long long special[3];   // NaN, +Inf, -Inf
    unsigned long long first;        // a tile's largest finite magnitude, while A is sought
    unsigned long long grid[fixed_ex_first_words];  // what the grid's first tiles showed (fixed_exchange_first_tiles)
    unsigned long long near;         // then its finite elements within 2^3 of it (at least 2^(floor(log2 first) - 2))
    unsigned long long dense;        // and, where the tiles look heavy-tailed, those that would not vanish (fixed_window_sparse)
  };
  __shared__ Rare s_rare;
  for (int i = static_cast<int>(threadIdx.x); i < static_cast<int>(sizeof(Rare) / 8); i += static_cast<int>(blockDim.x))
    reinterpret_cast<unsigned long long*>(&s_rare)[i] = 0;  // (the loader's first barrier publishes these)
  if (blockIdx.x == 0)
    for (int i = static_cast<int>(threadIdx.x); i < fixed_exchange_words; i += static_cast<int>(blockDim.x)) ex.next[i] = 0;
  for (std::int64_t i = std::int64_t(blockIdx.x) * blockDim.x + threadIdx.x; i < fixed_table_words;
       i += std::int64_t(gridDim.x) * blockDim.x)
    ex.table_next[i] = 0;
  bool exchanged = false;        // whether this block has taken part in fixed_exchange_first_tiles
  int anchor = fixed_no_anchor;  // A, the same in every thread of the block
  int margin = 0;                // M, the same in every thread of the block
  long long kf = 0;              // 61 - (A + M)
  T two_kf = 0;                  // 2^kf where the floating-point path can scale by it, else 0
  unsigned __int128 sum = 0;     // the ordinary elements' q at kf
  long long finer[MW];           // R_j, j = 1..M: their RNE(2^j d)
  unsigned long long inexact = 0, lost = 0;  // those that lost bits at kf; their d 2^62, OR-ed
  unsigned shallow[MW];          // those that lost exactly b = 1..M bits there, at b - 1
#pragma unroll
  for (int j = 0; j < MW; ++j) finer[j] = shallow[j] = 0;
  unsigned high_word = 0;        // the largest high word of an ordinary element's |y| = |x| 2^kf
  Bits largest = 0;              // the largest finite magnitude the integer steps or the range met
  bool not_negative_zero = false;
  bool broken = false;           // an element beyond the guess, or gave_up: pass 2 will quantise
  bool gave_up = false;          // this thread's integer steps were too many (fixed_window_too_slow)
  int slow = 0;                  // the elements after the anchor it sent to the integer steps
  long long seen = 0;            // the elements it read after the anchor
  // A sparse block (fixed_window_sparse) instead counts the elements that vanish at every E it
  // allows in inexact, their bits OR-ed in lost (put in the lost parts' form at the end by
  // order_model::fixed_vanished_as_lost, as pass 2's groups put theirs), and writes the others
  // out. Its warps' words live in shared memory, not in the registers every window block's loop
  // would hold too.
  bool sparse = false;  // the same in every thread of the block
  struct SparseWarp {
    Bits known;   // the largest finite magnitude the warp knows of in the input
    Bits vanish;  // order_model::fixed_vanishes_below(known)
    unsigned long long next, end;  // the rest of its slots for elements written out, [next, end)
  };
  __shared__ SparseWarp s_sparse[32];
  // One element by the integer steps, at every candidate.
  auto element = [&](T x) {
    Bits u;
    memcpy(&u, &x, sizeof(T));
    const Bits a = u & magnitude_mask;
    not_negative_zero |= u != negative_zero;
    if (a >= inf_bits) {
      atomicAdd(&s_rare.special[a != inf_bits ? 0 : u != a ? 2 : 1], 1ull);
      return;
    }
    if (a == 0) return;
    largest = a > largest ? a : largest;
    if (order_model::floor_log2_magnitude<T>(a) > anchor + margin) {  // beyond the guess: E says so
      broken = true;
      return;
    }
#pragma unroll 1
    for (int c = 0; c <= margin; ++c) {
      bool special = false, negative = false;
      const order_model::FixedQuantised q = order_model::fixed_quantise_bits<Bits>(
          u, kf + (margin - c), frac_bits, FloatTraits<T>::exponent_bits, FloatTraits<T>::emax, special, negative);
      const unsigned __int128 mag = static_cast<unsigned long long>(q.q);
      atomic_add_u128(s_rare.steps[c], negative ? static_cast<unsigned __int128>(0) - mag : mag);
      if (q.bits_lost != 0) {
        atomicAdd(&s_rare.steps[c][2], 1ull);
        atomicMax(&s_rare.steps[c][3], static_cast<unsigned long long>(q.bits_lost));
      }
    }
  };
  // The elements outside whole tiles are pass 2's to quantise; here only their range.
  auto rest = [&](T x) {
    Bits u;
    memcpy(&u, &x, sizeof(T));
    const Bits a = u & magnitude_mask;
    largest = a < inf_bits && a > largest ? a : largest;
  };
  const auto ordinary = [](T y) {
    const T a = fabs(y);
    return a < T(0x1p62) && (a >= T(0.5) || a == T(0));  // (NaN: not ordinary)
  };
  // The largest finite magnitude (as bits) among a group's elements and `from`.
  const auto largest_finite = [](const T(&x)[N], Bits from) {
#pragma unroll
    for (int i = 0; i < N; ++i) {
      Bits u;
      memcpy(&u, &x[i], sizeof(T));
      const Bits a = u & magnitude_mask;
      from = a < inf_bits && a > from ? a : from;
    }
    return from;
  };
  const auto pick = [](const T(&x)[N], int i) {
    T xi = x[0];
#pragma unroll  // (a runtime index would put x in local memory)
    for (int j = 1; j < N; ++j) xi = j == i ? x[j] : xi;
    return xi;
  };
  // A sparse block's group: each element below `vanish` counted, the others (NaN and infinities
  // among them, and subnormals, whose bits lost are not 53 - ctz(m)) written out. Every lane of the
  // warp is here (`broken` is the same in all of them: the warp's reservation decides it). A warp
  // takes fixed_sparse_slots slots at a time, one atomic on the launch's count for many groups (one
  // a group, every warp on one word, took 2.5 times a read on lognormal sigma 12), and reads the
  // launch's largest magnitude as it does.
  auto sparse_group = [&](const T(&x)[N]) {
    SparseWarp& sw = s_sparse[threadIdx.x >> 5];
    const Bits known = sw.known;
    // Each element by its high word, the exponent's: below `vanish` (a power of two) exactly when
    // its high word is below vanish's, whose low word is 0 wherever a normal element can be below it.
    constexpr unsigned smallest_normal_high = 1u << (frac_bits - 32), inf_high = static_cast<unsigned>(inf_bits >> 32);
    const unsigned vanish_high = static_cast<unsigned>(sw.vanish >> 32);
    unsigned out = 0, gone = 0;  // bit i: x[i] goes out, or vanishes
    unsigned top_high = 0;       // the largest high word of a finite magnitude
#pragma unroll
    for (int i = 0; i < N; ++i) {
      Bits u;
      memcpy(&u, &x[i], sizeof(T));
      const unsigned high = static_cast<unsigned>(u >> 32) & 0x7fffffffu;
      top_high = high < inf_high && high > top_high ? high : top_high;
      const bool vanishes = high < vanish_high && high >= smallest_normal_high;
      lost |= vanishes ? u : 0;  // (the significands' low bits, OR-ed: normal, their implicit bit set at the end)
      gone |= vanishes ? 1u << i : 0u;
      out |= !vanishes && (high | static_cast<unsigned>(u)) != 0 ? 1u << i : 0u;
    }
    inexact += static_cast<unsigned>(__popc(gone));
    // The group's largest finite magnitude: its exponent is all anyone reads (E, the bound), but for
    // a group with nothing above the subnormals, whose bits it then takes whole.
    Bits top = static_cast<Bits>(top_high) << 32;
    if (top_high < smallest_normal_high) top = largest_finite(x, top);
    if ((out | gone) != 0) {  // (an element that is not +-0)
      not_negative_zero = true;
    } else {
#pragma unroll
      for (int i = 0; i < N; ++i) not_negative_zero |= !signbit(x[i]);
    }
    largest = top > largest ? top : largest;
    const unsigned live = live_mask();
    const int lane = static_cast<int>(threadIdx.x & 31u), last = live_lanes() - 1;
    // A larger magnitude than the warp knew of: the launch's word and the warp's bound rise.
    if (__any_sync(live, top > known)) {
      if (top > known) {
        asm volatile("red.relaxed.gpu.global.max.u64 [%0], %1;" ::"l"(ex.words + fixed_ex_grid_largest), "l"(top) : "memory");
        atomicMax(reinterpret_cast<unsigned long long*>(&sw.known), static_cast<unsigned long long>(top));
      }
      __syncwarp(live);
      if (lane == 0) sw.vanish = order_model::fixed_vanishes_below<T>(sw.known);
      __syncwarp(live);
    }
    const int count = __popc(out);
    if (!__any_sync(live, count != 0)) return;
    int before = count;  // inclusive, then exclusive, prefix of the lanes' counts
#pragma unroll
    for (int off = 1; off < 32; off <<= 1) {
      const int v = __shfl_up_sync(live, before, off);
      before += lane >= off ? v : 0;
    }
    const unsigned long long total = static_cast<unsigned long long>(__shfl_sync(live, before, last));
    before -= count;
    const unsigned long long next = sw.next, end = sw.end, room = end - next;
    __syncwarp(live);  // (every lane has read the warp's words: lane 0 may write them)
    unsigned long long fresh = 0;  // where the warp's new slots start, when it takes them
    if (total > room) {  // (a group's total is at most 32 * N = fixed_sparse_slots: one reservation covers it)
      unsigned long long launch_largest = 0;
      if (lane == 0) {
        fresh = atomicAdd(ex.words + fixed_ex_sparse_count, static_cast<unsigned long long>(fixed_sparse_slots));
        asm volatile("ld.relaxed.gpu.global.u64 %0, [%1];" : "=l"(launch_largest) : "l"(ex.words + fixed_ex_grid_largest) : "memory");
      }
      fresh = __shfl_sync(live, fresh, 0);
      if (fresh + fixed_sparse_slots > static_cast<unsigned long long>(ex.capacity)) {  // no room: pass 2 reads every element
        broken = gave_up = true;
        return;
      }
      if (lane == 0) {
        if (launch_largest > sw.known) {
          sw.known = static_cast<Bits>(launch_largest);
          sw.vanish = order_model::fixed_vanishes_below<T>(sw.known);
        }
        sw.next = fresh + (total - room);
        sw.end = fresh + fixed_sparse_slots;
      }
    } else if (lane == 0) {
      sw.next = next + total;
    }
    __syncwarp(live);
    // Element t of the warp's group goes to slot next + t while the old slots last, then to the new:
    // a turn for each element the thread writes out (the warp takes as many as its busiest lane, one
    // or two where one element in 15 goes out), not one for each of its N.
    int t = before;
#pragma unroll 1
    for (unsigned left = out; left != 0; left &= left - 1u) {
      const unsigned long long at = static_cast<unsigned long long>(t) < room ? next + t : fresh + (t - room);
      ex.sparse[at] = pick(x, __ffs(left) - 1);
      ++t;
    }
  };
  auto group = [&](const T(&x)[N]) {
    if (anchor == fixed_no_anchor) {  // (the same in every thread: each is here, for the barrier)
      unsigned long long m = largest_finite(x, 0);
      m = warp_reduce_live(m, [](unsigned long long a, unsigned long long b) { return a > b ? a : b; });
      if ((threadIdx.x & 31u) == 0 && m != 0) atomicMax(&s_rare.first, m);
      __syncthreads();
      const unsigned long long first = s_rare.first;  // (written again only after the loader's next barrier)
      // The tile's elements within 2^3 of its largest (none where it has no finite nonzero one).
      const int own = first != 0 ? order_model::floor_log2_magnitude<T>(static_cast<Bits>(first)) : 0;
      unsigned near = 0;
#pragma unroll
      for (int i = 0; i < N; ++i) {
        Bits u;
        memcpy(&u, &x[i], sizeof(T));
        const Bits a = u & magnitude_mask;
        near += a != 0 && a < inf_bits && order_model::floor_log2_magnitude<T>(a) >= own - 2 ? 1 : 0;
      }
      near = warp_reduce_live(near, [](unsigned a, unsigned b) { return a + b; });
      if ((threadIdx.x & 31u) == 0) atomicAdd(&s_rare.near, static_cast<unsigned long long>(near));
      __syncthreads();
      if (!exchanged) {  // (the block's first tile)
        if (threadIdx.x == 0)
          fixed_exchange_first_tiles(ex, first, s_rare.near, bulk_tiles(d_in, num_items).count, s_rare.grid);
        __syncthreads();
        exchanged = true;
      }
      // What the tiles seen show: the grid's first tiles (those that arrived), or else this one.
      const bool grid = s_rare.grid[fixed_ex_tiles] != 0;
      const unsigned long long tiles = grid ? s_rare.grid[fixed_ex_tiles] : 1;
      const unsigned long long largest_seen =
          grid && s_rare.grid[fixed_ex_largest] > first ? s_rare.grid[fixed_ex_largest] : first;
      if (largest_seen != 0) {  // (else every element seen is zero, NaN or infinite: no anchor yet)
        anchor = order_model::floor_log2_magnitude<T>(static_cast<Bits>(largest_seen));
        // The margin: narrow where the tiles look light-tailed (order_model::fixed_window_light), else
        // wide. Either gives the same bits; the wide one costs about 10 instructions an element more.
        const unsigned long long near_seen = grid ? s_rare.grid[fixed_ex_near] : s_rare.near;
        const long long growth = static_cast<long long>(tiles) * (anchor + fixed_ex_bias) -
                                 static_cast<long long>(s_rare.grid[fixed_ex_exponents]);
        const bool light = order_model::fixed_window_light(tiles, near_seen, blockDim.x, N, growth, grid);
        margin = light ? fixed_window_narrow : fixed_window_wide;
        // Sparse or not (but where 1 in 8 elements lie near their tile's largest, as in uniform or
        // normal data: not): this tile's elements that would not vanish.
        const bool near = near_seen * 8 >= tiles * blockDim.x * N;
        if (!near && ex.capacity != 0) {
          const Bits vanish = order_model::fixed_vanishes_below<T>(static_cast<Bits>(largest_seen));
          unsigned dense = 0;
#pragma unroll
          for (int i = 0; i < N; ++i) {
            Bits u;
            memcpy(&u, &x[i], sizeof(T));
            dense += (u & magnitude_mask) >= vanish ? 1 : 0;
          }
          dense = warp_reduce_live(dense, [](unsigned a, unsigned b) { return a + b; });
          if ((threadIdx.x & 31u) == 0) atomicAdd(&s_rare.dense, static_cast<unsigned long long>(dense));
          __syncthreads();
          sparse = order_model::fixed_window_sparse(s_rare.dense, static_cast<unsigned long long>(blockDim.x) * N);
          if (sparse && (threadIdx.x & 31u) == 0) s_sparse[threadIdx.x >> 5] = SparseWarp{static_cast<Bits>(largest_seen), vanish, 0, 0};
          __syncwarp(live_mask());
        }
        kf = 61 - (anchor + margin);
        // (kf >= 0: y = x 2^kf never underflows, so `ordinary` may read y = 0 as x = 0)
        two_kf = kf >= 0 ? order_model::fixed_two_k<T>(kf) : T(0);
        broken = two_kf == T(0) && !sparse;  // (kf outside 0..emax: a window gives up, its L says so)
      }
    }
    if (sparse && !broken) {
      sparse_group(x);
      return;
    }
    if (broken) {  // the guess failed (E > A + M, as `largest` shows) or the block gave up: the table goes unread
#pragma unroll
      for (int i = 0; i < N; ++i) rest(x[i]);
      return;
    }
    bool steps = anchor == fixed_no_anchor;  // elements for the integer steps (all of them before the anchor)
    if (!steps) {
      seen += N;
      unsigned long long s = 0;
      T approx = 0, d[N];
      unsigned group_high = 0;         // the largest high word of an ordinary |y|
      unsigned d_high = 0, d_low = 0;  // the lost parts' words, OR-ed: whether an element lost bits
#pragma unroll
      for (int i = 0; i < N; ++i) {
        T y = x[i] * two_kf;
        const bool plain = ordinary(y);
        y = plain ? y : T(0);
        steps |= !plain;
        const long long q = order_model::fixed_rint_ll(y);
        d[i] = y - static_cast<T>(q);
        s += static_cast<unsigned long long>(q);
        approx = i == 0 ? y : approx + y;  // (not 0 + y: an instruction less)
        group_high = max(group_high, static_cast<unsigned>(__double2hiint(y)) & 0x7fffffffu);  // (y: 0 unless plain)
        d_high |= static_cast<unsigned>(__double2hiint(d[i]));
        d_low |= static_cast<unsigned>(__double2loint(d[i]));
      }
      order_model::fixed_add_group_total(sum, s, approx);
      // The count of the elements that lost bits, their lost parts' bits and the finer grids only
      // for a group where one did (a d of 0 adds nothing to any of them), told by the d's words
      // OR-ed: the pass is issue-bound, and this takes about 6 instructions an element off the
      // path every group takes. (Deferring such groups, where few lanes of a warp have one, to a
      // pass of the whole warp over shared slots, or a loop over their elements that lost bits
      // alone, cost more than the idle lanes: docs/performance-notes.md.)
      if (((d_high & 0x7fffffffu) | d_low) != 0) {  // (a d of -0 lost nothing)
#pragma unroll
        for (int i = 0; i < N; ++i) {
          inexact += d[i] != T(0) ? 1 : 0;
          lost |= static_cast<unsigned long long>(order_model::fixed_rint_ll(d[i] * T(0x1p62)));  // (order_model::fixed_bits_lost)
        }
        if (margin == fixed_window_wide) fixed_finer_grids<fixed_window_wide>(d, finer, shallow);
        else fixed_finer_grids<fixed_window_narrow>(d, finer, shallow);
      }
      high_word = group_high > high_word ? group_high : high_word;
      if (group_high != 0) {  // (an ordinary nonzero |y| is at least 1/2)
        not_negative_zero = true;
      } else {
#pragma unroll
        for (int i = 0; i < N; ++i) not_negative_zero |= !signbit(x[i]);
      }
    }
    if (steps) {
#pragma unroll 1
      for (int i = 0; i < N; ++i) {
        const T xi = pick(x, i);
        if (anchor != fixed_no_anchor && ordinary(xi * two_kf)) continue;
        if (broken) {  // (from this element on the thread tracks the range only)
          rest(xi);
          continue;
        }
        if (anchor != fixed_no_anchor && fixed_window_too_slow(++slow, seen)) {
          broken = gave_up = true;
          rest(xi);
          continue;
        }
        element(xi);
      }
    }
  };
  for_each_bulk_group(d_in, num_items, rest, group);
  if (sparse && !broken) {  // the warp's slots it did not fill: +0, which adds nothing (a sparse block has a nonzero element)
    // (by the warp's lanes that exist: a partial last warp strided by 32 left slots unwritten, which
    // pass 2 then read, whatever the memory held)
    const SparseWarp& sw = s_sparse[threadIdx.x >> 5];
    const unsigned live = static_cast<unsigned>(live_lanes());
    for (unsigned long long at = sw.next + (threadIdx.x & 31u); at < sw.end; at += live) ex.sparse[at] = T(0);
  }
  let_dependents_start();
  // The ordinary elements' largest magnitude as 2^floor(log2 |x|): its exponent is all pass 2
  // reads. y = x 2^kf is exact and normal (1/2 <= |y| < 2^62), so that exponent is y's less kf
  // (x itself may be subnormal, hence not x's high word shifted back).
  if (high_word != 0) {
    const long long e = static_cast<long long>(high_word >> 20) - 1023 - kf;  // >= -1 - emax: kf <= emax
    const Bits top = e >= -1022 ? static_cast<Bits>(e + 1023) << 52 : Bits(1) << (e + 1074);
    largest = top > largest ? top : largest;
  }
  if (sparse && inexact != 0) lost = order_model::fixed_vanished_as_lost<T>(lost);
  // The threads' words, reduced per warp into s_red, then across the warps word by word.
  enum {
    red_largest = 0, red_sum, red_finer = red_sum + 2, red_inexact = red_finer + 2 * MW, red_shallow, red_lost = red_shallow + MW,
    red_words
  };
  __shared__ __align__(16) unsigned long long s_red[red_words][32];  // (aligned: the folds below read two words a load)
  const auto add = [](auto a, auto b) { return a + b; };
  const auto most = [](unsigned long long a, unsigned long long b) { return a > b ? a : b; };
  unsigned long long w[red_words];
  w[red_largest] = warp_reduce_live(static_cast<unsigned long long>(largest), most);
  const unsigned __int128 warp_sum = warp_reduce_live(sum, add);
  w[red_sum] = static_cast<unsigned long long>(warp_sum);
  w[red_sum + 1] = static_cast<unsigned long long>(warp_sum >> 64);
#pragma unroll
  for (int j = 0; j < MW; ++j) {
    const unsigned __int128 t =
        warp_reduce_live(static_cast<unsigned __int128>(static_cast<__int128>(finer[j])), add);  // (sign-extended)
    w[red_finer + 2 * j] = static_cast<unsigned long long>(t);
    w[red_finer + 2 * j + 1] = static_cast<unsigned long long>(t >> 64);
  }
  w[red_inexact] = warp_reduce_live(inexact, add);
#pragma unroll
  for (int b = 0; b < MW; ++b) w[red_shallow + b] = warp_reduce_live(static_cast<unsigned long long>(shallow[b]), add);
  w[red_lost] = warp_reduce_live(static_cast<unsigned long long>(order_model::fixed_bits_lost(lost)), most);
  const int lane = static_cast<int>(threadIdx.x & 31u), warp = static_cast<int>(threadIdx.x >> 5);
  if (lane == 0)
#pragma unroll
    for (int r = 0; r < red_words; ++r) s_red[r][warp] = w[r];
  // (also the barrier after s_red's and the shared totals' last writes)
  const bool block_not_negative_zero = __syncthreads_or(not_negative_zero) != 0;
  const bool block_gave_up = __syncthreads_or(gave_up) != 0;
  const int warps = static_cast<int>(blockDim.x + 31) / 32;
  const auto total = [&](int r) {
    unsigned __int128 t = 0;
    for (int i = 0; i < warps; ++i) t += (static_cast<unsigned __int128>(s_red[r + 1][i]) << 64) | s_red[r][i];
    return t;
  };
  const auto count = [&](int r) {
    unsigned long long t = 0;
    for (int i = 0; i < warps; ++i) t += s_red[r][i];
    return t;
  };
  const auto highest = [&](int r) {
    unsigned long long t = 0;
    for (int i = 0; i < warps; ++i) t = most(t, s_red[r][i]);
    return t;
  };
  // (A sparse block adds no limit and nothing to the table, unless it gave up.)
  const int limit = anchor == fixed_no_anchor                    ? fixed_no_limit
                    : block_gave_up || (two_kf == T(0) && !sparse) ? fixed_gave_up
                    : sparse                                     ? fixed_no_limit
                                                                 : anchor + margin;
  // The block's integers at each candidate E = A + c <= L into the launch's table: thread r adds
  // word r % fixed_entry_words of candidate r / fixed_entry_words (a block whose guess cannot hold
  // adds none: pass 2 will read every element).
  if (limit != fixed_no_limit && limit != fixed_gave_up)
    for (int r = static_cast<int>(threadIdx.x); r < (margin + 1) * fixed_entry_words; r += static_cast<int>(blockDim.x)) {
      const int c = r / fixed_entry_words, part = r % fixed_entry_words, j = margin - c;
      unsigned long long* const entry = fixed_table_entry(ex.table, anchor + c);
      if (part < order_model::fixed_digits) {  // 2^j times the sum at kf, R_j and the integer steps' total
        const unsigned __int128 steps = (static_cast<unsigned __int128>(s_rare.steps[c][1]) << 64) | s_rare.steps[c][0];
        const unsigned __int128 v = (total(red_sum) << j) + (j == 0 ? 0 : total(red_finer + 2 * (j - 1))) + steps;
        const unsigned long long digit = order_model::fixed_digit(v, part);
        if (digit != 0) asm volatile("red.relaxed.gpu.global.add.u64 [%0], %1;" ::"l"(entry + part), "l"(digit) : "memory");
      } else if (part == fixed_entry_inexact) {  // lost bits at kf + j: more than j at kf
        unsigned long long exact_there = 0;
        for (int b = 1; b <= j; ++b) exact_there += count(red_shallow + b - 1);
        const unsigned long long v = count(red_inexact) - exact_there + s_rare.steps[c][2];
        if (v != 0) asm volatile("red.relaxed.gpu.global.add.u64 [%0], %1;" ::"l"(entry + part), "l"(v) : "memory");
      } else {
        const unsigned long long b = highest(red_lost);
        const unsigned long long v = most(b > static_cast<unsigned long long>(j) ? b - j : 0, s_rare.steps[c][3]);
        if (v != 0) asm volatile("red.relaxed.gpu.global.max.u64 [%0], %1;" ::"l"(entry + part), "l"(v) : "memory");
      }
    }
  // Its largest magnitude, L and the specials into the launch's words.
  if (threadIdx.x == 0) {
    unsigned long long* const w = ex.words;
    const unsigned long long big = highest(red_largest);
    if (big != 0) asm volatile("red.relaxed.gpu.global.max.u64 [%0], %1;" ::"l"(w + fixed_ex_grid_largest), "l"(big) : "memory");
    if (limit != fixed_no_limit)
      asm volatile("red.relaxed.gpu.global.max.u64 [%0], %1;" ::"l"(w + fixed_ex_limits), "l"(fixed_limit_code(limit)) : "memory");
    for (int i = 0; i < 3; ++i)
      if (s_rare.special[i] != 0)
        asm volatile("red.relaxed.gpu.global.add.u64 [%0], %1;" ::"l"(w + fixed_ex_nan + i), "l"(s_rare.special[i]) : "memory");
    if (block_not_negative_zero) asm volatile("red.relaxed.gpu.global.max.u64 [%0], %1;" ::"l"(w + fixed_ex_not_negative_zero), "l"(1ull) : "memory");
    if (sparse && !block_gave_up) {  // the elements it counted, which vanish at E
      const unsigned long long gone = count(red_inexact), most_lost = highest(red_lost);
      if (gone != 0) asm volatile("red.relaxed.gpu.global.add.u64 [%0], %1;" ::"l"(w + fixed_ex_sparse_inexact), "l"(gone) : "memory");
      if (most_lost != 0) asm volatile("red.relaxed.gpu.global.max.u64 [%0], %1;" ::"l"(w + fixed_ex_sparse_lost), "l"(most_lost) : "memory");
    }
  }
}

// A block's integer at its grid (as order_model::fixed_digits digits) and its report's counts.
struct FixedBlockTotals {
  unsigned long long digits[order_model::fixed_digits];
  unsigned long long stats[fixed_stats];
  unsigned long long largest;  // a guessing block's largest finite magnitude, as bits (fixed_one_launch_kernel)
};

// Thread 0: a block's totals into the launch's set, by atomics whose old values nobody reads.
__device__ __forceinline__ void fixed_add_block_totals(const FixedBuffers& out, const FixedBlockTotals& t) {
  unsigned long long* const set = out.sets + out.parity * fixed_set_words;
  for (int d = 0; d < order_model::fixed_digits; ++d)
    if (t.digits[d] != 0) atomicAdd(&set[d], t.digits[d]);
  for (int c = 0; c < fixed_stats; ++c) {
    if (t.stats[c] == 0) continue;
    if (c == fixed_max_bits_lost) atomicMax(&set[order_model::fixed_digits + c], t.stats[c]);
    else atomicAdd(&set[order_model::fixed_digits + c], t.stats[c]);
  }
}

// Block 0: the next launch's set to 0 (a launch touches only its own).
__device__ __forceinline__ void fixed_reset_next_set(const FixedBuffers& out) {
  if (blockIdx.x == 0)
    for (int w = static_cast<int>(threadIdx.x); w < fixed_set_words; w += static_cast<int>(blockDim.x))
      out.sets[(out.parity ^ 1u) * fixed_set_words + w] = 0;
}

// Pass 2's plan: k, and whether it reads the input at k (the range's grid missed an element, or a
// window pass's guess failed).
struct FixedPlan {
  long long k = 0;
  bool quantise = false;
  bool leftovers = false;  // block 0 after a window pass whose guesses held: the elements outside whole tiles
  long long sparse = 0;    // and every block: the elements its sparse blocks wrote out (FixedBuffers::sparse)
};

// Pass 2's plan after the window pass: k = 61 - E from the blocks' largest magnitude
// (fixed_point_sum's rule), and whether every block's guess held (E <= L) and every sparse block
// found room. Where they did, the table's entry at E is fixed_point_sum's integer and counts but
// for the elements outside whole tiles and those the sparse blocks wrote out or counted
// (fixed_window_kernel's comment says why): block 0 adds the entry, the counted elements and the
// specials into the set, and quantises the elements outside whole tiles; every block quantises a
// share of those written out. Every thread of the block calls it (it holds a barrier).
template <class T>
__device__ FixedPlan fixed_window_decide(const T* __restrict__ d_in, std::int64_t num_items, const FixedBuffers& out) {
  using Bits = typename FloatTraits<T>::Bits;
  __shared__ FixedPlan s_plan;
  if (threadIdx.x == 0) {
    const unsigned long long big = __ldcg(&out.window[fixed_ex_grid_largest]), code = __ldcg(&out.window[fixed_ex_limits]);
    FixedPlan p;  // big == 0: every q_i is 0 (k = 0, as fixed_point_sum's); no block added to the table
    const int e = big != 0 ? order_model::floor_log2_magnitude<T>(static_cast<Bits>(big)) : 0;
    const long long written = static_cast<long long>(__ldcg(&out.window[fixed_ex_sparse_count]));
    if (big != 0) p.k = 61 - e;
    p.quantise = (big != 0 && code != 0 && e > fixed_limit_of(code)) || written > out.capacity;
    if (!p.quantise) p.sparse = written;
    if (blockIdx.x == 0) {
      out.scale[0] = p.k;
      out.scale[1] = p.quantise ? fixed_quantised : fixed_window_held;
      unsigned long long* const set = out.sets + out.parity * fixed_set_words;
      if (!p.quantise) {
        // The set is 0 (the launch before reset it). Every word loaded before any is added: this
        // thread's round trips end the sum. By atomics: the other blocks add the elements written
        // out meanwhile.
        unsigned long long v[fixed_set_words] = {};
        unsigned long long* const stats = v + order_model::fixed_digits;
        if (code != 0) {  // (a block added at E: A <= E <= L, inside the table)
          const unsigned long long* const entry = fixed_table_entry(out.table, e);
          for (int d = 0; d < order_model::fixed_digits; ++d) v[d] = __ldcg(&entry[d]);
          stats[fixed_inexact] = __ldcg(&entry[fixed_entry_inexact]);
          stats[fixed_max_bits_lost] = __ldcg(&entry[fixed_entry_max_lost]);
        }
        const unsigned long long sparse_inexact = __ldcg(&out.window[fixed_ex_sparse_inexact]),
                                 sparse_lost = __ldcg(&out.window[fixed_ex_sparse_lost]);
        for (int i = 0; i < 3; ++i) stats[fixed_nan + i] = __ldcg(&out.window[fixed_ex_nan + i]);
        stats[fixed_not_negative_zero] = __ldcg(&out.window[fixed_ex_not_negative_zero]);
        stats[fixed_inexact] += sparse_inexact;
        stats[fixed_max_bits_lost] = max(stats[fixed_max_bits_lost], sparse_lost);
        for (int w = 0; w < fixed_set_words; ++w)
          if (v[w] != 0) {
            if (w == order_model::fixed_digits + fixed_max_bits_lost) atomicMax(&set[w], v[w]);
            else atomicAdd(&set[w], v[w]);
          }
        const BulkBody body = bulk_body(d_in, num_items, static_cast<int>(blockDim.x));
        p.leftovers = body.head > 0 || body.end < num_items;
      }
    }
    s_plan = p;
  }
  __syncthreads();
  return s_plan;
}

// Pass 2's plan, once pass 1's results are visible: k from pass 1's range (float,
// fixed_point_sum's rule), or the window pass's (double, above). Block 0 tells the host in
// out.scale. Every thread of the block calls it (the window pass's holds a barrier).
template <class T> __device__ FixedPlan fixed_decide(const T* __restrict__ d_in, std::int64_t num_items, const FixedBuffers& out) {
  using Bits = typename FloatTraits<T>::Bits;
  if constexpr (sizeof(T) == 8) {  // (float has no window pass)
    if (out.window != nullptr) return fixed_window_decide<T>(d_in, num_items, out);
  }
  const order_model::FixedOnePass d = order_model::fixed_one_pass<T>(
      static_cast<Bits>(__ldcg(&out.range[0])), static_cast<Bits>(__ldcg(&out.range[1])), decode_grid(__ldcg(&out.range[2])));
  if (blockIdx.x == 0 && threadIdx.x == 0) {
    out.scale[0] = d.k;
    out.scale[1] = d.on_grid ? fixed_on_grid : fixed_quantised;  // on the grid, pass 1 was the whole sum
  }
  FixedPlan p;
  p.k = d.k;
  p.quantise = !d.on_grid;
  return p;
}

// The quantising pass's body at scale 2^-k, which the one-launch kernels (below) run as well. Every
// thread of the block calls it (it holds barriers); the launch provides bulk_smem_bytes(blockDim.x)
// of dynamic shared memory. The shape's vector width and mapping do not matter (integer totals: any
// order gives the same bits). each(f, group): for_each_bulk_group's calls over the input, from
// the tiles it loads (fixed_quantise_block) or from tiles already held (fixed_largest_launch_kernel);
// with Hold each(f, group, &doomed), whose barrier after each tile votes on the flag.
// Hold (fixed_one_launch_kernel's guessing blocks): thread 0 puts the block's totals and its largest
// finite magnitude in *held instead of adding them to the set, where the caller adds them once it
// knows the grid was the sum's (fixed_add_block_totals).
template <class T, bool Hold = false, class Each>
__device__ __forceinline__ void fixed_quantise_each(const T* __restrict__ d_in, std::int64_t num_items,
                                                    const FixedBuffers& out, long long k, bool leftovers_only, Each&& each,
                                                    FixedBlockTotals* held = nullptr) {
  using Bits = typename FloatTraits<T>::Bits;
  const T two_k = order_model::fixed_two_k<T>(k);
  const bool fp = two_k != T(0);  // k outside fixed_two_k's range: every group by the integer steps
  __shared__ unsigned long long s_lo[32], s_hi[32], s_stats[fixed_stats];
  for (int c = static_cast<int>(threadIdx.x); c < fixed_stats; c += static_cast<int>(blockDim.x)) s_stats[c] = 0;
  unsigned __int128 sum = 0;
  // The report's counts, as scalars (an array indexed by a runtime value would live in local memory).
  unsigned long long nan = 0, pos_inf = 0, neg_inf = 0, inexact = 0, saturated = 0, max_lost = 0;
  bool not_negative_zero = false;
  // Hold: the largest finite magnitude, as bits (x_top) and, from the groups, as max |y| (y_top):
  // y = x 2^k is exact where it is normal, and scaling keeps the order, so a normal y_top is the
  // largest x's, 2^k times; a group whose largest y is not normal gives its x's bits instead.
  Bits x_top = 0;
  T y_top = T(0);
  // One element by the integer steps, with its counts.
  auto one_element = [&](T x) {
    Bits u;
    memcpy(&u, &x, sizeof(T));
    not_negative_zero |= u != FloatTraits<T>::sign_bit;
    if constexpr (Hold) {
      const Bits a = u & ~FloatTraits<T>::sign_bit;
      x_top = a < FloatTraits<T>::inf_bits && a > x_top ? a : x_top;
    }
    bool special = false, negative = false;
    const order_model::FixedQuantised q = order_model::fixed_quantise_bits<Bits>(
        u, k, FloatTraits<T>::precision - 1, FloatTraits<T>::exponent_bits, FloatTraits<T>::emax, special, negative);
    if (special) {
      if ((u & ((Bits(1) << (FloatTraits<T>::precision - 1)) - 1)) != 0) ++nan;
      else if (negative) ++neg_inf;
      else ++pos_inf;
      return;
    }
    const unsigned __int128 mag = static_cast<unsigned long long>(q.q);
    sum += negative ? static_cast<unsigned __int128>(0) - mag : mag;
    if (q.bits_lost != 0) {
      ++inexact;
      max_lost = static_cast<unsigned long long>(q.bits_lost) > max_lost ? q.bits_lost : max_lost;
    }
    if (q.saturated) ++saturated;
  };
  // A thread's share of a tile (a group) by the floating-point unit without branches
  // (fixed_quantise_group); only a group holding an element that is not ordinary (saturated, NaN
  // or Inf) is redone by the integer steps.
  order_model::FixedGroupLoss loss;
  // Hold: the group's largest finite magnitude as bits (every x is finite where the FP path took it).
  auto group_top = [](const T(&x)[bulk_group<T>]) {
    Bits top = 0;
#pragma unroll
    for (int i = 0; i < bulk_group<T>; ++i) {
      Bits u;
      memcpy(&u, &x[i], sizeof(T));
      u &= ~FloatTraits<T>::sign_bit;
      top = u < FloatTraits<T>::inf_bits && u > top ? u : top;
    }
    return top;
  };
  // Hold: once a thread meets an element that saturates at k (its exponent above the guessed
  // largest one, so the guess cannot hold), the block's integer is never used, and from the next
  // tile on (each(..., &doomed): the barrier after each tile is a vote) the block only tracks the
  // largest magnitude. Each such element would otherwise take the integer steps (on lognormal
  // sigma 12, whose tiles' largest lie 12 to 20 binades below its largest, that made the guessing
  // pass 2.5 times slower than a read), and the other elements a quantising pass at a grid far
  // too fine, slower than the exact pass, which the gate then waits for.
  bool doomed = false;
  auto group = [&](const T(&x)[bulk_group<T>]) {
    if constexpr (Hold) {
      if (doomed) {
        const Bits top = group_top(x);
        x_top = top > x_top ? top : x_top;
        return;
      }
    }
    T largest = 0;
    if (fp && order_model::fixed_quantise_group<T>(x, two_k, sum, largest, loss)) {
      if constexpr (Hold) {
        if (largest >= std::numeric_limits<T>::min()) {
          y_top = largest > y_top ? largest : y_top;
        } else {
          const Bits top = group_top(x);
          x_top = top > x_top ? top : x_top;
        }
      }
      if (largest != T(0)) {
        not_negative_zero = true;
      } else {  // every y is +0 or -0 (an x too, or one that vanished below the subnormals)
#pragma unroll
        for (int i = 0; i < bulk_group<T>; ++i) {
          Bits u;
          memcpy(&u, &x[i], sizeof(T));
          not_negative_zero |= u != FloatTraits<T>::sign_bit;
        }
      }
    } else {
      if constexpr (Hold) {  // NaN, Inf or an element saturated at k: above the guess?
        const Bits top = group_top(x);
        x_top = top > x_top ? top : x_top;
        doomed = top != 0 && order_model::floor_log2_magnitude<T>(top) > 61 - k;
      }
      if (!doomed) {
#pragma unroll  // (a runtime index would put x in local memory)
        for (int i = 0; i < bulk_group<T>; ++i) one_element(x[i]);
      }
    }
  };
  if (leftovers_only) {  // the elements outside whole tiles, which the window pass left to this one
    const BulkBody body = bulk_body(d_in, num_items, static_cast<int>(blockDim.x));
    for (std::int64_t i = threadIdx.x; i < body.head; i += blockDim.x) one_element(d_in[i]);
    for (std::int64_t i = body.end + threadIdx.x; i < num_items; i += blockDim.x) one_element(d_in[i]);
  } else {
    // Loads: tiles by the bulk-copy engine (gpu/thread/bulk_loads.cuh). Register loads 64 bytes
    // ahead ran at 0.93 - 0.97 of CUB at 2^30, float32, given k; 128 bytes ahead, an L2 prefetch,
    // cp.async staging and pipelined register loads were slower still (docs/performance-notes.md).
    if constexpr (Hold) each(one_element, group, &doomed);
    else each(one_element, group);
  }
  inexact += loss.inexact;
  max_lost = max(max_lost, static_cast<unsigned long long>(order_model::fixed_group_bits_lost<T>(loss)));
  // A block-wide vote, which is also the barrier after s_stats was zeroed (a shared atomicOr per
  // warp instead, 64-bit and so a compare-and-swap loop, cost 0.1-0.4 us a launch at 2^24 floats
  // on an H200).
  const bool block_not_negative_zero = __syncthreads_or(not_negative_zero) != 0;
  // The counts, almost always 0: a vote first, the reductions only when a lane has one.
  const unsigned live = live_mask();
  const bool first_live = static_cast<int>(threadIdx.x & 31u) == __ffs(live) - 1;
  if (__any_sync(live, (nan | pos_inf | neg_inf | inexact | saturated | max_lost) != 0)) {
    const unsigned long long counts[fixed_stats] = {nan, pos_inf, neg_inf, 0, inexact, saturated, max_lost};
#pragma unroll
    for (int c = 0; c < fixed_stats; ++c) {
      if (c == fixed_not_negative_zero) continue;
      const unsigned long long v =
          c == fixed_max_bits_lost
              ? warp_reduce_live(counts[c], [](unsigned long long a, unsigned long long b) { return a > b ? a : b; })
              : warp_reduce_live(counts[c], [](unsigned long long a, unsigned long long b) { return a + b; });
      if (first_live && v != 0) {
        if (c == fixed_max_bits_lost) atomicMax(&s_stats[c], v);
        else atomicAdd(&s_stats[c], v);
      }
    }
  }
  __shared__ Bits s_top[Hold ? 32 : 1];
  if constexpr (Hold) {
    if (y_top != T(0)) {
      const T x = ldexp(y_top, static_cast<int>(-k));  // exact: y_top is normal, and so is x
      Bits u;
      memcpy(&u, &x, sizeof(T));
      x_top = u > x_top ? u : x_top;
    }
    const Bits warp_top = warp_max_bits(live, x_top);
    if (first_live) s_top[threadIdx.x / 32] = warp_top;
  }
  const unsigned __int128 block = block_sum_u128(sum, s_lo, s_hi);  // its barrier also covers s_stats (and s_top)
  if (threadIdx.x != 0) return;
  FixedBlockTotals t{};
  for (int d = 0; d < order_model::fixed_digits; ++d) t.digits[d] = order_model::fixed_digit(block, d);
  for (int c = 0; c < fixed_stats; ++c)
    t.stats[c] = c == fixed_not_negative_zero ? (block_not_negative_zero ? 1ull : 0ull) : s_stats[c];
  if constexpr (Hold) {
    Bits top = s_top[0];
    for (int w = 1; w < static_cast<int>(blockDim.x + 31) / 32; ++w) top = s_top[w] > top ? s_top[w] : top;
    t.largest = top;
    *held = t;
  } else {
    fixed_add_block_totals(out, t);
  }
}

template <class T>
__device__ __forceinline__ void fixed_quantise_block(const T* __restrict__ d_in, std::int64_t num_items,
                                                     const FixedBuffers& out, long long k, bool leftovers_only = false) {
  fixed_quantise_each<T>(d_in, num_items, out, k, leftovers_only,
                         [&](auto& f, auto& group) { for_each_bulk_group(d_in, num_items, f, group); });
}

// MaxThreads: the instantiation's __launch_bounds__ (512: up to 128 registers; 1024: at most 64,
// for 1024-thread blocks only; with CUDA 13.0 the 512 builds use 117 (double) and 97 (float)
// registers without spilling, the 1024 builds spill 16 (float) and 136 bytes (double)).
// The launch provides bulk_smem_bytes(blockDim.x) of dynamic shared memory.
template <class T, int MaxThreads>
__global__ void __launch_bounds__(MaxThreads) fixed_point_kernel(const T* __restrict__ d_in, std::int64_t num_items,
                                                                 FixedBuffers out) {
  fixed_reset_next_set(out);
  if (out.range == nullptr && out.window == nullptr) {  // the caller's k: the whole sum
    fixed_quantise_block<T>(d_in, num_items, out, out.k);
    return;
  }
  wait_for_prerequisite_grid();  // launched as pass 1's programmatic dependent: pass 1 must end first
  const FixedPlan p = fixed_decide<T>(d_in, num_items, out);
  if (p.quantise || p.leftovers) fixed_quantise_block<T>(d_in, num_items, out, p.k, !p.quantise);
  if (p.sparse != 0) {  // the elements the window pass's sparse blocks wrote out
    if (p.leftovers) __syncthreads();  // (the body's shared words again: thread 0 has read them)
    fixed_quantise_block<T>(static_cast<const T*>(out.sparse), p.sparse, out, p.k);
  }
}

// ---- The scale from the data in one launch ----
//
// Float only. Where every block of the grid is resident at once (a cooperative launch, which
// fails rather than start a grid that is not), pass 1 and pass 2 run in one kernel: pass 1's body
// (gpu_exact's with the range), a barrier over the grid, then pass 2's decision and, only where
// pass 1 did not settle the sum, its quantising body. It saves the second launch, which on data on
// the grid only decides and returns, and it changes no bit: the same bodies add the same integers.
// (For double, the window pass and pass 2 in one launch were slower than the two launches at every
// n: docs/performance-notes.md. Small inputs of either type take fixed_largest_launch_kernel, below.)

// The gate: four words, zero before the first launch. gate[parity] counts the blocks that have
// finished pass 1; gate[2 + parity] holds pass 2's plan, published by the last of them; block 0
// clears the other parity's two for the next launch (as the sets: a launch touches only its own).
inline constexpr int fixed_gate_words = 4;
inline constexpr unsigned long long fixed_plan_published = 1ull << 63, fixed_plan_quantise = 1ull << 32;
// After the gate, a word per parity each: fixed_largest_launch_kernel's largest magnitude, and the
// count of fixed_one_launch_kernel's blocks that quantised their tiles after the gate (a second
// read); fixed_gate_all_words in all, zero before the first launch.
inline constexpr int fixed_largest_words = 2, fixed_reread_at = fixed_gate_words + fixed_largest_words;
inline constexpr int fixed_gate_all_words = fixed_reread_at + 2;

// A barrier over the grid and pass 2's decision in one. Every thread of every block calls it;
// every block must be resident (a cooperative launch). Thread 0 of each block arrives, after the
// block's barrier, by an add with release semantics (so the block's range and sums come before it,
// as cooperative groups' grid sync orders them with a fence). The last to arrive (its add acquires
// every earlier one) reads the whole range, decides k, tells the host in out.scale and publishes
// the plan; the others poll for the plan itself. A barrier followed by each block's own decision
// put two more round trips to the L2 on the chain that ends the launch: the last block's poll for
// its own arrival, and every block's dependent reads of the range after the barrier.
// LargestOnly (fixed_largest_launch_kernel): the range is the largest finite magnitude alone, in
// gate[fixed_gate_words + parity], and no exact sum stands behind it: the plan always quantises.
template <class T, bool LargestOnly = false>
__device__ __forceinline__ FixedPlan fixed_gate(const FixedBuffers& out, unsigned long long* gate) {
  using Bits = typename FloatTraits<T>::Bits;
  __shared__ unsigned long long s_plan;
  __syncthreads();
  if (threadIdx.x == 0) {
    unsigned long long* const count = gate + out.parity;
    unsigned long long* const plan = gate + 2 + out.parity;
    unsigned long long before, word;
    asm volatile("atom.acq_rel.gpu.global.add.u64 %0, [%1], 1;" : "=l"(before) : "l"(count) : "memory");
    if (before + 1 == gridDim.x) {
      order_model::FixedOnePass d;
      if constexpr (LargestOnly) {
        unsigned long long largest;
        asm volatile("ld.relaxed.gpu.global.u64 %0, [%1];" : "=l"(largest) : "l"(gate + fixed_gate_words + out.parity) : "memory");
        d = order_model::fixed_one_pass<T>(static_cast<Bits>(largest), ~Bits(0));
        d.on_grid = false;
      } else {
        unsigned long long r[3];  // loaded together: no load waits on another
        for (int i = 0; i < 3; ++i)
          asm volatile("ld.relaxed.gpu.global.u64 %0, [%1];" : "=l"(r[i]) : "l"(out.range + i) : "memory");
        d = order_model::fixed_one_pass<T>(static_cast<Bits>(r[0]), static_cast<Bits>(r[1]), decode_grid(r[2]));
      }
      out.scale[0] = d.k;
      out.scale[1] = d.on_grid ? fixed_on_grid : fixed_quantised;
      // k fits the low word: float's lies in [-66, 210], double's in [-962, 1135].
      word = fixed_plan_published | (d.on_grid ? 0ull : fixed_plan_quantise) | static_cast<unsigned>(static_cast<int>(d.k));
      asm volatile("st.relaxed.gpu.global.u64 [%0], %1;" ::"l"(plan), "l"(word) : "memory");
    } else {
      for (;;) {
        asm volatile("ld.relaxed.gpu.global.u64 %0, [%1];" : "=l"(word) : "l"(plan) : "memory");
        if (word & fixed_plan_published) break;
        __nanosleep(32);
      }
    }
    s_plan = word;
  }
  __syncthreads();
  FixedPlan p;
  p.k = static_cast<int>(static_cast<unsigned>(s_plan));
  p.quantise = (s_plan & fixed_plan_quantise) != 0;
  return p;
}

// A block's guess (fixed_one_launch_kernel), from its first tile: the block begins its tiles
// (bulk_begin on `full`, as either body would first) and reads the first from its stage as soon as
// it lands, so the guess costs the block a reduction and two barriers, not a trip to memory. Where
// the tile's elements are not all on their own grid (order_model::fixed_one_pass on their largest
// and smallest nonzero magnitudes: one lies more than 2^(62 - p) below their largest, 2^38 for
// float), pass 1's exact sum would not settle the sum, and the block guesses that their largest
// exponent is E, the input's: it quantises at their k in the first read, and after the gate either
// adds that integer (k was the sum's) or quantises again at k. Every bit pattern shows its largest
// exponent (each of the 254 finite ones 1 in 255) in nearly every tile of 4096; a tile whose
// largest stands alone in its binade does not guess (order_model::fixed_tile_guess). Narrow inputs
// keep the exact pass.
// What a guessing block puts in the range's lowest grid (encode_grid): below -k for every k, so
// that the gate never finds the exact sum (which it did not add to) settled.
inline constexpr int fixed_guessed_grid = -(1 << 30);
template <class T>
__device__ __forceinline__ order_model::FixedTileGuess fixed_guess_block(const T* __restrict__ d_in, std::int64_t num_items, unsigned long long* full) {
  using Bits = typename FloatTraits<T>::Bits;
  extern __shared__ __align__(128) unsigned char bulk_stage[];
  __shared__ Bits s_ends[32][3];
  __shared__ order_model::FixedTileGuess s_guess;
  bulk_begin(d_in, num_items, full);
  constexpr int frac_bits = FloatTraits<T>::precision - 1;
  Bits u[bulk_group<T>] = {};  // the tile's magnitudes, 0 for NaN and Inf (not finite)
  if (blockIdx.x < bulk_tiles(d_in, num_items).count) {
    bulk::wait(&full[0], 0);
    T x[bulk_group<T>];
    bulk_share(bulk_stage, x);
#pragma unroll
    for (int i = 0; i < bulk_group<T>; ++i) {
      memcpy(&u[i], &x[i], sizeof(T));
      u[i] &= ~FloatTraits<T>::sign_bit;
      u[i] = u[i] < FloatTraits<T>::inf_bits ? u[i] : 0;
    }
  }
  Bits top = 0, bottom = ~Bits(0);
#pragma unroll
  for (int i = 0; i < bulk_group<T>; ++i) {
    top = u[i] > top ? u[i] : top;
    bottom = u[i] != 0 && u[i] < bottom ? u[i] : bottom;
  }
  const unsigned live = live_mask();
  const Bits warp_top = warp_max_bits(live, top), warp_bottom = warp_min_bits(live, bottom);
  unsigned dense = 0;  // this thread's elements in the warp's top binade (the exponent field's)
#pragma unroll
  for (int i = 0; i < bulk_group<T>; ++i) dense += warp_top != 0 && (u[i] >> frac_bits) == (warp_top >> frac_bits) ? 1u : 0u;
  dense = __reduce_add_sync(live, dense);
  if (static_cast<int>(threadIdx.x & 31u) == __ffs(live) - 1) {
    s_ends[threadIdx.x / 32][0] = warp_top;
    s_ends[threadIdx.x / 32][1] = warp_bottom;
    s_ends[threadIdx.x / 32][2] = dense;
  }
  __syncthreads();
  if (threadIdx.x == 0) {
    const int warps = static_cast<int>(blockDim.x + 31) / 32;
    top = s_ends[0][0];
    bottom = s_ends[0][1];
    for (int w = 1; w < warps; ++w) {
      top = s_ends[w][0] > top ? s_ends[w][0] : top;
      bottom = s_ends[w][1] < bottom ? s_ends[w][1] : bottom;
    }
    unsigned in_top = 0;
    for (int w = 0; w < warps; ++w) in_top += (s_ends[w][0] >> frac_bits) == (top >> frac_bits) ? static_cast<unsigned>(s_ends[w][2]) : 0u;
    s_guess = order_model::fixed_tile_guess<T>(top, bottom, in_top);
  }
  __syncthreads();
  return s_guess;
}

// gate: fixed_gate_all_words. exact: pass 1's sets (the range read by fixed_gate is out.range,
// in them). The launch provides pass 1's dynamic shared memory (gpu_exact's,
// exact_tile_bytes<T>(MaxThreads, MinBlocks, blockDim.x) + ExactBins<T>::bytes(MaxThreads,
// MinBlocks, blockDim.x)), which holds pass 2's.
// A block whose first elements are wide (fixed_guess_block) quantises at their k in place of the
// exact pass, holds its integer and counts, gives the range its largest magnitude (and a lowest
// grid that tells the gate the exact sum is not whole), and after the gate adds what it held where
// k was the sum's; every other block, where the gate says quantise, reads its tiles again. A
// block's elements are for_each_bulk_group's in both of its quantising bodies, so the blocks' sets
// cover every element once whichever way each went: fixed_point_sum's integer, in any order.
template <class T, int MaxThreads, int MinBlocks>
__global__ void __launch_bounds__(MaxThreads, MinBlocks)
    fixed_one_launch_kernel(const T* __restrict__ d_in, std::int64_t num_items, ExactBuffers exact, FixedBuffers out,
                            unsigned long long* gate) {
  static_assert(sizeof(T) == 4, "double's pass 1 is the window pass, which runs in two launches");
  __shared__ FixedBlockTotals s_held;
  __shared__ __align__(8) unsigned long long s_full[bulk_max_stages];  // the first body's stages (bulk_begin)
  const order_model::FixedTileGuess g = fixed_guess_block<T>(d_in, num_items, s_full);
  fixed_reset_next_set(out);
  const unsigned next = out.parity ^ 1u;
  if (blockIdx.x == 0 && threadIdx.x == 0) gate[next] = gate[2 + next] = gate[fixed_reread_at + next] = 0;
  if (!g.guess) {
    exact_limbs_block<T, true, MaxThreads, MinBlocks, false, true>(d_in, num_items, exact, s_full);
  } else {
    fixed_quantise_each<T, true>(
        d_in, num_items, out, g.k, false,
        [&](auto& f, auto& group, bool* doomed) {
          for_each_bulk_group<false, 0, true, true>(d_in, num_items, f, group, s_full, doomed);
        },
        &s_held);
    if (threadIdx.x == 0) {
      unsigned long long* const range = exact.sets + exact.parity * exact_set_words<T> + exact_range_at<T>;
      if (s_held.largest != 0) atomicMax(&range[0], s_held.largest);
      atomicMin(&range[2], encode_grid(fixed_guessed_grid));
    }
    exact_reset_next_set<T>(exact);
  }
  const FixedPlan p = fixed_gate<T>(out, gate);
  if (!p.quantise) return;
  if (g.guess && p.k == g.k) {
    if (threadIdx.x == 0) fixed_add_block_totals(out, s_held);
    return;
  }
  if (threadIdx.x == 0) atomicAdd(&gate[fixed_reread_at + out.parity], 1ull);
  // Pass 1's tiles were read by the threads (the generic proxy); pass 2's are written into the same
  // shared memory by the bulk-copy engine (the async proxy).
  asm volatile("fence.proxy.async.shared::cta;" ::: "memory");
  fixed_quantise_block<T>(d_in, num_items, out, p.k);
}

// ---- The scale from the data in one launch, for small inputs ----
//
// The window pass reads a double input once, but at small n it is a chain of latencies (its
// anchor's barriers, the end's atomics, then pass 2's round trips: docs/performance-notes.md), where
// the sum's time is mostly such chains anyway; and float's first pass, gpu_exact's kernel with the
// range, costs more than finding the largest magnitude. Where the grid is resident whole and the
// input is small (the dispatch says how small), fixed_largest_launch_kernel instead has each block
// ask for all its tiles at once (bulk_begin), find the largest finite magnitude over them (a
// compare an element), meet at the gate, whose last block takes k by fixed_point_sum's rule, and
// quantise every element at k (fixed_quantise_each) from the tiles it still holds: one read of
// memory where every block's tiles fit its stages (bulk_holds_all), and where they do not, the
// tiles past the stages read twice, the second time from the L2 (the dispatch keeps the input to a
// part of the L2's size).
// The integers are those the two-launch passes add at the same k, so the bits are too.

// The largest finite magnitude's bits over this block's calls of each (for_each_bulk_group's
// contract), into *largest by an atomic max (bit patterns of magnitudes order like the magnitudes).
// Every thread of the block calls it (it holds a barrier).
template <class T, class Each> __device__ __forceinline__ void fixed_largest_block(Each&& each, unsigned long long* largest) {
  using Bits = typename FloatTraits<T>::Bits;
  constexpr Bits magnitude = ~FloatTraits<T>::sign_bit, inf_bits = FloatTraits<T>::inf_bits;
  Bits top = 0;
  auto take = [&](T x) {
    Bits u;
    memcpy(&u, &x, sizeof(T));
    const Bits a = u & magnitude;
    top = a < inf_bits && a > top ? a : top;  // NaN and Inf are not finite
  };
  auto group = [&](const T(&x)[bulk_group<T>]) {
#pragma unroll
    for (int i = 0; i < bulk_group<T>; ++i) take(x[i]);
  };
  each(take, group);
  __shared__ Bits s_top[32];
  const unsigned live = live_mask();
  const Bits warp_top = warp_max_bits(live, top);
  if (static_cast<int>(threadIdx.x & 31u) == __ffs(live) - 1) s_top[threadIdx.x / 32] = warp_top;
  __syncthreads();
  if (threadIdx.x != 0) return;
  Bits block_top = s_top[0];
  for (int w = 1; w < static_cast<int>(blockDim.x + 31) / 32; ++w) block_top = s_top[w] > block_top ? s_top[w] : block_top;
  if (block_top != 0) atomicMax(largest, static_cast<unsigned long long>(block_top));
}

// gate: fixed_gate_all_words, zero before the first launch. The launch
// provides bulk_smem_bytes(blockDim.x) of dynamic shared memory.
template <class T, int MaxThreads, int MinBlocks>
__global__ void __launch_bounds__(MaxThreads, MinBlocks)
    fixed_largest_launch_kernel(const T* __restrict__ d_in, std::int64_t num_items, FixedBuffers out,
                                unsigned long long* gate) {
  bulk_begin(d_in, num_items, bulk_held_barriers());  // the tiles are asked for first
  fixed_reset_next_set(out);
  const unsigned next = out.parity ^ 1u;
  if (blockIdx.x == 0 && threadIdx.x == 0) gate[next] = gate[2 + next] = gate[fixed_gate_words + next] = 0;
  auto held = [&](auto& f, auto& group) { for_each_held_group(d_in, num_items, f, group); };
  fixed_largest_block<T>(held, gate + fixed_gate_words + out.parity);
  const FixedPlan p = fixed_gate<T, true>(out, gate);
  fixed_quantise_each<T>(d_in, num_items, out, p.k, false, held);
}

}  // namespace sumlab::gpu::detail
