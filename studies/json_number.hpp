#pragma once
// JSON has no NaN or infinity: finite values become numbers, the rest the strings
// "nan", "inf", "-inf" (so that a reader never silently gets null).
#include <cmath>
#include <nlohmann/json.hpp>

namespace sumlab {

template <class T> nlohmann::ordered_json json_number(T v) {
  if (std::isnan(v)) return "nan";
  if (std::isinf(v)) return v > 0 ? "inf" : "-inf";
  return v;
}

}  // namespace sumlab
