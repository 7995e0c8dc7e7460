#pragma once
// Loading a stored element of either byte order, whatever this machine's own: the bytes are
// copied (no alignment assumed) and reversed when the file's order differs from the host's.
#include <algorithm>
#include <bit>
#include <cstring>

namespace sumlab {

template <class U> U load_element(const char* p, bool big_endian) {
  unsigned char b[sizeof(U)];
  std::memcpy(b, p, sizeof(U));
  if (big_endian != (std::endian::native == std::endian::big)) std::reverse(b, b + sizeof(U));
  U v;
  std::memcpy(&v, b, sizeof(U));
  return v;
}

}  // namespace sumlab
