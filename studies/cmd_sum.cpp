// `sumlab sum`: add one array with one or all algorithms and compare each result with the exact
// MPFR reference.
#include <CLI/CLI.hpp>
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
#include "studies/commands.hpp"
#include "studies/gpu_runs.hpp"
#include "studies/input_options.hpp"
#include "studies/json_number.hpp"
#include "studies/shape_options.hpp"

namespace sumlab {
namespace {

struct SumOptions {
  InputOptions input;
  std::vector<std::string> algorithms{"all"};
  std::size_t pairwise_base = 1;
  std::optional<int> fixed_scale;  // fixed_point and gpu_fixed_point: the caller's k (grid 2^-k)
  bool json = false;
  bool strict = false;  // exit 1 when a result breaks its bound
  std::string backend;  // for GPU kernels: cuda, model, or "" (cuda when a GPU is present)
  ShapeOptions shape;
};

template <class T> struct Row {
  std::string algorithm;
  std::string backend = "cpu";
  nlohmann::ordered_json shape;  // null for CPU algorithms and shape-less kernels
  bool has_value = true;
  SumResult<T> result;
  reference::ErrorMetrics metrics;
  double bound = 0;  // +inf: no bound holds (core/error_bound.hpp)
  Verdict verdict = Verdict::within;
};

// Resolves "all" and comma lists into registry entries; unknown names are a UserError that lists
// the valid ones.
template <class T> std::vector<const CpuAlgorithm<T>*> select_algorithms(const std::vector<std::string>& names) {
  std::vector<const CpuAlgorithm<T>*> out;
  for (const auto& name : names) {
    if (name == "all") {
      for (const auto& a : cpu_algorithms<T>()) out.push_back(&a);
      continue;
    }
    if (name == "gpu" || find_gpu_kernel(name) || name.rfind("gpu_", 0) == 0) continue;  // GPU kernels
    const auto* a = find_cpu_algorithm<T>(name);
    if (!a) {
      std::string valid;
      for (const auto& b : cpu_algorithms<T>()) valid += (valid.empty() ? "" : ", ") + std::string(b.info.name);
      throw UserError("unknown algorithm '" + name + "' (valid: all, gpu, " + valid + ", " + gpu_kernel_names() + ")");
    }
    out.push_back(a);
  }
  return out;
}

// Returns true when a result broke its bound.
template <class T> bool run_sum(const SumOptions& opts, std::vector<T>& x) {
  const std::span<const T> xs(x);
  const auto algorithms = select_algorithms<T>(opts.algorithms);
  const reference::ExactSum<T> exact(xs);
  const T reference_value = static_cast<T>(exact.rounded());
  auto bound_input = [&](const reference::ErrorMetrics& m, double quantisation) {
    return BoundInput{x.size(), m.sum_abs, std::fabs(m.exact), quantisation};
  };

  std::vector<Row<T>> rows;
  for (const auto* a : algorithms) {
    Row<T> row;
    row.algorithm = std::string(a->info.name);
    row.result = (a->info.name == "pairwise" && opts.pairwise_base != 1) ? pairwise_with_base<T>(xs, opts.pairwise_base)
                 : (a->info.name == "fixed_point" && opts.fixed_scale) ? fixed_point_sum<T>(xs, opts.fixed_scale)
                                                                        : a->sum(xs);
    row.metrics = exact.measure(row.result.value);
    const BoundInput in = bound_input(row.metrics, row.result.extra_error_bound);
    row.bound = (a->info.name == "pairwise" && opts.pairwise_base != 1) ? pairwise_bound<T>(opts.pairwise_base, in)
                                                                         : a->bound(in);
    row.verdict = judge(row.metrics.judged(), row.bound);
    rows.push_back(std::move(row));
  }
  // 'all' means every CPU algorithm here (see --help); 'gpu' selects every GPU kernel.
  std::vector<std::string> gpu_names;
  for (const auto& name : opts.algorithms)
    if (name != "all") gpu_names.push_back(name);
  const auto kernels = select_gpu_kernels(gpu_names);
  if (opts.fixed_scale &&
      std::none_of(rows.begin(), rows.end(), [](const Row<T>& r) { return r.algorithm == "fixed_point"; }) &&
      std::find(kernels.begin(), kernels.end(), GpuKernel::fixed_point) == kernels.end())
    throw UserError("--fixed-scale applies to fixed_point and gpu_fixed_point; -a selects neither");
  std::unique_ptr<Backend> backend;
  if (!kernels.empty() || !opts.backend.empty()) backend = make_backend(opts.backend);
  if (backend) {
    KernelOptions kernel_options;
    kernel_options.fixed_scale = opts.fixed_scale;
    for (auto& r : run_gpu_kernels<T>(*backend, kernels, opts.shape, xs, kernel_options)) {
      Row<T> row;
      row.algorithm = std::string(info(r.kernel).name);
      row.backend = std::string(backend->name());
      row.shape = shape_json(r.kernel, r.shape);
      row.has_value = r.outcome.has_value;
      row.result.value = r.outcome.has_value ? r.outcome.value : std::numeric_limits<T>::quiet_NaN();
      row.result.diagnostics = r.outcome.note;
      row.metrics = exact.measure(row.result.value);
      const double quantisation =
          r.kernel == GpuKernel::fixed_point ? fixed_point_sum<T>(xs, opts.fixed_scale).extra_error_bound : 0;
      row.bound = kernel_bound(r.kernel, format_of<T>(), r.shape, bound_input(row.metrics, quantisation));
      row.verdict = r.outcome.has_value ? judge(row.metrics.judged(), row.bound) : Verdict::no_bound;
      rows.push_back(std::move(row));
    }
  }

  const std::string dtype(FloatTraits<T>::dtype);
  BoundAlarm tally;
  for (const auto& r : rows)
    if (r.has_value) tally.add(r.algorithm + (r.backend == "cpu" ? "" : " (" + r.backend + ")"), r.verdict, r.metrics.abs_error, r.bound);
  const bool alarm = tally.alarm();
  if (opts.json) {
    nlohmann::ordered_json out = nlohmann::ordered_json::array();
    for (const auto& r : rows) {
      nlohmann::ordered_json j;
      j["algorithm"] = r.algorithm;
      j["backend"] = r.backend;
      j["shape"] = r.shape;
      j["dtype"] = dtype;
      j["n"] = x.size();
      j["value"] = json_number(r.result.value);
      j["value_decimal"] = fmt::format("{}", r.result.value);
      j["hex"] = hex_bits(r.result.value);
      j["reference"] = json_number(reference_value);
      j["reference_hex"] = hex_bits(reference_value);
      j["abs_error"] = json_number(r.metrics.abs_error);
      j["rel_error"] = json_number(r.metrics.rel_error);
      j["ulps"] = json_number(r.metrics.ulps);
      j["ulps_from_rounded"] = signed_ulp_distance(reference_value, r.result.value);
      j["correct_bits"] = json_number(r.metrics.correct_bits);
      j["bound"] = json_number(r.bound);
      j["verdict"] = std::string(to_string(r.verdict));
      j["within_bound"] = r.verdict == Verdict::within    ? nlohmann::ordered_json(true)
                          : r.verdict == Verdict::exceeds ? nlohmann::ordered_json(false)
                                                          : nlohmann::ordered_json();
      j["sum_abs"] = json_number(r.metrics.sum_abs);
      j["condition"] = json_number(r.metrics.condition);
      j["special"] = r.metrics.special;
      j["diagnostics"] = r.result.diagnostics;
      out.push_back(std::move(j));
    }
    std::cout << out.dump(2) << "\n";
    return alarm;
  }

  std::cout << fmt::format("input      {}\n", describe_input(opts.input, x.size()));
  if (backend) std::cout << fmt::format("backend    {}\n", backend->description());
  std::cout << fmt::format("reference  {} ({})  correctly rounded {} sum (MPFR)\n",
                           reference_value, hex_bits(reference_value), dtype);
  if (!rows.empty()) {
    const auto& m = rows.front().metrics;
    std::cout << fmt::format("sum|x|     {:.6g}   condition sum|x|/|sum x| = {:.3g}\n", m.sum_abs,
                             m.condition);
    if (m.input_special)
      std::cout << "note       the input holds NaN or Inf: results are IEEE specials (docs/special-values.md), "
                   "errors undefined\n";
    else if (m.exact_overflows)
      std::cout << fmt::format("note       the exact sum overflows {}: it rounds to {}, and no error bound "
                               "applies (each assumes no overflow)\n", dtype, reference_value);
  }
  std::cout << fmt::format("\n{:<15} {:>26} {:>20} {:>11} {:>11} {:>11} {:>11}  {}\n", "algorithm",
                           "value", "bits", "abs err", "rel err", "ulps", "bound", "notes");
  for (const auto& r : rows) {
    std::string notes = r.result.diagnostics;
    if (r.shape.contains("text")) notes = r.shape["text"].template get<std::string>() + (notes.empty() ? "" : "; " + notes);
    if (r.verdict == Verdict::exceeds) notes += " EXCEEDS BOUND";
    if (r.verdict == Verdict::intermediate_overflow) notes += " OVERFLOWED (the exact sum is finite)";
    const std::string bound = std::isfinite(r.bound) ? fmt::format("{:.3e}", r.bound) : "none";
    std::cout << fmt::format("{:<15} {:>26} {:>20} {:>11.3e} {:>11.3e} {:>11.4g} {:>11}  {}\n",
                             r.algorithm, fmt::format("{}", r.result.value), hex_bits(r.result.value),
                             r.metrics.abs_error, r.metrics.rel_error, r.metrics.ulps, bound, notes);
  }
  std::cout << "\n" << tally.text();
  return alarm;
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
  cmd->add_flag("--json", opts->json, "Print one JSON object per algorithm");
  cmd->add_flag("--strict", opts->strict, "Exit 1 when a result breaks its error bound");
  cmd->add_option("--backend", opts->backend,
                  "Where GPU kernels run: cuda (a GPU) or model (the CPU executing their exact order); "
                  "default cuda when a GPU is present, else model")
      ->check(CLI::IsMember({"cuda", "model"}));
  add_shape_options(*cmd, opts->shape);
  cmd->callback([opts] {
    Array a = load_input(opts->input);
    const bool alarm = std::holds_alternative<std::vector<float>>(a)
                           ? run_sum<float>(*opts, std::get<std::vector<float>>(a))
                           : run_sum<double>(*opts, std::get<std::vector<double>>(a));
    if (alarm && opts->strict) throw CheckFailed("a result broke its error bound (--strict)");
  });
}

}  // namespace sumlab
