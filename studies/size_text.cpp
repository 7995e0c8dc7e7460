#include "studies/size_text.hpp"

#include <limits>
#include <optional>
#include <string_view>

#include "studies/checked_math.hpp"
#include "studies/commands.hpp"

namespace sumlab {
namespace {

constexpr std::uint64_t kMax = std::numeric_limits<std::int64_t>::max();

bool all_digits(std::string_view s) {
  if (s.empty()) return false;
  for (char c : s)
    if (c < '0' || c > '9') return false;
  return true;
}

// Decimal digits as a number, or nothing past 2^63 - 1.
std::optional<std::uint64_t> digits_value(std::string_view s) {
  std::uint64_t v = 0;
  for (char c : s) {
    const auto m = checked_mul(v, 10);
    const auto a = m ? checked_add(*m, static_cast<std::uint64_t>(c - '0')) : std::nullopt;
    if (!a || *a > kMax) return std::nullopt;
    v = *a;
  }
  return v;
}

struct Failure {
  const char* why;
};
// The one failure that lists the accepted forms.
constexpr const char* kNotANumber = "is not a number";

// "2^k", "2^k+c", "2^k-c" after the "2^".
std::uint64_t power_form(std::string_view rest) {
  const std::size_t op = rest.find_first_of("+-");
  const std::string_view k_text = rest.substr(0, op);
  if (!all_digits(k_text)) throw Failure{kNotANumber};
  const auto k = digits_value(k_text);
  if (!k || *k > 62) throw Failure{"is too large (the exponent of 2^k must be 0..62)"};
  const std::uint64_t p = std::uint64_t{1} << *k;
  if (op == std::string_view::npos) return p;
  const std::string_view c_text = rest.substr(op + 1);
  if (!all_digits(c_text)) throw Failure{kNotANumber};
  const auto c = digits_value(c_text);
  if (!c) throw Failure{"is too large (at most 2^63-1)"};
  if (rest[op] == '-') {
    if (*c > p) throw Failure{"is negative"};
    return p - *c;
  }
  const auto sum = checked_add(p, *c);
  if (!sum || *sum > kMax) throw Failure{"is too large (at most 2^63-1)"};
  return *sum;
}

// "123", "1e8", "2.5e3", "1500e-1", "100.0": digits with an optional fraction and exponent,
// whose value must be an integer.
std::uint64_t decimal_form(std::string_view s) {
  const std::size_t e = s.find_first_of("eE");
  const std::string_view mantissa = s.substr(0, e);
  const std::size_t dot = mantissa.find('.');
  std::string digits(mantissa.substr(0, dot));
  std::string_view fraction = dot == std::string_view::npos ? "" : mantissa.substr(dot + 1);
  if ((!digits.empty() && !all_digits(digits)) || (!fraction.empty() && !all_digits(fraction)) ||
      (digits.empty() && fraction.empty()))
    throw Failure{kNotANumber};
  // The value is digits * 10^scale, digits without the decimal point.
  std::int64_t scale = -static_cast<std::int64_t>(fraction.size());
  digits += fraction;
  if (e != std::string_view::npos) {
    std::string_view exp = s.substr(e + 1);
    bool negative = false;
    if (!exp.empty() && (exp[0] == '+' || exp[0] == '-')) {
      negative = exp[0] == '-';
      exp.remove_prefix(1);
    }
    if (!all_digits(exp)) throw Failure{kNotANumber};
    // An exponent of more than 7 digits is beyond every range here: cap it before converting.
    const std::int64_t x = exp.size() > 7 ? 10'000'000 : static_cast<std::int64_t>(*digits_value(exp));
    scale += negative ? -x : x;
  }
  // Trailing zeros move into the scale, leading zeros go: what is left is the exact significand.
  while (!digits.empty() && digits.back() == '0') {
    digits.pop_back();
    ++scale;
  }
  const std::size_t first = digits.find_first_not_of('0');
  if (first == std::string::npos) return 0;
  digits.erase(0, first);
  if (scale < 0) throw Failure{"is not a whole number"};  // its last digit is not 0
  auto v = digits_value(digits);
  for (std::int64_t i = 0; v && i < scale; ++i) {
    v = checked_mul(*v, 10);
    if (v && *v > kMax) v.reset();
  }
  if (!v) throw Failure{"is too large (at most 2^63-1)"};
  return *v;
}

}  // namespace

std::int64_t parse_size(const std::string& text, const std::string& option) {
  const std::string_view s(text);
  try {
    if (!s.empty() && s[0] == '-') throw Failure{"is negative"};
    if (s.rfind("2^", 0) == 0) return static_cast<std::int64_t>(power_form(s.substr(2)));
    return static_cast<std::int64_t>(decimal_form(s));
  } catch (const Failure& f) {
    throw UserError(option + ": '" + text + "' " + f.why +
                    (f.why == kNotANumber ? " (N, 2^k, 2^k+c, 2^k-c or 1e8)" : ""));
  }
}

std::string size_text(std::int64_t n) {
  for (int e = 10; e <= 40; ++e) {
    const std::int64_t p = std::int64_t(1) << e;
    if (n == p) return "2^" + std::to_string(e);
    if (n > p && n - p <= 16) return "2^" + std::to_string(e) + "+" + std::to_string(n - p);
  }
  return std::to_string(n);
}

}  // namespace sumlab
