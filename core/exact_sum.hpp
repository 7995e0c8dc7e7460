#pragma once
// Superaccumulator<T> and exact_sum: the exact sum of any number of IEEE binary32/binary64 values,
// rounded once at the end.
//
// Assumptions: T is IEEE binary32 (float) or binary64 (double). The data never meet a floating-
// point operation: every finite input is split by bit manipulation into an integer significand and
// an exponent, and the final rounding (round-to-nearest, ties-to-even, the IEEE default) is done in
// integers too, so neither the FP environment nor compiler flags can change the result.
// Order of operations: irrelevant. Inputs become integer digits added with integer addition, which
// is exact and associative here (see the invariant below), so every order, lane split, grouping
// and merge tree gives the same bits. Determinism class: shape_invariant.
// Error bound: 0 until round(); round() returns the exact sum correctly rounded to T, with the
// IEEE special rules (those of mpfr_sum):
//   any NaN, or both +Inf and -Inf -> NaN; else +Inf / -Inf if present;
//   a finite exact sum >= max + ulp(max)/2 in magnitude -> +-Inf (IEEE overflow under RNE);
//   an exact zero -> -0 only if at least one input was seen and every input was -0, else +0.
//
// Representation (the public layout): S = sum_k limb_k * 2^(limb_bits * k + min_exponent),
// k = 0 .. num_limbs-1. Bit 0 of limb 0 weighs 2^min_exponent, the smallest subnormal, so every
// finite T is an integer multiple of it; a finite x = m * 2^e (m < 2^p) covers 2 (float) or 3
// (double) consecutive 32-bit digits. The limbs span 2^(emax+1) * 2^64, so 2^64 inputs of any
// magnitude fit. The top limb receives only carries (and add_limb at the top index), so a top limb
// != 0 after normalisation means the sum is beyond the range of T.
//
// Two levels, because shifting every significand into limbs costs ~2.5x a plain loop:
//   chunks_ (level 1): one uint64 per (sign, biased exponent), i.e. indexed by the input's top
//     bits (two copies, for alternate inputs). The hot loop adds the integer significand there
//     unshifted: a load, a mask, one add, no shift.
//     A chunk is the exact sum modulo 2^64; the rare wrap-around (after >= 2^11 double or 2^40
//     float inputs of one exponent) is booked at once into the limbs as one digit.
//   limbs_ (level 2): the layout above. Chunks are shifted into it only when the limbs are read
//     (limbs(), round(), merge, normalisation), so each chunk is shifted once, not per input.
// The chunks (64 KiB for double) are allocated by the first add of a span of at least
// chunk_threshold inputs; before that, inputs are shifted straight into the limbs, so a small
// sum, add_limb-only use (GPU partials) and copies stay cheap.
// Long spans on a CPU with AVX2 go first to core/exact_window.hpp: blocks of 1024 inputs
// whose exponents span at most 63 are summed as integers in vector lanes, and each block's sum
// joins the limbs as three digits (add_at); the blocks it cannot take go to the chunks.
//
// Invariant (why int64 never overflows): let a = the number of limb-level adds since the last
// carry normalisation (chunk wraps, add_limb, merge). Each puts at most one digit of magnitude
// < 2^32 into any limb, so every limb other than the top one has magnitude < 2^32 * (a + 1).
// Normalisation runs when a reaches max_adds_between_normalise = 2^30; folding the chunks in adds
// at most one digit per chunk (2^13 or 2^11 of them) per limb, so everything stays below 2^63.
// The top limb holds S / 2^(32 (num_limbs-1) + min_exponent), tiny for any sum of 2^64 values of
// T (< 2^18 for double, < 2^21 for float); add_limb at the top index is exact as long as
// |S| < 2^(32 (num_limbs-1) + min_exponent + 61).
//
// Zeros, subnormals, Inf and NaN take one rarely taken branch (exponent field 0 or all ones).
#include <algorithm>
#include <array>
#include <bit>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <span>
#include <stdexcept>
#include <type_traits>
#include <vector>

#include "core/exact_window.hpp"
#include "core/float_traits.hpp"
#include "core/hd.hpp"

