#include "studies/sum_api.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <optional>

#include "core/cpu_algorithms.hpp"
#include "core/fixed_point_sum.hpp"
#include "core/float_traits.hpp"
#include "core/metrics.hpp"
#include "studies/commands.hpp"
#include "studies/external.hpp"
#include "studies/json_number.hpp"
#include "studies/memory_check.hpp"
#include "studies/progress.hpp"
#include "studies/runner.hpp"

namespace sumlab {
namespace {

// The CPU algorithms among `names` ("all": every one); GPU kernel names are left to
// select_gpu_kernels; anything else is a UserError listing the valid names.
template <class T> std::vector<const CpuAlgorithm<T>*> select_algorithms(const std::vector<std::string>& names) {
  std::vector<const CpuAlgorithm<T>*> out;
  for (const auto& name : names) {
    if (name == "all") {
      for (const auto& a : cpu_algorithms<T>()) out.push_back(&a);
      continue;
    }
    if (name == "gpu" || name.rfind("gpu_", 0) == 0) continue;
    const auto* a = find_cpu_algorithm<T>(name);
    if (!a) {
      std::string valid;
      for (const auto& b : cpu_algorithms<T>()) valid += (valid.empty() ? "" : ", ") + std::string(b.info.name);
      throw UserError("unknown algorithm '" + name + "' (valid: all, gpu, " + valid + ", " + gpu_kernel_names() + ")");
    }
    out.push_back(a);
  }
  // "all,serial" names serial twice: one row each, in the registry's order of first mention.
  std::vector<const CpuAlgorithm<T>*> unique;
  for (const auto* a : out)
    if (std::find(unique.begin(), unique.end(), a) == unique.end()) unique.push_back(a);
  return unique;
}

// One CPU algorithm with the request's options: pairwise with serial leaves of pairwise_base,
// fixed_point at the caller's scale.
template <class T> SumResult<T> cpu_result(const CpuAlgorithm<T>& a, const SumRequest& req, std::span<const T> x) {
  if (a.info.name == "pairwise" && req.pairwise_base != 1) return pairwise_with_base<T>(x, req.pairwise_base);
  if (a.info.name == "fixed_point" && req.fixed_scale) return fixed_point_sum<T>(x, req.fixed_scale);
  return a.sum(x);
}
template <class T> std::unique_ptr<Runner<T>> cpu_runner_for(const CpuAlgorithm<T>& a, const SumRequest& req) {
  if (a.info.name != "pairwise" || req.pairwise_base == 1)
    return cpu_runner<T>(a, [&a, req](std::span<const T> x) { return cpu_result<T>(a, req, x); }, a.bound);
  const std::size_t base = req.pairwise_base;
  return cpu_runner<T>(a, [base](std::span<const T> x) { return pairwise_with_base<T>(x, base); },
                       [base](const BoundInput& in) { return pairwise_bound<T>(base, in); });
}

KernelOptions kernel_options(GpuKernel k, const SumRequest& req) {
  KernelOptions o;
  if (k == GpuKernel::fixed_point) o.fixed_scale = req.fixed_scale;
  return o;
}

// Outcome o of configuration c of runner r, measured against the exact sum and judged.
template <class T>
SumRow<T> measured_row(const Runner<T>& r, std::size_t c, const Outcome<T>& o, KernelInput<T>& input,
                       const reference::ExactSum<T>& exact, const reference::ErrorMetrics& in) {
  SumRow<T> row;
  row.algorithm = r.row_name(c);
  row.backend = std::string(to_string(r.kind()));
  if (const auto k = r.kernel(); k && info(*k).shape_fields != 0) row.shape = r.shape(c);
  row.ignored = r.ignored(c);
  row.has_value = o.has_value;
  row.result.value = o.has_value ? o.value : std::numeric_limits<T>::quiet_NaN();
  row.result.extra_error_bound = o.quantisation;
  row.result.diagnostics = o.note;
  row.metrics = exact.measure(row.result.value);
  row.bound = r.bound(c, o, input, {static_cast<std::size_t>(input.size()), in.sum_abs, std::fabs(in.exact), 0.0});
  row.verdict = o.failed ? Verdict::failed : o.has_value ? judge(row.metrics.judged(), row.bound) : Verdict::no_bound;
  return row;
}

}  // namespace

std::vector<GpuKernel> select_gpu_kernels(const std::vector<std::string>& names) {
  std::vector<GpuKernel> out;
  for (const auto& name : names) {
    if (name == "all" || name == "gpu") {
      for (const auto& k : gpu_kernels())
        if (!k.diagnostic_only) out.push_back(k.kernel);
      continue;
    }
    if (name.rfind("gpu_", 0) != 0) continue;
    const auto k = find_gpu_kernel(name);
    if (!k) throw UserError("unknown GPU kernel '" + name + "' (valid: " + gpu_kernel_names(true) + ")");
    out.push_back(*k);
  }
  std::vector<GpuKernel> unique;  // "gpu,gpu_two_pass": one row each
  for (GpuKernel k : out)
    if (std::find(unique.begin(), unique.end(), k) == unique.end()) unique.push_back(k);
  return unique;
}

namespace {

// What a request selects, resolved for n values: every name, option and launch shape is checked
// here, before anything is generated, read or run.
template <class T> struct SumSelection {
  std::vector<const CpuAlgorithm<T>*> algorithms;
  std::unique_ptr<Backend> backend;  // when a GPU kernel is named or a backend asked for
  std::vector<std::pair<GpuKernel, ResolvedShape>> shapes;
  std::vector<std::shared_ptr<ExternalSum>> subjects;
};

// The request's GPU kernels: 'all' means every CPU algorithm here; 'gpu' selects every kernel.
std::vector<GpuKernel> request_kernels(const SumRequest& req) {
  std::vector<std::string> gpu_names;
  for (const auto& name : req.algorithms)
    if (name != "all") gpu_names.push_back(name);
  return select_gpu_kernels(gpu_names);
}

template <class T> SumSelection<T> select_sum(const SumRequest& req, std::int64_t n) {
  SumSelection<T> sel;
  sel.algorithms = select_algorithms<T>(req.algorithms);
  const auto kernels = request_kernels(req);
  const bool fixed_named = std::any_of(sel.algorithms.begin(), sel.algorithms.end(),
                                       [](const auto* a) { return a->info.name == "fixed_point"; }) ||
                           std::find(kernels.begin(), kernels.end(), GpuKernel::fixed_point) != kernels.end();
  if (req.fixed_scale && !fixed_named)
    throw UserError("--fixed-scale applies to fixed_point and gpu_fixed_point; the selection has neither");
  sel.subjects = externals(req.externals);
  if (!kernels.empty() || !req.backend.empty()) sel.backend = make_backend(req.backend);
  for (GpuKernel k : kernels) {
    if (info(k).float_input_only && sizeof(T) != 4) {  // gpu_double_acc: 'gpu' selects it for float32 only
      const std::string name(info(k).name);
      if (std::find(req.algorithms.begin(), req.algorithms.end(), name) != req.algorithms.end())
        throw UserError(name + " takes float32 input only (this input is " + std::string(FloatTraits<T>::dtype) + ")");
      continue;
    }
    sel.shapes.emplace_back(k, resolve_shape(req.shape, k, sel.backend->sm_count(), FloatTraits<T>::dtype, n));
    // The model runs gpu_multi_add (Harris's kernel 7) with an accumulator for every thread of
    // its grid (core/order_model/classic_trees.hpp), so a shape can ask it for far more memory
    // than n values take: refused here, naming the shape, before anything is generated or run.
    if (info(k).family == KernelFamily::multi_add && sel.backend->kind() == BackendKind::model) {
      const LaunchShape& s = sel.shapes.back().second.shape;
      const std::uint64_t threads = std::uint64_t(s.grid) * std::uint64_t(s.block);
      check_fits_in_memory(threads, sizeof(T),
                           fmt::format("the model of {} at --grid {} x --block {} ({} threads, an accumulator "
                                       "each, for n = {})",
                                       info(k).name, s.grid, s.block, threads, n));
    }
  }
  return sel;
}

}  // namespace

template <class T> void check_sum_request(const SumRequest& req, std::int64_t n) { select_sum<T>(req, n); }

SumNeeds sum_needs(const SumRequest& req, std::uint64_t n) {
  SumNeeds needs;
  needs.kernels = !request_kernels(req).empty();
  needs.host = !select_algorithms<float>(req.algorithms).empty() || !req.externals.empty() || n <= kReferenceCheckMax;
  return needs;
}

namespace {

// Runs the selection on `input` and measures every result against the exact sum, computed where
// the data lies (exact_reference) and, up to kReferenceCheckMax elements, checked against MPFR's.
template <class T> SumReport<T> report_on(const SumRequest& req, SumSelection<T>& sel, KernelInput<T>& input) {
  auto& [algorithms, backend, shapes, subjects] = sel;
  const auto n = static_cast<std::uint64_t>(input.size());
  SumReport<T> report;
  std::optional<Progress> progress;
  if (req.progress_from > 0 && n >= req.progress_from)
    progress.emplace("sum", 1 + algorithms.size() + shapes.size() + subjects.size());
  const bool check = n <= kReferenceCheckMax;
  const auto exact = exact_reference<T>(input, check);
  // exact_reference takes the device's limbs wherever the input lies on the device.
  report.reference_method = !input.on_device() ? "MPFR"
                            : check            ? "gpu_exact's limbs on the device, equal to MPFR's"
                                               : "gpu_exact's limbs on the device";
  if (progress) progress->step("the exact reference (" + report.reference_method + ")");
  report.reference = static_cast<T>(exact->rounded());
  report.input = exact->measure(report.reference);
  Runners<T> runners;
  for (const auto* a : algorithms) runners.push_back(cpu_runner_for<T>(*a, req));
  for (const auto& [k, resolved] : shapes)
    runners.push_back(kernel_runner<T>(k, backend->kind(), {resolved.shape}, kernel_options(k, req), {resolved.ignored}));
  for (const auto& subject : subjects) runners.push_back(external_runner<T>(subject, !report.input.input_special));
  if (backend) report.backend_description = backend->description();
  const auto outcomes =
      run_all<T>(runners, input, 0, progress ? [&](const std::string& name) { progress->step(name); }
                                             : std::function<void(const std::string&)>());
  if (progress) progress->finish();
  for (std::size_t r = 0; r < runners.size(); ++r)
    for (std::size_t c = 0; c < outcomes[r].size(); ++c)
      report.rows.push_back(measured_row<T>(*runners[r], c, outcomes[r][c], input, *exact, report.input));
  return report;
}

}  // namespace

template <class T>
SumReport<T> sum_report(const SumRequest& req, std::span<const T> x, KernelInput<T>* device) {
  auto sel = select_sum<T>(req, device ? device->size() : static_cast<std::int64_t>(x.size()));
  if (device) return report_on<T>(req, sel, *device);
  // The input where the kernels read it, loaded once for them and for the subjects' device
  // entries (on the cuda backend: one upload).
  const bool device_subjects = sel.backend && sel.backend->kind() == BackendKind::cuda && reads_device<T>(sel.subjects);
  const auto input = sel.backend && (!sel.shapes.empty() || device_subjects) ? sel.backend->load(x) : host_input(x);
  return report_on<T>(req, sel, *input);
}

template <class T> SumReport<T> sum_report(const SumRequest& req, KernelInput<T>& input) {
  auto sel = select_sum<T>(req, input.size());
  return report_on<T>(req, sel, input);
}

template <class T> T sum_value(const SumRequest& req, std::span<const T> x, KernelInput<T>* device) {
  if (req.algorithms.size() != 1 || req.algorithms[0] == "all" || req.algorithms[0] == "gpu")
    throw UserError("a value is one algorithm's or one kernel's: name exactly one");
  const std::string& name = req.algorithms[0];
  if (name.rfind("gpu_", 0) != 0) {
    if (req.fixed_scale && name != "fixed_point") throw UserError("fixed_scale applies to fixed_point and gpu_fixed_point");
    if (!req.backend.empty()) (void)make_backend(req.backend);  // a backend asked for must exist, as for a report
    return cpu_result<T>(*select_algorithms<T>({name}).front(), req, device ? device->host() : x).value;
  }
  const GpuKernel k = select_gpu_kernels({name}).front();
  if (req.fixed_scale && k != GpuKernel::fixed_point)
    throw UserError("fixed_scale applies to fixed_point and gpu_fixed_point");
  if (info(k).float_input_only && sizeof(T) != 4) throw UserError(name + " takes float32 input only");
  const auto backend = make_backend(req.backend);
  const std::int64_t n = device ? device->size() : static_cast<std::int64_t>(x.size());
  const ResolvedShape resolved = resolve_shape(req.shape, k, backend->sm_count(), FloatTraits<T>::dtype, n);
  std::unique_ptr<KernelInput<T>> loaded;
  if (!device) device = (loaded = backend->load(x)).get();
  const KernelOutcome<T> out = device->run(k, resolved.shape, kernel_options(k, req));
  if (!out.has_value) throw UserError(name + " has no value on the " + std::string(backend->name()) + " backend" +
                                      (out.note.empty() ? "" : ": " + out.note));
  return out.value;
}

nlohmann::ordered_json shape_json(GpuKernel k, const LaunchShape& s) {
  nlohmann::ordered_json j;
  j["text"] = shape_text(k, s);
  j["canonical"] = to_string(s);
  j["grid"] = s.grid;
  j["block"] = s.block;
  j["vector"] = s.vector;
  j["mapping"] = std::string(to_string(s.mapping));
  j["warp_stage"] = std::string(to_string(s.warp));
  j["block_stage"] = std::string(to_string(s.block_stage));
  j["cross_block"] = std::string(to_string(s.cross));
  return j;
}

template <class T> RowMeasures row_measures(const SumReport<T>& report, const SumRow<T>& r) {
  RowMeasures m;
  if (!r.has_value) return m;
  const auto& e = r.metrics;
  m.abs_error = e.abs_error;
  m.rel_error = e.rel_error;
  m.correct_bits = e.correct_bits;
  m.special = e.special;
  // The exact sum is 0 exactly when its correctly rounded value is: a nonzero exact sum of values
  // of T is a multiple of T's smallest subnormal, so it never rounds to 0.
  if (!(report.reference == 0 && e.abs_error != 0)) m.ulps = e.ulps;
  if (!std::isnan(r.result.value) && !std::isnan(report.reference))
    m.ulps_from_rounded = signed_ulp_distance(r.result.value, report.reference);
  if (r.verdict != Verdict::special_input && r.verdict != Verdict::exact_overflow &&
      r.verdict != Verdict::intermediate_overflow)
    m.bound = r.bound;
  return m;
}

template <class T>
nlohmann::ordered_json row_json(const SumReport<T>& report, const SumRow<T>& r, std::size_t n) {
  nlohmann::ordered_json j;
  j["algorithm"] = r.algorithm;
  j["backend"] = r.backend;
  j["shape"] = r.shape ? shape_json(*find_gpu_kernel(r.algorithm), *r.shape) : nlohmann::ordered_json();
  j["ignored_shape_fields"] = r.ignored;
  j["dtype"] = std::string(FloatTraits<T>::dtype);
  j["n"] = n;
  j["has_value"] = r.has_value;
  const RowMeasures m = row_measures(report, r);
  const auto number = [](const std::optional<double>& v) { return v ? json_number(*v) : nlohmann::ordered_json(); };
  const auto value = [&](auto v) { return r.has_value ? nlohmann::ordered_json(v) : nlohmann::ordered_json(); };
  j["value"] = r.has_value ? json_number(r.result.value) : nlohmann::ordered_json();
  j["value_decimal"] = value(fmt::format("{}", r.result.value));
  j["hex"] = value(hex_bits(r.result.value));
  j["reference"] = json_number(report.reference);
  j["reference_hex"] = hex_bits(report.reference);
  j["reference_method"] = report.reference_method;
  j["abs_error"] = number(m.abs_error);
  j["rel_error"] = number(m.rel_error);
  j["ulps"] = number(m.ulps);
  j["ulps_from_rounded"] = m.ulps_from_rounded ? nlohmann::ordered_json(*m.ulps_from_rounded) : nlohmann::ordered_json();
  j["correct_bits"] = number(m.correct_bits);
  j["bound"] = number(m.bound);
  j["verdict"] = std::string(to_string(r.verdict));
  j["within_bound"] = r.verdict == Verdict::within    ? nlohmann::ordered_json(true)
                      : r.verdict == Verdict::exceeds ? nlohmann::ordered_json(false)
                                                      : nlohmann::ordered_json();
  j["sum_abs"] = json_number(r.metrics.sum_abs);
  j["condition"] = json_number(r.metrics.condition);
  j["special"] = m.special ? nlohmann::ordered_json(*m.special) : nlohmann::ordered_json();
  j["diagnostics"] = r.result.diagnostics;
  return j;
}

template SumReport<float> sum_report<float>(const SumRequest&, std::span<const float>, KernelInput<float>*);
template SumReport<double> sum_report<double>(const SumRequest&, std::span<const double>, KernelInput<double>*);
template SumReport<float> sum_report<float>(const SumRequest&, KernelInput<float>&);
template SumReport<double> sum_report<double>(const SumRequest&, KernelInput<double>&);
template void check_sum_request<float>(const SumRequest&, std::int64_t);
template void check_sum_request<double>(const SumRequest&, std::int64_t);
template float sum_value<float>(const SumRequest&, std::span<const float>, KernelInput<float>*);
template double sum_value<double>(const SumRequest&, std::span<const double>, KernelInput<double>*);
template RowMeasures row_measures<float>(const SumReport<float>&, const SumRow<float>&);
template RowMeasures row_measures<double>(const SumReport<double>&, const SumRow<double>&);
template nlohmann::ordered_json row_json<float>(const SumReport<float>&, const SumRow<float>&, std::size_t);
template nlohmann::ordered_json row_json<double>(const SumReport<double>&, const SumRow<double>&, std::size_t);

}  // namespace sumlab
