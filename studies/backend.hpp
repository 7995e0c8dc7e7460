#pragma once
// Where a GPU kernel's sum comes from: `cuda`, a real GPU (gpu/), or `model`, the CPU executing the
// kernel's exact order (core/order_model/). A study is written once against this interface; on a
// machine without a GPU the model backend gives the same bits for every deterministic kernel
// (that is what `sumlab verify` checks on a GPU).
//
// A backend loads an input once and runs many kernels and shapes on it (KernelInput): on cuda the
// data lives on the device (uploaded once, generated there by the CPU's own generator, or a
// framework's device array used in place), so a cell of a study crosses PCIe at most once.
// The CPU algorithms run on the host copy; external reductions (studies/external.hpp) on theirs.
#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "core/exact_sum.hpp"
#include "core/generators.hpp"
#include "core/gpu_kernel.hpp"
#include "core/launch_shape.hpp"
#include "reference/mpfr_sum.hpp"

namespace sumlab {

enum class BackendKind { cuda, model };
std::string_view to_string(BackendKind b);

template <class T> struct KernelOutcome {
  bool has_value = false;  // false: not modelled (library peers on the model backend), or racy
  T value{};
  double accumulator = 0;  // gpu_double_acc: the double total before rounding; else the value
  double ms = 0;           // device time (cuda), or 0 (model)
  std::string note;        // e.g. the fixed-point scale, "one arrival order", why no value
  double quantisation = 0; // gpu_fixed_point on cuda: its grid's error bound, from the kernel's count
};

// An input's exact sum and exact sum of magnitudes, unrounded (what reference::ExactSum measures
// every result against).
template <class T> struct ExactTotals {
  Superaccumulator<T> sum, sum_abs;
};

// Which input an object of a family holds (KernelInput, ScanKernelInput, RowKernelInput,
// SegKernelInput), unique in the process and never reused: an input's data does not change while
// the input is used, so two calls given the same id read the same bytes. A user's subject may then
// keep what it made from an input (sumlab.Subject's prepared device copy) under its id, without
// keeping a copy of the data to know it again or reading all of it on every call.
class InputIdentity {
 public:
  InputIdentity();
  std::uint64_t input_id() const { return id_; }

 private:
  std::uint64_t id_;
};

// One input, held where the backend's kernels read it.
template <class T> class KernelInput : public InputIdentity {
 public:
  virtual ~KernelInput() = default;
  // The input on the host, for the CPU algorithms and the reference (downloaded once, on first
  // use, when the data came from the device).
  virtual std::span<const T> host() = 0;
  virtual std::int64_t size() const = 0;
  // Whether the input lives in device memory (cuda backend), and where: what a plugin's device
  // entry reads in place. device_data() is nullptr off the device, and also for an empty input on
  // it (nothing was allocated), so on_device() is what says which entry to call.
  virtual bool on_device() const { return false; }
  virtual const T* device_data() const { return nullptr; }
  // The exact totals computed where the data lies without a host copy (gpu_exact's kernel on cuda,
  // ExactTotals), or nothing: the caller computes them from host().
  virtual std::optional<ExactTotals<T>> exact_totals() { return std::nullopt; }
  // Throws UserError for a shape the kernel cannot run (validate_shape's sentence), options it does
  // not take (validate_options') or a GPU failure.
  virtual KernelOutcome<T> run(GpuKernel k, const LaunchShape& s, const KernelOptions& opt = {}) = 0;
};

class Backend {
 public:
  virtual ~Backend() = default;
  virtual BackendKind kind() const = 0;
  std::string_view name() const { return to_string(kind()); }
  // "NVIDIA H200 (132 SMs, driver CUDA 13.0, runtime 13.0)" or "CPU model of the kernels' order".
  virtual std::string description() const = 0;
  // Multiprocessors, for default grids (4 blocks per SM): the GPU's, or 132 (an H200) for the model.
  virtual int sm_count() const = 0;
  // Device memory the study may fill (80% of what was free when the backend was made), or 0 when
  // the kernels read host memory (the model).
  virtual std::uint64_t device_memory_budget() const { return 0; }

