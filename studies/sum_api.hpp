#pragma once
// `sumlab sum` as a library call: one array, the selected CPU algorithms and GPU kernels, each
// result measured against the exact sum and judged against its bound. The CLI prints the rows;
// the Python package returns them; both take the same fields from row_json(), so the two faces
// of the lab give the same bits and the same words.
#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/error_bound.hpp"
#include "core/gpu_kernel.hpp"
#include "core/sum_result.hpp"
#include "reference/mpfr_sum.hpp"
#include "studies/backend.hpp"
#include "studies/shape_options.hpp"

namespace sumlab {

struct SumRequest {
  // Names of CPU algorithms and GPU kernels, "all" (every CPU algorithm) or "gpu" (every kernel).
  std::vector<std::string> algorithms{"all"};
  std::size_t pairwise_base = 1;    // "pairwise" with serial runs of this length at the leaves
  std::optional<int> fixed_scale;   // fixed_point and gpu_fixed_point: the caller's k (grid 2^-k)
  std::string backend;              // GPU kernels: "cuda", "model" or "" (cuda when a GPU is present)
  ShapeOverrides shape;             // launch-shape fields the caller set
  // Subjects the user brings (studies/external.hpp), by name: one row per configuration, backend
  // "external", no bound claimed; a failed call is a row without a value, verdict failed, its
  // message in the diagnostics.
  std::vector<std::string> externals;
  // Progress on stderr (studies/progress.hpp) from this many elements up: the reference, then each
  // subject as it finishes (0: never; the CLI sets it, the Python package does not).
  std::uint64_t progress_from = 0;
};

template <class T> struct SumRow {
  std::string algorithm;
  std::string backend = "cpu";
  std::optional<LaunchShape> shape;  // GPU kernels that take one
  std::vector<std::string> ignored;  // shape fields given that this kernel does not read
  bool has_value = true;             // false: a library peer on the model backend, a failed external call
  SumResult<T> result;
  reference::ErrorMetrics metrics;
  double bound = 0;  // +inf: no bound holds (core/error_bound.hpp)
  Verdict verdict = Verdict::within;
};

template <class T> struct SumReport {
  T reference{};                     // the exact sum correctly rounded to T (studies/backend.hpp, exact_reference)
  std::string reference_method;      // how the exact sum was computed: "MPFR", or on the device (and checked)
  reference::ErrorMetrics input;     // of the input (sum_abs, condition, special flags)
  std::string backend_description;   // empty when no GPU kernel ran
  std::vector<SumRow<T>> rows;
};

// Everything sum_report refuses before it runs (names, options, the backend, every kernel's launch
// shape for n values), checked without the data: a caller checks before generating or reading n
// values. Throws UserError as sum_report does.
template <class T> void check_sum_request(const SumRequest& req, std::int64_t n);

// What a request reads for n values, resolved by the same selection sum_report makes: whether it
// runs GPU kernels, and whether anything reads the data on the host (a CPU algorithm, a user's
// subject, or the reference's MPFR check up to kReferenceCheckMax elements).
struct SumNeeds {
  bool kernels = false;
  bool host = false;
};
SumNeeds sum_needs(const SumRequest& req, std::uint64_t n);

// Resolves the names (a UserError lists the valid ones for an unknown name), then runs and
// measures everything. On the cuda backend the input is loaded once; `device` (cuda only) is the
// same data already on the device (a framework's array): the kernels read it in place.
template <class T>
SumReport<T> sum_report(const SumRequest& req, std::span<const T> x, KernelInput<T>* device = nullptr);
// The same on an input a backend loaded or generated (Backend::generate: on cuda the data is made
// on the device and the exact sum computed there, so it crosses PCIe only when a CPU algorithm or a
// subject without a device entry reads it, or n <= kReferenceCheckMax checks the reference).
template <class T> SumReport<T> sum_report(const SumRequest& req, KernelInput<T>& input);

// One algorithm's or one kernel's result and nothing else: no reference, no measures, and for a
// kernel on `device` no host copy (what a caller who sums with the lab, or times it, wants).
// req.algorithms names exactly one; req.externals is ignored. UserError as sum_report's, and for a
// library peer that has no value on the model backend.
template <class T> T sum_value(const SumRequest& req, std::span<const T> x, KernelInput<T>* device = nullptr);

// A row's measurements as `sum` reports them (text, CSV, JSON and Python alike), each absent
// (nullopt: "none"/"n/a" in text, empty in CSV, null in JSON, None in Python) where no number
// would be a measurement or a theorem:
// - every one when the row has no value (a library peer on the model backend, a failed call);
// - bound when the verdict is special_input, exact_overflow or intermediate_overflow: every bound
//   assumes finite inputs and no overflow (core/error_bound.hpp), so none applies. Where a
//   theorem's condition fails for this n (no_bound) the bound stays +inf, as documented;
// - ulps when the exact sum is 0 and the error is not: ulp(0) is the smallest subnormal, so the
//   count would measure the error against the format's range, not the sum (serial on 1, 1e8,
//   -1e8, -1 in float32 would read 7.1e44 ulps). An exact 0 result keeps 0 ulps;
// - ulps_from_rounded when the value or the reference is NaN (signed_ulp_distance would say 0).
// ulps_from_rounded = signed_ulp_distance(value, reference): positive when the value lies above
// the correctly rounded sum, as in the determinism study's CSV (data/README.md). Errors of a
// special result stay NaN ("nan"), as ErrorMetrics defines them.
struct RowMeasures {
  std::optional<double> abs_error, rel_error, ulps, correct_bits, bound;
  std::optional<std::int64_t> ulps_from_rounded;
  std::optional<bool> special;
};
template <class T> RowMeasures row_measures(const SumReport<T>& report, const SumRow<T>& row);

// The JSON object of one row, as `sum --json` prints it and the Python package returns it.
template <class T> nlohmann::ordered_json row_json(const SumReport<T>& report, const SumRow<T>& row, std::size_t n);

// A kernel's launch shape as JSON: "text" names the fields it reads (shape_text), "canonical" is
// the whole canonical shape (to_string, what --resume and golden files match), then each field.
nlohmann::ordered_json shape_json(GpuKernel k, const LaunchShape& s);

// The GPU kernels among `names`, in the order given: a gpu_* name selects that kernel, "all" or
// "gpu" every kernel but the diagnostic one; other names (CPU algorithms) are skipped. A gpu_* name
// that is not a kernel throws UserError listing the valid ones.
std::vector<GpuKernel> select_gpu_kernels(const std::vector<std::string>& names);

}  // namespace sumlab
