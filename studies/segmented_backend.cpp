#include "studies/segmented_backend.hpp"

#include <stdexcept>
#include <string>

#include "core/segmented/cpu_segmented.hpp"
#include "core/segmented/segmented_model.hpp"
#include "studies/commands.hpp"

#if defined(SUMLAB_WITH_CUDA)
#include "gpu/segmented.hpp"
#endif

namespace sumlab {

using segmented::Offset;
using segmented::SegShape;
using segmented::Strategy;
using segmented::Where;

template <class T> struct SegRunner<T>::Impl {
  BackendKind kind;
  std::span<const T> x;
  std::span<const Offset> off;
#if defined(SUMLAB_WITH_CUDA)
  std::unique_ptr<gpu::SegmentedInput<T>> device;
#endif
};

template <class T>
SegRunner<T>::SegRunner(BackendKind kind, std::span<const T> values, std::span<const Offset> offsets)
    : impl_(std::make_unique<Impl>()) {
  impl_->kind = kind;
  impl_->x = values;
  impl_->off = offsets;
  try {
    segmented::validate_offsets(offsets, values.size());
  } catch (const std::invalid_argument& e) {
    throw UserError(e.what());
  }
#if defined(SUMLAB_WITH_CUDA)
  if (kind == BackendKind::cuda) {
    try {
      impl_->device = std::make_unique<gpu::SegmentedInput<T>>(values, offsets);
    } catch (const std::exception& e) {
      throw UserError(e.what());
    }
  }
#else
  if (kind == BackendKind::cuda) throw UserError("this sumlab was built without CUDA");
#endif
}

template <class T> SegRunner<T>::~SegRunner() = default;

template <class T> bool SegRunner<T>::can_run(Strategy st) const {
  return segmented::info(st).where != Where::gpu_peer || impl_->kind == BackendKind::cuda;
}

template <class T> std::vector<T> SegRunner<T>::model(Strategy st, const SegShape& s) const {
  try {
    return segmented::model_segmented<T>(st, s, impl_->x, impl_->off);
  } catch (const std::invalid_argument& e) {
    throw UserError(e.what());
  }
}

template <class T> SegRun<T> SegRunner<T>::run(Strategy st, const SegShape& s, int reps, int grid_cap) const {
  SegRun<T> r;
  switch (st) {
    case Strategy::serial_per_segment: r.sums = segmented::serial_per_segment<T>(impl_->x, impl_->off); return r;
    case Strategy::prefix_difference: r.sums = segmented::prefix_difference<T>(impl_->x, impl_->off); return r;
    case Strategy::reduceat: r.sums = segmented::reduceat<T>(impl_->x, impl_->off); return r;
    default: break;
  }
#if defined(SUMLAB_WITH_CUDA)
  if (impl_->kind == BackendKind::cuda) {
    auto g = gpu::gpu_segmented<T>(st, s, *impl_->device, reps, grid_cap);
    if (!g.ok()) throw UserError(std::string(segmented::info(st).name) + ": " + g.error);
    r.sums = std::move(g.sums);
    r.ms = g.ms;
    return r;
  }
#endif
  (void)reps;
  (void)grid_cap;
  if (!can_run(st))
    throw UserError(std::string(segmented::info(st).name) + " is a CUB peer: it needs the cuda backend");
  r.sums = model(st, s);
  return r;
}

template class SegRunner<float>;
template class SegRunner<double>;

}  // namespace sumlab
