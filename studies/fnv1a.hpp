#pragma once
// FNV-1a (64-bit) over bytes, as hex: the identity a run's plan gives to what it cannot name by
// value (the plan itself, the user's data, a plugin's library), so that --resume with other
// contents is refused. Not cryptographic: it tells versions apart, it does not resist forgery.
#include <cstddef>
#include <cstdint>
#include <string>

#include <fmt/format.h>

namespace sumlab {

class Fnv1a64 {
 public:
  Fnv1a64& add(const void* data, std::size_t bytes) {
    const auto* p = static_cast<const unsigned char*>(data);
    for (std::size_t i = 0; i < bytes; ++i) h_ = (h_ ^ p[i]) * 0x100000001b3ull;
    return *this;
  }
  std::string hex() const { return fmt::format("{:016x}", h_); }

 private:
  std::uint64_t h_ = 0xcbf29ce484222325ull;
};

}  // namespace sumlab
