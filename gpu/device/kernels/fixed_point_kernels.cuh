#pragma once
// __global__ kernel of gpu_fixed_point's quantising pass (core/order_model/fixed_point_model.hpp
// says why its bits equal core/fixed_point_sum.hpp's for every shape):
//   fixed_point_kernel  q_i = RNE(x_i 2^k) (fixed_quantise_group, or the integer steps where that
//                       cannot tell), summed as wrapping 128-bit integers per thread, warp and
//                       block, each block's sum added to the launch's by 64-bit atomics (any
//                       grouping: integer addition is exact), with the quantisation report's counts.
//   fixed_window_kernel the scale from the data in one read (below): each element quantised onto
//                       the grid of a guess of k, or, off that grid, at each k the guess allows;
//                       one record per block.
// With the scale from the data fixed_point_kernel is pass 2, after gpu_exact's kernel with range
// tracking (float) or after fixed_window_kernel (double): it decides k from pass 1's range or
// records, and returns at once when pass 1 was the whole sum (every element on the grid 2^-k, or
// every block's guess held; block 0 then adds the records, gpu/device/dispatch_fixed_point.cu);
// otherwise it quantises every element. With the caller's k it is the whole sum, one read.
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
// What pass 2 tells the host in scale[1]: how the sum was made.
enum FixedPass2 : long long { fixed_quantised = 0, fixed_on_grid = 1, fixed_window_held = 2 };

