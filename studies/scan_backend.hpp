#pragma once
// Where a GPU scan runs for a study or `sumlab verify`: `cuda` (gpu/scan.hpp, timed) or `model`
// (core/scan/scan_model.hpp, the CPU executing the kernels' order; no time, and no cub: the
// library peer is measured, not modelled). The input is uploaded once per ScanRunner.
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "core/scan/scan_kernel.hpp"
#include "studies/backend.hpp"

namespace sumlab {

// "NVIDIA H200 (132 SMs, ...)" or "CPU model of the scan kernels' order".
std::string scan_backend_description(BackendKind kind);

template <class V> struct ScanRun {
  bool has_value = false;    // false: cub on the model backend (not modelled)
  std::vector<V> out;        // empty unless want_out
  std::optional<double> ms;  // cuda: median device time of one scan
};

template <class Op> class ScanRunner {
 public:
  using V = typename Op::Value;
  // x must stay alive while the runner is used. Throws UserError on a GPU failure.
  ScanRunner(BackendKind kind, std::span<const V> x);
  ~ScanRunner();
  ScanRunner(const ScanRunner&) = delete;
  ScanRunner& operator=(const ScanRunner&) = delete;
  // Throws UserError for a shape the algorithm cannot run or a GPU failure.
  ScanRun<V> run(scan::GpuScan alg, const scan::ScanShape& s, bool inclusive, bool want_out = true,
                 int reps = 1) const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace sumlab