  // The caller's data (kept alive and unchanged by the caller while the input is used): uploaded
  // once on cuda.
  virtual std::unique_ptr<KernelInput<float>> load(std::span<const float> x) = 0;
  virtual std::unique_ptr<KernelInput<double>> load(std::span<const double> x) = 0;
  // Generated where the kernels read it: on cuda by the device generator (element i the same pure
  // function of (seed, i) as on the CPU, spot-checked against it at 1025 indices; the host copy is
  // downloaded only when host() asks), except ill_conditioned (host-only).
  virtual std::unique_ptr<KernelInput<float>> generate_f32(const DistributionSpec& spec, std::uint64_t seed, std::int64_t n) = 0;
  virtual std::unique_ptr<KernelInput<double>> generate_f64(const DistributionSpec& spec, std::uint64_t seed, std::int64_t n) = 0;

  // One launch on data loaded for just this call (prefer load() for several kernels or shapes).
  template <class T> KernelOutcome<T> sum(GpuKernel k, const LaunchShape& s, std::span<const T> x, const KernelOptions& o = {}) {
    return load(x)->run(k, s, o);
  }
  template <class T> std::unique_ptr<KernelInput<T>> generate(const DistributionSpec& spec, std::uint64_t seed, std::int64_t n) {
    if constexpr (sizeof(T) == 4) return generate_f32(spec, seed, n);
    else return generate_f64(spec, seed, n);
  }
};

// An input's exact sum: where the data lies (gpu_exact's limbs of the sum and of the magnitudes,
// brought from the device, exact; no host copy), else MPFR's on the host copy. With `check`, the
// device's is checked on the host copy: up to kReferenceCheckMax elements against MPFR's (an
// independent library), above it against the CPU's Superaccumulator (core/exact_sum.hpp, itself
// tested against MPFR), limb for limb on the host's cores, an equality of the exact totals that
// costs a small part of MPFR's time. A difference is the lab's error, not a measurement, and throws
// std::runtime_error.
template <class T> std::unique_ptr<reference::ExactSum<T>> exact_reference(KernelInput<T>& in, bool check);
// Inputs of at most this many elements check the device's exact sum against MPFR's (a host copy
// of at most 128 MiB); larger ones are checked by sample (the studies) or not at all (`sum`).
constexpr std::uint64_t kReferenceCheckMax = std::uint64_t{1} << 24;

// The exact totals of host data (Σx and Σ|x|), on the host's cores: each thread's Superaccumulators
// over a contiguous part, merged (integer addition: the split changes nothing but the time).
template <class T> ExactTotals<T> host_exact_totals(std::span<const T> x);

// Throws ResourceError when `bytes` exceed what the backend's device may hold
// (device_memory_budget(); the model's inputs are on the host, checked by check_fits_in_memory).
// `what` names the request ("n = 2^34").
void check_fits_on_device(const Backend& backend, std::uint64_t bytes, const std::string& what);

// "cuda", "model", or "" for the default: cuda when a usable GPU is present, else model.
// "cuda" without a GPU throws UserError("no CUDA device: <why>"); an unknown name lists the valid.
std::unique_ptr<Backend> make_backend(const std::string& name);

// Whether this build can talk to a GPU at all, and whether one is present now (with the reason).
bool cuda_backend_available(std::string* why = nullptr);

#if defined(SUMLAB_WITH_CUDA)
// A framework's device array used in place (no copy): `device_ptr` must stay valid and unchanged
// while the input is used. Throws UserError without a GPU.
template <class T> std::unique_ptr<KernelInput<T>> view_device(const T* device_ptr, std::int64_t n);
// gpu_exact's correctly rounded sum of a framework's device array into a device scalar of the same
// dtype, asynchronously on the default stream (gpu/gpu_sum.hpp, gpu_exact_into): the repeatable
// sum that costs the kernel's time. `s` as resolve_shape gives it. Throws UserError with the reason.
template <class T> void exact_sum_into(const T* device_ptr, std::int64_t n, T* device_out, const LaunchShape& s);
// The device's SM count (asked once), for default shapes of calls that must stay cheap.
int device_sm_count();
#endif

}  // namespace sumlab
