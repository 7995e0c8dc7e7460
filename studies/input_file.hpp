#pragma once
// Reading an array to sum from a file: NumPy .npy (float32/float64, either byte order, any
// C-order shape, flattened), raw little-endian binary (dtype given by the caller) or text/CSV
// (numbers separated by commas, whitespace or newlines). Elements are summed in file order.
// Every failure throws sumlab::UserError with a one-line message naming the file.
#include <string>
#include <variant>
#include <vector>

namespace sumlab {

enum class Dtype { float32, float64 };
Dtype parse_dtype(const std::string& name);  // "float32"/"f4"/"float", "float64"/"f8"/"double"
const char* to_string(Dtype d);

using Array = std::variant<std::vector<float>, std::vector<double>>;

// `dtype` is required for raw binary, the target type for CSV, and checked against (or, when
// empty, taken from) the header of an .npy file.
Array read_array(const std::string& path, const std::string& format, const std::string& dtype);

}  // namespace sumlab
