#include "studies/scan_backend.hpp"

#include <stdexcept>

#include "core/scan/scan_model.hpp"
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

template <class Op> struct ScanRunner<Op>::Impl {
  BackendKind kind;
  std::span<const V> x;
#if defined(SUMLAB_WITH_CUDA)
  std::unique_ptr<gpu::ScanInput<V>> device;
#endif
};

template <class Op> ScanRunner<Op>::ScanRunner(BackendKind kind, std::span<const V> x) : impl_(std::make_unique<Impl>()) {
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

template <class Op> ScanRunner<Op>::~ScanRunner() = default;

template <class Op>
ScanRun<typename Op::Value> ScanRunner<Op>::run(scan::GpuScan alg, const scan::ScanShape& s, bool inclusive,
                                                bool want_out, int reps) const {
  ScanRun<V> r;
#if defined(SUMLAB_WITH_CUDA)
  if (impl_->kind == BackendKind::cuda) {
    gpu::ScanRunOptions o;
    o.want_out = want_out;
    o.reps = reps;
    auto g = gpu::gpu_scan<Op>(alg, s, *impl_->device, inclusive, o);
    if (!g.ok()) throw UserError(g.error);
    r.has_value = true;
    r.out = std::move(g.out);
    r.ms = g.ms;
    return r;
  }
#endif
  (void)reps;
  if (!scan::is_modelled(alg)) return r;
  try {
    r.out = scan::model_scan<Op>(alg, s, impl_->x, inclusive);
  } catch (const std::invalid_argument& e) {
    throw UserError(e.what());
  }
  r.has_value = true;
  if (!want_out) r.out.clear();
  return r;
}

template class ScanRunner<scan::PlusOp<float>>;
template class ScanRunner<scan::PlusOp<double>>;
template class ScanRunner<scan::MaxOp<float>>;
template class ScanRunner<scan::MaxOp<double>>;
template class ScanRunner<scan::SegmentedOp<float>>;
template class ScanRunner<scan::SegmentedOp<double>>;
template class ScanRunner<scan::AffineOp<float>>;
template class ScanRunner<scan::AffineOp<double>>;

}  // namespace sumlab
