#pragma once
// __global__ kernels of gpu_exact: the exact sum, correctly rounded once, the same bits for every
// launch shape and every run, in one pass over the input at close to memory speed.
//
// Per thread, a fast path of error-free additions in double on fixed grids (the binning idea of
// Demmel and Nguyen's reproducible sums, made exact by sending the last remainder to integer limbs):
//   level l holds S_l = M_l + (a multiple of g_l), M_l = 1.5 * 2^k_l, g_l = 2^(k_l - 52) its ulp.
//   x goes into level 0: t = S_0 + x; d = t - S_0; r = x - d; S_0 = t. While S_0 stays in
//   [2^k_0, 2^(k_0+1)) (ensured below), t - S_0 is exact (Sterbenz) and equals x rounded to the grid
//   g_0, and r = x - d is exact too: its bits are x's bits below g_0 (at most x's own width), or
//   x - (+-g_0) for g_0/2 <= |x| <= g_0 (Sterbenz again). r (|r| <= g_0 / 2) goes into level 1 the
//   same way, and so on; nothing is lost at any step. A remainder left after the last level is
//   added exactly, as 32-bit integer digits, to the block's limbs in shared memory (slow path).
// Grids: the thread's elements satisfy |x| < 2^B (B its anchor); k_0 = B + 11 and
// k_(l+1) = k_l - 52 - 1 + 11, so every addend of level l is at most 2^(k_l - 11) in magnitude
// and fewer than 1024 of them move S_l by less than 2^(k_l - 1): S_l never leaves its binade.
// After 512 to 527 elements (and at the end, and before a re-anchor) each S_l - M_l, an exact
// multiple of g_l below 2^51 g_l, is converted to an integer and added to the thread's integer for
// level l (a flush); those integers go to the block's limbs (a push) before a re-anchor, when one
// passes 2^55, and at the end. With 2 levels (float input, converted to double exactly) every
// element above 2^(B - 60) is absorbed by the fast path; with 3 levels (double input), every
// element above 2^(B - 73).
// Anchor: a thread's first group sets B a margin above its warp's largest magnitude
// (ExactThread::first_anchor); a finite element with |x| >= 2^B flushes and re-anchors (B = its
// exponent + 1 + anchor_margin_max). A re-anchor is a long serial chain in one lane, and a warp
// that meets one finishes late, and with it its block, whose tiles wait for every warp, and the
// launch, which ends with its last block: the margin is what keeps re-anchors rare. Its price is
// reach: float's first level alone holds what lies less than 2^(17 - margin) below the warp's
// largest, and a warp in which some lane's group lies lower runs both levels (at a fixed 2^8, 96%
// of a normal input's warp groups). So float's margin follows the warp's first groups, from 2^4
// where their upper tail is narrow (normal data: a fifth of the warp groups take level 1) to 2^12
// where it is wide (lognormal sigma 4: a re-anchor in 0.03% of the warp groups, where a fixed 2^4
// had 6%); double's first two levels hold what lies less than 2^(30 - margin) below, so its
// margin is 2^12 throughout. The shares are a simulation's of the bench's inputs
// (docs/performance-notes.md, "gpu_exact on middling spans"). NaN and Inf are counted, never
// added. Double inputs above 2^1012 (whose M_0 would overflow) are added by the slow path
// directly.
// Wide groups: a finite group the levels cannot hold (an element below their last grid, or one at
// or above 2^B that a re-anchor on the group's largest does not cure) goes whole to per-thread
// integer bins in shared memory (ExactBins, bin_group): each element's significand, shifted by
// its exponent mod 32, added to the bin of its exponent / 32 (mod 48 and / 48 for the double whole
// range), with no branch per element. For float, and for double where one block of up to 256
// threads an SM holds the grid, the bins cover every finite value; in double's other builds
// they are a 512-bit window per thread (256 for 1024-thread blocks), raised when a larger element
// comes, and the elements below it go to their warp's cells (ExactCells: 16-bit digits by 32-bit
// shared atomics). Such a group pays the levels' attempt and then the bins, unless its warp's
// first groups already spanned more than wide_span binades (ExactThread::first_anchor; fewer for
// double's whole range on a GPU whose memory the bins keep up with), or the warp's groups kept
// missing the levels (misses_to_wide: sorted data, or a span at the edge of the first decision):
// then the whole warp sends every finite group straight to the bins. The
// bins' speed is bound, whatever the span, by their shared-memory loads and stores (16 bytes a
// float element, 32 a double one) and the digits' arithmetic, in about equal shares; not by the
// chain of one element's loads after the stores of the one before (docs/performance-notes.md:
// "Two sets of bins", "What the loop's parts cost").
// Inputs of moderate range never reach them.
// Loads: tiles by the bulk-copy engine (gpu/thread/bulk_loads.cuh), whatever the shape's vector
// width and mapping: the bits do not depend on which thread adds which element (below). float64
// tiles are paced per warp (WarpPaced): a warp held up by its bins or cells holds no other back.
//
// Why the bits cannot depend on the launch: every value reaching the limbs is an exact integer
// multiple of 2^min_subnormal_exp, integer addition is associative, and the host rounds the exact
// total once (core/exact_sum.hpp's Superaccumulator): the same result as exact_sum on the CPU.
//
// Bounds (why int64 limbs do not overflow): a push, a bin's push or a slow-path add puts a digit of
// magnitude < 2^32 into a limb; a block performs fewer than 2^31 of them (a launch covers at most
// exact_launch_elements < 2^31 elements: launch_exact_chunks splits longer inputs into launches
// that add to the same set), so a block limb stays below 2^63. A block adds each limb's low 32
// bits to its column of the set and the rest (|.| < 2^31) to the next column, so a column gains
// less than 2^33 a block (the top one too: the block's limbs hold its exact sum, below
// 2^(emax + 32), and the lower limbs' weights leave the top limb below 2^32), and its sum over the
// launches' fewer than 2^30 block totals (validate_shape) stays below 2^63.
#include <cstdint>
#include <string>
#include <type_traits>

#include "core/exact_sum.hpp"
#include "core/float_traits.hpp"
#include "core/gpu_kernel.hpp"
#include "core/launch_shape.hpp"
#include "core/order_model/exact_digits.hpp"
#include "core/order_model/fixed_point_model.hpp"
#include "gpu/cuda_check.cuh"
#include "gpu/device/kernels/dependent_launch.cuh"
#include "gpu/host/cuda_host.cuh"
#include "gpu/thread/bulk_loads.cuh"
#include "gpu/warp/live_lanes.cuh"

