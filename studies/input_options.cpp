#include "studies/input_options.hpp"

#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include <stdexcept>

#include "core/generators.hpp"
#include "studies/commands.hpp"
#include "studies/size_text.hpp"

namespace sumlab {

void add_input_options(CLI::App& cmd, InputOptions& o) {
  cmd.add_option("--dist", o.dist,
                 "Generator: uniform[lo,hi), normal(mu,sigma), constant(value), cancellation, "
                 "lognormal(mu,sigma), ill_conditioned(cond) (Ogita-Rump-Oishi)")
      ->capture_default_str();
  // A string parsed by parse_size, not CLI11's integer conversion, which wraps "-5" to 2^64 - 5
  // and refuses the 2^k forms the studies accept.
  cmd.add_option_function<std::string>(
         "-n,--n", [&o](const std::string& text) { o.n = static_cast<std::uint64_t>(parse_size(text, "--n")); },
         "Number of elements: N, 2^k, 2^k+c, 2^k-c or 1e8")
      ->default_str(std::to_string(o.n));
  cmd.add_option("--seed", o.seed, "Generator seed: element i is a pure function of (seed, i)")
      ->capture_default_str();
  cmd.add_option("--lo", o.lo, "uniform: lower end")->capture_default_str();
  cmd.add_option("--hi", o.hi, "uniform: upper end (excluded)")->capture_default_str();
  cmd.add_option("--mu", o.mu, "normal/lognormal: mean (of the log for lognormal)")->capture_default_str();
  cmd.add_option("--sigma", o.sigma, "normal/lognormal: standard deviation")->capture_default_str();
  cmd.add_option("--value", o.value, "constant: the value (rounded to the dtype)")->capture_default_str();
  cmd.add_option("--cond", o.condition, "ill_conditioned: requested condition number sum|x|/|sum x|")
      ->capture_default_str();
  cmd.add_option("--order", o.order,
                 "Ordering applied after generation: as_generated, ascending, descending, "
                 "magnitude_ascending, magnitude_descending")
      ->capture_default_str();
  cmd.add_option("--input", o.input, "Read the array from a file (.npy, .csv/.txt, or raw binary)");
  cmd.add_option("--format", o.format, "Input file format: npy, csv or raw (default: from the extension)");
  cmd.add_option("--dtype", o.dtype,
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
