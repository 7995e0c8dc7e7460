#pragma once
// The options that say what to sum: a generator (--dist, --n, --seed and its parameters,
// --order) or a file (--input, --format, --dtype, --flatten). Shared by `sumlab sum` and the
// studies.
#include <cstdint>
#include <string>

#include "core/generators.hpp"
#include "studies/input_file.hpp"
#include "studies/memory_check.hpp"

namespace CLI { class App; }

namespace sumlab {

struct InputOptions {
  std::string dist = "uniform";
  std::uint64_t n = 1u << 20;  // --n: N, 2^k, 2^k+c, 2^k-c or 1e8 (studies/size_text.hpp)
  std::uint64_t seed = 1;
  double lo = 0, hi = 1, mu = 0, sigma = 1, value = 0.1, condition = 1e10;
  std::string order = "as_generated";
  std::string input;   // a file instead of a generator
  std::string format;  // npy | csv | raw | "" (from the extension)
  std::string dtype;   // float32 | float64 | "" (float32, or the .npy header's)
  std::string flatten;  // C | F | "": how a 2-D (or more) file becomes one sequence
};

void add_input_options(CLI::App& cmd, InputOptions& opts);

// What --format, --dtype and --flatten ask of a file (UserError for a bad value).
ReadOptions read_options(const InputOptions& opts);

// The generator the options name, its parameters checked (UserError).
DistributionSpec distribution_spec(const InputOptions& opts);

// Generates or reads the array. Throws UserError on bad input, and ResourceError for an n (or a
// file) that cannot fit in this machine's memory (checked before allocating).
Array load_input(const InputOptions& opts);

// "uniform[0,1) n=1048576 seed=1" or "file x.npy": for headers and provenance.
std::string describe_input(const InputOptions& opts, std::size_t n);

}  // namespace sumlab
