#pragma once
// Where a segmented strategy runs for a study or for verify: the CPU algorithms always on the CPU;
// the GPU strategies on `cuda` (gpu/segmented.hpp, timed) or on `model` (the CPU executing the
// kernel's exact order, core/segmented/segmented_model.hpp; no time; the CUB peers cannot run).
// Values and offsets are uploaded once per SegRunner. Backend names and default as the rows'
// (studies/row_backend.hpp: pick_row_backend, copy_bandwidth).
#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <vector>

#include "core/segmented/offsets.hpp"
#include "core/segmented/strategy.hpp"
#include "studies/backend.hpp"

namespace sumlab {

template <class T> struct SegRun {
  std::vector<T> sums;
  std::optional<double> ms;  // cuda: median device time of one run; otherwise none
};

template <class T> class SegRunner {
 public:
  // values and offsets must outlive the runner. Throws UserError for invalid offsets or a GPU
  // failure.
  SegRunner(BackendKind kind, std::span<const T> values, std::span<const segmented::Offset> offsets);
  ~SegRunner();
  SegRunner(const SegRunner&) = delete;
  SegRunner& operator=(const SegRunner&) = delete;
  // Whether `st` can run here (a peer needs the cuda backend).
  bool can_run(segmented::Strategy st) const;
  // Throws UserError for a shape the strategy refuses, a strategy this backend cannot run, or a
  // GPU failure. reps: timed runs on cuda. grid_cap: gpu_segmented's (0 = default).
  SegRun<T> run(segmented::Strategy st, const segmented::SegShape& s, int reps = 1, int grid_cap = 0) const;
  // The model's sums (any backend), for the GPU == model check.
  std::vector<T> model(segmented::Strategy st, const segmented::SegShape& s) const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace sumlab
