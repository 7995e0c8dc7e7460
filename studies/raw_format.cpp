#include "studies/raw_format.hpp"

#include <fmt/format.h>

#include <cstdint>
#include <vector>

#include "studies/byte_order.hpp"
#include "studies/input_error.hpp"

namespace sumlab {
namespace {

template <class T> std::vector<T> decode(std::span<const char> bytes) {
  std::vector<T> out(bytes.size() / sizeof(T));
  for (std::size_t i = 0; i < out.size(); ++i) out[i] = load_element<T>(bytes.data() + i * sizeof(T), false);
  return out;
}

}  // namespace

void check_raw(std::uint64_t bytes, const ReadOptions& opts, std::string_view name) {
  if (!opts.dtype) input_error(name, "raw binary input needs --dtype float32|float64");
  const std::uint64_t size = *opts.dtype == Dtype::float32 ? 4 : 8;
  if (bytes % size != 0)
    input_error(name, fmt::format("{} bytes is not a whole number of {}-byte {} elements", bytes, size,
                                  to_string(*opts.dtype)));
}

Array parse_raw(std::span<const char> bytes, const ReadOptions& opts, std::string_view name) {
  check_raw(bytes.size(), opts, name);
  if (*opts.dtype == Dtype::float32) return decode<float>(bytes);
  return decode<double>(bytes);
}

}  // namespace sumlab
