// `sumlab study ...`: the accuracy studies. Each study: options -> config -> one library call per
// cell -> rows appended to the run folder's CSV (flushed per cell, so an interrupted study keeps
// what it finished and --resume continues it).
#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include <algorithm>
#include <bit>
#include <cmath>
#include <filesystem>
#include <map>
#include <memory>
#include <optional>
#include <stdexcept>
#include <thread>

#include "core/cpu_algorithms.hpp"
#include "core/fixed_point_sum.hpp"
#include "core/float_traits.hpp"
#include "core/generators.hpp"
#include "core/growth_fit.hpp"
#include "reference/mpfr_sum.hpp"
#include "core/gpu_kernel.hpp"
#include "core/launch_shape.hpp"
#include "studies/backend.hpp"
#include "studies/bound_alarm.hpp"
#include "studies/checked_math.hpp"
#include "studies/external.hpp"
#include "studies/commands.hpp"
#include "studies/input_file.hpp"
#include "studies/input_options.hpp"
#include "studies/json_number.hpp"
#include "studies/plugin.hpp"
#include "studies/progress.hpp"
#include "studies/run_folder.hpp"
#include "studies/runner.hpp"
#include "studies/size_text.hpp"
#include "studies/memory_check.hpp"
#include "studies/study_data.hpp"
#include "studies/study_driver.hpp"

