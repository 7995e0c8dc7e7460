#pragma once
// What a summation returns: its value plus whatever it has to report about itself.
#include <string>

namespace sumlab {

template <class T> struct SumResult {
  T value{};
  // An algorithm-specific absolute error term that the generic bound cannot know, such as the
  // quantization error of a fixed-point sum (0 when there is none).
  double extra_error_bound = 0;
  // Human-readable notes, e.g. "scale 2^-40, 3 elements lost low bits (max 12 bits), no overflow".
  std::string diagnostics;
};

}  // namespace sumlab
