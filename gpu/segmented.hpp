#pragma once
// The segmented-sum strategies on the GPU behind a plain C++ API (no CUDA types: studies/ and
// tests build with the host compiler), like gpu/rows.hpp. Values and CSR offsets are uploaded
// once (SegmentedInput) and reused by every strategy and shape. Strategies, their order and
// determinism: core/segmented/strategy.hpp; bit-exact CPU models of the modelled ones:
// core/segmented/segmented_model.hpp. The CUB peers live in gpu/device/segmented_peers.cu.
//
// Every strategy writes +0 for an empty segment (the CUB peers included: DeviceSegmentedReduce
// writes its initial value T() for an empty segment, and reduce_by_key's scatter leaves the
// memset +0 where no run exists). Offsets are validated on the host (core/segmented/offsets.hpp;
// the reduce-by-key peer's segment ids are int32, so it refuses more than 2^31 - 1 segments).
// Failures (bad offsets or shape, out of memory, a CUDA error with its file:line) come back as
// GpuSegmentedResult::error, one sentence; nothing crashes or hangs.
#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "core/segmented/offsets.hpp"
#include "core/segmented/strategy.hpp"
#include "gpu/gpu_sum.hpp"  // GpuError, gpu_available

namespace sumlab::gpu {

template <class T> class SegmentedInput {
 public:
  // Validates the offsets (std::invalid_argument) and uploads both arrays (GpuError when they do
  // not fit or a CUDA call fails). With copies > 1 the device holds that many copies of the values
  // and a timed run of launches reads them in turn, as the sums' bench rotates its inputs, so that
  // values smaller than the L2 are not read from the L2 by the next launch (every copy holds the
  // same values: every launch gives the same sums); copies < 1 is std::invalid_argument.
  SegmentedInput(std::span<const T> values, std::span<const segmented::Offset> offsets, int copies = 1);
  ~SegmentedInput();
  SegmentedInput(SegmentedInput&&) noexcept;
  SegmentedInput& operator=(SegmentedInput&&) noexcept;
  SegmentedInput(const SegmentedInput&) = delete;
  SegmentedInput& operator=(const SegmentedInput&) = delete;
  std::int64_t size() const;      // n values
  std::int64_t segments() const;  // offsets.size() - 1
  // The offsets as uploaded, for peers that need host-side checks.
  std::span<const segmented::Offset> host_offsets() const;
  int copies() const;
  const T* device_values(int copy = 0) const;             // copy `copy` mod copies(); opaque to host code
  const segmented::Offset* device_offsets() const;        // opaque to host code

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

template <class T> struct GpuSegmentedResult {
  std::vector<T> sums;  // one per segment, from the last launch
  double ms = 0;        // median device time of one run (all of its launches; CUDA events)
  std::string error;    // non-empty: nothing valid ran
  bool ok() const { return error.empty(); }
};

// Runs strategy `st` (a GPU one) with shape `s` (ignored by the peers). reps >= 1 timed samples,
// median reported; > 1: each a run of launches back to back (detail::time_back_to_back), 1: one
// run timed alone. grid_cap bounds the grid of the per-segment kernels (0:
// 8 x the SM count); it changes no result, which is what the study's "across launch shapes"
// check confirms for warp_per_segment.
template <class T>
GpuSegmentedResult<T> gpu_segmented(segmented::Strategy st, const segmented::SegShape& s, const SegmentedInput<T>& in,
                                    int reps = 1, int grid_cap = 0);

// Uploads first (prefer the SegmentedInput overload in loops).
template <class T>
GpuSegmentedResult<T> gpu_segmented(segmented::Strategy st, const segmented::SegShape& s, std::span<const T> values,
                                    std::span<const segmented::Offset> offsets, int reps = 1, int grid_cap = 0);

extern template class SegmentedInput<float>;
extern template class SegmentedInput<double>;

}  // namespace sumlab::gpu