namespace sumlab {
namespace {

struct StudyOptions {
  RunOptions run;
  bool quick = false;
  std::vector<std::string> algorithms{"all"};
  std::vector<std::string> dists;
  std::vector<std::string> dtypes;  // default float32,float64; with --input, its own type
  int seeds = 0;
  int log2_min = 4, log2_max = 0, log2_step = 0;
  std::string backend;  // "" = cuda when a GPU is present, else model; "cpu" = CPU algorithms only
  std::vector<std::string> gpu_kernels;  // default all (none with --backend cpu)
  std::vector<std::string> externals;  // subjects the user brings (studies/external.hpp), by name
  std::vector<std::string> plugins;    // LIB:SYMBOL (studies/plugin.hpp): measured without --external
  std::string input, input_format, flatten;  // the user's data instead of the generators
  std::string serial_max = "2^24";            // gpu_serial (one GPU thread) up to this n
  int cells = 0;                              // cells side by side at most (0: the host's cores)
};

const std::vector<std::string> kErrorVsNColumns = {
    "study", "backend", "dtype", "dist", "n", "seed", "algorithm", "value", "hex", "reference",
    "reference_hex", "abs_error", "rel_error", "ulps", "correct_bits", "bound", "within_bound",
    "sum_abs", "condition", "verdict", "note"};

// within_bound: 1 or 0 where a finite bound was checked, empty where none applies (the verdict
// column says why).
std::string within_bound_field(Verdict v) {
  return v == Verdict::within ? "1" : v == Verdict::exceeds ? "0" : "";
}


const std::vector<std::string> kHeadlineColumns = {"figure", "algorithm", "dtype", "n", "value", "hex",
                                                   "reference", "expected", "matches"};

// The seeds' headline figures, re-measured by the lab itself on every error-vs-n run.
std::vector<std::vector<std::string>> headline_rows() {
  std::vector<std::vector<std::string>> rows;
  // ref: the figure's correctly rounded sum (MPFR), taken once a figure.
  auto add = [&](const std::string& figure, const std::vector<float>& x, float ref, const char* algorithm,
                 const std::string& expected_text, bool matches, float value) {
    rows.push_back({figure, algorithm, "float32", std::to_string(x.size()), csv_number(value), hex_bits(value),
                    csv_number(ref), expected_text, matches ? "1" : "0"});
  };
  auto run = [](const char* name, const std::vector<float>& x) {
    return find_cpu_algorithm<float>(name)->sum(x).value;
  };
  {
    const std::vector<float> x(10'000'000, 0.1f);
    const float ref = reference::correctly_rounded_sum<float>(x);
    const float serial = run("serial", x), tree = run("pairwise", x);
    add("1e7 x 0.1f", x, ref, "serial", "1087937", serial == 1087937.0f, serial);
    add("1e7 x 0.1f", x, ref, "pairwise", "1000000", tree == 1000000.0f, tree);
  }
  {
    DistributionSpec spec;  // uniform [0, 1)
    const std::vector<float> x = generate<float>(spec, 1, std::size_t{1} << 26);
    const float ref = reference::correctly_rounded_sum<float>(x);
    const float serial = run("serial", x), tree = run("pairwise", x);
    add("2^26 U[0,1) floats", x, ref, "serial", "16777216 (stalls at 2^24)", serial == 16777216.0f, serial);
    add("2^26 U[0,1) floats", x, ref, "pairwise", "within 1 ulp of the correctly rounded sum",
        std::fabs(tree - ref) <= ulp(ref), tree);
  }
  {
    const std::vector<float> x(10'000, 1.0f);
    const float v = run("serial_bf16", x);
    add("bfloat16 accumulator, 1e4 x 1.0", x, reference::correctly_rounded_sum<float>(x), "serial_bf16", "256 (stalls at ~256 x the addend)", v == 256.0f, v);
  }
  return rows;
}

template <class T> std::vector<const CpuAlgorithm<T>*> pick(const std::vector<std::string>& names) {
  std::vector<const CpuAlgorithm<T>*> out;
  for (const auto& name : names) {
    if (name == "none") continue;  // only the GPU kernels and the user's subjects
    if (name == "all") {
      for (const auto& a : cpu_algorithms<T>()) out.push_back(&a);
    } else if (const auto* a = find_cpu_algorithm<T>(name)) {
      out.push_back(a);
    } else {
      throw UserError("unknown algorithm '" + name + "'");
    }
  }
  return out;
}

// One cell: one input (dtype, dist, n, seed), every selected algorithm, one row each.
// The GPU kernels a study runs on a backend: every modelled kernel (and, on cuda, the library
// peers), unless --gpu-kernels names some ("none" for CPU algorithms only).
std::vector<GpuKernel> pick_kernels(const std::vector<std::string>& given, const Backend* backend) {
  std::vector<GpuKernel> out;
  // --backend cpu runs no kernel: naming one there would drop it without a word.
  if (!backend) {
    if (!given.empty() && given != std::vector<std::string>{"none"})
      throw UserError(fmt::format("--gpu-kernels {}: --backend cpu runs the CPU algorithms only; choose --backend "
                                  "model or cuda for GPU kernels, or leave --gpu-kernels out",
                                  fmt::join(given, ",")));
    return out;
  }
  const std::vector<std::string> names = given.empty() ? std::vector<std::string>{"all"} : given;
  for (const auto& name : names) {
    if (name == "none") return {};
    if (name == "all") {
      for (const auto& k : gpu_kernels())
        if (!k.diagnostic_only && k.kernel != GpuKernel::atomic &&
            (k.modelled || backend->kind() == BackendKind::cuda))
          out.push_back(k.kernel);
    } else if (auto k = find_gpu_kernel(name)) {
      out.push_back(*k);
    } else {
      throw UserError("unknown GPU kernel '" + name + "' (valid: all, none, " + gpu_kernel_names() + ")");
    }
  }
  return out;
}

// Which cells check the exact reference computed on the device on the host copy
// (exact_reference): every cell with n <= 2^24 against MPFR, and, as a sample above, the first
// seed's cells at the study's smallest n in (2^24, 2^28] against the CPU's superaccumulator (a host
// copy of at most 2 GiB per dtype and distribution, whatever the largest n; a study without such an
// n has no sample). `sizes` ascending.
constexpr std::uint64_t kReferenceSampleMax = std::uint64_t{1} << 28;
bool checks_reference(const std::vector<std::uint64_t>& sizes, std::uint64_t n, std::uint64_t seed) {
  if (n <= kReferenceCheckMax) return true;
  const auto above = std::upper_bound(sizes.begin(), sizes.end(), kReferenceCheckMax);
  return seed == 1 && above != sizes.end() && *above <= kReferenceSampleMax && n == *above;
}

// One cell: one input, every selected CPU algorithm, GPU kernel and user's subject, one row each.
// The exact sum is computed once (exact_reference) and every result measured against it. `prefix`
// holds the study's leading identifying columns; its second field (backend) is replaced per row.
template <class T> std::vector<std::vector<std::string>> accuracy_cell(
    const std::vector<std::string>& algorithms, const std::vector<GpuKernel>& kernels, std::uint64_t serial_max,
    Backend* backend, const std::vector<std::shared_ptr<ExternalSum>>& subjects, const DistributionSpec& spec,
    std::uint64_t n, std::uint64_t seed, bool check_reference, std::vector<std::string> prefix,
    std::span<const T> data = {}) {
  // With GPU kernels the input is generated where they read it (on the device for cuda), and
  // crosses PCIe only if something on the host reads it (a CPU algorithm, a subject without a
  // device entry, a reference check): KernelInput::host() downloads it on first use. The user's
  // data: a prefix or a seeded subsample of it (data_sample), loaded once. A subject with a device
  // entry (a plugin's) reads the same device copy in place on cuda, so the cell loads it for that
  // alone too.
  const bool on_device = backend && (!kernels.empty() || (backend->kind() == BackendKind::cuda && reads_device<T>(subjects)));
  std::unique_ptr<KernelInput<T>> input;
  std::vector<T> x;
  if (!data.empty()) {
    const std::span<const T> xs = data_sample<T>(data, n, seed, x);
    input = on_device ? backend->load(xs) : host_input(xs);
  } else if (on_device) {
    input = backend->generate<T>(spec, seed, static_cast<std::int64_t>(n));
  } else {
    x = generate<T>(spec, seed, static_cast<std::size_t>(n));
    input = host_input(std::span<const T>(x));
  }
  const auto exact = exact_reference<T>(*input, check_reference);
  const T ref = static_cast<T>(exact->rounded());
  const auto m0 = exact->measure(ref);
  // Every subject through one runner interface (studies/runner.hpp); a kernel that is not modelled
  // on this backend (a library peer on the model) gives no row. The user's subjects: measured, no
  // bound claimed (the report draws comparable algorithms' for orientation); one row per
  // configuration, named name[config].
  Runners<T> runners;
  for (const auto* a : pick<T>(algorithms)) runners.push_back(cpu_runner<T>(*a));
  for (GpuKernel k : kernels) {
    if (info(k).float_input_only && !std::is_same_v<T, float>) continue;
    if (k == GpuKernel::serial && n > serial_max) continue;  // CPU serial's order, on one GPU thread
    const LaunchShape shape = default_shape(k, backend->sm_count(), FloatTraits<T>::dtype);
    if (!validate_shape(k, shape, FloatTraits<T>::dtype, static_cast<std::int64_t>(n)).empty()) continue;
    runners.push_back(kernel_runner<T>(k, backend->kind(), {shape}));
  }
  for (const auto& subject : subjects) runners.push_back(external_runner<T>(subject, !m0.input_special));
  std::vector<std::vector<std::string>> rows;
  const auto outcomes = run_all<T>(runners, *input);
  for (std::size_t ri = 0; ri < runners.size(); ++ri)
    for (std::size_t c = 0; c < outcomes[ri].size(); ++c) {
      const auto& r = runners[ri];
      const Outcome<T>& o = outcomes[ri][c];
      if (!o.has_value && !o.failed) continue;
      const T value = o.has_value ? o.value : std::numeric_limits<T>::quiet_NaN();
      const auto m = exact->measure(value);
      const double bound = r->bound(c, o, *input, BoundInput{static_cast<std::size_t>(n), m0.sum_abs, std::fabs(m0.exact), 0.0});
      const Verdict v = o.failed ? Verdict::failed : judge(m.judged(), bound);
      std::vector<std::string> row = prefix;
      row[1] = std::string(to_string(r->kind()));
      for (std::string f : {r->row_name(c), csv_number(value), hex_bits(value), csv_number(ref), hex_bits(ref),
                            csv_number(m.abs_error), csv_number(m.rel_error), csv_number(m.ulps),
                            csv_number(m.correct_bits), csv_number(bound), within_bound_field(v),
                            csv_number(m.sum_abs), csv_number(m.condition), std::string(to_string(v)),
                            o.failed ? o.note : std::string()})
        row.push_back(std::move(f));
      rows.push_back(std::move(row));
    }
  return rows;
}

std::vector<std::uint64_t> sizes_for(const StudyOptions& o, bool cuda) {
  const int hi = o.log2_max ? o.log2_max : (o.quick ? 20 : (cuda ? 30 : 24));
  if (o.log2_min < 0 || hi < o.log2_min || hi > 40)
    throw UserError(fmt::format("empty or invalid size range 2^{}..2^{}", o.log2_min, hi));
  std::vector<std::uint64_t> n;
  const int step = o.log2_step > 0 ? o.log2_step : (o.quick ? 2 : 1);
  for (int k = o.log2_min; k <= hi; k += step) n.push_back(std::uint64_t{1} << k);
  // Non-powers of two: the trees of pairwise codes change shape there.
  for (std::uint64_t extra : {std::uint64_t{1000}, std::uint64_t{100003}, std::uint64_t{3000001}})
    if (extra >= (std::uint64_t{1} << o.log2_min) && extra <= (std::uint64_t{1} << hi)) n.push_back(extra);
  std::sort(n.begin(), n.end());
  return n;
}

// Whether the registry bounds this row's subject (runner kind and name, as error_vs_n.csv holds
// them) by a correctly rounded result's bound (the CPU `exact`, gpu_exact): its error is one final
// rounding at every n, so a slope fitted to it would be noise. A user's subject claims no bound.
bool correctly_rounded_subject(const std::string& kind, const std::string& name) {
  if (kind == "cpu") {
    const auto* a = find_cpu_algorithm<double>(name);
    return a && is_correctly_rounded(*a);
  }
  if (kind == "cuda" || kind == "model") {
    const auto k = find_gpu_kernel(name);
    return k && info(*k).bound_kind == BoundKind::correctly_rounded;
  }
  return false;
}

// What summary.json's growth fits are fitted to (their "basis").
constexpr const char* kGrowthBasis =
    "median over seeds of rel_error at each n (finite errors, zeros included, n whose median is 0 left out)";

// Per (dtype, dist, algorithm): the growth exponent of the relative error's median over the seeds
// at each n (fit_growth_of_medians), and what it rests on. Keys of each entry:
//   basis          what was fitted (kGrowthBasis)
//   rows           the series' rows; failed_rows of them had no result (verdict failed),
//                  nonfinite_rows a NaN/Inf error, zero_rows an error of exactly 0
//   sizes          distinct n measured
//   distinct_n     distinct n whose median error is positive (the fit's points; also "points"),
//                  n_min and n_max their range (null when there are none)
//   none_because   null when exponent, ci95 and r_squared hold a fit; otherwise why not:
//                  correctly_rounded (the registry's bound is one rounding: no growth to measure),
//                  failed (every call failed), no_finite_error, all_zero (exact at every n and
//                  seed), fewer_than_3_n (fewer than 3 n with a positive median)
nlohmann::ordered_json summarize(const CsvTable& t) {
  struct Series {
    std::string kind;
    int rows = 0, failed = 0;
    std::vector<double> n, error;
    std::vector<double> sizes;
  };
  std::map<std::string, Series> series;
  const int ci = t.column("dtype"), di = t.column("dist"), ai = t.column("algorithm"), bi = t.column("backend"),
            ni = t.column("n"), ei = t.column("rel_error"), vi = t.column("verdict");
  for (const auto& r : t.rows) {
    auto& s = series[r[ci] + "|" + r[di] + "|" + r[ai]];
    if (bi >= 0) s.kind = r[bi];
    ++s.rows;
    const double n = std::stod(r[ni]);
    s.sizes.push_back(n);
    if (vi >= 0 && r[vi] == to_string(Verdict::failed)) {
      ++s.failed;
      continue;
    }
    s.n.push_back(n);
    s.error.push_back(std::stod(r[ei]));
  }
  const auto number = [](const std::optional<double>& v) {
    return v ? nlohmann::ordered_json(*v) : nlohmann::ordered_json();
  };
  nlohmann::ordered_json fits = nlohmann::ordered_json::array();
  for (auto& [key, s] : series) {
    const auto p1 = key.find('|'), p2 = key.find('|', p1 + 1);
    const std::string algorithm = key.substr(p2 + 1);
    const GrowthOfMedians g = fit_growth_of_medians(s.n, s.error);
    std::sort(s.sizes.begin(), s.sizes.end());
    const auto sizes = std::unique(s.sizes.begin(), s.sizes.end()) - s.sizes.begin();
    std::string none_because;
    if (correctly_rounded_subject(s.kind, algorithm)) none_because = "correctly_rounded";
    else if (s.failed == s.rows) none_because = "failed";
    else if (g.none_because != NoGrowthFit::fitted) none_because = std::string(to_string(g.none_because));
    const bool ok = none_because.empty();
    nlohmann::ordered_json j;
    j["dtype"] = key.substr(0, p1);
    j["dist"] = key.substr(p1 + 1, p2 - p1 - 1);
    j["algorithm"] = algorithm;
    j["basis"] = kGrowthBasis;
    j["rows"] = s.rows;
    j["failed_rows"] = s.failed;
    j["nonfinite_rows"] = g.nonfinite_errors;
    j["zero_rows"] = g.zero_errors;
    j["sizes"] = sizes;
    j["distinct_n"] = g.distinct_n;
    j["n_min"] = number(g.n_min);
    j["n_max"] = number(g.n_max);
    j["none_because"] = ok ? nlohmann::ordered_json() : nlohmann::ordered_json(none_because);
    j["points"] = g.distinct_n;
    j["exponent"] = ok ? nlohmann::ordered_json(g.fit.exponent) : nlohmann::ordered_json();
    j["ci95"] = ok ? nlohmann::ordered_json::array({g.fit.ci_low, g.fit.ci_high}) : nlohmann::ordered_json();
    j["r_squared"] = ok ? nlohmann::ordered_json(g.fit.r_squared) : nlohmann::ordered_json();
    fits.push_back(j);
  }
  return fits;
}

// The names a list option resolves to (for the plan: "all" and the defaults spelled out).
template <class T> std::vector<std::string> algorithm_names(const std::vector<std::string>& names) {
  std::vector<std::string> out;
  for (const auto* a : pick<T>(names)) out.emplace_back(a->info.name);
  return out;
}
std::vector<std::string> kernel_names(const std::vector<GpuKernel>& kernels) {
  std::vector<std::string> out;
  for (GpuKernel k : kernels) out.emplace_back(info(k).name);
  return out;
}

std::uint64_t serial_max(const StudyOptions& o) {
  return static_cast<std::uint64_t>(parse_size(o.serial_max, "--serial-max"));
}

// The kernels in the plan, and gpu_serial's largest n when it is one of them (a bad --serial-max
// fails here, before the run folder is touched).
void plan_kernels(nlohmann::ordered_json& plan, const std::vector<GpuKernel>& kernels, const StudyOptions& o) {
  plan["gpu_kernels"] = kernel_names(kernels);
  if (std::find(kernels.begin(), kernels.end(), GpuKernel::serial) != kernels.end())
    plan["gpu_serial_max"] = serial_max(o);
}

// The kernels in the plan that claim no error bound at any n (a library peer the lab has no proof
// for; gpu_kernel.hpp's BoundKind::none). A row's no_bound verdict has two causes, and the report
// tells them apart by this list: no theorem at all, or a theorem whose condition fails at that n.
// External subjects (kind `external`) claim none either; their rows say so by their kind.
nlohmann::ordered_json no_bound_claimed(const std::vector<GpuKernel>& kernels) {
  auto names = nlohmann::ordered_json::array();
  for (GpuKernel k : kernels)
    if (info(k).bound_kind == BoundKind::none) names.push_back(std::string(info(k).name));
  return names;
}

// One accuracy cell of either study: `prefix` holds its identifying columns.
Cell accuracy(const StudyOptions& o, const std::vector<GpuKernel>& kernels, Backend* backend,
              const std::vector<std::shared_ptr<ExternalSum>>& subjects, const std::string& dtype,
              DistributionSpec spec, std::uint64_t n, std::uint64_t seed, bool check_reference,
              std::vector<std::string> prefix, const std::string& table, std::string key, std::string what,
              const std::shared_ptr<const InputData>& data) {
  // What the cell holds: its input, once on the host (the CPU algorithms take no copy, the
  // reference streams it) and, on cuda, once on the device.
  const std::uint64_t bytes = saturating_mul(n, parse_dtype(dtype) == Dtype::float32 ? 4 : 8);
  return {std::move(key), std::move(what), [=, &o, &kernels, &subjects]() -> CellRows {
            if (parse_dtype(dtype) == Dtype::float32) {
              const std::span<const float> d = data ? data->values<float>() : std::span<const float>();
              return {{table, accuracy_cell<float>(o.algorithms, kernels, serial_max(o), backend, subjects, spec, n, seed,
                                                   check_reference, prefix, d)}};
            }
            const std::span<const double> d = data ? data->values<double>() : std::span<const double>();
            return {{table, accuracy_cell<double>(o.algorithms, kernels, serial_max(o), backend, subjects, spec, n, seed,
                                                  check_reference, prefix, d)}};
          }, bytes};
}

// How the study's exact sums were computed, for summary.json.
std::string reference_method(const Backend* backend) {
  const std::string mpfr = "MPFR on the host copy (reference/mpfr_sum.hpp)";
  if (!backend || backend->kind() != BackendKind::cuda) return mpfr;
  return "cells whose data was on the device (GPU kernels, or a plugin's device entry): gpu_exact's exact limbs of "
         "sum x and sum |x| computed there (reference::ExactSum from totals), checked against " + mpfr +
         " (exact values) in every cell with n <= 2^24, and limb for limb against the CPU's superaccumulator "
         "(core/exact_sum.hpp) in the first seed's cells at the smallest n in (2^24, 2^28]; other cells: " + mpfr;
}

// The bytes of an input of n values of the widest of `dtypes`.
std::uint64_t input_bytes(std::uint64_t n, const std::vector<std::string>& dtypes) {
  const bool f64 = std::find(dtypes.begin(), dtypes.end(), "float64") != dtypes.end();
  return saturating_mul(n, f64 ? 8 : 4);
}

// How many accuracy cells run at once: as many as the host has cores for, since a cell's
// generation, reference, CPU algorithms and measures are serial. On cuda the cells take turns on
// the device (studies/backend.cpp's lock) while their host work overlaps. The inputs in flight
// together stay within twice the study's largest input (`largest_bytes`; a cell's Cell::bytes is
// its input's), so side by side costs at most one more input of memory than one by one, and
// within 80% of the host's memory and of the device's free memory. One at a time with the user's
// subjects (a Python callable or a plugin need not be thread-safe, and several take their global
// switches).
Concurrency cell_concurrency(const StudyOptions& o, const Backend* backend,
                             const std::vector<std::shared_ptr<ExternalSum>>& subjects, std::uint64_t largest_bytes) {
  if (!subjects.empty()) return {};
  std::uint64_t memory = std::min(memory_budget(), saturating_mul(largest_bytes, 2));
  if (backend && backend->kind() == BackendKind::cuda) memory = std::min(memory, backend->device_memory_budget());
  return {o.cells > 0 ? o.cells : static_cast<int>(std::max(1u, std::thread::hardware_concurrency())), memory};
}

// The plan's record of the user's subjects: names and configurations, and the plugins' libraries.
void plan_subjects(nlohmann::ordered_json& plan, const std::vector<std::shared_ptr<ExternalSum>>& subjects,
                   const std::vector<LoadedPlugin>& plugins) {
  if (subjects.empty()) return;
  nlohmann::ordered_json j = nlohmann::ordered_json::array();
  for (const auto& s : subjects) j.push_back({{"name", s->name()}, {"configs", s->configs()}});
  plan["externals"] = j;
  if (!plugins.empty()) plan["plugins"] = plugin_plan(plugins);
}

std::vector<std::string> generator_dtypes(const StudyOptions& o) {
  return o.dtypes.empty() ? std::vector<std::string>{"float32", "float64"} : o.dtypes;
}

void run_error_vs_n(const StudyOptions& o) {
  if (!o.input.empty() && !o.dists.empty())
    throw UserError("--dists has no effect with --input (the data's prefixes and subsamples are measured); drop it");
  const std::vector<std::string> dists =
      o.dists.empty() ? std::vector<std::string>{"uniform", "normal", "constant", "cancellation", "lognormal"}
                      : o.dists;
  for (const auto& d : dists) {
    try {
      (void)parse_distribution(d);
    } catch (const std::invalid_argument& e) {
      throw UserError(e.what());
    }
  }
  for (const auto& d : o.dtypes) (void)parse_dtype(d);
  const auto algorithms = algorithm_names<float>(o.algorithms);  // unknown names fail before any folder is touched
  const bool cuda = o.backend == "cuda" || (o.backend.empty() && cuda_backend_available());
  nlohmann::ordered_json plan;
  const auto data = open_study_data(o.input, o.input_format, o.flatten, 4);
  if (data) plan["input"] = data->plan();
  const auto sizes = data ? data_sizes<std::uint64_t>(sizes_for(o, cuda), data->size()) : sizes_for(o, cuda);
  const std::vector<std::string> dtypes = data ? data->dtypes(o.dtypes) : generator_dtypes(o);
  const std::vector<std::string> cell_dists = data ? std::vector<std::string>{"data"} : dists;
  const int seeds = o.seeds > 0 ? o.seeds : (o.quick ? 2 : 3);
  auto backend = o.backend == "cpu" ? nullptr : make_backend(o.backend);
  const auto kernels = pick_kernels(o.gpu_kernels, backend.get());
  const std::string backend_name = backend ? std::string(backend->name()) : "cpu";
  const auto plugins = load_plugins(o.plugins);
  const auto subjects = externals(with_plugins(o.externals, plugins));
  // After the names (a bad one is named, whatever n is), before anything is generated. The host
  // holds a cell's data only when something there reads it (a CPU algorithm, a user's subject, the
  // model's arithmetic, the user's file); on cuda with GPU kernels alone, only in the cells whose
  // reference is checked (checks_reference).
  std::uint64_t host_n = sizes.back();
  if (!data && backend && backend->kind() == BackendKind::cuda && pick<float>(o.algorithms).empty() && subjects.empty()) {
    host_n = 0;
    for (const auto n : sizes)
      if (checks_reference(sizes, n, 1)) host_n = std::max(host_n, n);
  }
  check_fits_in_memory(host_n, 8 * 2, fmt::format("n = {}", host_n));
  if (backend && backend->kind() == BackendKind::cuda && !kernels.empty()) {
    // The device holds the largest input (and its kernels' few-MB scratch): refused here, not
    // after the smaller cells have run.
    check_fits_on_device(*backend, input_bytes(sizes.back(), dtypes), fmt::format("n = {}", sizes.back()));
  }

  plan["dtypes"] = dtypes;
  plan["dists"] = cell_dists;
  plan["sizes"] = sizes;
  plan["seeds"] = seeds;
  plan["algorithms"] = algorithms;
  plan_kernels(plan, kernels, o);
  plan["backend"] = backend_name;
  plan_subjects(plan, subjects, plugins);
  Study study("error-vs-n", o.run, plan, backend_name, {{"error_vs_n.csv", kErrorVsNColumns}}, {"headlines.csv"});
  std::vector<Cell> cells;
  for (const auto& dtype : dtypes)
    for (const auto& dist : cell_dists)
      for (const auto n : sizes)
        for (int s = 1; s <= seeds; ++s) {
          DistributionSpec spec;
          if (!data) spec.kind = parse_distribution(dist);
          const auto seed = static_cast<std::uint64_t>(s);
          cells.push_back(accuracy(o, kernels, backend.get(), subjects, dtype, spec, n, seed,
                                   checks_reference(sizes, n, seed),
                                   {"error-vs-n", o.backend, dtype, dist, std::to_string(n), std::to_string(seed)},
                                   "error_vs_n.csv", fmt::format("{}|{}|{}|{}", dtype, dist, n, s),
                                   fmt::format("{} {} n={} seed={}", dtype, dist, n, s), data ? data->input : nullptr));
        }
  study.run(cells, cell_concurrency(o, backend.get(), subjects, input_bytes(sizes.back(), dtypes)));
  if (data) data->check_unchanged();
  // The seeds' figures: a phase of its own, written whole (recomputed if an interruption left it out).
  if (!study.folder().exists("headlines.csv")) study.folder().write_csv("headlines.csv", kHeadlineColumns, headline_rows());

  nlohmann::ordered_json summary;
  summary["csv"] = "error_vs_n.csv";
  summary["reference"] = reference_method(backend.get());
  summary["growth_fits"] = summarize(read_csv(study.folder().file("error_vs_n.csv")));
  summary["no_bound_claimed"] = no_bound_claimed(kernels);
  study.finish(summary);
}


const std::vector<std::string> kErrorVsCondColumns = {
    "study", "backend", "dtype", "n", "seed", "requested_condition", "algorithm", "value", "hex",
    "reference", "reference_hex", "abs_error", "rel_error", "ulps", "correct_bits", "bound",
    "within_bound", "sum_abs", "condition", "verdict", "note"};

// error-vs-cond on the user's data: the condition number is the data's own, measured on each
// prefix and seeded subsample (as error-vs-n draws them); requested_condition says "data".
void run_error_vs_cond_on_data(const StudyOptions& o) {
  const auto algorithms = algorithm_names<float>(o.algorithms);
  nlohmann::ordered_json plan;
  const auto data = open_study_data(o.input, o.input_format, o.flatten, 4);
  plan["input"] = data->plan();
  const std::string dtype = data->dtypes(o.dtypes)[0];
  const int seeds = o.seeds > 0 ? o.seeds : (o.quick ? 2 : 3);
  const auto sizes = data_sizes<std::uint64_t>(sizes_for(o, false), data->size());
  auto backend = o.backend == "cpu" ? nullptr : make_backend(o.backend);
  const auto kernels = pick_kernels(o.gpu_kernels, backend.get());
  const std::string backend_name = backend ? std::string(backend->name()) : "cpu";
  const auto plugins = load_plugins(o.plugins);
  const auto subjects = externals(with_plugins(o.externals, plugins));
  plan["sizes"] = sizes;
  plan["seeds"] = seeds;
  plan["algorithms"] = algorithms;
  plan_kernels(plan, kernels, o);
  plan["backend"] = backend_name;
  plan_subjects(plan, subjects, plugins);
  Study study("error-vs-cond", o.run, plan, backend_name, {{"error_vs_cond.csv", kErrorVsCondColumns}});
  std::vector<Cell> cells;
  for (const auto n : sizes)
    for (int s = 1; s <= seeds; ++s)
      cells.push_back(accuracy(o, kernels, backend.get(), subjects, dtype, {}, n, static_cast<std::uint64_t>(s),
                               checks_reference(sizes, n, static_cast<std::uint64_t>(s)),
                               {"error-vs-cond", o.backend, dtype, std::to_string(n), std::to_string(s), "data"},
                               "error_vs_cond.csv", fmt::format("{}|{}|{}", dtype, n, s),
                               fmt::format("data n={} seed={}", n, s), data->input));
  study.run(cells, cell_concurrency(o, backend.get(), subjects, input_bytes(sizes.back(), {dtype})));
  data->check_unchanged();
  study.finish({{"csv", "error_vs_cond.csv"},
                {"reference", reference_method(backend.get())},
                {"no_bound_claimed", no_bound_claimed(kernels)}});
}

// Relative error against the condition number sum|x|/|sum x| on Ogita-Rump-Oishi inputs:
// 10^0 .. 10^40 (float) / 10^60 (double).
void run_error_vs_cond(const StudyOptions& o, std::uint64_t n, int step) {
  if (!o.input.empty()) return run_error_vs_cond_on_data(o);
  const std::vector<std::string> dtypes = generator_dtypes(o);
  for (const auto& d : dtypes) (void)parse_dtype(d);
  const auto algorithms = algorithm_names<float>(o.algorithms);
  if (n < 4) throw UserError("error-vs-cond needs --n >= 4");
  if (step < 1) throw UserError("--decades-step must be >= 1");
  const int seeds = o.seeds > 0 ? o.seeds : (o.quick ? 2 : 3);
  auto backend = o.backend == "cpu" ? nullptr : make_backend(o.backend);
  const auto kernels = pick_kernels(o.gpu_kernels, backend.get());
  const std::string backend_name = backend ? std::string(backend->name()) : "cpu";
  const auto plugins = load_plugins(o.plugins);
  const auto subjects = externals(with_plugins(o.externals, plugins));
  check_fits_in_memory(n, 8 * 2, fmt::format("n = {}", n));
  std::vector<std::pair<std::string, int>> decades;  // (dtype, decade)
  for (const auto& dtype : dtypes)
    for (int k = 0; k <= (parse_dtype(dtype) == Dtype::float32 ? 40 : 60); k += step) decades.emplace_back(dtype, k);

  nlohmann::ordered_json plan;
  plan["dtypes"] = dtypes;
  plan["n"] = n;
  plan["decades_step"] = step;
  plan["seeds"] = seeds;
  plan["algorithms"] = algorithms;
  plan_kernels(plan, kernels, o);
  plan["backend"] = backend_name;
  plan_subjects(plan, subjects, plugins);
  Study study("error-vs-cond", o.run, plan, backend_name, {{"error_vs_cond.csv", kErrorVsCondColumns}});
  std::vector<Cell> cells;
  for (const auto& [dtype, k] : decades)
    for (int s = 1; s <= seeds; ++s) {
      const std::string cond = fmt::format("1e{}", k);
      DistributionSpec spec;
      spec.kind = Distribution::ill_conditioned;
      spec.condition = std::pow(10.0, k);
      const auto seed = static_cast<std::uint64_t>(s);
      cells.push_back(accuracy(o, kernels, backend.get(), subjects, dtype, spec, n, seed, checks_reference({n}, n, seed),
                               {"error-vs-cond", o.backend, dtype, std::to_string(n), std::to_string(seed), cond},
                               "error_vs_cond.csv", fmt::format("{}|{}|{}", dtype, cond, s),
                               fmt::format("{} cond={} seed={}", dtype, cond, s), nullptr));
    }
  study.run(cells, cell_concurrency(o, backend.get(), subjects, input_bytes(n, dtypes)));
  nlohmann::ordered_json summary;
  summary["csv"] = "error_vs_cond.csv";
  summary["reference"] = reference_method(backend.get());
  summary["n"] = n;
  summary["no_bound_claimed"] = no_bound_claimed(kernels);
  study.finish(summary);
}

void add_common(CLI::App* cmd, StudyOptions& o) {
  add_run_options(*cmd, o.run);
  cmd->add_flag("--quick", o.quick, "A small version that runs in seconds");
  cmd->add_option("--algorithms", o.algorithms, "Algorithms (comma list or 'all')")->delimiter(',');
  cmd->add_option("--dists", o.dists, "Distributions (comma list)")->delimiter(',');
  cmd->add_option("--dtypes", o.dtypes, "float32,float64 (default both; with --input, the data's own)")
      ->delimiter(',');
  cmd->add_option("--seeds", o.seeds, "Seeds per cell (default 3, quick 2)")->check(CLI::Range(1, 1000));
  cmd->add_option("--backend", o.backend,
                  "Where the GPU kernels run: cuda, model (the CPU executing their exact order), or cpu "
                  "(CPU algorithms only). Default: cuda when a GPU is present, else model")
      ->check(CLI::IsMember({"cuda", "model", "cpu"}));
  cmd->add_option("--gpu-kernels", o.gpu_kernels,
                  "GPU kernels (comma list, 'all' or 'none'; default all, none with --backend cpu)")
      ->delimiter(',');
  cmd->add_option("--cells", o.cells,
                  "Cells run side by side at most (default: the host's cores; their inputs within twice the largest "
                  "input and 80% of the host's and, on cuda, the device's memory; never with --external or --plugin "
                  "subjects). The results do not depend on it")
      ->check(CLI::Range(1, 4096));
  cmd->add_option("--serial-max", o.serial_max,
                  "Largest n for gpu_serial: one GPU thread adding in CPU serial's order (its bits are serial's), "
                  "which takes tens of seconds at 2^30")
      ->capture_default_str();
  add_text_option(*cmd, "--input", o.input,
                  "The user's data (.npy, .csv/.txt, raw with --format): error-vs-n over its prefixes (seed 1) "
                  "and seeded subsamples (seeds 2..), error-vs-cond with its own condition numbers");
  add_text_option(*cmd, "--format", o.input_format, "--input's format: npy, csv or raw (default: from the extension)");
  cmd->add_option("--flatten", o.flatten, "How a 2-D --input becomes one sequence: C (row by row) or F (column by column)");
  cmd->add_option("--external", o.externals,
                  "Subjects the user brings, by name (registered from Python; a --plugin's subject needs no "
                  "naming here)")
      ->delimiter(',');
  add_plugin_option(*cmd, o.plugins);
}

}  // namespace

void register_study(CLI::App& app) {
  auto* study = app.add_subcommand("study", "Run an accuracy study into a run folder");
  study->require_subcommand(1);
  auto o = std::make_shared<StudyOptions>();
  auto* evn = study->add_subcommand("error-vs-n", "Error against MPFR as n grows, per algorithm and distribution");
  add_common(evn, *o);
  evn->add_option("--log2-min", o->log2_min, "Smallest n = 2^k")->capture_default_str();
  evn->add_option("--log2-max", o->log2_max, "Largest n = 2^k (default 24 on the model, 30 on cuda; quick 20)");
  evn->add_option("--log2-step", o->log2_step, "Step of k in n = 2^k (default 1, quick 2)")->check(CLI::Range(1, 8));
  evn->callback([o] { run_error_vs_n(*o); });

  for (auto add : kOwnStudies) add(*study);

  auto c = std::make_shared<StudyOptions>();
  auto cn = std::make_shared<std::optional<std::string>>();
  auto step = std::make_shared<std::optional<int>>();
  auto* evc = study->add_subcommand("error-vs-cond",
                                    "Relative error against the condition number on ill-conditioned sums");
  add_common(evc, *c);
  evc->add_option("--n", *cn, "Elements per sum: N, 2^k, 2^k+c or 1e4 (default 10000, quick 1000)");
  evc->add_option("--decades-step", *step, "Condition numbers 10^0, 10^step, ... (default 2, quick 5)");
  evc->callback([c, cn, step] {
    if (!c->dists.empty()) throw UserError("error-vs-cond always uses the ill_conditioned generator");
    if (!c->input.empty() && (*cn || *step))
      throw UserError(fmt::format("{} has no effect with --input (the data's own condition numbers are measured); "
                                  "drop it",
                                  *cn ? "--n" : "--decades-step"));
    const std::uint64_t n = *cn ? static_cast<std::uint64_t>(parse_size(**cn, "--n")) : (c->quick ? 1000 : 10000);
    run_error_vs_cond(*c, n, step->value_or(c->quick ? 5 : 2));
  });
}

}  // namespace sumlab
