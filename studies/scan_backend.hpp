#pragma once
// The scan family's runners (studies/family_runner.hpp): a GPU scan runs on `cuda` (gpu/scan.hpp,
// timed) or on `model` (core/scan/scan_model.hpp, the CPU executing the kernels' order; no time, and
// no cub: the library peer is measured, not modelled).
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "core/scan/scan_kernel.hpp"
#include "core/scan/scan_ops.hpp"
#include "studies/backend.hpp"
#include "studies/external.hpp"
#include "studies/family_runner.hpp"

namespace sumlab {

// The CPU scans the scan study runs beside the GPU's, by the names their rows carry.
inline constexpr const char* kCpuScans[] = {"cpu_serial", "cpu_hillis_steele", "cpu_blelloch"};

// "NVIDIA H200 (132 SMs, ...)" or "CPU model of the scan kernels' order".
std::string scan_backend_description(BackendKind kind);

// The scan family's input: the values on a backend, uploaded once for cuda and read by every
// algorithm and shape.
template <class Op> class ScanKernelInput : public InputIdentity {
 public:
  using V = typename Op::Value;
  // x must stay alive and unchanged while the input is used. Throws UserError on a GPU failure.
  ScanKernelInput(BackendKind kind, std::span<const V> x);
  ~ScanKernelInput();
  ScanKernelInput(const ScanKernelInput&) = delete;
  ScanKernelInput& operator=(const ScanKernelInput&) = delete;
  BackendKind backend() const;
  std::span<const V> host() const;  // the values as given (what a user's scan reads)
  // The scan (empty unless want_out); on cuda, the median device time of `reps` scans. No value for
  // cub on the model backend (not modelled). Throws UserError for a shape the algorithm cannot
  // run or a GPU failure.
  Outcome<std::vector<V>> run(scan::GpuScan alg, const scan::ScanShape& s, bool inclusive, bool want_out = true,
                              int reps = 1) const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

template <class Op> using ScanRunner = FamilyRunner<ScanKernelInput<Op>, std::vector<typename Op::Value>>;

// Scan algorithm alg on `backend` (cuda or model), one configuration per shape (cub's label is
// "library": it picks its own tiling).
struct ScanRunOptions {
  bool inclusive = true;
  bool want_out = true;
  int reps = 1;  // timed scans on cuda
};
template <class Op>
std::unique_ptr<ScanRunner<Op>> scan_runner(scan::GpuScan alg, BackendKind backend, std::vector<scan::ScanShape> shapes,
                                            ScanRunOptions o = {});
// A user's scan (+ only), one configuration per keyword set; its failures (a throw, a result of
// another length or dtype, NaN for finite input: input_finite) are outcomes with the message.
template <class T>
std::unique_ptr<ScanRunner<scan::PlusOp<T>>> external_scan_runner(std::shared_ptr<ExternalArray> s, bool input_finite);

}  // namespace sumlab
