#pragma once
// The segmented family's runners (studies/family_runner.hpp): the CPU algorithms always run on the
// CPU; the GPU strategies on `cuda` (gpu/segmented.hpp, timed) or on `model` (the CPU executing the
// kernel's exact order, core/segmented/segmented_model.hpp; no time; the CUB peers cannot run).
// Backend names and default as the rows' (studies/row_backend.hpp: pick_row_backend,
// copy_bandwidth).
#include <cstdint>
#include <memory>
#include <span>
#include <vector>

#include "core/segmented/offsets.hpp"
#include "core/segmented/strategy.hpp"
#include "studies/backend.hpp"
#include "studies/external.hpp"
#include "studies/family_runner.hpp"

namespace sumlab {

// The segmented family's input: values and offsets on a backend, uploaded once for cuda and read by
// every strategy and shape.
template <class T> class SegKernelInput : public InputIdentity {
 public:
  // values and offsets must outlive the input, unchanged. Throws UserError for invalid offsets or a GPU
  // failure.
  SegKernelInput(BackendKind kind, std::span<const T> values, std::span<const segmented::Offset> offsets);
  ~SegKernelInput();
  SegKernelInput(const SegKernelInput&) = delete;
  SegKernelInput& operator=(const SegKernelInput&) = delete;
  BackendKind backend() const;
  // The values and offsets on the host (what a user's subject reads).
  std::span<const T> values() const;
  std::span<const segmented::Offset> offsets() const;
  // Whether `st` can run here (a peer needs the cuda backend).
  bool can_run(segmented::Strategy st) const;
  // The per-segment sums; a GPU strategy on cuda also gives the median device time of `reps` runs.
  // grid_cap: gpu_segmented's (0 = default). Throws UserError for a shape the strategy refuses, a
  // strategy this backend cannot run, or a GPU failure.
  Outcome<std::vector<T>> run(segmented::Strategy st, const segmented::SegShape& s, int reps = 1,
                              int grid_cap = 0) const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

template <class T> using SegRunner = FamilyRunner<SegKernelInput<T>, std::vector<T>>;

// Strategy st, one configuration per shape: a CPU strategy on the host whatever the backend, a GPU
// strategy on `backend` (cuda or model). reps: timed runs on cuda; grid_cap as above.
template <class T>
std::unique_ptr<SegRunner<T>> segmented_runner(segmented::Strategy st, BackendKind backend,
                                               std::vector<segmented::SegShape> shapes, int reps = 1, int grid_cap = 0);

// A user's segment sums (studies/external.hpp, kind segment_sums) as a runner of the family: it reads
// the host's values and offsets; a failed call (it threw, returned another length, NaN for finite
// input, a value not of T's) is an outcome with its message. input_finite: every value is finite.
template <class T>
std::unique_ptr<SegRunner<T>> external_segmented_runner(std::shared_ptr<ExternalArray> s, bool input_finite);

}  // namespace sumlab
