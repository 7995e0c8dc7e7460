#pragma once
// Size arithmetic that cannot wrap: a count times an element size, a product of dimensions.
// Unsigned 64-bit arithmetic wraps silently (2305843009213693953 * 8 == 8), so every size that
// comes from a user, a file header or a command line goes through these before it is compared
// or allocated.
#include <cstdint>
#include <limits>
#include <optional>

namespace sumlab {

// a * b, or nothing when the product does not fit in 64 bits.
inline std::optional<std::uint64_t> checked_mul(std::uint64_t a, std::uint64_t b) {
  std::uint64_t r;
  if (__builtin_mul_overflow(a, b, &r)) return std::nullopt;
  return r;
}

// a + b, or nothing when the sum does not fit in 64 bits.
inline std::optional<std::uint64_t> checked_add(std::uint64_t a, std::uint64_t b) {
  std::uint64_t r;
  if (__builtin_add_overflow(a, b, &r)) return std::nullopt;
  return r;
}

// a * b, or 2^64 - 1 when it does not fit: for a count that only feeds a further checked
// product (a memory estimate), where "too many" is all that matters.
inline std::uint64_t saturating_mul(std::uint64_t a, std::uint64_t b) {
  return checked_mul(a, b).value_or(std::numeric_limits<std::uint64_t>::max());
}

}  // namespace sumlab
