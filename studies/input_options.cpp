#include "studies/input_options.hpp"

#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include <cmath>
#include <cstdlib>
#include <limits>
#include <stdexcept>

#include "core/generators.hpp"
#include "studies/commands.hpp"
#include "studies/input_error.hpp"
#include "studies/size_text.hpp"

namespace sumlab {

namespace {

// True for the literals that name an infinity on purpose ("inf", "-Infinity"), which strtold
// accepts as a float literal of their own.
bool names_infinity(const std::string& text) {
  std::size_t i = text.find_first_not_of(" \t\n\v\f\r");  // what strtold skips
  if (i != std::string::npos && (text[i] == '+' || text[i] == '-')) ++i;
  if (i == std::string::npos || text.size() - i < 3) return false;
  std::string word = text.substr(i, 3);
  for (char& c : word) c = static_cast<char>(c | 0x20);
  return word == "inf";
}

// A real number as CLI11 reads one (strtold: decimal, hex floats, inf, nan), except that a finite
// literal beyond float64's range is refused instead of becoming an infinity.
double parse_real(const std::string& text, const std::string& option) {
  if (text.empty()) throw UserError(option + ": the value is empty");
  char* end = nullptr;
  const long double v = std::strtold(text.c_str(), &end);
  if (end != text.c_str() + text.size()) throw UserError(option + ": " + excerpt(text) + " is not a number");
  const auto d = static_cast<double>(v);
  if (std::isinf(d) && !names_infinity(text))
    throw UserError(fmt::format("{}: {} overflows float64 (largest finite {:g}); give inf for an infinity", option,
                                excerpt(text), std::numeric_limits<double>::max()));
  return d;
}

CLI::Option* add_real_option(CLI::App& cmd, const std::string& name, double& target, const std::string& help) {
  return cmd
      .add_option_function<std::string>(
          name, [&target, name](const std::string& text) { target = parse_real(text, name); }, help)
      ->default_str(fmt::format("{}", target));
}

}  // namespace

CLI::Option* add_text_option(CLI::App& cmd, const std::string& name, std::string& target, const std::string& help) {
  return cmd.add_option_function<std::string>(
      name,
      [&target, name](const std::string& text) {
        if (text.empty()) throw UserError(name + ": the value is empty");
        target = text;
      },
      help);
}

std::uint64_t parse_seed(const std::string& text, const std::string& option) {
  constexpr std::uint64_t max = std::numeric_limits<std::uint64_t>::max();
  if (text.empty()) throw UserError(option + ": the value is empty");
  if (text[0] == '-')
    throw UserError(fmt::format("{}: {} is negative (a seed is 0..{})", option, excerpt(text), max));
  // A leading zero read as octal before seeds were read here (010 was 8): refused, never reread.
  if (text.size() > 1 && text[0] == '0')
    throw UserError(fmt::format("{}: {} has a leading zero (older sumlab read it as octal); write the seed in "
                                "decimal without one",
                                option, excerpt(text)));
  std::uint64_t v = 0;
  for (char c : text) {
    if (c < '0' || c > '9')
      throw UserError(fmt::format("{}: {} is not a whole number (a seed is 0..{})", option, excerpt(text), max));
    const auto digit = static_cast<std::uint64_t>(c - '0');
    if (v > (max - digit) / 10)
      throw UserError(fmt::format("{}: {} is too large (at most {})", option, excerpt(text), max));
    v = v * 10 + digit;
  }
  return v;
}

void add_seed_option(CLI::App& cmd, const std::string& name, std::uint64_t& seed, const std::string& help) {
  cmd.add_option_function<std::string>(
         name, [&seed, name](const std::string& text) { seed = parse_seed(text, name); }, help)
      ->default_str(std::to_string(seed));
}

void check_input_source(const InputOptions& o) {
  if (o.input.empty()) return;
  for (const CLI::Option* opt : o.generator_options)
    if (opt->count() > 0)
      throw UserError(fmt::format("{} has no effect with --input (the file's values are summed as they are); "
                                  "drop it",
                                  opt->get_name()));
}

void add_input_options(CLI::App& cmd, InputOptions& o) {
  auto& g = o.generator_options;
  g.push_back(cmd.add_option("--dist", o.dist,
                             "Generator: uniform[lo,hi), normal(mu,sigma), constant(value), cancellation, "
                             "lognormal(mu,sigma), ill_conditioned(cond) (Ogita-Rump-Oishi)")
                  ->capture_default_str());
  // A string parsed by parse_size, not CLI11's integer conversion, which wraps "-5" to 2^64 - 5
  // and refuses the 2^k forms the studies accept.
  g.push_back(cmd.add_option_function<std::string>(
                     "-n,--n", [&o](const std::string& text) { o.n = static_cast<std::uint64_t>(parse_size(text, "--n")); },
                     "Number of elements: N, 2^k, 2^k+c, 2^k-c or 1e8")
                  ->default_str(std::to_string(o.n)));
  add_seed_option(cmd, "--seed", o.seed, "Generator seed: element i is a pure function of (seed, i)");
  g.push_back(cmd.get_option("--seed"));
  g.push_back(add_real_option(cmd, "--lo", o.lo, "uniform: lower end"));
  g.push_back(add_real_option(cmd, "--hi", o.hi, "uniform: upper end (excluded)"));
  g.push_back(add_real_option(cmd, "--mu", o.mu, "normal/lognormal: mean (of the log for lognormal)"));
  g.push_back(add_real_option(cmd, "--sigma", o.sigma, "normal/lognormal: standard deviation"));
  g.push_back(add_real_option(cmd, "--value", o.value, "constant: the value (rounded to the dtype)"));
  g.push_back(add_real_option(cmd, "--cond", o.condition, "ill_conditioned: requested condition number sum|x|/|sum x|"));
  g.push_back(cmd.add_option("--order", o.order,
                             "Ordering applied after generation: as_generated, ascending, descending, "
                             "magnitude_ascending, magnitude_descending")
                  ->capture_default_str());
  add_text_option(cmd, "--input", o.input, "Read the array from a file (.npy, .csv/.txt, or raw binary)");
  add_text_option(cmd, "--format", o.format, "Input file format: npy, csv or raw (default: from the extension)");
  add_text_option(cmd, "--dtype", o.dtype,
                  "float32 or float64 (default float32; an .npy file's own type, float16 read as float32)");
  cmd.add_option("--flatten", o.flatten,
                 "How a 2-D (or more) input file becomes one sequence: C (row-major, last index fastest) "
                 "or F (column-major, first index fastest); required for such files")
      ->check(CLI::IsMember({"C", "F"}));
}

DistributionSpec distribution_spec(const InputOptions& o) {
  DistributionSpec s;
  try {
    s.kind = parse_distribution(o.dist);
  } catch (const std::invalid_argument& e) {
    throw UserError(e.what());
  }
  s.lo = o.lo;
  s.hi = o.hi;
  s.mu = o.mu;
  s.sigma = o.sigma;
  s.value = o.value;
  s.condition = o.condition;
  if (s.kind == Distribution::uniform && !(o.lo < o.hi)) throw UserError("uniform needs --lo < --hi");
  if ((s.kind == Distribution::normal || s.kind == Distribution::lognormal) && !(o.sigma >= 0))
    throw UserError("--sigma must be >= 0");
  if (s.kind == Distribution::ill_conditioned && !(o.condition >= 1))
    throw UserError("--cond must be >= 1");
  // "rounded to the dtype": a finite value at or past float32's largest finite + half an ulp
  // (0x1.ffffffp127, a tie that rounds to even: up) rounds to an infinity.
  const bool f32 = o.dtype.empty() || parse_dtype(o.dtype) == Dtype::float32;
  const auto refuse_past_float32 = [&](const char* name, double v) {
    if (f32 && std::isfinite(v) && std::fabs(v) >= 0x1.ffffffp127)
      throw UserError(fmt::format("{} {} overflows float32 (largest finite {:g}); give --dtype float64, or inf for "
                                  "an infinity",
                                  name, v, std::numeric_limits<float>::max()));
  };
  if (s.kind == Distribution::constant) refuse_past_float32("--value", o.value);
  if (s.kind == Distribution::uniform) {
    refuse_past_float32("--lo", o.lo);
    refuse_past_float32("--hi", o.hi);
  }
  return s;
}

namespace {

template <class T> std::vector<T> generate_array(const InputOptions& o) {
  const DistributionSpec spec = distribution_spec(o);
  Ordering ordering;
  try {
    ordering = parse_ordering(o.order);
  } catch (const std::invalid_argument& e) {
    throw UserError(e.what());
  }
  // The array and one working copy (orderings, the reference's scratch) alive at once.
  check_fits_in_memory(o.n, sizeof(T) * 2, fmt::format("n = {} {} elements", o.n, sizeof(T) == 4 ? "float32" : "float64"));
  std::vector<T> x;
  try {
    x = generate<T>(spec, o.seed, static_cast<std::size_t>(o.n));
  } catch (const std::invalid_argument& e) {
    throw UserError(e.what());
  }
  apply_ordering(x, ordering);
  return x;
}

}  // namespace

ReadOptions read_options(const InputOptions& o) {
  ReadOptions r;
  r.format = o.format;
  if (!o.dtype.empty()) r.dtype = parse_dtype(o.dtype);
  r.flatten = parse_flatten(o.flatten);
  return r;
}

Array load_input(const InputOptions& o) {
  if (!o.input.empty()) return read_array(o.input, read_options(o));
  const Dtype d = o.dtype.empty() ? Dtype::float32 : parse_dtype(o.dtype);
  if (d == Dtype::float32) return generate_array<float>(o);
  return generate_array<double>(o);
}

std::string describe_input(const InputOptions& o, std::size_t n) {
  if (!o.input.empty())
    return fmt::format("file {} (n = {}{})", o.input, n, o.flatten.empty() ? "" : ", flattened " + o.flatten);
  std::string params;
  if (o.dist == "uniform") params = fmt::format("[{}, {})", o.lo, o.hi);
  else if (o.dist == "normal" || o.dist == "lognormal") params = fmt::format("(mu={}, sigma={})", o.mu, o.sigma);
  else if (o.dist == "constant") params = fmt::format("({})", o.value);
  else if (o.dist == "ill_conditioned") params = fmt::format("(cond={:g})", o.condition);
  std::string order = o.order == "as_generated" ? "" : ", " + o.order;
  return fmt::format("{}{} n = {} seed = {}{}", o.dist, params, n, o.seed, order);
}

}  // namespace sumlab
