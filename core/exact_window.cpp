// core/exact_window.hpp's block sums, with AVX2 intrinsics in functions compiled for AVX2 alone
// (the rest of the build keeps the default target), chosen at run time. Floats are widened to
// doubles in the lanes (exactly) and summed the same way.
#include "core/exact_window.hpp"

#include <type_traits>

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#define SUMLAB_EXACT_WINDOW 1
#include <immintrin.h>
#endif

namespace sumlab::detail {

#ifdef SUMLAB_EXACT_WINDOW

bool exact_window_available() {
  static const bool avx2 = __builtin_cpu_supports("avx2") != 0;
  return avx2;
}

// Bounds, for a block of 1024 inputs in 4 lanes of 256:
//   lo^mask's low and high 32-bit halves are < 2^32, so each lane's column sums stay below 2^40
//   and the block's below 2^42 (lo also takes the count of negative inputs, <= 1024);
//   hi = m >> (64 - s) < 2^52 (m < 2^53, s <= 63), so |hi^mask| <= 2^52 and the block's column
//   sum has magnitude <= 2^62.
static_assert(exact_window_block == 1024);

namespace {

// Four inputs as four doubles' bit patterns (a float widens exactly).
__attribute__((target("avx2"))) inline __m256i load4(const double* p) {
  return _mm256_loadu_si256(reinterpret_cast<const __m256i*>(p));
}
__attribute__((target("avx2"))) inline __m256i load4(const float* p) {
  return _mm256_castpd_si256(_mm256_cvtps_pd(_mm_loadu_ps(p)));
}

// T's sums are in units of T's smallest subnormal, 2^unit_shift times the double's.
template <class T> constexpr int unit_shift = std::is_same_v<T, double> ? 0 : 1074 - 149;

template <class T>
__attribute__((target("avx2"))) std::size_t window_blocks(const T* x, std::size_t n, WindowSum* out, std::size_t max_out) {
  constexpr std::size_t B = exact_window_block;
  const __m256i exp_mask = _mm256_set1_epi64x(0x7ff);
  const __m256i frac_mask = _mm256_set1_epi64x((std::int64_t(1) << 52) - 1);
  const __m256i hidden = _mm256_set1_epi64x(std::int64_t(1) << 52);
  const __m256i high_ones = _mm256_set1_epi64x(static_cast<std::int64_t>(0xffffffff00000000ull));
  const __m256i low32 = _mm256_set1_epi64x(0xffffffff);
  const __m256i sixty_four = _mm256_set1_epi64x(64);
  const __m256i zero = _mm256_setzero_si256();
  std::size_t blocks = 0;
  for (std::size_t b = 0; blocks < max_out && n - b >= B; b += B, ++blocks) {
    const T* const p = x + b;
    // Pass 1: the block's largest and smallest biased exponent. Each lane's exponent sits in the
    // low 32 bits of its 64-bit word (the high half is 0), so 32-bit max/min see it; for the min
    // the high halves are set to all ones, out of the way.
    __m256i e_max = zero, e_min = _mm256_set1_epi32(-1);
    for (std::size_t i = 0; i < B; i += 4) {
      const __m256i e = _mm256_and_si256(_mm256_srli_epi64(load4(p + i), 52), exp_mask);
      e_max = _mm256_max_epu32(e_max, e);
      e_min = _mm256_min_epu32(e_min, _mm256_or_si256(e, high_ones));
    }
    alignas(32) std::uint32_t hi32[8], lo32[8];
    _mm256_store_si256(reinterpret_cast<__m256i*>(hi32), e_max);
    _mm256_store_si256(reinterpret_cast<__m256i*>(lo32), e_min);
    std::uint32_t E = 0, e_low = 0x7ff;
    for (int l = 0; l < 8; l += 2) {
      E = hi32[l] > E ? hi32[l] : E;
      e_low = lo32[l] < e_low ? lo32[l] : e_low;
    }
    // Zeros and subnormals (0), Inf and NaN (0x7ff), a spread over 63, or a sum below T's
    // smallest subnormal's units (E - 64 < unit_shift): not taken.
    if (e_low == 0 || E == 0x7ff || E < 64 + unit_shift<T> || E - e_low > 63) break;
    // Pass 2: the sum, from L1, while the next block is asked for (measured: without the
    // prefetch the two passes left memory idle half the time).
    const bool ahead = n - b >= 2 * B;
    const __m256i base = _mm256_set1_epi64x(static_cast<std::int64_t>(E) - 63);
    __m256i col_lo = zero, col_mid = zero, col_hi = zero, negatives = zero;
    for (std::size_t i = 0; i < B; i += 4) {
      if (ahead && (i & 7) == 0) _mm_prefetch(reinterpret_cast<const char*>(p + B + i), _MM_HINT_T0);
      const __m256i u = load4(p + i);
      const __m256i s = _mm256_sub_epi64(_mm256_and_si256(_mm256_srli_epi64(u, 52), exp_mask), base);  // 0 .. 63
      const __m256i m = _mm256_or_si256(_mm256_and_si256(u, frac_mask), hidden);
      const __m256i sign = _mm256_cmpgt_epi64(zero, u);  // all ones for a negative input
      const __m256i lo = _mm256_xor_si256(_mm256_sllv_epi64(m, s), sign);
      const __m256i hi = _mm256_xor_si256(_mm256_srlv_epi64(m, _mm256_sub_epi64(sixty_four, s)), sign);  // 64 - s = 64 gives 0
      col_lo = _mm256_add_epi64(col_lo, _mm256_and_si256(lo, low32));
      col_mid = _mm256_add_epi64(col_mid, _mm256_srli_epi64(lo, 32));
      col_hi = _mm256_add_epi64(col_hi, hi);
      negatives = _mm256_sub_epi64(negatives, sign);
    }
    alignas(32) std::int64_t c_lo[4], c_mid[4], c_hi[4], c_neg[4];
    _mm256_store_si256(reinterpret_cast<__m256i*>(c_lo), col_lo);
    _mm256_store_si256(reinterpret_cast<__m256i*>(c_mid), col_mid);
    _mm256_store_si256(reinterpret_cast<__m256i*>(c_hi), col_hi);
    _mm256_store_si256(reinterpret_cast<__m256i*>(c_neg), negatives);
    WindowSum& w = out[blocks];
    w = WindowSum{};
    for (int l = 0; l < 4; ++l) {
      w.lo += c_lo[l] + c_neg[l];
      w.mid += c_mid[l];
      w.hi += c_hi[l];
    }
    w.shift = static_cast<int>(E) - 64 - unit_shift<T>;
  }
  return blocks;
}

}  // namespace

std::size_t exact_window_blocks(const double* x, std::size_t n, WindowSum* out, std::size_t max_out) {
  return window_blocks(x, n, out, max_out);
}
std::size_t exact_window_blocks(const float* x, std::size_t n, WindowSum* out, std::size_t max_out) {
  return window_blocks(x, n, out, max_out);
}

#else

bool exact_window_available() { return false; }
std::size_t exact_window_blocks(const double*, std::size_t, WindowSum*, std::size_t) { return 0; }
std::size_t exact_window_blocks(const float*, std::size_t, WindowSum*, std::size_t) { return 0; }

#endif

}  // namespace sumlab::detail