namespace sumlab {

namespace detail {
// 128-bit integers (GCC/Clang/nvcc host); __extension__ keeps -Wpedantic quiet about them.
__extension__ typedef unsigned __int128 uint128;
__extension__ typedef __int128 int128;

// std::bit_width for code that also runs on the device: nvcc compiles libstdc++'s std::bit_width to
// the constant 0 in device code, silently. Called once per rounding, so a loop is cheap enough.
SUMLAB_HD constexpr int bit_width(std::uint64_t v) {
  int w = 0;
  for (; v != 0; v >>= 1) ++w;
  return w;
}
}  // namespace detail

// Counts of what the limbs cannot hold, kept beside them: the NaN/Inf inputs, and what decides
// the sign of an exact zero. A GPU kernel counts these per block and the host merges them, in
// any order (every field merges associatively and commutatively).
//   count             inputs seen, finite or not;
//   nan / pos_inf / neg_inf   how many inputs were NaN / +Inf / -Inf;
//   all_negative_zero every counted input was -0 (vacuously true when count == 0).
// The exact-zero result is -0 iff count >= 1 && all_negative_zero.
struct SpecialCounts {
  std::uint64_t count = 0;
  std::uint64_t nan = 0;
  std::uint64_t pos_inf = 0;
  std::uint64_t neg_inf = 0;
  bool all_negative_zero = true;

