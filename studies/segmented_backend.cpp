#include "studies/segmented_backend.hpp"

#include <stdexcept>
#include <string>
#include <utility>

#include "core/float_traits.hpp"
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

template <class T> struct SegKernelInput<T>::Impl {
  BackendKind kind;
  std::span<const T> x;
  std::span<const Offset> off;
#if defined(SUMLAB_WITH_CUDA)
  std::unique_ptr<gpu::SegmentedInput<T>> device;
#endif
};

template <class T>
SegKernelInput<T>::SegKernelInput(BackendKind kind, std::span<const T> values, std::span<const Offset> offsets)
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

template <class T> SegKernelInput<T>::~SegKernelInput() = default;

template <class T> BackendKind SegKernelInput<T>::backend() const { return impl_->kind; }
template <class T> std::span<const T> SegKernelInput<T>::values() const { return impl_->x; }
template <class T> std::span<const Offset> SegKernelInput<T>::offsets() const { return impl_->off; }

template <class T> bool SegKernelInput<T>::can_run(Strategy st) const {
  return segmented::info(st).where != Where::gpu_peer || impl_->kind == BackendKind::cuda;
}

template <class T>
Outcome<std::vector<T>> SegKernelInput<T>::run(Strategy st, const SegShape& s, int reps, int grid_cap) const {
  Outcome<std::vector<T>> r;
  r.has_value = true;
  switch (st) {
    case Strategy::serial_per_segment: r.value = segmented::serial_per_segment<T>(impl_->x, impl_->off); return r;
    case Strategy::prefix_difference: r.value = segmented::prefix_difference<T>(impl_->x, impl_->off); return r;
    case Strategy::reduceat: r.value = segmented::reduceat<T>(impl_->x, impl_->off); return r;
    default: break;
  }
#if defined(SUMLAB_WITH_CUDA)
  if (impl_->kind == BackendKind::cuda) {
    auto g = gpu::gpu_segmented<T>(st, s, *impl_->device, reps, grid_cap);
    if (!g.ok()) throw UserError(std::string(segmented::info(st).name) + ": " + g.error);
    r.value = std::move(g.sums);
    r.ms = g.ms;
    return r;
  }
#endif
  (void)reps;
  (void)grid_cap;
  if (!can_run(st))
    throw UserError(std::string(segmented::info(st).name) + " is a CUB peer: it needs the cuda backend");
  try {
    r.value = segmented::model_segmented<T>(st, s, impl_->x, impl_->off);
  } catch (const std::invalid_argument& e) {
    throw UserError(e.what());
  }
  return r;
}

namespace {

template <class T> class StrategyRunner final : public SegRunner<T> {
 public:
  StrategyRunner(Strategy st, BackendKind b, std::vector<SegShape> shapes, int reps, int grid_cap)
      : st_(st), backend_(b), shapes_(std::move(shapes)), reps_(reps), grid_cap_(grid_cap) {}
  RunnerKind kind() const override {
    if (segmented::info(st_).where == Where::cpu) return RunnerKind::cpu;
    return backend_ == BackendKind::cuda ? RunnerKind::cuda : RunnerKind::model;
  }
  std::string name() const override { return std::string(segmented::info(st_).name); }
  Determinism declared() const override { return segmented::info(st_).determinism; }
  std::size_t configs() const override { return shapes_.size(); }
  std::string config_label(std::size_t c) const override { return segmented::to_string(shapes_[c], st_); }
  Outcome<std::vector<T>> run(std::size_t c, SegKernelInput<T>& x) override {
    if (x.backend() != backend_) throw std::logic_error(name() + ": the input is on another backend");
    return x.run(st_, shapes_[c], reps_, grid_cap_);
  }

 private:
  Strategy st_;
  BackendKind backend_;
  std::vector<SegShape> shapes_;
  int reps_, grid_cap_;
};

template <class T> class ExternalSegRunner final : public ExternalRunnerBase<SegRunner<T>, ExternalArray> {
 public:
  using ExternalRunnerBase<SegRunner<T>, ExternalArray>::ExternalRunnerBase;
  Outcome<std::vector<T>> run(std::size_t c, SegKernelInput<T>& x) override {
    const ExternalData d{FloatTraits<T>::dtype, x.values().data(), {static_cast<std::int64_t>(x.values().size())},
                         x.offsets(), x.input_id()};
    return run_external_array<T>(*this->s_, c, d, x.offsets().size() - 1, this->finite_);
  }
};

}  // namespace

template <class T>
std::unique_ptr<SegRunner<T>> external_segmented_runner(std::shared_ptr<ExternalArray> s, bool input_finite) {
  if (s->kind() != ArrayKind::segment_sums) throw std::logic_error(s->name() + " does not sum segments");
  return std::make_unique<ExternalSegRunner<T>>(std::move(s), input_finite);
}

template <class T>
std::unique_ptr<SegRunner<T>> segmented_runner(Strategy st, BackendKind backend, std::vector<SegShape> shapes, int reps,
                                               int grid_cap) {
  return std::make_unique<StrategyRunner<T>>(st, backend, std::move(shapes), reps, grid_cap);
}

#define SUMLAB_SEGMENTED(T)                                                                                      \
  template class SegKernelInput<T>;                                                                              \
  template std::unique_ptr<SegRunner<T>> segmented_runner<T>(Strategy, BackendKind, std::vector<SegShape>, int, int); \
  template std::unique_ptr<SegRunner<T>> external_segmented_runner<T>(std::shared_ptr<ExternalArray>, bool);
SUMLAB_SEGMENTED(float)
SUMLAB_SEGMENTED(double)
#undef SUMLAB_SEGMENTED

}  // namespace sumlab
