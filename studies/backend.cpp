#include "studies/backend.hpp"

#include "core/float_traits.hpp"
#include "core/order_model/model_sum.hpp"
#include "studies/commands.hpp"

#if defined(SUMLAB_WITH_CUDA)
#include "gpu/gpu_sum.hpp"
#endif

namespace sumlab {

std::string_view to_string(BackendKind b) { return b == BackendKind::cuda ? "cuda" : "model"; }

bool cuda_backend_available(std::string* why) {
#if defined(SUMLAB_WITH_CUDA)
  return gpu::gpu_available(why);
#else
  if (why) *why = "no CUDA device: this sumlab was built without CUDA (configure with -DSUMLAB_CUDA=ON)";
  return false;
#endif
}

namespace {

class ModelBackend final : public Backend {
 public:
  BackendKind kind() const override { return BackendKind::model; }
  std::string description() const override {
    return "CPU model of the kernels' order (core/order_model), 132 SMs assumed for default grids";
  }
  int sm_count() const override { return 132; }
  KernelOutcome<float> sum(GpuKernel k, const LaunchShape& s, std::span<const float> x, const KernelOptions& opt) override {
    return run(k, s, x, opt);
  }
  KernelOutcome<double> sum(GpuKernel k, const LaunchShape& s, std::span<const double> x, const KernelOptions& opt) override {
    return run(k, s, x, opt);
  }

 private:
  template <class T>
  static KernelOutcome<T> run(GpuKernel k, const LaunchShape& s, std::span<const T> x, const KernelOptions& opt) {
    const ModelResult<T> m = model_sum<T>(k, s, x, opt);
    if (!m.error.empty()) throw UserError(m.error);
    KernelOutcome<T> o;
    o.has_value = m.has_value;
    o.value = m.value;
    o.accumulator = m.accumulator;
    o.note = m.note;
    return o;
  }
};

#if defined(SUMLAB_WITH_CUDA)
class CudaBackend final : public Backend {
 public:
  CudaBackend() : info_(gpu::device_info()) {}
  BackendKind kind() const override { return BackendKind::cuda; }
  std::string description() const override {
    return info_.name + " (" + std::to_string(info_.sm_count) + " SMs, compute " + std::to_string(info_.cc_major) +
           "." + std::to_string(info_.cc_minor) + ", driver CUDA " + info_.driver_version + ", runtime " +
           info_.runtime_version + ")";
  }
  int sm_count() const override { return info_.sm_count; }
  KernelOutcome<float> sum(GpuKernel k, const LaunchShape& s, std::span<const float> x, const KernelOptions& opt) override {
    return run(k, s, x, opt);
  }
  KernelOutcome<double> sum(GpuKernel k, const LaunchShape& s, std::span<const double> x, const KernelOptions& opt) override {
    return run(k, s, x, opt);
  }

 private:
  template <class T>
  static KernelOutcome<T> run(GpuKernel k, const LaunchShape& s, std::span<const T> x, const KernelOptions& opt) {
    const gpu::GpuSumResult<T> r = gpu::gpu_sum<T>(k, s, x, opt);
    if (!r.ok()) throw UserError(r.error);
    KernelOutcome<T> o;
    o.has_value = !info(k).diagnostic_only;
    o.value = r.value;
    o.accumulator = r.accumulator;
    o.ms = r.ms;
    o.note = r.note;
    return o;
  }
  gpu::DeviceInfo info_;
};
#endif

}  // namespace

std::unique_ptr<Backend> make_backend(const std::string& name) {
  if (name == "model") return std::make_unique<ModelBackend>();
  if (name != "" && name != "cuda") throw UserError("unknown backend '" + name + "' (valid: cuda, model)");
  std::string why;
  const bool gpu = cuda_backend_available(&why);
  if (name == "cuda" && !gpu) throw UserError(why);
#if defined(SUMLAB_WITH_CUDA)
  if (gpu) return std::make_unique<CudaBackend>();
#endif
  return std::make_unique<ModelBackend>();
}

}  // namespace sumlab