  SUMLAB_HD void merge(const SpecialCounts& o) {
    count += o.count;
    nan += o.nan;
    pos_inf += o.pos_inf;
    neg_inf += o.neg_inf;
    all_negative_zero = all_negative_zero && o.all_negative_zero;
  }
  // Classifies one input (host helper; the accumulator's own hot loop does this inline).
  template <class T> void observe(T x) {
    using Bits = typename FloatTraits<T>::Bits;
    constexpr int frac_bits = FloatTraits<T>::precision - 1;
    constexpr Bits exp_mask = (Bits(1) << FloatTraits<T>::exponent_bits) - 1;
    constexpr Bits sign_bit = FloatTraits<T>::sign_bit;
    const Bits u = std::bit_cast<Bits>(x);
    ++count;
    if (u != sign_bit) all_negative_zero = false;
    if (((u >> frac_bits) & exp_mask) == exp_mask) {
      if ((u & ((Bits(1) << frac_bits) - 1)) != 0) ++nan;
      else if (u & sign_bit) ++neg_inf;
      else ++pos_inf;
    }
  }
  bool operator==(const SpecialCounts&) const = default;
};

template <class T> SUMLAB_HD void exact_normalise_limbs(std::int64_t* d);

template <class T> class Superaccumulator {
  using Traits = FloatTraits<T>;
  using Bits = typename Traits::Bits;

 public:
  // --- Layout of the exact sum, relied on by GPU kernels that produce integer partials ---
  static constexpr int limb_bits = 32;
  static constexpr int min_exponent = Traits::min_subnormal_exp;  // weight of bit 0 of limb 0
  static constexpr int num_limbs =
      (Traits::emax + 1 + 64 - min_exponent + limb_bits - 1) / limb_bits;  // 11 / 68
  static constexpr std::uint64_t max_adds_between_normalise = std::uint64_t(1) << 30;

  // Carry-normalised limbs: limbs[k] in [0, 2^32) for k < num_limbs - 1, the top one signed.
  using Limbs = std::array<std::int64_t, num_limbs>;

  // Spans at least this long switch the accumulator to the chunks (see the header comment).
  static constexpr std::size_t chunk_threshold = 1024;

  Superaccumulator() { limbs_.fill(0); }

  // Adds one input exactly (any T, specials included).
  void add(T x) {
    std::uint64_t negative_zeros = 0;
    if (chunks_.empty()) add_direct(std::bit_cast<Bits>(x), negative_zeros);
    else add_one(chunks_.data(), std::bit_cast<Bits>(x), negative_zeros);
    note_inputs(1, negative_zeros);
  }

  // Adds every element of xs exactly; the hot path.
  void add(std::span<const T> xs) {
    std::uint64_t negative_zeros = 0;
    std::size_t j = 0;
    if (xs.size() >= chunk_threshold && detail::exact_window_available())
      j = add_windowed(xs, negative_zeros);
    add_rest(xs.subspan(j), negative_zeros);
    note_inputs(xs.size(), negative_zeros);
  }

  // Adds another accumulator's exact sum and specials (associative and commutative).
  void merge(const Superaccumulator& other) {
    const Limbs o = other.limbs();
    for (int k = 0; k < num_limbs; ++k) limbs_[k] += o[k];
    count_limb_adds();
    specials_.merge(other.specials_);
  }

  // Adds v * 2^(limb_bits * i + min_exponent) exactly, for any int64 v and 0 <= i < num_limbs
  // (throws std::out_of_range otherwise). This is how integer partials from a GPU kernel, laid
  // out as this class's limbs, join the host sum. It counts no input: pass the inputs'
  // SpecialCounts (count included) to add_specials, or an exact zero rounds to +0.
  void add_limb(int i, std::int64_t v) {
    if (i < 0 || i >= num_limbs) throw std::out_of_range("Superaccumulator::add_limb: limb index");
    if (i == num_limbs - 1) {
      limbs_[i] += v;  // the top limb is signed and has no digit bound
    } else {
      limbs_[i] += v & digit_mask;
      limbs_[i + 1] += v >> limb_bits;  // floor division: |v >> 32| <= 2^31
    }
    count_limb_adds();
  }

  // Merges specials counted elsewhere (e.g. per GPU block) into this accumulator.
  void add_specials(const SpecialCounts& s) { specials_.merge(s); }

  const SpecialCounts& specials() const { return specials_; }

  // The exact finite part of the sum as carry-normalised limbs. Does not change the accumulator.
  Limbs limbs() const {
    Limbs d = limbs_;
    for (std::size_t ix = 0; ix < chunks_.size(); ++ix) {
      if (chunks_[ix] == 0) continue;
      const int e = static_cast<int>(ix & exp_mask);
      const int shift = e == 0 ? 0 : e - 1;  // subnormals share the weight of e == 1
      const int sign = static_cast<int>((ix >> Traits::exponent_bits) & 1);
      add_shifted(d, shift, chunks_[ix], sign);
    }
    exact_normalise_limbs<T>(d.data());
    return d;
  }

  // The exact sum correctly rounded to T (round-to-nearest, ties-to-even), IEEE specials as in
  // the header comment. Does not change the accumulator.
  T round() const;

 private:
  static constexpr int precision = Traits::precision;
  static constexpr int frac_bits = precision - 1;
  static constexpr Bits exp_mask = (Bits(1) << Traits::exponent_bits) - 1;
  static constexpr Bits frac_mask = (Bits(1) << frac_bits) - 1;
  static constexpr int sign_shift = int(sizeof(T)) * 8 - 1;
  static constexpr std::int64_t digit_mask = (std::int64_t(1) << limb_bits) - 1;
  // One chunk per (sign, biased exponent): the index is simply the top bits of the input.
  static constexpr std::size_t lane_chunks = std::size_t(2) << Traits::exponent_bits;
  // Consecutive inputs alternate between two copies of the chunks, which halves the chains of
  // read-modify-writes through one memory word when neighbours share an exponent (measured
  // ~10% faster than one copy, no gain from four; bench/cpu_sums_bench.cpp).
  static constexpr std::size_t num_lanes = 2;
  static constexpr std::size_t num_chunks = num_lanes * lane_chunks;

  // A chunk's value c * 2^(shift + min_exponent), shift <= emax - (p-1) - min_exponent, spans
  // limbs shift/32 .. shift/32 + 2 (c < 2^64, shift % 32 < 32: 95 bits); a chunk carry lands on
  // the last of them. None of these may reach the top limb, which must hold only what is beyond
  // the range of T.
  static_assert((Traits::emax - (precision - 1) - min_exponent) / limb_bits + 2 < num_limbs - 1);
  static_assert(limb_bits * (num_limbs - 1) + min_exponent > Traits::emax + 1);

  // Adds (-1)^sign * c * 2^(shift + min_exponent) into limbs d: three digits below 2^32.
  static void add_shifted(Limbs& d, int shift, std::uint64_t c, int sign) {
    const int i = shift / limb_bits;
    const detail::uint128 v = static_cast<detail::uint128>(c) << (shift % limb_bits);
    const std::int64_t digits[3] = {
        static_cast<std::int64_t>(static_cast<std::uint64_t>(v) & std::uint64_t(digit_mask)),
        static_cast<std::int64_t>(static_cast<std::uint64_t>(v) >> limb_bits),
        static_cast<std::int64_t>(v >> 64)};
    for (int t = 0; t < 3; ++t) d[i + t] += sign ? -digits[t] : digits[t];
  }

  // xs by the chunks, or, while there are none and xs is short, straight into the limbs.
  void add_rest(std::span<const T> xs, std::uint64_t& negative_zeros) {
    if (chunks_.empty() && xs.size() < chunk_threshold) {
      for (const T x : xs) add_direct(std::bit_cast<Bits>(x), negative_zeros);
    } else {
      add_chunked(xs, negative_zeros);
    }
  }

  // The chunks' loop over xs (allocating them on first use). Not inlined: the loop is the cost,
  // and inlined into add_windowed GCC 12 warned of undefined behaviour in iterations that the
  // span's size rules out.
  [[gnu::noinline]] void add_chunked(std::span<const T> xs, std::uint64_t& negative_zeros) {
    if (chunks_.empty()) chunks_.assign(num_chunks, 0);
    std::uint64_t* const chunks = chunks_.data();
    const std::size_t n = xs.size();
    std::size_t j = 0;
    // Input j goes to lane j % num_lanes; two rounds of lanes per iteration (measured faster).
    for (; j + 2 * num_lanes <= n; j += 2 * num_lanes) {
      for (std::size_t l = 0; l < 2 * num_lanes; ++l) {
        add_one(chunks + (l % num_lanes) * lane_chunks, std::bit_cast<Bits>(xs[j + l]),
                negative_zeros);
      }
    }
    for (; j < n; ++j) add_one(chunks, std::bit_cast<Bits>(xs[j]), negative_zeros);
  }

  // With AVX2 (core/exact_window.hpp): the whole blocks of xs, by the window path where it takes
  // them and by the chunks where not. Returns how many inputs it added (the rest: the tail).
  std::size_t add_windowed(std::span<const T> xs, std::uint64_t& negative_zeros) {
    constexpr std::size_t B = detail::exact_window_block, batch = 64;
    const std::size_t n = xs.size();
    std::size_t j = 0;
    detail::WindowSum sums[batch];
    while (n - j >= B) {
      const std::size_t got = detail::exact_window_blocks(xs.data() + j, n - j, sums, batch);
      for (std::size_t k = 0; k < got; ++k) {
        add_at(sums[k].shift, sums[k].lo);
        add_at(sums[k].shift + 32, sums[k].mid);
        add_at(sums[k].shift + 64, sums[k].hi);
      }
      j += got * B;
      if (got < batch && n - j >= B) {  // stopped before a block it cannot take
        add_chunked(xs.subspan(j, B), negative_zeros);
        j += B;
      }
    }
    return j;
  }

  // Adds v * 2^(bit + min_exponent) exactly, for |v| < 2^63 and a bit whose three digits stay
  // below the top limb (the window path's sums: bit <= its largest shift + 64, 2046 for double,
  // 225 for float): one digit below 2^32 into each of two limbs and one below 2^31 in magnitude
  // into the third.
  static_assert((std::is_same_v<T, double> ? 2046 : 225) / limb_bits + 2 < num_limbs - 1);
  void add_at(int bit, std::int64_t v) {
    const detail::int128 t = static_cast<detail::int128>(v) << (bit % limb_bits);  // |t| < 2^94
    const int i = bit / limb_bits;
    limbs_[i] += static_cast<std::int64_t>(static_cast<std::uint64_t>(t) & std::uint64_t(digit_mask));
    limbs_[i + 1] += static_cast<std::int64_t>(static_cast<std::uint64_t>(t >> limb_bits) & std::uint64_t(digit_mask));
    limbs_[i + 2] += static_cast<std::int64_t>(t >> (2 * limb_bits));
    count_limb_adds();
  }

  void count_limb_adds() {
    if (++adds_ >= max_adds_between_normalise) {
      limbs_ = limbs();  // folds the chunks in as well
      std::fill(chunks_.begin(), chunks_.end(), 0);
      adds_ = 0;
    }
  }

  void note_inputs(std::uint64_t n, std::uint64_t negative_zeros) {
    specials_.count += n;
    if (negative_zeros != n) specials_.all_negative_zero = false;
  }

  // A chunk wrapped around 2^64: book the lost 2^64 * weight (one digit, two limbs up) exactly.
  // (ix: the chunk's index within its lane.)
  [[gnu::noinline]] void book_chunk_carry(std::size_t ix) {
    const int e = static_cast<int>(ix & exp_mask);
    const int shift = (e == 0 ? 0 : e - 1) + 64;
    const std::int64_t digit = std::int64_t(1) << (shift % limb_bits);
    limbs_[shift / limb_bits] += ((ix >> Traits::exponent_bits) & 1) ? -digit : digit;
    count_limb_adds();
  }

  void add_to_chunk(std::uint64_t* lane, std::size_t ix, std::uint64_t m) {
    if (__builtin_add_overflow(lane[ix], m, &lane[ix])) [[unlikely]] book_chunk_carry(ix);
  }

  void add_special(Bits u) {
    if ((u & frac_mask) != 0) ++specials_.nan;
    else if (u >> sign_shift) ++specials_.neg_inf;
    else ++specials_.pos_inf;
  }

  // Zeros, subnormals, Inf, NaN: biased exponent field 0 or all ones.
  void add_rare(std::uint64_t* lane, Bits u, std::uint64_t& negative_zeros) {
    const Bits f = u & frac_mask;
    if (((u >> frac_bits) & exp_mask) != 0) return add_special(u);
    // A zero, or a subnormal f * 2^min_exponent: no hidden bit, the chunk of e == 0.
    if (f == 0) negative_zeros += u >> sign_shift;
    else add_to_chunk(lane, u >> frac_bits, f);
  }

  // A normal input x = (-1)^s * m * 2^(e - 1 + min_exponent) with m = f | hidden bit: its
  // significand goes, unshifted, into the chunk of its (s, e).
  void add_one(std::uint64_t* lane, Bits u, std::uint64_t& negative_zeros) {
    const Bits ix = u >> frac_bits;  // the sign and the exponent field
    // e == 0 or e == all ones, in one test: e + 1 is 0 or 1 modulo 2^exponent_bits.
    if (((ix + 1) & (exp_mask - 1)) == 0) [[unlikely]] {
      add_rare(lane, u, negative_zeros);
      return;
    }
    add_to_chunk(lane, ix, std::uint64_t((u & frac_mask) | (frac_mask + 1)));
  }

  // The path without chunks: the significand shifted into three limbs at once.
  void add_direct(Bits u, std::uint64_t& negative_zeros) {
    const Bits e = (u >> frac_bits) & exp_mask;
    const Bits f = u & frac_mask;
    if (e == exp_mask) return add_special(u);
    if (e == 0 && f == 0) {
      negative_zeros += u >> sign_shift;
      return;
    }
    const std::uint64_t m = e == 0 ? f : f | (frac_mask + 1);
    add_shifted(limbs_, e == 0 ? 0 : static_cast<int>(e) - 1, m, static_cast<int>(u >> sign_shift));
    count_limb_adds();
  }

  // Level 1: chunks_[lane][s e] = sum of the significands of the inputs with sign s and exponent
  // field e given to that lane, modulo 2^64 (each wrap is booked into limbs_ at once, so nothing
  // is lost). Empty until the first long span.
  std::vector<std::uint64_t> chunks_;
  // Level 2: limbs_, the layout of the public API; see the invariant in the header comment.
  Limbs limbs_;
  std::uint64_t adds_ = 0;  // limb-level adds since limbs_ was last normalised
  SpecialCounts specials_;
};

// The layout's rounding on its own, for the host and the device (a GPU kernel that holds the limbs
// rounds them where they are, with the same code, so its bits are the host's):
//   exact_normalise_limbs  carries every limb but the top one into [0, 2^32) (the top stays signed);
//   exact_round_limbs      the carry-normalised limbs d (changed: they become |S|) and the specials,
//                          correctly rounded to T with the IEEE special rules above.
template <class T> SUMLAB_HD void exact_normalise_limbs(std::int64_t* d) {
  constexpr int L = Superaccumulator<T>::num_limbs, bits = Superaccumulator<T>::limb_bits;
  constexpr std::int64_t digit_mask = (std::int64_t(1) << bits) - 1;
  std::int64_t carry = 0;
  for (int k = 0; k < L - 1; ++k) {
    const std::int64_t t = d[k] + carry;
    d[k] = t & digit_mask;
    carry = t >> bits;  // arithmetic shift: floor, so the digit stays in [0, 2^32)
  }
  d[L - 1] += carry;
}

template <class T> SUMLAB_HD T exact_round_limbs(std::int64_t* d, const SpecialCounts& specials) {
  using Traits = FloatTraits<T>;
  using Bits = typename Traits::Bits;
  constexpr int num_limbs = Superaccumulator<T>::num_limbs, limb_bits = Superaccumulator<T>::limb_bits;
  constexpr int min_exponent = Traits::min_subnormal_exp, precision = Traits::precision;
  constexpr int frac_bits = precision - 1, sign_shift = int(sizeof(T)) * 8 - 1;
  constexpr Bits exp_mask = (Bits(1) << Traits::exponent_bits) - 1;
  constexpr std::int64_t digit_mask = (std::int64_t(1) << limb_bits) - 1;
  if (specials.nan != 0 || (specials.pos_inf != 0 && specials.neg_inf != 0)) {
    return std::numeric_limits<T>::quiet_NaN();
  }
  if (specials.pos_inf != 0) return std::numeric_limits<T>::infinity();
  if (specials.neg_inf != 0) return -std::numeric_limits<T>::infinity();

  const bool negative = d[num_limbs - 1] < 0;
  if (negative) {  // work on |S|: negate every limb, then renormalise (the top becomes >= 0)
    std::int64_t carry = 0;
    for (int k = 0; k < num_limbs - 1; ++k) {
      const std::int64_t t = carry - d[k];
      d[k] = t & digit_mask;
      carry = t >> limb_bits;
    }
    d[num_limbs - 1] = carry - d[num_limbs - 1];
  }
  const Bits sign = negative ? Bits(1) << sign_shift : Bits(0);
  const Bits inf_bits = exp_mask << frac_bits;
  if (d[num_limbs - 1] != 0) return std::bit_cast<T>(Bits(sign | inf_bits));

  int top = num_limbs - 2;
  while (top >= 0 && d[top] == 0) --top;
  if (top < 0) {
    const bool neg_zero = specials.count != 0 && specials.all_negative_zero;
    return neg_zero ? -T(0) : T(0);
  }
  // Bit b of |S| weighs 2^(b + min_exponent); B is the leading one.
  const int B =
      limb_bits * top + detail::bit_width(static_cast<std::uint64_t>(d[top])) - 1;
  if (B + min_exponent > Traits::emax) return std::bit_cast<T>(Bits(sign | inf_bits));

  // Bits of |S| in [lo, lo + len), len <= 64: three digits always cover them (lo % 32 + 64 <= 96).
  auto extract = [d](int lo, int len) {
    const int j = lo / limb_bits;
    detail::uint128 w = 0;
    for (int t = 2; t >= 0; --t) {
      w <<= limb_bits;
      if (j + t < num_limbs - 1) w |= static_cast<std::uint64_t>(d[j + t]);
    }
    w >>= lo % limb_bits;
    return static_cast<std::uint64_t>(w & ((static_cast<detail::uint128>(1) << len) - 1));
  };
  auto any_below = [d](int b) {  // any of bits 0 .. b-1 set
    const int j = b / limb_bits;
    for (int k = 0; k < j; ++k) {
      if (d[k] != 0) return true;
    }
    return (d[j] & ((std::int64_t(1) << (b % limb_bits)) - 1)) != 0;
  };

  // The result's last kept bit: p bits below the leading one, but never below bit 0 (2^min_exp,
  // the subnormal spacing), which is where subnormal results get fewer bits.
  const int q = B - (precision - 1) > 0 ? B - (precision - 1) : 0;
  const std::uint64_t M = extract(q, B - q + 1);
  bool round_up = false;
  if (q > 0) {
    const bool half = extract(q - 1, 1) != 0;
    round_up = half && ((M & 1) != 0 || any_below(q - 1));
  }
  // (q << frac_bits) + M is the IEEE encoding of M * 2^(q + min_exponent) for normal and
  // subnormal results alike (the hidden bit carries into the exponent field); adding the rounding
  // increment carries through the exponent too, reaching the Inf encoding exactly when IEEE
  // rounding overflows.
  const Bits bits = static_cast<Bits>((Bits(q) << frac_bits) + Bits(M) + Bits(round_up ? 1 : 0));
  return std::bit_cast<T>(Bits(sign | bits));
}

template <class T> T Superaccumulator<T>::round() const {
  Limbs d = limbs();
  return exact_round_limbs<T>(d.data(), specials_);
}

// The exact sum of x correctly rounded to T (see Superaccumulator).
template <class T> T exact_sum(std::span<const T> x) {
  Superaccumulator<T> acc;
  acc.add(x);
  return acc.round();
}

}  // namespace sumlab
