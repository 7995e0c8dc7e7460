#pragma once
// Sizes on the command line and in tables: "1000", "2^20", "2^20+3", "2^24-1", "1e8", "2.5e3".
#include <cstdint>
#include <string>

namespace sumlab {

// An element count from text: N; 2^k, 2^k+c or 2^k-c (k in 0..62); or a decimal with an exponent
// that is an exact integer (1e8, 2.5e3, 1500e-1). The result must be in 0..2^63-1, computed
// without wrapping. Throws UserError naming `option` and the text for anything else: a sign, a
// fraction ("1.5", "1e-3"), overflow ("2^63", "1e19") or not a size at all.
std::int64_t parse_size(const std::string& text, const std::string& option = "size");
// 2^k or 2^k+c (c <= 16) for k >= 10, else the plain number.
std::string size_text(std::int64_t n);

}  // namespace sumlab
