#pragma once
// Raw binary input: little-endian float32 or float64 values back to back, nothing else, so the
// type must be given (ReadOptions::dtype) and the size must be a whole number of elements.
#include <cstdint>
#include <span>
#include <string_view>

#include "studies/input_array.hpp"

namespace sumlab {

// Throws UserError naming `name` when the dtype is missing or the size is not a whole number of
// elements.
void check_raw(std::uint64_t bytes, const ReadOptions& opts, std::string_view name);
Array parse_raw(std::span<const char> bytes, const ReadOptions& opts, std::string_view name);

}  // namespace sumlab
