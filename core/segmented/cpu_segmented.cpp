// The three CPU segmented sums; their order, bounds and failures are in cpu_segmented.hpp.
#include "core/segmented/cpu_segmented.hpp"

#include <limits>

namespace sumlab::segmented {

template <class T> std::vector<T> serial_per_segment(std::span<const T> x, std::span<const Offset> offsets) {
  validate_offsets(offsets, x.size());
  std::vector<T> out(offsets.size() - 1);
  for (std::size_t j = 0; j + 1 < offsets.size(); ++j) {
    T acc = T(0);
    for (auto i = offsets[j]; i < offsets[j + 1]; ++i) acc += x[static_cast<std::size_t>(i)];
    out[j] = acc;
  }
  return out;
}

template <class T> std::vector<T> prefix_difference(std::span<const T> x, std::span<const Offset> offsets) {
  validate_offsets(offsets, x.size());
  std::vector<T> c(x.size() + 1);
  c[0] = T(0);
  for (std::size_t i = 0; i < x.size(); ++i) c[i + 1] = c[i] + x[i];
  std::vector<T> out(offsets.size() - 1);
  for (std::size_t j = 0; j + 1 < offsets.size(); ++j)
    out[j] = c[static_cast<std::size_t>(offsets[j + 1])] - c[static_cast<std::size_t>(offsets[j])];
  return out;
}

template <class T> std::vector<T> reduceat(std::span<const T> x, std::span<const Offset> offsets) {
  validate_offsets(offsets, x.size());
  const std::size_t segments = offsets.size() - 1, n = x.size();
  std::vector<T> out(segments);
  for (std::size_t j = 0; j < segments; ++j) {
    const auto b = static_cast<std::size_t>(offsets[j]);
    // numpy's rule: the end is the next index, or n for the last one; an end <= start means
    // "just x[start]".
    const std::size_t e = j + 1 < segments ? static_cast<std::size_t>(offsets[j + 1]) : n;
    if (b >= n) {
      out[j] = std::numeric_limits<T>::quiet_NaN();  // numpy: IndexError
    } else if (e <= b) {
      out[j] = x[b];
    } else {
      T acc = x[b];
      for (std::size_t i = b + 1; i < e; ++i) acc += x[i];
      out[j] = acc;
    }
  }
  return out;
}

#define SUMLAB_CPU_SEGMENTED(T)                                                                  \
  template std::vector<T> serial_per_segment<T>(std::span<const T>, std::span<const Offset>);   \
  template std::vector<T> prefix_difference<T>(std::span<const T>, std::span<const Offset>);    \
  template std::vector<T> reduceat<T>(std::span<const T>, std::span<const Offset>);
SUMLAB_CPU_SEGMENTED(float)
SUMLAB_CPU_SEGMENTED(double)
#undef SUMLAB_CPU_SEGMENTED

}  // namespace sumlab::segmented
