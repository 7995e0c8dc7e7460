#pragma once
// The special-value cases every algorithm and kernel is documented and tested on: signed zeros,
// infinities, NaN, Inf - Inf, and finite inputs whose sum (or a partial sum) overflows. IEEE 754
// fixes the answer for each (round to nearest: x + (-x) = +0, -0 + -0 = -0, Inf - Inf = NaN, NaN
// propagates, a finite sum past the largest value rounds to Inf); `sumlab specials` prints what
// each algorithm actually returns (docs/special-values.md is that output) and
// tests/core/special_values_test.cpp pins the rules each one keeps.
#include <array>
#include <limits>
#include <string_view>
#include <vector>

namespace sumlab {

struct SpecialCase {
  std::string_view label;        // short, for a table header
  std::string_view description;  // the input, spelled out
};

inline constexpr std::array<SpecialCase, 16> special_cases{{
    {"empty", "n = 0"},
    {"-0", "one -0"},
    {"-0 x300", "300 copies of -0 (long enough for blocked and GPU paths)"},
    {"+0,-0", "+0 then -0"},
    {"1,-1", "1 then -1: an exact zero by cancellation"},
    {"Inf,1", "+Inf then 1"},
    {"1,Inf", "1 then +Inf"},
    {"1,1,Inf", "1, 1, then +Inf"},
    {"-Inf,1x299", "-Inf then 299 ones"},
    {"1x299,-Inf", "299 ones then -Inf"},
    {"Inf,-Inf", "+Inf then -Inf"},
    {"NaN,1", "NaN then 1"},
    {"1x150,NaN,1x149", "a NaN in the middle of 300 ones"},
    {"max,max", "the largest finite value twice: the exact sum overflows"},
    {"-max x3", "minus the largest value three times: the exact sum overflows to -Inf"},
    {"max,max,-max", "the exact sum is max, but max + max overflows on the way"},
}};

// The input of case i in T.
template <class T> std::vector<T> special_input(std::size_t i) {
  const T inf = std::numeric_limits<T>::infinity(), nan = std::numeric_limits<T>::quiet_NaN();
  const T max = std::numeric_limits<T>::max();
  std::vector<T> ones(299, T(1));
  switch (i) {
    case 0: return {};
    case 1: return {-T(0)};
    case 2: return std::vector<T>(300, -T(0));
    case 3: return {T(0), -T(0)};
    case 4: return {T(1), T(-1)};
    case 5: return {inf, T(1)};
    case 6: return {T(1), inf};
    case 7: return {T(1), T(1), inf};
    case 8: ones.insert(ones.begin(), -inf); return ones;
    case 9: ones.push_back(-inf); return ones;
    case 10: return {inf, -inf};
    case 11: return {nan, T(1)};
    case 12: {
      std::vector<T> x(300, T(1));
      x[150] = nan;
      return x;
    }
    case 13: return {max, max};
    case 14: return {-max, -max, -max};
    case 15: return {max, max, -max};
  }
  return {};
}

}  // namespace sumlab