namespace sumlab::gpu::detail {

// Per-block special counts, in this order, after the limbs.
enum ExactSpecial { exact_nan = 0, exact_pos_inf = 1, exact_neg_inf = 2, exact_not_negative_zero = 3,
                    exact_specials = 4 };

template <class T> struct ExactLayout {
  static constexpr int num_limbs = Superaccumulator<T>::num_limbs;
  static constexpr int limb_bits = Superaccumulator<T>::limb_bits;
  static constexpr int min_exponent = FloatTraits<T>::min_subnormal_exp;
  static_assert(limb_bits == 32, "the digit split below assumes 32-bit limbs");
  static_assert(Superaccumulator<T>::min_exponent == min_exponent, "limb 0 bit 0 must weigh the smallest subnormal");
  static constexpr int levels = sizeof(T) == 4 ? 2 : 3;
  static constexpr int flush_every = 512;
  // B = (largest magnitude's exponent + 1) + a margin (the header's "Anchor"): at a first anchor
  // between these two (ExactThread::first_anchor), at a re-anchor the larger.
  static constexpr int anchor_margin_min = sizeof(T) == 4 ? 4 : 12;
  static constexpr int anchor_margin_max = 12;
  // The levels hold every element of magnitude at least 2^(B - held_below): its lowest bit is at
  // or above the last level's grid, 2^(B - 83) for float (2 levels), 2^(B - 125) for double (3).
  static constexpr int held_below = sizeof(T) == 4 ? 60 : 73;
  // So with B set 2^anchor_margin_max above the largest, every element within held_below -
  // anchor_margin_max - 1 binades of the largest is held. A warp whose first groups span more than
  // wide_span binades goes to the bins (ExactThread::first_anchor), well below that reach: a
  // warp's first groups (512 elements of float, 256 of double) show less of the input's span than
  // its later ones, and a warp left on the levels near the reach misses and re-anchors through
  // its share (lognormal sigma 6 and 8 ran at 0.43-0.78 of CUB with the reach as the limit).
  static constexpr int wide_span = sizeof(T) == 4 ? 40 : 48;
  static_assert(wide_span <= held_below - anchor_margin_max - 1, "a warp the levels cannot hold goes to the bins");
  // Double's whole range only, on a GPU whose memory the bins keep up with
  // (bins_keep_up_with_memory): there the bins run at CUB's speed on any span from 2^26, and a
  // warp whose first groups span more than 32 binades goes to them (on an H100 lognormal sigma 6
  // and 8 took up to 19% less time; data of 33 to 48 binades that the three levels hold without
  // re-anchoring, such as the bench's cancellation input, up to 12% more at 2^22 and 1% from
  // 2^26: docs/performance-notes.md). On a GPU whose memory outruns the bins (the H200: 0.68 of
  // CUB) a warp stays on the levels up to wide_span.
  static constexpr int wide_span_bins_keep_up = 32;
  // A warp whose groups keep falling below its anchor's reach (data sorted by decreasing
  // magnitude: a block's tiles lie apart in the input, each some binades below the last; or a
  // span just under wide_span) pays the levels' failed attempt before the bins; after this many
  // groups in which some lane missed, the whole warp sends its groups straight to the bins. The
  // count is the warp's (a vote), so that its lanes go together rather than leaving some on the
  // levels and some in the bins, and it is never reset. Groups that a re-anchor lets the levels
  // hold (increasing magnitudes) are not misses: the levels after a re-anchor ran faster than the
  // bins on such data.
  static constexpr int misses_to_wide = 8;
  // Largest anchor: M_0 = 1.5 * 2^(B + 11) must be a finite double.
  static constexpr int max_anchor = sizeof(T) == 4 ? FloatTraits<T>::emax + 2 : 1012;
  // The highest limb a flush touches: level 0's grid 2^(B - 41), an integer below 2^51 shifted by
  // up to 31 bits, three digits.
  static_assert((max_anchor - 41 - min_exponent) / limb_bits + 2 < num_limbs, "a flush must fit the limbs");
};

// Double, a windowed build: the elements below a thread's window (about three in four of every
// double bit pattern) go to its warp's cells, int32 words in shared memory after the bins: cell c
// weighs 2^(16 c) half units (2^(16 c + min_exponent - 1)). An element of exponent field E,
// c = E / 16, adds the bins' y = x 2^(1075 - 32 b) (b = E / 32, so c is 2 b or 2 b + 1) as five digits of
// magnitude at most 2^16 into cells c .. c + 4 by native 32-bit shared atomics, where the element
// path's 64-bit ones are compare-and-swap loops (ExactThread::cell_digits: from y's 32-bit digits
// lo and hi, shifted by one cell for an odd c, whose y is a multiple of 2^16). Where every element
// of the lanes here has the same c (sorted data), the lanes add first
// (ExactThread::cells_together), each send still at most 2^16 for each element in it. A lane that
// normalises its bins in bin_group (every normalise_every elements it sent to bins or cells) takes
// part in emptying its warp's cells, with the lanes running with it (ExactThread::take_cells), so
// between two emptyings of a cell each of the 32 lanes added at most 1016 + 7 digits to it:
// |cell| <= 32 * 1023 * 2^16 < 2^31. Cell 0 only receives the low digits of elements with E < 16, whose y
// (2^E times the significand, or twice a subnormal's) is even; so is every cell 0 value, and an
// even cell's half unit always has a limb below it (push_cell).
struct ExactCells {
  static constexpr int count = 132;  // c <= 2046 / 16 = 127, and four cells above it
};
static_assert((ExactCells::count - 1) / 2 + 1 < ExactLayout<double>::num_limbs, "the top cell's push must fit the limbs");

// The wide path's per-thread bins (ExactThread::bin_group): int64 integers in dynamic shared
// memory after the bulk stages, bin k of a thread at [k * MaxThreads + threadIdx.x] (a warp's
// lanes hit 32 consecutive words whatever bins they pick: no bank conflicts; a stride fixed at
// compile time makes a bin's address one shift and add from the exponent field, where a stride
// of blockDim.x took seven instructions for an element's two bins), bin k weighing
// limb (base + k)'s 2^(32 (base + k) + min_exponent), halved before a push (below).
//   float:  10 bins, base 0, counting units of 2^(min_exponent - 1) = 2^-150 (half a limb's unit,
//           so that the bin follows the exponent field E alone): an element lands whole in bin
//           E / 32 (at most 7) as x 2^(150 - 32 (E / 32)), an integer of magnitude below 2^55 (the
//           significand shifted by E mod 32; 2a for a subnormal a 2^-149); bins 8 and 9 take the
//           carries (a thread's total is below 2^309 units). Every element adds an even number of
//           units (E >= 1 in bin 0, a multiple of 2^32 above it), so the normalised total is even
//           and halves exactly into limb units before a push (bins_to_limb_units). Every finite
//           float, no anchor, no window.
//   double: in units of 2^(min_exponent - 1) as for float, an element of bin j = E / 32 adds
//           y = x 2^(1075 - 32 j) (an integer below 2^84) as its low 32-bit digit to bin j and the
//           rest (below 2^52) to bin j + 1. The whole range's build (one block of up to 256
//           threads an SM) holds every finite double in radix 2^48 instead: bin j = E / 48 takes
//           y = x 2^(1075 - 48 j) (below 2^100) as its low 48-bit digit and bin j + 1 the rest
//           (below 2^52); 45 bins (0 .. 43 for the digits, 44 for carries), 360 bytes a thread
//           where radix 2^32 took 66 and 528; base 0, no window, no cells, even totals as for
//           float; bin j weighs limb bit 48 j - 1 (push_bins, push_whole_bin). The others (their
//           blocks share an SM, or take more threads) hold a window of 16 bins (8 for 1024-thread
//           blocks, whose bulk stages take 128 KB), base chosen per thread from its first wide
//           group's largest exponent and raised when a larger one comes (the bins that leave it
//           go to the limbs, the others move down: raise_window), j <= count - 3 (the top bin
//           takes only carries). Elements below the window go to the warp's cells. A bin above
//           bin 0 can hold an odd count: its half unit goes to the limb below it.
// Normalising (every normalise_every elements a thread sends to the bins, and before a push)
// leaves bins 0 .. count-2 in [0, 2^digit_bits) and the carry in the top bin; an element adds less
// than 2^55 (float), 2^52 + 2^32 + 2^31 (a double window) or 2^52 (the double whole range, radix
// 2^48) to a bin, so the bins stay below 2^63 in between.
template <class T> struct ExactBins {
  // Bins over every finite value's exponent field: float 8 + 2 carries; double in radix 2^48
  // (E / 48 <= 42 takes lo, hi goes one bin up) 44 + 1 carry.
  static constexpr int whole_range = sizeof(T) == 4 ? 10 : 45;
  // Double: the build for one block of up to 256 threads an SM gets whole_range bins (360 bytes a
  // thread: 90 KB at 256, beside the tiles' 80 KB: exact_stages); the others (two such blocks an
  // SM, larger blocks) a window of 16 (8 at 1024) and the cells.
  static constexpr int normalise_every = sizeof(T) == 4 ? 240 : 1016;  // whole groups of 16 / 8
  static_assert(sizeof(T) == 4 || 32ll * (normalise_every + 7) * (1ll << 16) < (1ll << 31), "double: a cell stays an int32");
  static_assert(sizeof(T) == 8 || (253 >> 5) + 2 < whole_range, "float: bins 0..7 for elements, 8 and 9 for carries");
  static_assert(sizeof(T) == 4 || 2046 / 48 + 2 < whole_range, "double: bins 0..43 for elements, 44 for carries");
  // The bins of the build __launch_bounds__(max_threads, min_blocks).
  __host__ __device__ static constexpr int count(int max_threads, int min_blocks) {
    return sizeof(T) == 4 || (max_threads <= 256 && min_blocks == 1) ? whole_range : max_threads <= 512 ? 16 : 8;
  }
  __host__ __device__ static constexpr bool covers_all(int bins) { return bins == whole_range; }
  // A bin's digit: 48 bits for the double whole range, 32 otherwise (one limb a bin).
  __host__ __device__ static constexpr int digit_bits(int bins) { return sizeof(T) == 8 && covers_all(bins) ? 48 : 32; }
  // The top bin's push (push_whole_bin) fits the limbs: two digits from its limb (radix 2^32), or
  // three from limb bit 48 (count - 1) - 1 (radix 2^48).
  static_assert(digit_bits(whole_range) == 32 ? whole_range < ExactLayout<T>::num_limbs
                                              : (48 * (whole_range - 1) - 1) / 32 + 2 < ExactLayout<T>::num_limbs,
                "the top bin's push fits the limbs");
  // The bins (at the stride max_threads), then (a double window) each warp's ExactCells.
  __host__ __device__ static constexpr std::size_t bytes(int max_threads, int min_blocks, int block) {
    const int bins = count(max_threads, min_blocks);
    return static_cast<std::size_t>(bins) * sizeof(long long) * static_cast<std::size_t>(max_threads) +
           (covers_all(bins) ? 0 : static_cast<std::size_t>((block + 31) / 32) * ExactCells::count * sizeof(int));
  }
};
// The bulk stages of a build (0: bulk_stages(blockDim.x)). The whole range's double build (one
// block of up to 256 threads an SM beside 90 KB of bins) takes a fifth: 80 KB of tiles in flight
// an SM, where the four of the other 256-thread builds keep 64 KB with twice the blocks. With the
// input in the L2 its launch took 1.1% less time on an H100; the stage is meant for the H200's
// memory, whose long runs timed that build's moderate inputs below CUB (docs/performance-notes.md).
template <class T> __host__ __device__ constexpr int exact_stages(int max_threads, int min_blocks) {
  return sizeof(T) == 8 && max_threads <= 256 && min_blocks == 1 ? 5 : 0;
}
// The tiles' bytes of dynamic shared memory, before the bins.
template <class T>
__host__ __device__ constexpr std::size_t exact_tile_bytes(int max_threads, int min_blocks, int block) {
  const int stages = exact_stages<T>(max_threads, min_blocks);
  return stages > 0 ? static_cast<std::size_t>(stages) * static_cast<std::size_t>(block) * bulk_group_bytes
                    : bulk_smem_bytes(block);
}
// launch_exact falls back to the window's build where a GPU's blocks cannot hold the whole range's
// shared memory; on sm_90 (227 KB a block, the static limbs and barriers' 2 KB included) it fits.
static_assert(exact_tile_bytes<double>(256, 1, 256) + ExactBins<double>::bytes(256, 1, 256) + 2048 <= 227 * 1024,
              "the whole range's tiles and bins fit an sm_90 block");

// Adds q * 2^(p + min_exponent) (p >= 0, |q| < 2^61) to the shared limbs as three digits (q shifted
// by up to 31 bits is below 2^92: two 32-bit digits and a signed top one below 2^28).
template <class T> __device__ __forceinline__ void add_scaled(unsigned long long* s_limbs, long long q, int p) {
  const int limb = p >> 5;
  __int128 w = static_cast<__int128>(q) << (p & 31);
  atomicAdd(&s_limbs[limb], static_cast<unsigned long long>(w & 0xffffffff));
  w >>= 32;  // arithmetic: the digits below are non-negative, the top one carries the sign
  atomicAdd(&s_limbs[limb + 1], static_cast<unsigned long long>(w & 0xffffffff));
  w >>= 32;
  const long long top = static_cast<long long>(w);
  if (top != 0) atomicAdd(&s_limbs[limb + 2], static_cast<unsigned long long>(top));
}

// The sum of x (|x| < 2^56) over the lanes in `group`, all of which call this with the same group:
// three 32-bit warp reductions of 24-bit pieces (each piece's sum over 32 lanes fits 32 bits; the
// signed top piece wraps and comes back exact). |sum| < 2^61.
__device__ __forceinline__ long long group_sum_s56(unsigned group, long long x) {
  const unsigned p0 = __reduce_add_sync(group, static_cast<unsigned>(x & 0xffffff));
  const unsigned p1 = __reduce_add_sync(group, static_cast<unsigned>((x >> 24) & 0xffffff));
  const int p2 = static_cast<int>(__reduce_add_sync(group, static_cast<unsigned>(static_cast<int>(x >> 48))));
  return static_cast<long long>(p2) * (1ll << 48) + static_cast<long long>(p1) * (1ll << 24) + static_cast<long long>(p0);
}

// The largest / smallest of the bit patterns u over the lanes in `mask` (32-bit reductions: the high
// words first, then the low words of the lanes that hold the extreme high word).
template <class Bits> __device__ __forceinline__ Bits warp_max_bits(unsigned mask, Bits u) {
  if constexpr (sizeof(Bits) == 4) {
    return __reduce_max_sync(mask, u);
  } else {
    const unsigned hi = __reduce_max_sync(mask, static_cast<unsigned>(u >> 32));
    const unsigned lo = __reduce_max_sync(mask, static_cast<unsigned>(u >> 32) == hi ? static_cast<unsigned>(u) : 0u);
    return (static_cast<Bits>(hi) << 32) | lo;
  }
}
template <class Bits> __device__ __forceinline__ Bits warp_min_bits(unsigned mask, Bits u) {
  if constexpr (sizeof(Bits) == 4) {
    return __reduce_min_sync(mask, u);
  } else {
    const unsigned hi = __reduce_min_sync(mask, static_cast<unsigned>(u >> 32));
    const unsigned lo = __reduce_min_sync(mask, static_cast<unsigned>(u >> 32) == hi ? static_cast<unsigned>(u) : ~0u);
    return (static_cast<Bits>(hi) << 32) | lo;
  }
}

// Every member is force-inlined and nothing takes the object's address, so s, m and the window
// stay in registers (a call that took `this` would move them to local memory).
// Range: also track what gpu_fixed_point's one-pass decision needs (order_model::fixed_one_pass):
// the largest finite magnitude, and for every nonzero element a proof that its lowest bit is high
// enough: either the smallest nonzero magnitude among the elements tracked one by one, or, for a
// float group that level 0 absorbed alone, level 0's grid (every such element is a multiple of
// it: t and S_0 are multiples of g_0, and x = t - S_0 exactly), kept as the lowest grid of any
// anchor. Float groups then pay one FP max per element; the per-element integer minimum that
// this replaces cost about 15% of the kernel's speed on the H200.
template <class T, bool Range, int Bins, int MaxThreads> struct ExactThread {
  using Layout = ExactLayout<T>;
  using Bits = typename FloatTraits<T>::Bits;
  // The bins cover every finite value (float; double's build for one block of up to 256 threads an
  // SM): no window to place or raise, no cells.
  static constexpr bool Whole = ExactBins<T>::covers_all(Bins);
  static constexpr int digit_bits = ExactBins<T>::digit_bits(Bins);
  static constexpr Bits sign_bit = FloatTraits<T>::sign_bit, inf_bits = FloatTraits<T>::inf_bits;
  Bits largest_finite = 0;           // bit patterns order like the magnitudes
  Bits smallest_nonzero = ~Bits(0);
  int lowest_grid = 0x7fffffff;
  static constexpr int L = Layout::levels;
  double s[L];
  double m[L];
  int grid_exp[L] = {};
  long long flushed[L] = {};  // level l's flushed sums, in units of its grid (|.| < 2^56)
  T threshold = T(0);  // 2^B: |x| < threshold takes the fast path (0: no anchor yet)
  int count = 0;       // fast-path elements since the last flush
  bool not_negative_zero = false;
  order_model::ExactLimbWindow<8> window;  // the slow path's digits, flushed to the block in batches
  long long* bins = nullptr;  // this thread's bin 0 (ExactBins); bin k at bins[k * MaxThreads]
  int bin_base = Whole ? 0 : -1;  // the limb of bin 0; a double window: -1 until the first wide group
  int bin_adds = 0;  // elements sent to the bins (double: and cells) since bin_group last normalised
  // The warp's groups in which some lane's finite group the levels could not hold (even after a
  // re-anchor), the same in every lane: from misses_to_wide on (first_anchor's decision, or
  // drift) every finite group goes straight to the bins. missed: this lane's last group missed
  // (add_group counts it with the other lanes' at its next call, where they run together).
  int misses = 0;
  bool missed = false;
  int wide_span = Layout::wide_span;  // first_anchor's limit (exact_limbs_block may lower it)
  __device__ __forceinline__ bool wide() const { return misses >= Layout::misses_to_wide; }
  bool binned = false;  // some group went to the bins (push_bins has nothing to do otherwise)

  // Level l's grid, raised to the smallest subnormal (every value is a multiple of that).
  __device__ __forceinline__ int unit_exp(int l) const {
    return grid_exp[l] > Layout::min_exponent ? grid_exp[l] : Layout::min_exponent;
  }

  // Moves each S_l - M_l into the thread's integer `flushed[l]` (registers, no shared memory);
  // push() sends them to the block when one passes 2^55, before a re-anchor and at the end.
  __device__ __forceinline__ void flush(unsigned long long* s_limbs) {
    if (count == 0) return;
    count = 0;
    bool full = false;
#pragma unroll
    for (int l = 0; l < L; ++l) {
      const double v = s[l] - m[l];  // exact: both in [2^k, 2^(k+1)]
      s[l] = m[l];
      // v is a multiple of 2^e below 2^(e + 51): an exact integer after scaling.
      flushed[l] += __double2ll_rn(ldexp(v, -unit_exp(l)));
      full |= flushed[l] > (1ll << 55) || flushed[l] < -(1ll << 55);
    }
    if (full) push(s_limbs);
  }

  // Adds flushed[] to the block's limbs. The lanes that arrive together and share a level's grid add
  // their integers first (group_sum_s56), and one of them does the shared-memory atomics: 64-bit
  // shared atomics are compare-and-swap loops, and a whole block adding to the same few limbs at
  // the end of the kernel serialised them (about 45 us per launch on the H200).
  __device__ __forceinline__ void push(unsigned long long* s_limbs) {
    const unsigned mask = __activemask();
    const unsigned lane = threadIdx.x & 31u;
#pragma unroll
    for (int l = 0; l < L; ++l) {
      const int e = unit_exp(l);
      const unsigned same = __match_any_sync(mask, e);
      const long long total = group_sum_s56(same, flushed[l]);
      flushed[l] = 0;
      if (total != 0 && lane == static_cast<unsigned>(__ffs(same) - 1)) add_scaled<T>(s_limbs, total, e - Layout::min_exponent);
    }
  }

  __device__ __forceinline__ void anchor(int b) {
    int k = b + 11;
#pragma unroll
    for (int l = 0; l < L; ++l) {
      m[l] = ldexp(1.5, k);
      s[l] = m[l];
      grid_exp[l] = k - 52;
      k = grid_exp[l] - 1 + 11;
    }
    threshold = static_cast<T>(ldexp(1.0, b));  // +Inf for a float anchor of 129: only NaN/Inf fail it
    if constexpr (Range && sizeof(T) == 4) lowest_grid = grid_exp[0] < lowest_grid ? grid_exp[0] : lowest_grid;
  }

  // A finite nonzero value's digits into the window (exact; the window flushes to s_limbs).
  __device__ __forceinline__ void add_digits(const order_model::ExactDigits& d, unsigned long long* s_limbs) {
    window.add(d, Layout::num_limbs,
               [s_limbs](int limb, long long v) { atomicAdd(&s_limbs[limb], static_cast<unsigned long long>(v)); });
  }

  // An element the fast path refused (|x| >= 2^B, or no anchor yet). Returns true when the caller
  // should now add x by the fast path (after a re-anchor); otherwise x was handled here: a zero,
  // NaN or Inf (counted), or a double too large for an anchor (added as digits).
  __device__ __forceinline__ bool refused(T x, unsigned long long* s_limbs, unsigned long long* s_special) {
    const order_model::ExactDigits d = order_model::exact_digits<T>(x);
    switch (d.cls) {
      case order_model::ExactClass::zero: return false;
      case order_model::ExactClass::nan: atomicAdd(&s_special[exact_nan], 1ull); return false;
      case order_model::ExactClass::pos_inf: atomicAdd(&s_special[exact_pos_inf], 1ull); return false;
      case order_model::ExactClass::neg_inf: atomicAdd(&s_special[exact_neg_inf], 1ull); return false;
      case order_model::ExactClass::finite: break;
    }
    int e = 0;
    frexp(static_cast<double>(x), &e);  // |x| in [2^(e-1), 2^e)
    if (e > Layout::max_anchor) {
      add_digits(d, s_limbs);
      return false;
    }
    flush(s_limbs);
    push(s_limbs);  // the grids change with the anchor
    const int b = e + Layout::anchor_margin_max;
    anchor(b < Layout::max_anchor ? b : Layout::max_anchor);
    return true;
  }

  __device__ __forceinline__ void fast(T x, unsigned long long* s_limbs) {
    double r = static_cast<double>(x);
#pragma unroll
    for (int l = 0; l < L; ++l) {
      const double t = s[l] + r;
      const double d = t - s[l];
      s[l] = t;
      r = r - d;
      if (r == 0) break;
    }
    // Below the last level: r holds some of x's own bits, so it is exact in T.
    if (r != 0) add_digits(order_model::exact_digits<T>(static_cast<T>(r)), s_limbs);
    if (++count == Layout::flush_every) flush(s_limbs);
  }

  // n more elements the levels held: a flush when due.
  __device__ __forceinline__ void held(int n, unsigned long long* s_limbs) {
    count += n;
    if (count >= Layout::flush_every) flush(s_limbs);
  }

  // The levels 0 .. Levels-1 over a group, without a branch; true when no element left bits below
  // the last of them (the remainders' bits are OR-ed on the integer pipe: one test per group).
  // r can be -0 only for a -0 input, which then just sends the group to the careful path.
  template <int Levels, int N> __device__ __forceinline__ bool try_levels(const T (&x)[N]) {
    unsigned long long lost = 0;
#pragma unroll
    for (int i = 0; i < N; ++i) {
      double r = static_cast<double>(x[i]);
#pragma unroll
      for (int l = 0; l < Levels; ++l) {
        const double t = s[l] + r;
        const double d = t - s[l];
        s[l] = t;
        r = r - d;
      }
      lost |= static_cast<unsigned long long>(__double_as_longlong(r));
    }
    return lost == 0;
  }

  // A thread's first group anchors on the largest finite magnitude among the warp's first groups,
  // plus a margin, so that on random data a thread rarely meets a larger element later (each would
  // cost a re-anchor and a careful group). The margin, in binades, is the gap between that largest
  // and the smallest of the lanes' largest (lanes with no nonzero finite element aside), plus 2,
  // within [anchor_margin_min, anchor_margin_max]: how far the warp's later records may pass its
  // first largest grows with the spread of its groups' largest, and the rule (chosen by a
  // simulation of the bench's inputs, docs/performance-notes.md) keeps float's narrow data at 2^4,
  // where level 0 alone holds nearly every group. The same groups decide wide():
  // when their nonzero magnitudes span more binades than the levels hold whatever the anchor
  // (wide_span), the warp's groups will keep missing the levels, and each miss would pay the
  // levels' attempt before the bins; so the warp sends every finite group straight to the bins.
  // A guess from 32 N elements: it costs speed when wrong, never bits (both paths are exact).
  template <int N> __device__ __forceinline__ void first_anchor(const T (&x)[N]) {
    constexpr int drop = int(sizeof(Bits)) * 8 - 32;  // the exponent is in the top 32 bits
    const unsigned lane_top = static_cast<unsigned>(group_largest(x) >> drop);
    const unsigned mask = __activemask();
    const unsigned top = __reduce_max_sync(mask, lane_top);
    if (top == 0) return;
    const unsigned low = __reduce_min_sync(mask, static_cast<unsigned>(group_smallest(x) >> drop));
    constexpr int field = FloatTraits<T>::precision - 1 - drop;  // the exponent field's shift in the top word
    if (static_cast<int>(top >> field) - static_cast<int>(low >> field) > wide_span) misses = Layout::misses_to_wide;
    int margin = Layout::anchor_margin_max;
    if constexpr (Layout::anchor_margin_min < Layout::anchor_margin_max) {
      const unsigned lanes_low = __reduce_min_sync(mask, lane_top != 0 ? lane_top : ~0u);
      const int gap = static_cast<int>(top >> field) - static_cast<int>(lanes_low >> field) + 2;
      margin = gap < Layout::anchor_margin_min ? Layout::anchor_margin_min : gap < margin ? gap : margin;
    }
    int e = 0;
    const Bits w = static_cast<Bits>(top) << drop;
    T v;
    memcpy(&v, &w, sizeof(T));
    frexp(static_cast<double>(v), &e);
    const int b = e + margin;
    anchor(b < Layout::max_anchor ? b : Layout::max_anchor);
  }

  // N elements at once, the common case: when all are finite and below 2^B (a comparison per
  // element, one branch per group) they go through the first level(s) without a branch (float: level 0
  // alone, which holds every element above 2^(B - 17); double: levels 0 and 1), then, if some
  // element left bits below them, through every level. If bits are left even then, or some element
  // is at or above 2^B, the levels are restored and the group, if finite, goes to the bins
  // (bin_group: any span), after a re-anchor on its largest element has been tried when that is
  // what refused it (so data whose magnitude drifts stays on the levels); a group holding NaN or Inf
  // is redone element by element by add(). A group adds at most N - 1
  // elements past flush_every before its flush: fewer than 1024 addends of <= 2^(k - 11), so S_l
  // still stays in its binade.
  template <int N>
  __device__ __forceinline__ void add_group(const T (&x)[N], unsigned long long* s_limbs, unsigned long long* s_special) {
    if (threshold == T(0)) first_anchor(x);
    if (wide()) {
      if (group_finite(x)) {
        bin_group(x, s_limbs, s_special);
      } else {
        add_each(x, ~0u, s_limbs, s_special);
      }
      return;
    }
    // The warp's misses, counted where its lanes run together (every lane takes its group at
    // once); from misses_to_wide on, its next groups go to the bins. After the wide path's test,
    // not before it: there it put a second test, a branch and a reconvergence before every wide
    // group, and the whole range's loop, bound by the issue of its instructions, lost 3%.
    misses += __any_sync(__activemask(), missed);
    missed = false;
    constexpr bool level0_proof = sizeof(T) == 4;  // see Range above
    T largest_f = T(0);       // Range, float: the group's largest |x| (valid when `below`)
    Bits largest = 0;         // Range, double: the same as bits; and the smallest nonzero
    Bits smallest = ~Bits(0);
    Bits not_minus_zero = 0;  // nonzero when some element is not -0
    bool below = true;        // every |x| < 2^B (false for NaN: the comparison fails)
    if (!not_negative_zero) {  // once true it stays: no per-element test after the first nonzero
#pragma unroll
      for (int i = 0; i < N; ++i) not_minus_zero |= to_bits(x[i]) ^ sign_bit;
    }
#pragma unroll
    for (int i = 0; i < N; ++i) {
      below &= fabs(x[i]) < threshold;
      if constexpr (Range) {
        if constexpr (level0_proof) {
          largest_f = fmaxf(largest_f, fabsf(x[i]));
        } else {
          const Bits a = to_bits(x[i]) & ~sign_bit;
          largest = a > largest ? a : largest;
          smallest = a != 0 && a < smallest ? a : smallest;
        }
      }
    }
    if (below) {
      constexpr int first = sizeof(T) == 4 ? 1 : 2;
      double saved[L];
#pragma unroll
      for (int l = 0; l < L; ++l) saved[l] = s[l];
      bool done = try_levels<first>(x);
      const bool proven = level0_proof && done;  // level 0 alone absorbed the group
      if (!done && first < L) {
#pragma unroll
        for (int l = 0; l < L; ++l) s[l] = saved[l];
        done = try_levels<L>(x);
      }
      if (done) {
        not_negative_zero |= not_minus_zero != 0;
        if constexpr (Range) {  // all finite here
          if constexpr (level0_proof) {
            largest = static_cast<Bits>(__float_as_uint(largest_f));
            if (!proven) smallest = group_smallest(x);  // rare: some element needed level 1
          }
          largest_finite = largest > largest_finite ? largest : largest_finite;
          smallest_nonzero = smallest < smallest_nonzero ? smallest : smallest_nonzero;
        }
        held(N, s_limbs);
        return;
      }
#pragma unroll
      for (int l = 0; l < L; ++l) s[l] = saved[l];
    }
    if (!group_finite(x)) {
      add_each(x, ~0u, s_limbs, s_special);
      return;
    }
    if (!below && reanchor_for(x, s_limbs)) {  // the levels may hold the group from a new anchor
      double saved[L];
#pragma unroll
      for (int l = 0; l < L; ++l) saved[l] = s[l];
      if (try_levels<L>(x)) {
        not_negative_zero |= not_minus_zero != 0;
        if constexpr (Range) track_range(x);
        held(N, s_limbs);
        return;
      }
#pragma unroll
      for (int l = 0; l < L; ++l) s[l] = saved[l];
    }
    missed = true;
    bin_group(x, s_limbs, s_special);
  }

  template <int N> __device__ __forceinline__ bool group_finite(const T (&x)[N]) const {
    bool finite = true;
#pragma unroll
    for (int i = 0; i < N; ++i) {
      Bits u;
      memcpy(&u, &x[i], sizeof(T));
      finite &= (u & ~sign_bit) < inf_bits;
    }
    return finite;
  }

  // A group of finite elements with one at or above 2^B: flush, push and anchor on its largest
  // (as add() would for that element) when that anchor is allowed; false (nothing done) if not.
  template <int N> __device__ __forceinline__ bool reanchor_for(const T (&x)[N], unsigned long long* s_limbs) {
    T largest = T(0);
#pragma unroll
    for (int i = 0; i < N; ++i) largest = fabs(x[i]) > largest ? fabs(x[i]) : largest;
    int e = 0;
    frexp(static_cast<double>(largest), &e);
    if (e > Layout::max_anchor) return false;
    flush(s_limbs);
    push(s_limbs);
    const int b = e + Layout::anchor_margin_max;
    anchor(b < Layout::max_anchor ? b : Layout::max_anchor);
    return true;
  }

  // Range: the group's largest finite and smallest nonzero magnitudes, tracked one by one.
  template <int N> __device__ __forceinline__ void track_range(const T (&x)[N]) {
    const Bits largest = group_largest(x);
    largest_finite = largest > largest_finite ? largest : largest_finite;
    const Bits smallest = group_smallest(x);
    smallest_nonzero = smallest < smallest_nonzero ? smallest : smallest_nonzero;
  }

  // The elements i of the group with bit i of `which` set, one by one by add(). Not unrolled, so
  // add() is compiled once, not N times; the elements are shifted down a register array (static
  // indices only) instead of indexed by i, which would move the array to local memory.
  template <int N>
  __device__ __forceinline__ void add_each(const T (&x)[N], unsigned which, unsigned long long* s_limbs,
                                           unsigned long long* s_special) {
    T y[N];
#pragma unroll
    for (int i = 0; i < N; ++i) y[i] = x[i];
#pragma unroll 1
    for (int i = 0; i < N; ++i) {
      if ((which >> i) & 1u) add(y[0], s_limbs, s_special);
#pragma unroll
      for (int k = 0; k + 1 < N; ++k) y[k] = y[k + 1];
    }
  }

  // The group's largest finite magnitude as bits (0 if none).
  template <int N> __device__ __forceinline__ Bits group_largest(const T (&x)[N]) const {
    Bits largest = 0;
#pragma unroll
    for (int i = 0; i < N; ++i) {
      Bits u;
      memcpy(&u, &x[i], sizeof(T));
      const Bits a = u & ~sign_bit;
      largest = a < inf_bits && a > largest ? a : largest;
    }
    return largest;
  }

  template <int N> __device__ __forceinline__ Bits group_smallest(const T (&x)[N]) const {
    Bits smallest = ~Bits(0);
#pragma unroll
    for (int i = 0; i < N; ++i) {
      Bits u;
      memcpy(&u, &x[i], sizeof(T));
      const Bits a = u & ~sign_bit;
      smallest = a != 0 && a < smallest ? a : smallest;
    }
    return smallest;
  }

  __device__ __forceinline__ long long& bin(int k) const { return bins[k * MaxThreads]; }
  // Double: this warp's cells, after every thread's bins (computed where used: a pointer kept in a
  // register spilled the scale-finding kernel's).
  __device__ __forceinline__ int* warp_cells() const { return block_cells() + threadIdx.x / 32 * ExactCells::count; }

  // v (|v| < 2^63) at limb `limb` as two digits: v mod 2^32 there, v >> 32 (signed, |.| < 2^31) in
  // the next limb (which exists: the top bin is at most limb num_limbs - 2). add_scaled's third,
  // sign-carrying digit would land past the top limb for a negative total in float's bin 9.
  __device__ __forceinline__ static void add_bin(unsigned long long* s_limbs, long long v, int limb) {
    atomicAdd(&s_limbs[limb], static_cast<unsigned long long>(v) & 0xffffffffull);
    if ((v >> 32) != 0) atomicAdd(&s_limbs[limb + 1], static_cast<unsigned long long>(v >> 32));
  }

  // Carries each bin's part from 2^digit_bits up into the next, the top bin keeping the rest (signed).
  __device__ __forceinline__ void normalise_bins() {
    long long carry = 0;
#pragma unroll
    for (int k = 0; k + 1 < Bins; ++k) {
      const long long v = bin(k) + carry;
      bin(k) = v & ((1ll << digit_bits) - 1);
      carry = v >> digit_bits;  // arithmetic: floor
    }
    bin(Bins - 1) += carry;
  }

  // After normalise_bins, radix 2^32: the bins' total, in units of 2^(min_exponent - 1), halved
  // into limb units digit by digit: b_k = 2 q_k + r_k (q_k = b_k >> 1, floor, also for the signed
  // top bin) gives total / 2 = sum of (q_k + 2^31 r_(k+1)) 2^(32 k) + r_0 / 2, each digit below
  // 2^32 but the top one. r_0 / 2 is 2^31 of the limb below the window (returned, 0 or 1): every
  // element adds an even number of units whole (E >= 1 in bin 0, a multiple of 2^32 above it), so
  // r_0 is 0 when the window starts at bin 0 (float always; double until a wide element raises it).
  __device__ __forceinline__ long long bins_to_limb_units() {
    static_assert(digit_bits == 32, "the double whole range (radix 2^48) is pushed unhalved");
    const long long r0 = bin(0) & 1;
#pragma unroll
    for (int k = 0; k + 1 < Bins; ++k) bin(k) = (bin(k) >> 1) | ((bin(k + 1) & 1) << 31);
    bin(Bins - 1) >>= 1;
    return r0;
  }

  // The whole range's bin k's block total v into the block's limbs. Radix 2^32 (float): halved
  // (limb units), one limb a bin. Radix 2^48 (double, push_bins): in half units, weighing
  // 2^(48 k) half units, limb bit 48 k - 1: v / 2 at limb 0 for bin 0 (v even), three digits at
  // bit 48 k - 1 above it (add_scaled: |v| < 2^61; the top bin's third digit is the top limb;
  // order_model::whole_range_bin_total).
  __device__ __forceinline__ static void push_whole_bin(unsigned long long* s_limbs, long long v, int k) {
    if constexpr (digit_bits == 32) {
      add_bin(s_limbs, v, k);
    } else if (k == 0) {
      add_bin(s_limbs, v >> 1, 0);
    } else {
      add_scaled<T>(s_limbs, v, k * digit_bits - 1);
    }
  }

  // The bins into the block's limbs by this thread alone (no other lane need be here), emptied.
  __device__ __forceinline__ void push_bins_alone(unsigned long long* s_limbs) {
    static_assert(!Whole, "a window's bins: one limb a bin");
    normalise_bins();
    const long long r0 = bins_to_limb_units();
    if (r0 != 0) add_bin(s_limbs, 1ll << 31, bin_base - 1);
#pragma unroll
    for (int k = 0; k < Bins; ++k) {
      const long long v = bin(k);
      bin(k) = 0;
      if (v != 0) add_bin(s_limbs, v, bin_base + k);
    }
  }

  // Double: the window moved up to start at limb new_base (bin_base < 0: its first placing). The
  // bins that leave it (normalised: digits in [0, 2^32) of half units, the top bin never among them
  // unless every bin leaves) go to the block's limbs, d >> 1 at their limb and an odd d's half unit
  // (2^31) at the limb below; the others move down. A whole-window push instead would make every
  // thread of a block that raises at once (a wide input's first groups) queue on the same limbs'
  // shared-memory atomics (compare-and-swap loops) for each of its bins, where one or two leave.
  __device__ __forceinline__ void raise_window(int new_base, unsigned long long* s_limbs) {
    const int by = new_base - bin_base;
    if (bin_base >= 0 && by >= Bins) push_bins_alone(s_limbs);
    if (bin_base >= 0 && by < Bins) {
      normalise_bins();
#pragma unroll
      for (int k = 0; k < Bins - 1; ++k) {
        if (k < by) {
          const long long d = bin(k);
          if ((d >> 1) != 0) atomicAdd(&s_limbs[bin_base + k], static_cast<unsigned long long>(d >> 1));
          if ((d & 1) != 0) atomicAdd(&s_limbs[bin_base + k - 1], 1ull << 31);  // never at limb 0, whose digit is even
        }
      }
      for (int k = 0; k < Bins; ++k) bin(k) = k + by < Bins ? bin(k + by) : 0;
    }
    bin_base = new_base;
  }

  // The bins into the block's limbs at the end. Nothing where no thread used its bins (moderate
  // inputs), rather than normalising empty bins and three warp reductions for each. Normalised,
  // bins 0 .. Bins-2 are below 2^32 and the top one, the carry, below 2^56 (group_sum_s56's
  // bound); with the whole range far less: a thread's total over fewer than 2^31 elements is below
  // 2^309 units (float) or 2^2130 (double), so the top bin, weighing 2^288 or (radix 2^48) 2^2112,
  // stays below 2^21 or 2^18.
  // Whole: every thread of the block calls this (it holds barriers). Each warp adds its lanes' bins
  // (group_sum_s56; radix 2^48 unnormalised, in pieces: below), its first lane keeps the totals in
  // its own bins, and after a barrier thread k adds bin k's warp totals (at most 8 double warps,
  // below 2^58) and sends them once (push_whole_bin): 64-bit shared atomics are compare-and-swap
  // loops, and every warp's first lane adding each of its bins to the same limbs made each block's
  // end queue on them.
  // A window: the lanes here that share one add first, and one of them does the atomics.
  __device__ __forceinline__ void push_bins(unsigned long long* s_limbs) {
    if constexpr (Whole) {
      if (!__syncthreads_or(binned)) return;
      const unsigned mask = live_mask();
      if constexpr (digit_bits == 48) {
        // Radix 2^48: the bins as they are, no normalising and no halving; each bin in three
        // pieces, a warp reduction each, the top piece's sum carried into the next bin's total
        // (order_model::whole_range_p0 .. p2 and whole_range_bin_total, checked on the CPU).
        int carry = 0;
#pragma unroll
        for (int k = 0; k < Bins; ++k) {
          const long long x = bin(k);
          const unsigned p0 = __reduce_add_sync(mask, order_model::whole_range_p0(x));
          const unsigned p1 = __reduce_add_sync(mask, order_model::whole_range_p1(x));
          const int p2 = static_cast<int>(__reduce_add_sync(mask, static_cast<unsigned>(order_model::whole_range_p2(x))));
          const long long total = order_model::whole_range_bin_total(p0, p1, p2, carry, k == Bins - 1);
          carry = p2;
          if ((threadIdx.x & 31u) == 0) bin(k) = total;
        }
      } else {
        normalise_bins();
        bins_to_limb_units();  // bins from limb 0: no half unit below them
#pragma unroll
        for (int k = 0; k < Bins; ++k) {
          const long long total = group_sum_s56(mask, bin(k));
          if ((threadIdx.x & 31u) == 0) bin(k) = total;
        }
      }
      __syncthreads();
      const long long* const block_bins = bins - threadIdx.x;
      const int warps = static_cast<int>(blockDim.x + 31) / 32;
      for (int k = static_cast<int>(threadIdx.x); k < Bins; k += static_cast<int>(blockDim.x)) {
        long long total = 0;
        for (int w = 0; w < warps; ++w) total += block_bins[k * MaxThreads + w * 32];
        if (total != 0) push_whole_bin(s_limbs, total, k);
      }
    } else {
      if (__ballot_sync(__activemask(), binned) == 0) return;
      normalise_bins();
      const long long r0 = bins_to_limb_units();
      const unsigned mask = __activemask();
      const unsigned same = __match_any_sync(mask, bin_base);
      const bool leader = (threadIdx.x & 31u) == static_cast<unsigned>(__ffs(same) - 1);
      const long long halves = static_cast<long long>(__popc(__ballot_sync(same, r0 != 0)));
      if (leader && halves != 0) add_bin(s_limbs, halves << 31, bin_base - 1);
#pragma unroll
      for (int k = 0; k < Bins; ++k) {
        const long long total = group_sum_s56(same, bin(k));
        if (leader && total != 0) add_bin(s_limbs, total, bin_base + k);
      }
    }
  }

  // A group of finite elements that the levels could not take (a span past theirs, or an element
  // at or above 2^B), into the bins exactly (float: without a branch per element; double: the
  // elements below the window into the cells). Range: the group's largest and smallest magnitudes.
  template <int N>
  __device__ __forceinline__ void bin_group(const T (&x)[N], unsigned long long* s_limbs, unsigned long long* s_special) {
    if constexpr (Range) track_range(x);
    binned = true;
    if constexpr (sizeof(T) == 4) {
      // Per element: two integer instructions make the scale 2^(112 - 32 b) for the bin b = E / 32
      // (the field's top three bits, in place: b 2^28 = u & 0x70000000), two exact products
      // (x 2^(112 - 32 b) is a normal float for every finite x, subnormals included, and its
      // product with 2^38 is below 2^55), one exact conversion to a 64-bit integer (the sign comes
      // with it), and the bin's load, add and store: about 12 instructions, where taking the
      // significand, the sign and a 64-bit funnel shift with integer operations took 21 and left
      // the bins bound by the integer pipe.
      Bits nonzero = 0;  // some element is not -0
#pragma unroll
      for (int i = 0; i < N; ++i) {
        Bits u;
        memcpy(&u, &x[i], sizeof(T));
        nonzero |= u ^ sign_bit;
        const unsigned b28 = u & 0x70000000u;
        const float scale = __uint_as_float((239u << 23) - b28);  // 2^(112 - 32 b): biased 239 - 32 b
        const long long v = __float2ll_rz((x[i] * scale) * 0x1p38f);
        bin(static_cast<int>(b28 >> 28)) += v;
      }
      not_negative_zero |= nonzero != 0;
    } else {
      // As for float, in units of 2^(min_exponent - 1): the bin b = E / 32 of the exponent field
      // (its top six bits: b 2^25 = the high word & 0x7e000000), y = x 2^(1075 - 32 b) by two
      // exact products (x 2^(1000 - 32 b) is a normal double for every finite x, subnormals
      // included; y is an integer below 2^84), then y's two 32-bit digits, each exact: hi =
      // trunc(y 2^-32) below 2^52 and lo = y - hi 2^32 below 2^32, both with y's sign. The whole
      // range's builds (Whole) take radix 2^48 instead (order_model::whole_range_digits).
      int top = 0;   // the largest bin an element needs (its high part's)
      int low = 63;  // the smallest bin an element takes (a zero's is 0)
      if constexpr (!Whole) {
#pragma unroll
        for (int i = 0; i < N; ++i) {
          const int b = static_cast<int>((to_bits(x[i]) >> 57) & 63);
          top = b + 1 > top ? b + 1 : top;
          low = b < low ? b : low;
        }
        if (bin_base < 0 || top > bin_base + Bins - 2) {  // a window whose next-to-top bin takes the largest element
          const int b = top + 1 - (Bins - 1);
          raise_window(b > 0 ? b : 0, s_limbs);
        }
      }
      static_assert(N <= 8, "ExactCells' bound counts at most 8 elements a group");
      if (!not_negative_zero) {  // once true it stays: no per-element test after the first nonzero
        Bits nonzero = 0;  // some element is not -0
#pragma unroll
        for (int i = 0; i < N; ++i) nonzero |= to_bits(x[i]) ^ sign_bit;
        not_negative_zero = nonzero != 0;
      }
      const int base = Whole ? 0 : bin_base;
      if constexpr (Whole) {
        // Radix 2^48 (order_model::whole_range_digits): each element's two adds, no window, no
        // cells.
#pragma unroll
        for (int i = 0; i < N; ++i) {
          const order_model::WholeRangeDigits d = order_model::whole_range_digits(x[i]);
          bin(d.bin) += d.lo;
          bin(d.bin + 1) += d.hi;
        }
      } else if (low >= base) {
        // The whole group in the bins (nearly every group of a wide input in a window): no test per
        // element.
#pragma unroll
        for (int i = 0; i < N; ++i) {
          long long lo, hi;
          const int b = split_y(x[i], lo, hi);
          bin(b - base) += lo;
          bin(b - base + 1) += hi;
        }
      } else if (!cells_together(x, top)) {
        // Each element to the bins or, below the window, to the cells, by a branch: on every
        // double bit pattern a warp runs both sides for nearly every i, each for its own lanes,
        // where a branch-free loop had every lane add masked zeros to bin 0 and then compute a
        // second pair of products for the cells' digits.
#pragma unroll
        for (int i = 0; i < N; ++i) {
          long long lo, hi;
          const int b = split_y(x[i], lo, hi);
          if (b >= bin_base) {
            bin(b - bin_base) += lo;
            bin(b - bin_base + 1) += hi;
          } else {  // a zero's digits are zeros
            int d[5];
            cell_digits(to_bits(x[i]), lo, hi, d);
            int* const cells = warp_cells() + cell_of(to_bits(x[i]));
#pragma unroll
            for (int k = 0; k < 5; ++k) atomicAdd(&cells[k], d[k]);
          }
        }
      }
    }
    bin_adds += N;
    const bool due = bin_adds >= ExactBins<T>::normalise_every;
    if (due) {
      normalise_bins();
      bin_adds = 0;
    }
    if constexpr (!Whole) take_cells(due, s_limbs);
  }

  // Double: y = x 2^(1075 - 32 b) half units for b = E / 32 (returned), as its 32-bit digits lo and
  // hi (bin_group).
  __device__ __forceinline__ static int split_y(T x, long long& lo, long long& hi) {
    const unsigned b25 = static_cast<unsigned>(to_bits(x) >> 32) & 0x7e000000u;
    const double scale = __hiloint2double(static_cast<int>((2023u << 20) - b25), 0);  // 2^(1000 - 32 b)
    const double y = (x * scale) * 0x1p75;
    const double th = trunc(y * 0x1p-32);
    hi = __double2ll_rz(th);
    lo = __double2ll_rz(fma(th, -0x1p32, y));  // exact either way: y - th 2^32 is an integer below 2^32
    return static_cast<int>(b25 >> 25);
  }

  // Double: the cell c = E / 16 of an element's lowest digit (ExactCells).
  __device__ __forceinline__ static int cell_of(Bits u) { return static_cast<int>(u >> 56 & 0x7f); }

  // Double: the five digits for cells c .. c + 4 of y = lo + 2^32 hi (one element's, or the sums of
  // a lane's elements of one c: ExactCells), c = 2 b + (c odd). y weighs 2^(32 b) half units, cell
  // 2 b's weight. For an even c, y < 2^68 (E mod 32 < 16): lo mod 2^16, lo >> 16, hi mod 2^16,
  // (hi >> 16) mod 2^16, hi >> 32; for an odd c, y and so lo are multiples of 2^16: lo >> 16,
  // hi mod 2^16, (hi >> 16) mod 2^16, (hi >> 32) mod 2^16, hi >> 48.
  __device__ __forceinline__ static void cell_digits(Bits u, long long lo, long long hi, int (&d)[5]) {
    const bool odd = (u >> 56 & 1) != 0;
    const int lo_low = static_cast<int>(lo & 0xffff), lo_high = static_cast<int>(lo >> 16);
    const int h0 = static_cast<int>(hi & 0xffff), h1 = static_cast<int>((hi >> 16) & 0xffff);
    d[0] = odd ? lo_high : lo_low;
    d[1] = odd ? h0 : lo_high;
    d[2] = odd ? h1 : h0;
    d[3] = odd ? static_cast<int>((hi >> 32) & 0xffff) : h1;
    d[4] = static_cast<int>(hi >> (odd ? 48 : 32));
  }

  // Double: where every element of every lane here lies below its window in one cell c (sorted
  // data: a warp's elements lie side by side), each lane adds its elements' lo and hi, the lanes
  // add the five digits of those sums (below 8 2^16 each: at most 2^16 for each element in them,
  // as ExactCells' bound counts) by a warp reduction each, and one lane sends the five totals,
  // where 32 atomics on one word would queue one behind the other. False (nothing done) otherwise:
  // on unsorted wide data a vote is all this costs. `top`: the group's largest bin, plus one.
  template <int N> __device__ __forceinline__ bool cells_together(const T (&x)[N], int top) {
    const unsigned mask = __activemask();
    if (!__all_sync(mask, top <= bin_base)) return false;
    unsigned all = ~0u, any = 0;  // the AND and the OR of the exponent fields' top bits
#pragma unroll
    for (int i = 0; i < N; ++i) {
      const unsigned h = static_cast<unsigned>(to_bits(x[i]) >> 32);
      all &= h;
      any |= h;
    }
    const unsigned c = __reduce_and_sync(mask, all >> 24 & 0x7fu);
    if (c != __reduce_or_sync(mask, any >> 24 & 0x7fu)) return false;
    long long lo = 0, hi = 0;  // below 2^35 and 2^55
#pragma unroll
    for (int i = 0; i < N; ++i) {
      long long l, h;
      split_y(x[i], l, h);
      lo += l;
      hi += h;
    }
    int d[5];
    cell_digits(to_bits(x[0]), lo, hi, d);
    const bool leader = (threadIdx.x & 31u) == static_cast<unsigned>(__ffs(mask) - 1);
    int* const cells = warp_cells() + c;
#pragma unroll
    for (int k = 0; k < 5; ++k) {
      const int v = __reduce_add_sync(mask, d[k]);  // below 2^24
      if (leader && v != 0) atomicAdd(&cells[k], v);
    }
    return true;
  }

  // Double: where some lane here has just normalised its bins (`due`: normalise_every elements
  // since it last did), the lanes here empty their warp's cells into the block's limbs together.
  __device__ __forceinline__ void take_cells(bool due, unsigned long long* s_limbs) {
    const unsigned mask = __activemask();
    if (__ballot_sync(mask, due) == 0) return;
    __syncwarp(mask);  // every lane's adds before the exchanges
    int* const cells = warp_cells();
    const unsigned lane = threadIdx.x & 31u;
    const int lanes = __popc(mask);
    for (int c = __popc(mask & ((1u << lane) - 1u)); c < ExactCells::count; c += lanes) {
      const int v = atomicExch(&cells[c], 0);
      if (v != 0) push_cell(s_limbs, v, c);
    }
  }

  // Double: the block's cells (every warp's), zeroed at the start by its threads together (the
  // barrier after the limbs' zeroing orders them before any add), and at the end, once every warp
  // has added to them, pushed to the block's limbs.
  __device__ __forceinline__ int* block_cells() const {
    return reinterpret_cast<int*>(bins + (Bins * MaxThreads - static_cast<int>(threadIdx.x)));
  }
  __device__ __forceinline__ static int block_cell_words() { return static_cast<int>(blockDim.x + 31) / 32 * ExactCells::count; }
  __device__ __forceinline__ void zero_cells() const {
    int* const cells = block_cells();
    for (int k = static_cast<int>(threadIdx.x); k < block_cell_words(); k += static_cast<int>(blockDim.x)) cells[k] = 0;
  }
  __device__ __forceinline__ void push_all_cells(unsigned long long* s_limbs) const {
    if (!__syncthreads_or(binned)) return;  // only wide groups use the cells
    const int* const cells = block_cells();
    for (int k = static_cast<int>(threadIdx.x); k < block_cell_words(); k += static_cast<int>(blockDim.x))
      if (cells[k] != 0) push_cell(s_limbs, cells[k], k % ExactCells::count);
  }

  // Cell c's value v into the block's limbs: v 2^(16 c - 1) units is v 2^15 at limb c / 2 for an
  // odd c, and v >> 1 there plus, for an odd v, 2^31 at the limb below for an even one.
  __device__ __forceinline__ static void push_cell(unsigned long long* s_limbs, int v, int c) {
    const int k = c >> 1;
    if ((c & 1) != 0) {
      add_bin(s_limbs, static_cast<long long>(v) * (1ll << 15), k);
    } else {
      add_bin(s_limbs, static_cast<long long>(v >> 1), k);
      if ((v & 1) != 0) atomicAdd(&s_limbs[k - 1], 1ull << 31);  // never at cell 0, whose value is even
    }
  }

  __device__ __forceinline__ void add(T x, unsigned long long* s_limbs, unsigned long long* s_special) {
    Bits u;
    memcpy(&u, &x, sizeof(T));
    not_negative_zero |= u != sign_bit;
    if constexpr (Range) {
      const Bits a = u & ~sign_bit;
      if (a < inf_bits && a > largest_finite) largest_finite = a;
      if (a != 0 && a < smallest_nonzero) smallest_nonzero = a;
    }
    if (fabs(x) < threshold || refused(x, s_limbs, s_special)) fast(x, s_limbs);
  }
};

// Where a launch's results go: two sets of exact_set_words<T> words, and each launch adds its
// blocks' results to set `parity` while block 0 resets the other set for the next launch (the host
// alternates parity, and the launches of a stream run one after the other). So no block waits for
// another: each adds its results with atomics whose old values it never reads, and leaves. A set:
//   limbs    num_limbs column sums (integers, any grouping), read by the host;
//   specials exact_specials counts;
//   range    (gpu_fixed_point, Range) atomicMax / atomicMin of the largest finite magnitude's bits,
//            the smallest tracked nonzero magnitude's bits and the lowest level-0 grid
//            (encode_grid), from (0, ~0, ~0); fixed_point_kernel decides its scale from them.
// A grid exponent as an unsigned word that orders like it (for atomicMin), and back; ~0 (the reset
// value) and an unset thread's INT_MAX decode to INT_MAX.
__host__ __device__ inline unsigned long long encode_grid(int e) {
  return static_cast<unsigned long long>(static_cast<long long>(e) + (1ll << 31));
}
__host__ __device__ inline int decode_grid(unsigned long long w) {
  return w >= (1ull << 32) ? 0x7fffffff : static_cast<int>(static_cast<long long>(w) - (1ll << 31));
}

template <class T> inline constexpr int exact_range_at = ExactLayout<T>::num_limbs + exact_specials;
template <class T> inline constexpr int exact_set_words = exact_range_at<T> + 3;
// A set's word w in its reset state.
template <class T> __host__ __device__ inline unsigned long long exact_reset_word(int w) {
  return w > exact_range_at<T> ? ~0ull : 0ull;
}

struct ExactBuffers {
  unsigned long long* sets = nullptr;  // 2 * exact_set_words<T>; set 0 reset before the first launch
  unsigned parity = 0;                 // the set this launch adds to
  bool bins_keep_up = false;           // launch_exact's: the GPU's memory no faster than the bins (wide_span_bins_keep_up)
};

// Block 0: the next launch's set to its reset state (a launch touches only its own).
template <class T> __device__ __forceinline__ void exact_reset_next_set(const ExactBuffers& out) {
  if (blockIdx.x == 0)
    for (int w = static_cast<int>(threadIdx.x); w < exact_set_words<T>; w += static_cast<int>(blockDim.x))
      out.sets[(out.parity ^ 1u) * exact_set_words<T> + w] = exact_reset_word<T>(w);
}

// Host side: both sets to their reset state (before a launch sequence that starts with parity 0).
template <class T> void exact_reset_sets(const ExactBuffers& out) {
  unsigned long long words[2 * exact_set_words<T>];
  for (int w = 0; w < 2 * exact_set_words<T>; ++w) words[w] = exact_reset_word<T>(w % exact_set_words<T>);
  SUMLAB_CUDA_CHECK(cudaMemcpy(out.sets, words, sizeof words, cudaMemcpyHostToDevice));
}

// MaxThreads, MinBlocks: the instantiation's __launch_bounds__. Blocks of up to 256 threads are
// compiled for 2 resident blocks per SM (128 registers: no spills), and double ones also for one
// (the whole range's bins fill the shared memory: launch_exact says which runs), blocks of up to
// 512 for one (128 registers: the levels and the window never spill), 1024 for one (64 registers,
// which spills).
// The launch provides exact_tile_bytes<T>(MaxThreads, MinBlocks, blockDim.x) +
// ExactBins<T>::bytes(MaxThreads, MinBlocks, blockDim.x) of dynamic shared memory.
// Abs: the kernel adds |x| (the exact sum of magnitudes a study's reference needs beside the sum;
// its special counts are not used).
// exact_limbs_block is exact_limbs_kernel's body, which gpu_fixed_point's one-launch kernel
// (fixed_point_kernels.cuh) runs as well; every thread of the block calls it (it holds barriers).
// Begun: the block's tiles were begun by the caller (bulk_begin) on these barriers.
template <class T, bool Range, int MaxThreads, int MinBlocks, bool Abs = false, bool Begun = false>
__device__ __forceinline__ void exact_limbs_block(const T* __restrict__ d_in, std::int64_t num_items, const ExactBuffers& out,
                                                  unsigned long long* begun = nullptr) {
  using Bits = typename FloatTraits<T>::Bits;
  constexpr int NL = ExactLayout<T>::num_limbs;
  __shared__ unsigned long long s_limbs[NL];
  __shared__ unsigned long long s_special[exact_specials];
  __shared__ unsigned long long s_range[Range ? 32 : 1][3];  // Range: each warp's largest, smallest, lowest grid
  for (int k = static_cast<int>(threadIdx.x); k < NL; k += static_cast<int>(blockDim.x)) s_limbs[k] = 0;
  if (threadIdx.x < exact_specials) s_special[threadIdx.x] = 0;
  constexpr int Bins = ExactBins<T>::count(MaxThreads, MinBlocks);
  ExactThread<T, Range, Bins, MaxThreads> t;
  if constexpr (decltype(t)::Whole && sizeof(T) == 8)
    if (out.bins_keep_up) t.wide_span = ExactLayout<T>::wide_span_bins_keep_up;
  extern __shared__ __align__(128) unsigned char exact_dynamic_smem[];  // the bulk stages, then the bins
  constexpr int Stages = exact_stages<T>(MaxThreads, MinBlocks);
  static_assert(!Begun || (Stages == 0 && !Abs), "bulk_begin begins the default stages of the plain sum");
  const std::size_t tile_bytes = exact_tile_bytes<T>(MaxThreads, MinBlocks, static_cast<int>(blockDim.x));
  t.bins = reinterpret_cast<long long*>(exact_dynamic_smem + tile_bytes) + threadIdx.x;
#pragma unroll
  for (int k = 0; k < Bins; ++k) t.bin(k) = 0;  // this thread's own words: no barrier needed for them
  if constexpr (!decltype(t)::Whole) t.zero_cells();
  __syncthreads();
  if constexpr (Abs) {
    for_each_bulk_group<sizeof(T) == 8, Stages>(
        d_in, num_items, [&](T x) { t.add(fabs(x), s_limbs, s_special); },
        [&](const T(&x)[bulk_group<T>]) {
          T a[bulk_group<T>];
#pragma unroll
          for (int i = 0; i < bulk_group<T>; ++i) a[i] = fabs(x[i]);
          t.add_group(a, s_limbs, s_special);
        });
  } else {
    for_each_bulk_group<sizeof(T) == 8 && !Begun, Stages, Begun>(
        d_in, num_items, [&](T x) { t.add(x, s_limbs, s_special); },
        [&](const T(&x)[bulk_group<T>]) { t.add_group(x, s_limbs, s_special); }, begun);
  }
  t.flush(s_limbs);
  t.push(s_limbs);
  t.push_bins(s_limbs);
  unsigned long long* const limbs = s_limbs;
  t.window.flush(NL, [limbs](int limb, long long v) { atomicAdd(&limbs[limb], static_cast<unsigned long long>(v)); });
  if constexpr (!decltype(t)::Whole) t.push_all_cells(s_limbs);
  // Range: gpu_fixed_point's pass 2 may follow as a programmatic dependent (float32 only,
  // dispatch_fixed_point.cu); its blocks start once this grid's have read their input, and wait
  // for this grid's results.
  if constexpr (Range) let_dependents_start();
  // Range: a slot per warp, then thread 0 (64-bit shared atomics are CAS loops). Every lane of the
  // warp takes part (live_mask, not __activemask: after the divergent code above, the lanes running
  // together can be a part of the warp, and a slot written by each part keeps only the last part's
  // range; a build as relocatable device code did that for one-block grids: gpu_fixed_point's k 3 too high).
  if constexpr (Range) {
    const unsigned mask = live_mask();
    const Bits largest = warp_max_bits<Bits>(mask, t.largest_finite);
    const Bits smallest = warp_min_bits<Bits>(mask, t.smallest_nonzero);
    const int lowest = __reduce_min_sync(mask, t.lowest_grid);
    if ((threadIdx.x & 31u) == 0) {
      const int w = static_cast<int>(threadIdx.x) / 32;
      s_range[w][0] = largest;
      s_range[w][1] = smallest == ~Bits(0) ? ~0ull : smallest;
      s_range[w][2] = encode_grid(lowest);
    }
  }
  const bool not_negative_zero = __syncthreads_or(t.not_negative_zero) != 0;  // also the barrier
  unsigned long long* const set = out.sets + out.parity * exact_set_words<T>;
  // Each limb v (|v| < 2^63) as v mod 2^32 into its column and v >> 32 (arithmetic, |.| < 2^31)
  // into the next, the top limb whole: one thread a limb, no carry chain, and every column sum
  // over <= 2^24 blocks stays below 2^57 in magnitude (atomics on 64-bit words: integer addition
  // in any order, wrapping exactly like the signed sums they stand for).
  for (int k = static_cast<int>(threadIdx.x); k < NL; k += static_cast<int>(blockDim.x)) {
    const long long v = static_cast<long long>(s_limbs[k]);
    if (k == NL - 1) {
      if (v != 0) atomicAdd(&set[k], static_cast<unsigned long long>(v));
      continue;
    }
    const unsigned long long low = static_cast<unsigned long long>(v) & 0xffffffffull;
    const long long high = v >> 32;
    if (low != 0) atomicAdd(&set[k], low);
    if (high != 0) atomicAdd(&set[k + 1], static_cast<unsigned long long>(high));
  }
  if (threadIdx.x == 0) {
    for (int c = 0; c < exact_specials; ++c) {
      const unsigned long long v = c == exact_not_negative_zero ? (not_negative_zero ? 1ull : 0ull) : s_special[c];
      if (v != 0) atomicAdd(&set[NL + c], v);
    }
    if constexpr (Range) {
      unsigned long long largest = 0, smallest = ~0ull, lowest = ~0ull;
      for (int w = 0; w < static_cast<int>(blockDim.x + 31) / 32; ++w) {
        largest = s_range[w][0] > largest ? s_range[w][0] : largest;
        smallest = s_range[w][1] < smallest ? s_range[w][1] : smallest;
        lowest = s_range[w][2] < lowest ? s_range[w][2] : lowest;
      }
      unsigned long long* const range = set + exact_range_at<T>;
      if (largest != 0) atomicMax(&range[0], largest);
      if (smallest != ~0ull) atomicMin(&range[1], smallest);
      if (lowest != ~0ull) atomicMin(&range[2], lowest);
    }
  }
  exact_reset_next_set<T>(out);
}

template <class T, bool Range, int MaxThreads, int MinBlocks, bool Abs = false>
__global__ void __launch_bounds__(MaxThreads, MinBlocks) exact_limbs_kernel(const T* __restrict__ d_in, std::int64_t num_items,
                                                                            ExactBuffers out) {
  exact_limbs_block<T, Range, MaxThreads, MinBlocks, Abs>(d_in, num_items, out);
}

// Host side: set out.parity's exact sum and its special counts (count = n) as core/exact_sum.hpp's
// Superaccumulator (the same code as the CPU exact sum), waiting for the launches before it.
template <class T> Superaccumulator<T> exact_read_accumulator(const ExactBuffers& out, std::int64_t n) {
  constexpr int L = ExactLayout<T>::num_limbs;
  unsigned long long set[exact_set_words<T>];
  SUMLAB_CUDA_CHECK(cudaMemcpy(set, out.sets + out.parity * exact_set_words<T>, sizeof set, cudaMemcpyDeviceToHost));
  Superaccumulator<T> acc;
  for (int k = 0; k < L; ++k)
    if (set[k] != 0) acc.add_limb(k, static_cast<long long>(set[k]));
  SpecialCounts specials;
  specials.count = static_cast<std::uint64_t>(n);
  specials.nan = set[L + exact_nan];
  specials.pos_inf = set[L + exact_pos_inf];
  specials.neg_inf = set[L + exact_neg_inf];
  specials.all_negative_zero = set[L + exact_not_negative_zero] == 0;
  acc.add_specials(specials);
  return acc;
}

// The same, rounded once (and its special counts).
template <class T> T exact_read_set(const ExactBuffers& out, std::int64_t n, SpecialCounts& specials) {
  const Superaccumulator<T> acc = exact_read_accumulator<T>(out, n);
  specials = acc.specials();
  return acc.round();
}

// One thread rounds set out.parity where it lies, with the host's code (core/exact_sum.hpp's
// exact_normalise_limbs and exact_round_limbs: the same bits as exact_read_set), writes the sum to
// *d_out, and puts the set back in its reset state for the next sum.
template <class T> __global__ void exact_round_kernel(ExactBuffers out, std::int64_t n, T* d_out) {
  constexpr int L = ExactLayout<T>::num_limbs;
  unsigned long long* set = out.sets + out.parity * exact_set_words<T>;
  std::int64_t d[L];
  for (int k = 0; k < L; ++k) d[k] = 0;
  for (int k = 0; k < L; ++k) {  // Superaccumulator::add_limb(k, set[k]), limb by limb
    const auto v = static_cast<std::int64_t>(set[k]);
    if (k == L - 1) {
      d[k] += v;
    } else {
      d[k] += v & 0xffffffffll;
      d[k + 1] += v >> 32;
    }
  }
  exact_normalise_limbs<T>(d);
  SpecialCounts specials;
  specials.count = static_cast<std::uint64_t>(n);
  specials.nan = set[L + exact_nan];
  specials.pos_inf = set[L + exact_pos_inf];
  specials.neg_inf = set[L + exact_neg_inf];
  specials.all_negative_zero = set[L + exact_not_negative_zero] == 0;
  *d_out = exact_round_limbs<T>(d, specials);
  for (int w = 0; w < exact_set_words<T>; ++w) set[w] = exact_reset_word<T>(w);
}

// Whether double's whole-range bins keep pace with the current GPU's memory (device_rates.hpp):
// then launch_exact lowers the span that sends a warp to them.
inline bool bins_keep_up_with_memory() { return exact_bins_keep_up(memory_bytes_per_sm_cycle()); }

// Host side: the kernel for the block size, asynchronously on the default stream; set out.parity
// must be in its reset state (exact_reset_sets, or the launch before with the other parity).
// Abs (the sum of magnitudes) takes the sum's builds for blocks of up to 512 threads (the reference
// runs it at the sum's shape, so on wide doubles at the whole range's build too); its 1024-thread
// build, which spills, is not compiled.
template <class T, bool Range, bool Abs = false>
void launch_exact(const LaunchShape& s, const T* d_in, std::int64_t n, const ExactBuffers& out) {
  static_assert(!(Abs && Range), "the sum of magnitudes decides no fixed-point scale");
  // The build for the block size; the tiles' and bins' shared memory passes the default 48 KB, so
  // the launch opts in to its size.
  void (*kernel)(const T*, std::int64_t, ExactBuffers) = nullptr;
  std::size_t smem = 0;
  ExactBuffers args = out;
  const auto what = [&] {
    return std::string("gpu_exact (") + (sizeof(T) == 4 ? "float32" : "float64") + ", " + std::to_string(s.block) + " threads a block)";
  };
  auto pick = [&](auto build, int max_threads, int min_blocks) {
    kernel = build;
    smem = exact_tile_bytes<T>(max_threads, min_blocks, s.block) +
           ExactBins<T>::bytes(max_threads, min_blocks, s.block);
  };
  if (s.block > 512) {
    if constexpr (Abs) throw GpuError("gpu_exact's sum of magnitudes takes blocks of at most 512 threads");
    else pick(exact_limbs_kernel<T, Range, 1024, 1>, 1024, 1);
  } else if (s.block > 256) pick(exact_limbs_kernel<T, Range, 512, 1, Abs>, 512, 1);
  else if constexpr (sizeof(T) == 4) pick(exact_limbs_kernel<T, Range, 256, 2, Abs>, 256, 2);
  else {
    // Double, blocks of up to 256 threads: the whole range's bins (one block an SM) where the grid
    // is resident at once. A grid of more waves takes the window's build at two blocks an SM, where
    // each block's start and end (its first tiles, its limbs' atomics) overlap the other block's
    // loads: at one block an SM every further wave cost moderate inputs those latencies, more
    // than the whole range saved wide ones at small n (docs/performance-notes.md). So does a GPU
    // whose blocks cannot hold the whole range's shared memory (172 KB at 256 threads).
    pick(exact_limbs_kernel<T, Range, 256, 1, Abs>, 256, 1);
    const auto* whole = reinterpret_cast<const void*>(kernel);
    bool takes_whole = smem <= shared_limit(whole);
    if (takes_whole) {
      opt_in_shared(whole, smem, what);  // resident_blocks counts with the opted-in limit
      takes_whole = s.grid <= resident_blocks(whole, s.block, smem);
    }
    if (!takes_whole) pick(exact_limbs_kernel<T, Range, 256, 2, Abs>, 256, 2);
    args.bins_keep_up = takes_whole && bins_keep_up_with_memory();
  }
  opt_in_shared(reinterpret_cast<const void*>(kernel), smem, what);
  kernel<<<s.grid, s.block, smem>>>(d_in, n, args);
  SUMLAB_CUDA_CHECK_LAUNCH("exact_limbs_kernel");
}

// Host side: the whole input, in launches of at most exact_launch_elements elements that all add
// to set out.parity (each resets the other set, which the next sum uses): integer totals, so the
// split changes no bit. One launch for n <= exact_launch_elements (and for n = 0).
template <class T, bool Range, bool Abs = false>
void launch_exact_chunks(const LaunchShape& s, const T* d_in, std::int64_t n, const ExactBuffers& out) {
  std::int64_t done = 0;
  do {
    const std::int64_t count = n - done < exact_launch_elements ? n - done : exact_launch_elements;
    launch_exact<T, Range, Abs>(s, d_in + done, count, out);
    done += count;
  } while (done < n);
}

}  // namespace sumlab::gpu::detail
