#include "studies/size_text.hpp"

#include <stdexcept>

#include "studies/commands.hpp"

namespace sumlab {

std::int64_t parse_size(const std::string& text, const std::string& option) {
  try {
    std::size_t pos = 0;
    std::int64_t v = 0;
    if (text.rfind("2^", 0) == 0) {
      const int e = std::stoi(text.substr(2), &pos);
      if (e < 0 || e > 40) throw UserError(option + ": '" + text + "': the exponent must be 0..40");
      v = std::int64_t(1) << e;
      pos += 2;
      if (pos < text.size()) {
        std::size_t p2 = 0;
        const long long off = std::stoll(text.substr(pos), &p2);
        if (pos + p2 != text.size()) throw std::invalid_argument("trailing");
        v += off;
      }
    } else {
      v = std::stoll(text, &pos);
      if (pos != text.size()) throw std::invalid_argument("trailing");
    }
    if (v < 0) throw UserError(option + ": '" + text + "' is negative");
    return v;
  } catch (const std::logic_error&) {
    throw UserError(option + ": '" + text + "' is not a number, 2^k or 2^k+c");
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
