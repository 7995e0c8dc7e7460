#include "studies/scan_backend.hpp"

#include <stdexcept>
#include <utility>

#include "core/scan/scan_model.hpp"
#include "core/float_traits.hpp"
#include "core/scan/scan_ops.hpp"
#include "studies/commands.hpp"
#include "studies/row_backend.hpp"

#if defined(SUMLAB_WITH_CUDA)
#include "gpu/scan.hpp"
#endif

namespace sumlab {

std::string scan_backend_description(BackendKind kind) {
  if (kind == BackendKind::cuda) return row_backend_description(kind);  // the device line
  return "CPU model of the scan kernels' order (core/scan/scan_model.hpp)";
}

template <class Op> struct ScanKernelInput<Op>::Impl {
  BackendKind kind;
  std::span<const V> x;
#if defined(SUMLAB_WITH_CUDA)
  std::unique_ptr<gpu::ScanInput<V>> device;
#endif
};

template <class Op>
ScanKernelInput<Op>::ScanKernelInput(BackendKind kind, std::span<const V> x) : impl_(std::make_unique<Impl>()) {
  impl_->kind = kind;
  impl_->x = x;
#if defined(SUMLAB_WITH_CUDA)
  if (kind == BackendKind::cuda) {
    try {
      impl_->device = std::make_unique<gpu::ScanInput<V>>(x);
    } catch (const std::exception& e) {
      throw UserError(e.what());
    }
  }
#else
  if (kind == BackendKind::cuda) throw UserError("this sumlab was built without CUDA");
#endif
}

template <class Op> ScanKernelInput<Op>::~ScanKernelInput() = default;

template <class Op> BackendKind ScanKernelInput<Op>::backend() const { return impl_->kind; }
template <class Op> std::span<const typename Op::Value> ScanKernelInput<Op>::host() const { return impl_->x; }

template <class Op>
Outcome<std::vector<typename Op::Value>> ScanKernelInput<Op>::run(scan::GpuScan alg, const scan::ScanShape& s,
                                                                  bool inclusive, bool want_out, int reps) const {
  Outcome<std::vector<V>> r;
#if defined(SUMLAB_WITH_CUDA)
  if (impl_->kind == BackendKind::cuda) {
    gpu::ScanRunOptions o;
    o.want_out = want_out;
    o.reps = reps;
    auto g = gpu::gpu_scan<Op>(alg, s, *impl_->device, inclusive, o);
    if (!g.ok()) throw UserError(g.error);
    r.has_value = true;
    r.value = std::move(g.out);
    r.ms = g.ms;
    return r;
  }
#endif
  (void)reps;
  if (!scan::is_modelled(alg)) {
    r.note = "cub is measured, not modelled: it needs the cuda backend";
    return r;
  }
  try {
    r.value = scan::model_scan<Op>(alg, s, impl_->x, inclusive);
  } catch (const std::invalid_argument& e) {
    throw UserError(e.what());
  }
  r.has_value = true;
  if (!want_out) r.value.clear();
  return r;
}

namespace {

template <class Op> class ScanAlgorithmRunner final : public ScanRunner<Op> {
 public:
  ScanAlgorithmRunner(scan::GpuScan alg, BackendKind b, std::vector<scan::ScanShape> shapes, ScanRunOptions o)
      : alg_(alg), backend_(b), shapes_(std::move(shapes)), o_(o) {}
  RunnerKind kind() const override { return backend_ == BackendKind::cuda ? RunnerKind::cuda : RunnerKind::model; }
  std::string name() const override { return std::string(scan::to_string(alg_)); }
  Determinism declared() const override { return scan::declared_determinism(alg_, Op::name); }
  std::size_t configs() const override { return shapes_.size(); }
  std::string config_label(std::size_t c) const override {
    return alg_ == scan::GpuScan::cub ? "library" : scan::to_string(shapes_[c]);
  }
  Outcome<std::vector<typename Op::Value>> run(std::size_t c, ScanKernelInput<Op>& x) override {
    if (x.backend() != backend_) throw std::logic_error(name() + ": the input is on another backend");
    return x.run(alg_, shapes_[c], o_.inclusive, o_.want_out, o_.reps);
  }

 private:
  scan::GpuScan alg_;
  BackendKind backend_;
  std::vector<scan::ScanShape> shapes_;
  ScanRunOptions o_;
};

template <class T> class ExternalScanRunner final : public ExternalRunnerBase<ScanRunner<scan::PlusOp<T>>, ExternalArray> {
 public:
  using ExternalRunnerBase<ScanRunner<scan::PlusOp<T>>, ExternalArray>::ExternalRunnerBase;
  Outcome<std::vector<T>> run(std::size_t c, ScanKernelInput<scan::PlusOp<T>>& x) override {
    const std::span<const T> in = x.host();
    const ExternalData d{FloatTraits<T>::dtype, in.data(), {static_cast<std::int64_t>(in.size())}, {}, x.input_id()};
    return run_external_array<T>(*this->s_, c, d, in.size(), this->finite_);
  }
};

}  // namespace

template <class T>
std::unique_ptr<ScanRunner<scan::PlusOp<T>>> external_scan_runner(std::shared_ptr<ExternalArray> s, bool input_finite) {
  return std::make_unique<ExternalScanRunner<T>>(std::move(s), input_finite);
}
template std::unique_ptr<ScanRunner<scan::PlusOp<float>>> external_scan_runner<float>(std::shared_ptr<ExternalArray>, bool);
template std::unique_ptr<ScanRunner<scan::PlusOp<double>>> external_scan_runner<double>(std::shared_ptr<ExternalArray>, bool);

template <class Op>
std::unique_ptr<ScanRunner<Op>> scan_runner(scan::GpuScan alg, BackendKind backend, std::vector<scan::ScanShape> shapes,
                                            ScanRunOptions o) {
  return std::make_unique<ScanAlgorithmRunner<Op>>(alg, backend, std::move(shapes), o);
}

#define SUMLAB_SCANS(Op)                                                                                           \
  template class ScanKernelInput<Op>;                                                                              \
  template std::unique_ptr<ScanRunner<Op>> scan_runner<Op>(scan::GpuScan, BackendKind, std::vector<scan::ScanShape>, \
                                                           ScanRunOptions);
SUMLAB_SCANS(scan::PlusOp<float>)
SUMLAB_SCANS(scan::PlusOp<double>)
SUMLAB_SCANS(scan::MaxOp<float>)
SUMLAB_SCANS(scan::MaxOp<double>)
SUMLAB_SCANS(scan::SegmentedOp<float>)
SUMLAB_SCANS(scan::SegmentedOp<double>)
SUMLAB_SCANS(scan::AffineOp<float>)
SUMLAB_SCANS(scan::AffineOp<double>)
#undef SUMLAB_SCANS

}  // namespace sumlab
