#pragma once
// Sizes on the command line and in tables: "1000", "2^20", "2^20+3", "2^24-1".
#include <cstdint>
#include <string>

namespace sumlab {

// Throws UserError naming the option and the text when it is not a number, 2^k or 2^k+c
// (k in 0..40, result >= 0).
std::int64_t parse_size(const std::string& text, const std::string& option = "size");
// 2^k or 2^k+c (c <= 16) for k >= 10, else the plain number.
std::string size_text(std::int64_t n);

}  // namespace sumlab
