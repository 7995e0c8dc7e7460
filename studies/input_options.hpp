#pragma once
// The options that say what to sum: a generator (--dist, --n, --seed and its parameters,
// --order) or a file (--input, --format, --dtype, --flatten). Shared by `sumlab sum` and the
// studies.
#include <cstdint>
#include <string>
#include <vector>

#include "core/generators.hpp"
#include "studies/input_file.hpp"
#include "studies/memory_check.hpp"

namespace CLI {
class App;
class Option;
}  // namespace CLI

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
  // The generator's options as add_input_options added them: with --input, giving one is refused
  // (check_input_source), since a file's values are summed as they are.
  std::vector<const CLI::Option*> generator_options;
};

void add_input_options(CLI::App& cmd, InputOptions& opts);

// UserError when --input is given together with a generator option (--n, --dist, --seed, ...),
// which would have no effect on the file's values.
void check_input_source(const InputOptions& opts);

// A text option (a path, a type name) stored in `target`, whose empty value is refused with a
// UserError naming it: "" would otherwise read as the option left out (no file, the default type).
CLI::Option* add_text_option(CLI::App& cmd, const std::string& name, std::string& target, const std::string& help);

// A seed: decimal digits, 0..2^64-1. UserError naming `option` for a sign, another character or a
// value past 2^64-1 (which CLI11's integer conversion wraps or clamps without a word).
std::uint64_t parse_seed(const std::string& text, const std::string& option);
// `name` (a seed option) parsed by parse_seed into `seed`, its default shown in --help.
void add_seed_option(CLI::App& cmd, const std::string& name, std::uint64_t& seed, const std::string& help);

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
