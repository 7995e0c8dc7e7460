#pragma once
// What the file readers produce and what they are told: the element type summed, the array
// (a vector of it) and how a multi-dimensional array becomes that vector.
#include <optional>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

namespace sumlab {

// The type that is summed. A float16 .npy file is widened (exactly) to float32.
enum class Dtype { float32, float64 };
Dtype parse_dtype(const std::string& name);  // "float32"/"f4"/"float", "float64"/"f8"/"double"
const char* to_string(Dtype d);

using Array = std::variant<std::vector<float>, std::vector<double>>;

// How an array with two or more dimensions longer than 1 is read as one sequence. There is no
// default: summing a table in an order the user did not choose would be a silent reorder.
//   c: row-major, the last index fastest (a CSV table row by row);
//   f: column-major, the first index fastest (a CSV table column by column).
enum class Flatten { none, c, f };
Flatten parse_flatten(const std::string& text);  // "", "C" or "F"
const char* to_string(Flatten f);                // "", "C" or "F"

struct ReadOptions {
  std::string format;          // npy | csv | raw | "" or "auto" (from the extension)
  std::optional<Dtype> dtype;  // raw: required; csv: the target (float32 when absent);
                               // npy: checked against the header's
  Flatten flatten = Flatten::none;
};

}  // namespace sumlab
