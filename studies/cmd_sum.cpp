// `sumlab sum`: add one array with one or all algorithms and compare each result with the exact
// MPFR reference.
#include <CLI/CLI.hpp>
#include <unistd.h>
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <iostream>
#include <memory>
#include <optional>
#include <nlohmann/json.hpp>
#include <sstream>
#include <vector>

#include "core/cpu_algorithms.hpp"
#include "core/fixed_point_sum.hpp"
#include "core/float_traits.hpp"
#include "core/metrics.hpp"
#include "reference/mpfr_sum.hpp"
#include "core/gpu_kernel.hpp"
#include "studies/backend.hpp"
#include "studies/bound_alarm.hpp"
#include "studies/checked_math.hpp"
#include "studies/commands.hpp"
#include "studies/run_folder.hpp"
#include "studies/study_driver.hpp"
#include "studies/sum_api.hpp"
#include "studies/input_options.hpp"
#include "studies/json_number.hpp"
#include "studies/plugin.hpp"
#include "studies/shape_options.hpp"

namespace sumlab {
namespace {

struct SumOptions {
  InputOptions input;
  std::vector<std::string> algorithms{"all"};
  std::size_t pairwise_base = 1;
  std::optional<int> fixed_scale;  // fixed_point and gpu_fixed_point: the caller's k (grid 2^-k)
  bool json = false;
  RunOptions run;       // --out: the rows as a run folder too; --strict: exit 1 on a broken bound
  std::string backend;  // for GPU kernels: cuda, model, or "" (cuda when a GPU is present)
  ShapeOptions shape;
  std::vector<std::string> plugins;  // LIB:SYMBOL (studies/plugin.hpp): each subject a row per configuration
};

const std::vector<std::string> kSumColumns = {
    "study", "backend", "dtype", "input", "n", "algorithm", "shape", "value", "hex", "reference", "reference_hex",
    "abs_error", "rel_error", "ulps", "correct_bits", "bound", "within_bound", "sum_abs", "condition", "verdict",
    "diagnostics"};

// Returns true when a result broke its bound.
// --out: the same rows as a run folder, for `sumlab report`.
template <class T>
void write_sum_run(const SumOptions& opts, const SumReport<T>& report, std::size_t n,
                   const std::vector<LoadedPlugin>& plugins) {
  const std::string dtype(FloatTraits<T>::dtype), input = describe_input(opts.input, n);
  nlohmann::ordered_json plan;
  plan["input"] = input;
  plan["algorithms"] = opts.algorithms;
  plan["backend"] = opts.backend;
  if (!plugins.empty()) plan["plugins"] = plugin_plan(plugins);
  Study study("sum", opts.run, plan, opts.backend.empty() ? "cpu" : opts.backend, {{"sum.csv", kSumColumns}});
  Rows rows;
  for (const auto& r : report.rows) {
    // A library peer on the model backend measured nothing; a failed external call is a row.
    if (!r.has_value && r.verdict != Verdict::failed) continue;
    // Absent measures (row_measures: no value, no bound that applies, ulps of an exact zero sum)
    // are empty fields, as within_bound is where no bound applies.
    const RowMeasures m = row_measures(report, r);
    const auto field = [](const std::optional<double>& v) { return v ? csv_number(*v) : std::string(); };
    rows.push_back({"sum", r.backend, dtype, input, std::to_string(n), r.algorithm, r.shape ? to_string(*r.shape) : "",
                    r.has_value ? csv_number(r.result.value) : "", r.has_value ? hex_bits(r.result.value) : "",
                    csv_number(report.reference), hex_bits(report.reference), field(m.abs_error), field(m.rel_error),
                    field(m.ulps), field(m.correct_bits), field(m.bound),
                    r.verdict == Verdict::within ? "1" : r.verdict == Verdict::exceeds ? "0" : "",
                    csv_number(r.metrics.sum_abs), csv_number(r.metrics.condition), std::string(to_string(r.verdict)),
                    r.result.diagnostics});
  }
  study.run({{"sum", "sum", [&]() -> CellRows { return {{"sum.csv", rows}}; }}});
  study.finish({});
}

// The terminal table: the input, the reference, then one line per algorithm with its notes.
template <class T>
void print_sum_table(const SumOptions& opts, const SumReport<T>& report, std::size_t n, bool mapped) {
  const std::string dtype(FloatTraits<T>::dtype);
  std::cout << fmt::format("input      {}{}\n", describe_input(opts.input, n),
                           mapped ? ", memory-mapped: summed where it lies, nothing copied" : "");
  if (!report.backend_description.empty()) std::cout << fmt::format("backend    {}\n", report.backend_description);
  std::cout << fmt::format("reference  {} ({})  correctly rounded {} sum ({})\n", report.reference,
                           hex_bits(report.reference), dtype, report.reference_method);
  const auto& m = report.input;
  std::cout << fmt::format("sum|x|     {:.6g}   condition sum|x|/|sum x| = {:.3g}\n", m.sum_abs, m.condition);
  if (m.input_special)
    std::cout << "note       the input holds NaN or Inf: results are IEEE specials (docs/special-values.md), "
                 "errors undefined\n";
  else if (m.exact_overflows)
    std::cout << fmt::format("note       the exact sum overflows {}: it rounds to {}, and no error bound "
                             "applies (each assumes no overflow)\n", dtype, report.reference);
  std::size_t width = 15;  // external subjects' rows are name[config]: often longer
  for (const auto& r : report.rows) width = std::max(width, r.algorithm.size());
  std::cout << fmt::format("\n{:<{}} {:>26} {:>20} {:>11} {:>11} {:>11} {:>11}  {}\n", "algorithm", width,
                           "value", "bits", "abs err", "rel err", "ulps", "bound", "notes");
  for (const auto& r : report.rows) {
    std::string notes = r.result.diagnostics;
    if (r.shape) notes = shape_text(*find_gpu_kernel(r.algorithm), *r.shape) + (notes.empty() ? "" : "; " + notes);
    for (const auto& f : r.ignored) notes += (notes.empty() ? "" : "; ") + ("does not read --" + f);
    if (!r.has_value) {  // a library peer on the model backend, or a failed external call
      if (r.verdict == Verdict::failed) notes = "FAILED: " + notes;
      std::cout << fmt::format("{:<{}} {:>26}  {}\n", r.algorithm, width, "-", notes.empty() ? "no value here" : notes);
      continue;
    }
    if (r.verdict == Verdict::exceeds) notes += " EXCEEDS BOUND";
    if (r.verdict == Verdict::intermediate_overflow) notes += " OVERFLOWED (the exact sum is finite)";
    // row_measures: no bound applies to a special or overflowing result; ulps of an error
    // against an exact zero sum are n/a (ulp(0) is the smallest subnormal).
    const RowMeasures rm = row_measures(report, r);
    const std::string bound = rm.bound && std::isfinite(*rm.bound) ? fmt::format("{:.3e}", *rm.bound) : "none";
    const std::string ulps = rm.ulps ? fmt::format("{:.4g}", *rm.ulps) : "n/a";
    std::cout << fmt::format("{:<{}} {:>26} {:>20} {:>11.3e} {:>11.3e} {:>11} {:>11}  {}\n", r.algorithm, width,
                             fmt::format("{}", r.result.value), hex_bits(r.result.value), *rm.abs_error,
                             *rm.rel_error, ulps, bound, notes);
  }
}

SumRequest request_of(const SumOptions& opts, const std::vector<LoadedPlugin>& plugins) {
  SumRequest req;
  req.algorithms = opts.algorithms;
  req.pairwise_base = opts.pairwise_base;
  req.fixed_scale = opts.fixed_scale;
  req.backend = opts.backend;
  req.shape = overrides(opts.shape);
  req.externals = with_plugins({}, plugins);
  // A terminal watching a big sum (a memory-mapped file, say) sees it move; a pipe or a log gets
  // only the results. Below 2^26 elements a sum takes about a second.
  req.progress_from = ::isatty(STDERR_FILENO) ? std::uint64_t(1) << 26 : 0;
  return req;
}

// Prints (and with --out writes) the report of n values; true when a result broke its bound
// (--strict makes that exit 1).
template <class T>
bool print_sum(const SumOptions& opts, const SumReport<T>& report, std::size_t n,
               const std::vector<LoadedPlugin>& plugins, bool mapped) {
  BoundAlarm tally;
  for (const auto& r : report.rows)
    if (r.has_value) tally.add(r.algorithm + (r.backend == "cpu" ? "" : " (" + r.backend + ")"), r.verdict, r.metrics.abs_error, r.bound);
  if (!opts.run.out.empty()) write_sum_run(opts, report, n, plugins);
  if (opts.json) {
    nlohmann::ordered_json out = nlohmann::ordered_json::array();
    for (const auto& r : report.rows) out.push_back(row_json(report, r, n));
    std::cout << out.dump(2) << "\n";
  } else {
    print_sum_table(opts, report, n, mapped);
    std::cout << "\n" << tally.text();
  }
  return tally.alarm();
}

// A generated input for GPU kernels on cuda is made on the device and its exact sum computed there
// (Backend::generate, sum_report on the KernelInput): n up to the device's memory, with a host copy
// only when something on the host reads it (a CPU algorithm, a user's subject, the MPFR check of
// the reference up to kReferenceCheckMax). Nothing when the request does not run there (no GPU
// kernel, the model backend, an ordering applied after generation, ill_conditioned's host-only
// generator): the caller generates on the host.
template <class T>
std::optional<SumReport<T>> sum_generated_on_device(const InputOptions& in, const SumRequest& req) {
  const DistributionSpec spec = distribution_spec(in);
  const SumNeeds needs = sum_needs(req, in.n);
  if (in.order != "as_generated" || spec.kind == Distribution::ill_conditioned || !needs.kernels) return std::nullopt;
  const auto backend = make_backend(req.backend);
  if (backend->kind() != BackendKind::cuda) return std::nullopt;
  const std::string what = fmt::format("n = {} {} elements", in.n, FloatTraits<T>::dtype);
  if (needs.host) check_fits_in_memory(in.n, sizeof(T) * 2, what);
  check_fits_on_device(*backend, saturating_mul(in.n, sizeof(T)), what);
  const auto input = backend->generate<T>(spec, in.seed, static_cast<std::int64_t>(in.n));
  return sum_report<T>(req, *input);
}

std::string algorithm_help() {
  std::string s = "Algorithm name, 'all' (CPU), 'gpu' (every GPU kernel), or a comma list. CPU algorithms:\n";
  for (const auto& a : cpu_algorithms<double>())
    s += fmt::format("  {:<18} {}\n", a.info.name, a.info.summary);
  s += "GPU kernels (run on --backend cuda or model):\n";
  for (const auto& k : gpu_kernels())
    if (!k.diagnostic_only) s += fmt::format("  {:<18} {}\n", k.name, k.summary);
  return s;
}

}  // namespace

void register_sum(CLI::App& app) {
  auto opts = std::make_shared<SumOptions>();
  auto* cmd = app.add_subcommand("sum", "Add one array with one or all algorithms and compare "
                                        "each result with the exact MPFR reference");
  add_input_options(*cmd, opts->input);
  cmd->add_option("-a,--algorithm", opts->algorithms, algorithm_help())->delimiter(',');
  cmd->add_option("--pairwise-base", opts->pairwise_base,
                  "Base-case size of 'pairwise' (1 = the textbook tree; 128 = serial runs of <=128)")
      ->check(CLI::Range(std::size_t{1}, std::size_t{1} << 40));
  cmd->add_option("--fixed-scale", opts->fixed_scale,
                  "fixed_point and gpu_fixed_point: round every x to the grid 2^-K (default: K = 61 - "
                  "floor(log2 max|x|), which no element can overflow); gpu_fixed_point then reads the input once")
      ->check(CLI::Range(-100000, 100000));
  cmd->add_flag("--json", opts->json, "Print a JSON array: one object per algorithm");
  add_run_options(*cmd, opts->run);
  cmd->add_option("--backend", opts->backend,
                  "Where GPU kernels run: cuda (a GPU) or model (the CPU executing their exact order); "
                  "default cuda when a GPU is present, else model")
      ->check(CLI::IsMember({"cuda", "model"}));
  add_shape_options(*cmd, opts->shape);
  add_plugin_option(*cmd, opts->plugins);
  cmd->callback([opts] {
    // An .npy whose bytes are the values is summed where it lies (a file larger than memory
    // included); any other input is read or generated.
    bool mapped = false;
    check_input_source(opts->input);
    const auto plugins = load_plugins(opts->plugins);
    const SumRequest req = request_of(*opts, plugins);
    const auto run = [&](const auto& x) {
      using T = std::remove_const_t<typename std::decay_t<decltype(x)>::value_type>;
      return print_sum<T>(*opts, sum_report<T>(req, std::span<const T>(x)), x.size(), plugins, mapped);
    };
    const auto on_device = [&]<class T>(T) -> std::optional<bool> {
      const auto report = sum_generated_on_device<T>(opts->input, req);
      if (!report) return std::nullopt;
      return print_sum<T>(*opts, *report, opts->input.n, plugins, false);
    };
    bool alarm = false;
    if (!opts->input.input.empty()) {
      const InputData data(opts->input.input, read_options(opts->input));
      mapped = data.mapped();
      alarm = std::visit(run, data.spans());
    } else {
      // The request is checked for n values before any is generated: a bad name or launch shape
      // fails at once, not after minutes of generation.
      const auto n = static_cast<std::int64_t>(opts->input.n);
      const bool f64 = !opts->input.dtype.empty() && parse_dtype(opts->input.dtype) == Dtype::float64;
      if (f64) check_sum_request<double>(req, n);
      else check_sum_request<float>(req, n);
      if (const auto done = f64 ? on_device(0.0) : on_device(0.0f)) {
        alarm = *done;
      } else {
        const Array a = load_input(opts->input);
        alarm = std::visit(run, a);
      }
    }
    if (alarm && opts->run.strict) throw CheckFailed("a result broke its error bound (--strict)");
  });
}

}  // namespace sumlab
