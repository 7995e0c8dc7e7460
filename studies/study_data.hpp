#pragma once
// The user's data as a study's input (--input FILE, or "mem:NAME" for a Python array): read where
// it lies when it can be (studies/input_file.hpp), recorded in the run's plan by its source,
// dtype, length and hash, so that --resume with other data is refused, and checked at the study's
// end, since data read in place could change while the study reads it.
#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "studies/input_file.hpp"

namespace sumlab {

struct StudyData {
  std::shared_ptr<const InputData> input;
  std::string source;  // the path, or "an array from Python" (its registered name changes from call to call)
  std::string hash;               // InputData::identity's FNV-1a when opened (the plan's identity of the data)
  std::uint64_t fingerprint = 0;  // InputData::fingerprint when opened

  std::string dtype() const { return input->is_float32() ? "float32" : "float64"; }
  std::size_t size() const { return input->size(); }
  // The values as T, which must be their dtype.
  template <class T> std::span<const T> values() const { return input->values<T>(); }
  // The plan's "input": {source, dtype, n, fnv1a64}, and "widened_from" (InputData::origin) where
  // there is one.
  nlohmann::ordered_json plan() const;
  // The dtypes a study of the data runs: its own. One of `asked` naming another is refused, as
  // `sum --input` refuses a --dtype the file does not hold, rather than measuring the data's type
  // under the name of the one asked for.
  std::vector<std::string> dtypes(const std::vector<std::string>& asked) const;
  // The dtypes the row kernels (study variance) run on the data: by default its own, bfloat16 for
  // a bfloat16 array (float16 has no row kernels: its rows need --dtypes float32). Asked for:
  // float32 for data held as float32 (float16 and bfloat16 values widened exactly), and bfloat16
  // for float32 data (.npy has no bfloat16; the caller checks that every value is a bfloat16 one).
  std::vector<std::string> row_dtypes(const std::vector<std::string>& asked) const;
  // Throws UserError when data read in place changed since it was opened: the rows written since
  // mix two inputs, and the study ends with that reason instead of a summary.
  void check_unchanged() const;
};

// nullopt without `input`. Throws UserError (exit 2) for data that cannot be read or holds fewer
// than `min_values` values. format and flatten as --format and --flatten.
std::optional<StudyData> open_study_data(const std::string& input, const std::string& format, const std::string& flatten,
                                         std::size_t min_values = 1);

// Sizes for the user's data: those asked that are shorter than it, and its whole length.
template <class N> std::vector<N> data_sizes(std::vector<N> sizes, N length) {
  std::erase_if(sizes, [&](N n) { return n >= length; });
  sizes.push_back(length);
  return sizes;
}

}  // namespace sumlab