struct FixedBuffers {
  const unsigned long long* range = nullptr;    // pass 1's range (its set's, exact_range_at); nullptr: the caller's k
  const unsigned long long* records = nullptr;  // or fixed_window_kernel's records (record_count of them)
  int record_count = 0;
  long long* scale = nullptr;                   // from the data: block 0 writes (k, FixedPass2), for the host
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
// quantises before it knows E, against a guess it can check afterwards:
// - Each warp takes as anchor A the exponent floor(log2 |x|) of the largest finite magnitude in its
//   first group of tiles' shares holding a finite nonzero element (A <= E), and guesses E <= G =
//   A + M, M = fixed_window_margin: its grid is 2^-kf, kf = 61 - G.
// - An element with y = x 2^kf an integer below 2^62 is added as y. If the guess holds (k >= kf) it
//   sits on the grid 2^-k too, and its q = RNE(x 2^k) = y 2^(k - kf) exactly, with no bit lost.
// - Any other finite element at most 2^G (off the grid 2^-kf: a double below 2^(G - 9)) is
//   quantised as fixed_point_sum would with each candidate k_c = 61 - (A + c), c = 0..M
//   (fixed_quantise_bits: its q and the bits it lost), into one total and one count per candidate.
//   Larger elements break the guess, which E shows; the warp then only tracks the range.
// - A warp whose group had an element off the grid 2^-kf (doubles with all their bits: the small
//   ones of normal data) spreads from its next group on: each element with |y| in [1/2, 2^62) or
//   0 goes to every candidate at once by the floating-point unit (q_c = RNE(y 2^(M - c)) by the
//   conversion, the bits lost from y's part below 2^0, as fixed_quantise_group does); the others
//   by the integer steps.
// Each block writes a record: its sum at its finest common grid k_b = 61 - L, L = min over its
// warps of A + M (the sums shifted up by kf's difference), its candidates at E = A_hi + c, A_hi =
// max over its warps of A (each warp's candidate E - A), the counts and its largest magnitude.
// Pass 2 (fixed_window_decision) takes E from the records; when E <= L for every block every
// guess held, and fixed_point_sum's integer is sum over blocks of sum_b 2^(k - k_b) + candidate
// E - A_hi of b, plus the elements outside whole tiles, which pass 2 quantises at k (block 0,
// fixed_window_add_records); it has the same counts of lost bits too. Otherwise pass 2 quantises
// every element at k: two reads, as before. Integer additions wrap modulo 2^128 in any order, so
// the bits do not depend on the launch. The guess holds when a warp's first 256 elements come
// within 2^M of the largest magnitude: uniform and normal inputs; heavy tails (lognormal) fall back.
inline constexpr int fixed_window_margin = 2;  // M
inline constexpr int fixed_window_candidates = fixed_window_margin + 1;
enum FixedRecordWord {
  fixed_rec_largest = 0,  // bits of the block's largest finite magnitude (tiles and its share of the rest)
  fixed_rec_anchor,       // A_hi (fixed_no_anchor: every element of its tiles was zero, NaN or infinite)
  fixed_rec_limit,        // L (fixed_no_limit with no anchor)
  fixed_rec_sum,          // the sum at k_b: low, high word
  fixed_rec_candidates = fixed_rec_sum + 2,  // per candidate: sum low, high, inexact count, most bits lost
  fixed_rec_nan = fixed_rec_candidates + 4 * fixed_window_candidates,
  fixed_rec_pos_inf,
  fixed_rec_neg_inf,
  fixed_rec_not_negative_zero,
  fixed_record_words
};
inline constexpr int fixed_no_anchor = -(1 << 20), fixed_no_limit = 1 << 20;

// Every thread of every block of fixed_window_kernel calls it (it holds barriers); the launch
// provides bulk_smem_bytes(blockDim.x) of dynamic shared memory. records: gridDim.x records of
// fixed_record_words, each written whole by its block.
template <class T, int MaxThreads>
__global__ void __launch_bounds__(MaxThreads) fixed_window_kernel(const T* __restrict__ d_in, std::int64_t num_items,
                                                                  unsigned long long* __restrict__ records) {
  using Bits = typename FloatTraits<T>::Bits;
  constexpr int M = fixed_window_margin, C = fixed_window_candidates, N = bulk_group<T>;
  constexpr int frac_bits = FloatTraits<T>::precision - 1;
  constexpr Bits magnitude_mask = ~Bits(0) >> 1;
  constexpr Bits inf_bits = ((Bits(1) << FloatTraits<T>::exponent_bits) - 1) << frac_bits;
  constexpr Bits negative_zero = Bits(1) << (sizeof(Bits) * 8 - 1);
  __shared__ int s_anchor, s_limit;
  __shared__ unsigned long long s_red[fixed_record_words][32];
  if (threadIdx.x == 0) {  // (the loader's first barrier publishes these)
    s_anchor = fixed_no_anchor;
    s_limit = fixed_no_limit;
  }
  int anchor = fixed_no_anchor;  // A, the same in every lane of a warp
  long long kf = 0;              // 61 - (A + M)
  T two_kf = 0;                  // 2^kf where the floating-point path can scale by it, else 0
  unsigned __int128 sum = 0;     // the elements on the grid 2^-kf, as integers there
  T big = 0;                     // the largest |x| 2^kf the floating-point path added
  Bits largest = 0;              // the largest finite magnitude any other path met
  unsigned __int128 cand[C];
  unsigned long long inexact[C], lost[C];
#pragma unroll
  for (int c = 0; c < C; ++c) cand[c] = inexact[c] = lost[c] = 0;
  unsigned long long nan = 0, pos_inf = 0, neg_inf = 0;
  bool not_negative_zero = false;
  bool spread = false;               // the warp quantises every element at every candidate (below)
  bool broken = false;               // an element beyond the warp's guess: pass 2 will quantise
  unsigned long long spread_lost = 0;  // the lost parts there, at kf (FixedGroupLoss::lost)
  // One element by the integer steps (the warp has its anchor unless every finite element it met
  // was zero).
  auto element = [&](T x) {
    Bits u;
    memcpy(&u, &x, sizeof(T));
    const Bits a = u & magnitude_mask;
    not_negative_zero |= u != negative_zero;
    if (a >= inf_bits) {
      if (a != inf_bits) ++nan;
      else if (u != a) ++neg_inf;
      else ++pos_inf;
      return;
    }
    if (a == 0) return;
    largest = a > largest ? a : largest;
    bool special = false, negative = false;
    const order_model::FixedQuantised q = order_model::fixed_quantise_bits<Bits>(
        u, kf, frac_bits, FloatTraits<T>::exponent_bits, FloatTraits<T>::emax, special, negative);
    if (q.bits_lost == 0 && !q.saturated && q.q < (1ll << 62)) {  // on the grid 2^-kf
      const unsigned __int128 mag = static_cast<unsigned long long>(q.q);
      sum += negative ? static_cast<unsigned __int128>(0) - mag : mag;
      return;
    }
    if (order_model::floor_log2_magnitude<T>(a) > anchor + M) {  // beyond the guess: E says so
      broken = true;
      return;
    }
#pragma unroll
    for (int c = 0; c < C; ++c) {
      const order_model::FixedQuantised qc = order_model::fixed_quantise_bits<Bits>(
          u, kf + (M - c), frac_bits, FloatTraits<T>::exponent_bits, FloatTraits<T>::emax, special, negative);
      const unsigned __int128 mag = static_cast<unsigned long long>(qc.q);
      cand[c] += negative ? static_cast<unsigned __int128>(0) - mag : mag;
      if (qc.bits_lost != 0) {
        ++inexact[c];
        lost[c] = static_cast<unsigned long long>(qc.bits_lost) > lost[c] ? qc.bits_lost : lost[c];
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
  auto group = [&](const T(&x)[N]) {
    if (broken) {  // the guess failed (E > A + M, as `largest` shows): the records go unread
#pragma unroll
      for (int i = 0; i < N; ++i) rest(x[i]);
      return;
    }
    if (anchor == fixed_no_anchor) {  // the warp's anchor, from its first group with a finite nonzero element
      unsigned long long m = 0;
#pragma unroll
      for (int i = 0; i < N; ++i) {
        Bits u;
        memcpy(&u, &x[i], sizeof(T));
        const Bits a = u & magnitude_mask;
        m = a < inf_bits && a > m ? a : m;
      }
      m = warp_reduce_live(m, [](unsigned long long a, unsigned long long b) { return a > b ? a : b; });
      m = __shfl_sync(live_mask(), m, 0);
      if (m != 0) {  // (else every element is zero, NaN or infinite: the integer steps, no anchor yet)
        anchor = order_model::floor_log2_magnitude<T>(static_cast<Bits>(m));
        kf = 61 - (anchor + M);
        two_kf = order_model::fixed_two_k<T>(kf);
      }
    }
    T approx = 0, group_big = 0;
    // The elements left to the integer steps (one call site: each inlined copy of element() is long):
    // all of them without an anchor or where kf is outside 0..emax.
    unsigned off = 0;
    if (two_kf == T(0)) {
      off = (1u << N) - 1;
    } else if (!spread) {
      // y = x 2^kf (exact), added where it is an integer below 2^62 (fixed_quantise_group's sums).
      unsigned long long s = 0;
      bool off_grid = false;  // an element below 2^62 off the grid
#pragma unroll
      for (int i = 0; i < N; ++i) {
        const T y = x[i] * two_kf;
        const long long q = order_model::fixed_rint_ll(y);
        const bool below = fabs(y) < T(0x1p62), ok = below && y == static_cast<T>(q);
        s += ok ? static_cast<unsigned long long>(q) : 0ull;
        approx += ok ? y : T(0);
        group_big = fmax(group_big, ok ? fabs(y) : T(0));
        off |= ok ? 0u : 1u << i;
        off_grid |= below && !ok;
      }
      order_model::fixed_add_group_total(sum, s, approx);
      // An element off the grid 2^-kf (a double with bits below 2^(G - 61): in normal data about 1
      // in 80, the small ones, and so in nearly every warp's group): the warp spreads from its
      // next group on.
      spread = __any_sync(live_mask(), off_grid);
    } else {
      // Every element with 1/2 <= |y| < 2^62 (or 0) at each candidate at once, each
      // y_c = y 2^(M - c) exact and q_c = RNE(y_c) by the conversion (fixed_quantise_group's
      // reasons, at the grid 2^-k_c; a candidate whose q_c pass 2^62 is one the data rules out).
      // y's lost part d = y - q_M: y_c lost bits exactly when d 2^(M - c) is not an integer.
      // y (0 where not fine), q = RNE(y) and w = d 2^62 (order_model::fixed_bits_lost).
      const auto quantise = [&](T xi, long long& q, long long& w) {
        T y = xi * two_kf;
        y = fabs(y) < T(0x1p62) && !(fabs(y) < T(0.5) && y != T(0)) ? y : T(0);  // (NaN: not fine)
        q = order_model::fixed_rint_ll(y);
        w = order_model::fixed_rint_ll((y - static_cast<T>(q)) * T(0x1p62));
        return y;
      };
      unsigned long long s[C];
#pragma unroll
      for (int c = 0; c < C; ++c) s[c] = 0;
      unsigned lost_any = 0, lost_deep = 0;  // the elements with d != 0; those with bits of d below 2^-30
#pragma unroll
      for (int i = 0; i < N; ++i) {
        long long q, w;
        const T y = quantise(x[i], q, w);
        off |= y != T(0) || x[i] == T(0) ? 0u : 1u << i;
        approx += y;
        group_big = fmax(group_big, fabs(y));
        spread_lost |= static_cast<unsigned long long>(w);
        lost_any |= w != 0 ? 1u << i : 0u;
        lost_deep |= static_cast<unsigned>(w) != 0u ? 1u << i : 0u;
#pragma unroll
        for (int c = 0; c < C; ++c) {
          const long long qc = c == M ? q : order_model::fixed_rint_ll(y * T(1 << (M - c)));
          s[c] += static_cast<unsigned long long>(qc);
        }
      }
#pragma unroll
      for (int c = 0; c < C; ++c) order_model::fixed_add_group_total(cand[c], s[c], approx * T(1 << (M - c)));
      // y_c lost bits exactly when d 2^(M - c) is not an integer: for every c when d has bits below
      // 2^-30 (full doubles: nearly always); otherwise counted element by element.
      if (lost_deep == lost_any) {
#pragma unroll
        for (int c = 0; c < C; ++c) inexact[c] += static_cast<unsigned long long>(__popc(lost_any));
      } else {
#pragma unroll
        for (int i = 0; i < N; ++i) {
          long long q, w;
          quantise(x[i], q, w);
#pragma unroll
          for (int c = 0; c < C; ++c)
            inexact[c] += (static_cast<unsigned long long>(w) & ((1ull << (62 - (M - c))) - 1)) != 0 ? 1 : 0;
        }
      }
    }
    big = fmax(big, group_big);
    if (group_big != T(0)) {
      not_negative_zero = true;
    } else {
#pragma unroll
      for (int i = 0; i < N; ++i) not_negative_zero |= !signbit(x[i]);
    }
    while (off != 0) {
      const int i = __ffs(static_cast<int>(off)) - 1;
      off &= off - 1;
      T xi = x[0];
#pragma unroll  // (a runtime index would put x in local memory)
      for (int j = 1; j < N; ++j) xi = j == i ? x[j] : xi;
      element(xi);
    }
    broken = __any_sync(live_mask(), broken);  // (the warp's groups stay in step: collectives above)
  };
  for_each_bulk_group(d_in, num_items, rest, group);
  let_dependents_start();
  // The most bits a spread element lost at candidate c: at kf, fixed_bits_lost; at k_c, M - c fewer.
#pragma unroll
  for (int c = 0; c < C; ++c) {
    const int b = order_model::fixed_bits_lost(spread_lost) - (M - c);
    lost[c] = b > 0 && static_cast<unsigned long long>(b) > lost[c] ? b : lost[c];
  }
  const int lane = static_cast<int>(threadIdx.x & 31u), warp = static_cast<int>(threadIdx.x >> 5);
  if (anchor != fixed_no_anchor && lane == 0) {
    atomicMax(&s_anchor, anchor);
    atomicMin(&s_limit, anchor + M);
  }
  if (big != T(0)) {
    const T mag = scalbn(big, -static_cast<int>(kf));  // an element's magnitude: exact
    Bits b;
    memcpy(&b, &mag, sizeof(T));
    largest = b > largest ? b : largest;
  }
  __syncthreads();
  const int a_hi = s_anchor, limit = s_limit;
  // This thread's share of the record: its sum moved to k_b (k_b - kf = A + M - L >= 0), and for
  // each of the block's candidates E = A_hi + c its own candidate E - A (in 0..M where the block's
  // guess can hold, L <= A + M; the others are never read).
  unsigned __int128 v[1 + C];
  unsigned long long v_inexact[C], v_lost[C];
#pragma unroll
  for (int c = 0; c <= C; ++c) v[c] = 0;
#pragma unroll
  for (int c = 0; c < C; ++c) v_inexact[c] = v_lost[c] = 0;
  if (anchor != fixed_no_anchor) {
    const int shift = anchor + M - limit;
    v[0] = shift >= 128 ? 0 : sum << shift;
#pragma unroll
    for (int cb = 0; cb < C; ++cb) {
      const int ct = a_hi - anchor + cb;
#pragma unroll  // (selects: a runtime index would put the candidates in local memory)
      for (int c = 0; c < C; ++c)
        if (c == ct) {
          v[1 + cb] = cand[c];
          v_inexact[cb] = inexact[c];
          v_lost[cb] = lost[c];
        }
    }
  }
  const auto add = [](auto a, auto b) { return a + b; };
  const auto most = [](unsigned long long a, unsigned long long b) { return a > b ? a : b; };
  unsigned long long w[fixed_record_words];
  const unsigned __int128 sum_b = warp_reduce_live(v[0], add);
  w[fixed_rec_sum] = static_cast<unsigned long long>(sum_b);
  w[fixed_rec_sum + 1] = static_cast<unsigned long long>(sum_b >> 64);
#pragma unroll
  for (int c = 0; c < C; ++c) {
    const unsigned __int128 t = warp_reduce_live(v[1 + c], add);
    w[fixed_rec_candidates + 4 * c] = static_cast<unsigned long long>(t);
    w[fixed_rec_candidates + 4 * c + 1] = static_cast<unsigned long long>(t >> 64);
    w[fixed_rec_candidates + 4 * c + 2] = warp_reduce_live(v_inexact[c], add);
    w[fixed_rec_candidates + 4 * c + 3] = warp_reduce_live(v_lost[c], most);
  }
  w[fixed_rec_largest] = warp_reduce_live(static_cast<unsigned long long>(largest), most);
  w[fixed_rec_nan] = warp_reduce_live(nan, add);
  w[fixed_rec_pos_inf] = warp_reduce_live(pos_inf, add);
  w[fixed_rec_neg_inf] = warp_reduce_live(neg_inf, add);
  w[fixed_rec_anchor] = w[fixed_rec_limit] = w[fixed_rec_not_negative_zero] = 0;  // (block-wide, below)
  if (lane == 0)
#pragma unroll
    for (int r = 0; r < fixed_record_words; ++r) s_red[r][warp] = w[r];
  const bool block_not_negative_zero = __syncthreads_or(not_negative_zero) != 0;  // (also s_red's barrier)
  // Thread r writes word r of the record (a 128-bit sum: its low word's thread, both words).
  const int r = static_cast<int>(threadIdx.x), warps = static_cast<int>(blockDim.x + 31) / 32;
  if (r >= fixed_record_words) return;
  unsigned long long* const record = records + std::size_t(blockIdx.x) * fixed_record_words;
  const bool in_candidates = r >= fixed_rec_candidates && r < fixed_rec_nan;
  const int part = (r - fixed_rec_candidates) % 4;
  if (r == fixed_rec_anchor) {
    record[r] = static_cast<unsigned long long>(static_cast<long long>(a_hi));
  } else if (r == fixed_rec_limit) {
    record[r] = static_cast<unsigned long long>(static_cast<long long>(limit));
  } else if (r == fixed_rec_not_negative_zero) {
    record[r] = block_not_negative_zero ? 1 : 0;
  } else if (r == fixed_rec_sum || (in_candidates && part == 0)) {
    unsigned __int128 t = 0;
    for (int j = 0; j < warps; ++j) t += (static_cast<unsigned __int128>(s_red[r + 1][j]) << 64) | s_red[r][j];
    record[r] = static_cast<unsigned long long>(t);
    record[r + 1] = static_cast<unsigned long long>(t >> 64);
  } else if (r == fixed_rec_largest || (in_candidates && part == 3)) {
    unsigned long long t = 0;
    for (int j = 0; j < warps; ++j) t = most(t, s_red[r][j]);
    record[r] = t;
  } else if (r != fixed_rec_sum + 1 && !(in_candidates && part == 1)) {
    unsigned long long t = 0;
    for (int j = 0; j < warps; ++j) t += s_red[r][j];
    record[r] = t;
  }
}

// Pass 2's decision after fixed_window_kernel: k from the blocks' largest magnitudes
// (fixed_point_sum's rule; 0 when no element is finite and nonzero), and whether every block's
// guess held (E <= L). Every thread of the block calls it (it holds barriers).
struct FixedWindowDecision {
  long long k = 0;
  bool held = false;
};
template <class T>
__device__ FixedWindowDecision fixed_window_decision(const unsigned long long* records, int count) {
  using Bits = typename FloatTraits<T>::Bits;
  __shared__ unsigned long long s_largest;
  __shared__ int s_limit;
  if (threadIdx.x == 0) {
    s_largest = 0;
    s_limit = fixed_no_limit;
  }
  __syncthreads();
  unsigned long long largest = 0;
  int limit = fixed_no_limit;
  for (int b = static_cast<int>(threadIdx.x); b < count; b += static_cast<int>(blockDim.x)) {
    const unsigned long long* const rec = records + std::size_t(b) * fixed_record_words;
    const unsigned long long l = __ldcg(&rec[fixed_rec_largest]);
    largest = l > largest ? l : largest;
    const int m = static_cast<int>(static_cast<long long>(__ldcg(&rec[fixed_rec_limit])));
    limit = m < limit ? m : limit;
  }
  if (largest != 0) atomicMax(&s_largest, largest);
  if (limit != fixed_no_limit) atomicMin(&s_limit, limit);
  __syncthreads();
  FixedWindowDecision d;
  const Bits big = static_cast<Bits>(s_largest);
  if (big == 0) {  // every q_i is 0 (k = 0, as fixed_point_sum's): the records hold only counts
    d.held = true;
    return d;
  }
  const int e = order_model::floor_log2_magnitude<T>(big);
  d.k = 61 - e;
  d.held = e <= s_limit;
  return d;
}

// Block 0 of pass 2, when every guess held: this thread's stride of the records added at k
// (fixed_window_kernel's comment says why the total is fixed_point_sum's integer).
template <class T>
__device__ void fixed_window_add_records(const unsigned long long* records, int count, long long k,
                                         unsigned __int128& sum, unsigned long long& nan, unsigned long long& pos_inf,
                                         unsigned long long& neg_inf, unsigned long long& inexact,
                                         unsigned long long& max_lost, bool& not_negative_zero) {
  const long long e = 61 - k;
  for (int b = static_cast<int>(threadIdx.x); b < count; b += static_cast<int>(blockDim.x)) {
    const unsigned long long* const rec = records + std::size_t(b) * fixed_record_words;
    nan += __ldcg(&rec[fixed_rec_nan]);
    pos_inf += __ldcg(&rec[fixed_rec_pos_inf]);
    neg_inf += __ldcg(&rec[fixed_rec_neg_inf]);
    not_negative_zero |= __ldcg(&rec[fixed_rec_not_negative_zero]) != 0;
    const long long anchor = static_cast<long long>(__ldcg(&rec[fixed_rec_anchor]));
    if (anchor == fixed_no_anchor) continue;  // its tiles held no finite nonzero element
    const long long shift = static_cast<long long>(__ldcg(&rec[fixed_rec_limit])) - e;  // k - k_b >= 0
    const unsigned __int128 s =
        (static_cast<unsigned __int128>(__ldcg(&rec[fixed_rec_sum + 1])) << 64) | __ldcg(&rec[fixed_rec_sum]);
    sum += shift >= 128 ? 0 : s << shift;
    const unsigned long long* const c = rec + fixed_rec_candidates + 4 * (e - anchor);  // A_hi <= E <= L <= A_hi + M
    sum += (static_cast<unsigned __int128>(__ldcg(&c[1])) << 64) | __ldcg(&c[0]);
    inexact += __ldcg(&c[2]);
    const unsigned long long l = __ldcg(&c[3]);
    max_lost = l > max_lost ? l : max_lost;
  }
}

// MaxThreads: the instantiation's __launch_bounds__ (512: up to 128 registers; 1024: at most 64,
// for 1024-thread blocks only; with CUDA 13.0 the 512 builds use 92 (double) and 98 (float)
// registers without spilling, the 1024 builds spill 104-136 bytes).
// The launch provides bulk_smem_bytes(blockDim.x) of dynamic shared memory. The shape's vector width
// and mapping do not matter (integer totals: any order gives the same bits).
template <class T, int MaxThreads>
__global__ void __launch_bounds__(MaxThreads) fixed_point_kernel(const T* __restrict__ d_in, std::int64_t num_items,
                                                                 FixedBuffers out) {
  using Bits = typename FloatTraits<T>::Bits;
  if (blockIdx.x == 0)  // the next launch's set (this launch touches only its own)
    for (int w = static_cast<int>(threadIdx.x); w < fixed_set_words; w += static_cast<int>(blockDim.x))
      out.sets[(out.parity ^ 1u) * fixed_set_words + w] = 0;
  long long k = out.k;
  bool add_records = false;  // block 0 after a window pass whose guesses all held
  if (out.range != nullptr) {  // pass 2: the scale from pass 1's range (fixed_point_sum's rule)
    wait_for_prerequisite_grid();  // launched as pass 1's programmatic dependent: pass 1 must end first
    const order_model::FixedOnePass d = order_model::fixed_one_pass<T>(
        static_cast<Bits>(__ldcg(&out.range[0])), static_cast<Bits>(__ldcg(&out.range[1])), decode_grid(__ldcg(&out.range[2])));
    if (blockIdx.x == 0 && threadIdx.x == 0) {
      out.scale[0] = d.k;
      out.scale[1] = d.on_grid ? fixed_on_grid : fixed_quantised;
    }
    if (d.on_grid) return;  // pass 1 was the whole sum (every element on the grid)
    k = d.k;
  } else if (out.records != nullptr) {  // pass 2 after fixed_window_kernel
    wait_for_prerequisite_grid();
    const FixedWindowDecision d = fixed_window_decision<T>(out.records, out.record_count);
    if (blockIdx.x == 0 && threadIdx.x == 0) {
      out.scale[0] = d.k;
      out.scale[1] = d.held ? fixed_window_held : fixed_quantised;
    }
    if (d.held && blockIdx.x != 0) return;  // block 0 adds the records; nothing left to read
    k = d.k;
    add_records = d.held;
  }
  const T two_k = order_model::fixed_two_k<T>(k);
  const bool fp = two_k != T(0);  // k outside fixed_two_k's range: every group by the integer steps
  __shared__ unsigned long long s_lo[32], s_hi[32], s_stats[fixed_stats];
  for (int c = static_cast<int>(threadIdx.x); c < fixed_stats; c += static_cast<int>(blockDim.x)) s_stats[c] = 0;
  unsigned __int128 sum = 0;
  // The report's counts, as scalars (an array indexed by a runtime value would live in local memory).
  unsigned long long nan = 0, pos_inf = 0, neg_inf = 0, inexact = 0, saturated = 0, max_lost = 0;
  bool not_negative_zero = false;
  // One element by the integer steps, with its counts.
  auto one_element = [&](T x) {
    Bits u;
    memcpy(&u, &x, sizeof(T));
    not_negative_zero |= u != (Bits(1) << (sizeof(Bits) * 8 - 1));
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
  // (fixed_quantise_group); only a group holding an element that is not ordinary (saturated,
  // NaN/Inf, or nonzero below half a grid step) is redone by the integer steps.
  order_model::FixedGroupLoss loss;
  auto group = [&](const T(&x)[bulk_group<T>]) {
    T largest = 0;
    if (fp && order_model::fixed_quantise_group<T>(x, two_k, sum, largest, loss)) {
      if (largest != T(0)) {
        not_negative_zero = true;
      } else {  // every element is +0 or -0
#pragma unroll
        for (int i = 0; i < bulk_group<T>; ++i) not_negative_zero |= !signbit(x[i]);
      }
    } else {
#pragma unroll  // (a runtime index would put x in local memory)
      for (int i = 0; i < bulk_group<T>; ++i) one_element(x[i]);
    }
  };
  if (add_records) {
    // The blocks' records at k (fixed_window_kernel's comment says why this is fixed_point_sum's
    // integer), then the elements outside whole tiles, which the window pass left to this one.
    fixed_window_add_records<T>(out.records, out.record_count, k, sum, nan, pos_inf, neg_inf, inexact, max_lost,
                                not_negative_zero);
    const BulkBody body = bulk_body(d_in, num_items, static_cast<int>(blockDim.x));
    for (std::int64_t i = threadIdx.x; i < body.head; i += blockDim.x) one_element(d_in[i]);
    for (std::int64_t i = body.end + threadIdx.x; i < num_items; i += blockDim.x) one_element(d_in[i]);
  } else {
    // Loads: tiles by the bulk-copy engine (gpu/thread/bulk_loads.cuh). Register loads 64 bytes
    // ahead ran at 0.93 - 0.97 of CUB at 2^30, float32, given k; 128 bytes ahead, an L2 prefetch,
    // cp.async staging and pipelined register loads were slower still (docs/performance-notes.md).
    for_each_bulk_group(d_in, num_items, one_element, group);
  }
  inexact += loss.inexact;
  max_lost = max(max_lost, static_cast<unsigned long long>(order_model::fixed_bits_lost(loss.lost)));
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
  const unsigned __int128 block = block_sum_u128(sum, s_lo, s_hi);  // its barrier also covers s_stats
  if (threadIdx.x != 0) return;
  // The block's sum and counts into the launch's, by atomics whose old values nobody reads.
  unsigned long long* const set = out.sets + out.parity * fixed_set_words;
  for (int d = 0; d < order_model::fixed_digits; ++d) {
    const unsigned long long digit = order_model::fixed_digit(block, d);
    if (digit != 0) atomicAdd(&set[d], digit);
  }
  for (int c = 0; c < fixed_stats; ++c) {
    const unsigned long long v = c == fixed_not_negative_zero ? (block_not_negative_zero ? 1ull : 0ull) : s_stats[c];
    if (v == 0) continue;
    if (c == fixed_max_bits_lost) atomicMax(&set[order_model::fixed_digits + c], v);
    else atomicAdd(&set[order_model::fixed_digits + c], v);
  }
}

}  // namespace sumlab::gpu::detail
