#include "studies/gpu_runs.hpp"

#include "core/float_traits.hpp"
#include "studies/commands.hpp"

namespace sumlab {

std::vector<GpuKernel> select_gpu_kernels(const std::vector<std::string>& names) {
  std::vector<GpuKernel> out;
  for (const auto& name : names) {
    if (name == "all" || name == "gpu") {
      for (const auto& k : gpu_kernels())
        if (!k.diagnostic_only) out.push_back(k.kernel);
      continue;
    }
    if (name.rfind("gpu_", 0) != 0) continue;
    const auto k = find_gpu_kernel(name);
    if (!k) throw UserError("unknown GPU kernel '" + name + "' (valid: " + gpu_kernel_names(true) + ")");
    out.push_back(*k);
  }
  return out;
}

template <class T>
std::vector<GpuKernelRun<T>> run_gpu_kernels(Backend& backend, const std::vector<GpuKernel>& kernels,
                                            const ShapeOptions& shape, std::span<const T> x,
                                            const KernelOptions& opt) {
  std::vector<GpuKernelRun<T>> runs;
  for (GpuKernel k : kernels) {
    if (info(k).float_input_only && sizeof(T) != 4) continue;  // gpu_double_acc: float32 input only
    runs.push_back({k, resolve_shape(shape, k, backend.sm_count(), FloatTraits<T>::dtype,
                                     static_cast<std::int64_t>(x.size())),
                    {}});
  }
  if (runs.empty()) return runs;
  const auto input = backend.load(x);  // once: every kernel and shape reads the same copy
  for (auto& r : runs) {
    KernelOptions o;
    if (r.kernel == GpuKernel::fixed_point) o.fixed_scale = opt.fixed_scale;
    r.outcome = input->run(r.kernel, r.shape, o);
  }
  return runs;
}

template std::vector<GpuKernelRun<float>> run_gpu_kernels<float>(Backend&, const std::vector<GpuKernel>&,
                                                                 const ShapeOptions&, std::span<const float>,
                                                                 const KernelOptions&);
template std::vector<GpuKernelRun<double>> run_gpu_kernels<double>(Backend&, const std::vector<GpuKernel>&,
                                                                   const ShapeOptions&, std::span<const double>,
                                                                   const KernelOptions&);

nlohmann::ordered_json shape_json(GpuKernel k, const LaunchShape& s) {
  if (info(k).shape_fields == 0) return nullptr;
  nlohmann::ordered_json j;
  j["text"] = to_string(s);
  j["grid"] = s.grid;
  j["block"] = s.block;
  j["vector"] = s.vector;
  j["mapping"] = std::string(to_string(s.mapping));
  j["warp_stage"] = std::string(to_string(s.warp));
  j["block_stage"] = std::string(to_string(s.block_stage));
  j["cross_block"] = std::string(to_string(s.cross));
  return j;
}

}  // namespace sumlab
