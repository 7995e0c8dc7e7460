#include "studies/input_array.hpp"

#include "studies/commands.hpp"

namespace sumlab {

Dtype parse_dtype(const std::string& name) {
  if (name == "float32" || name == "f4" || name == "float") return Dtype::float32;
  if (name == "float64" || name == "f8" || name == "double") return Dtype::float64;
  throw UserError("unsupported dtype '" + name +
                  "' (use float32 or float64; a float16 .npy file is read as float32)");
}

const char* to_string(Dtype d) { return d == Dtype::float32 ? "float32" : "float64"; }

Flatten parse_flatten(const std::string& text) {
  if (text.empty()) return Flatten::none;
  if (text == "C") return Flatten::c;
  if (text == "F") return Flatten::f;
  throw UserError("--flatten must be C (row-major) or F (column-major), not '" + text + "'");
}

const char* to_string(Flatten f) { return f == Flatten::c ? "C" : f == Flatten::f ? "F" : ""; }

}  // namespace sumlab
