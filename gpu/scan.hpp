#pragma once
// The GPU scans behind a plain C++ API (no CUDA types: studies/ and tests build with the host
// compiler): warp Hillis-Steele and block Blelloch, each device-wide by scan-then-propagate, and the
// warp scan's tiles chained in one pass (their order and shape rules: core/scan/scan_kernel.hpp;
// bit-exact CPU model: core/scan/scan_model.hpp),
// and cub::DeviceScan as the library peer (measured, not modelled). Operators: core/scan/scan_ops.hpp
// (plus, max, segmented, affine) over float and double.
//
// Timing: CUDA events around runs of whole scans back to back (all levels of scan-then-propagate,
// the chained kernel, or the one CUB call), as the sums are timed; the median per scan of reps
// such runs reported (gpu/host/cuda_host.cuh, time_back_to_back). The input stays resident; a
// study times sizes whose input plus output are several times the L2 cache (50 MiB on an H200),
// so the cache does not flatter the memory-bound comparison.
// Failures (a shape validate_scan_shape refuses, memory, any CUDA error with its file:line) come
// back as GpuScanResult::error, one sentence; nothing crashes or hangs.
#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "core/scan/scan_kernel.hpp"
#include "core/scan/scan_ops.hpp"
#include "gpu/gpu_sum.hpp"  // GpuError, gpu_available

namespace sumlab::gpu {

// n scan values resident on the device, uploaded once and reused by every algorithm and shape.
// With copies > 1 the device holds that many copies and a timed run of scans reads them in turn,
// as the sums' bench rotates its inputs, so that an input smaller than the L2 is not read from the
// L2 by the next scan (every copy holds the same values: every scan gives the same outputs).
// Throws GpuError when there is no GPU, it does not fit, or a CUDA call fails;
// std::invalid_argument when copies < 1.
template <class V> class ScanInput {
 public:
  explicit ScanInput(std::span<const V> host, int copies = 1);
  ~ScanInput();
  ScanInput(ScanInput&&) noexcept;
  ScanInput& operator=(ScanInput&&) noexcept;
  ScanInput(const ScanInput&) = delete;
  ScanInput& operator=(const ScanInput&) = delete;
  std::int64_t size() const;
  int copies() const;
  const V* device_data(int copy = 0) const;  // copy `copy` mod copies(); opaque to host code

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

struct ScanRunOptions {
  bool want_out = true;  // download the n outputs of the last launch
  int reps = 1;          // timed samples, median reported; > 1: each a run of scans back to back
                         // (detail::time_back_to_back), 1: one scan timed alone
};

template <class V> struct GpuScanResult {
  std::vector<V> out;  // the last launch's outputs (empty unless want_out)
  double ms = 0;       // median device time of one whole scan
  std::string error;   // non-empty: nothing valid ran
  bool ok() const { return error.empty(); }
};

// Op is one of scan::PlusOp, MaxOp, SegmentedOp, AffineOp over float or double.
template <class Op>
GpuScanResult<typename Op::Value> gpu_scan(scan::GpuScan alg, const scan::ScanShape& s,
                                           const ScanInput<typename Op::Value>& x, bool inclusive,
                                           const ScanRunOptions& opts = {});

// Uploads first (prefer the ScanInput overload in loops).
template <class Op>
GpuScanResult<typename Op::Value> gpu_scan(scan::GpuScan alg, const scan::ScanShape& s,
                                           std::span<const typename Op::Value> x, bool inclusive,
                                           const ScanRunOptions& opts = {});

// The chained scan's look-back alone, on a chain prepared to order (tests): tiles 0 .. t - 1 of
// `aggregates` (A_0 .. A_t, t >= 1) have published their aggregates, and their inclusive prefixes
// P_k (the left fold of A_0 .. A_k) only at the k in `inclusive_at` (k = 0 always). One block of
// `block` threads runs tile t's look-back, by all its warps (`by_block`: the 4-byte kernels' way,
// up to 8 windows of 32 predecessors at once, then warp 0 walks on alone) or by warp 0 alone. No
// tile waits, so every walk and every reload of a window the stash no longer holds is exercised
// deterministically, however far back the nearest P lies.
template <class V> struct ChainProbeResult {
  V carry{};      // P_{t-1}, as the look-back returned it
  V published{};  // P_t, as tile t published it
  std::string error;
  bool ok() const { return error.empty(); }
};
template <class Op>
ChainProbeResult<typename Op::Value> gpu_chain_look_back(std::span<const typename Op::Value> aggregates,
                                                         std::span<const std::int64_t> inclusive_at, int block,
                                                         bool by_block);

}  // namespace sumlab::gpu
