// The dot family's kernels: the shuffle family's first pass and second kernel
// (gpu/device/kernels/shuffle_reduce_kernels.cuh) over DotOp and DotFmaOp, so the dot has
// gpu_two_pass's order and the model (core/dot/dot_family.hpp) its bits.
#include "gpu/dot.hpp"

#include <cuda_runtime.h>

#include "gpu/cuda_check.cuh"
#include "gpu/device/kernels/shuffle_reduce_kernels.cuh"
#include "gpu/host/cuda_host.cuh"

namespace sumlab::gpu {

struct DotInput::Impl {
  std::int64_t n = 0;
  detail::DeviceBytes pairs;
};

DotInput::DotInput(std::span<const dot::Pair> pairs) : impl_(std::make_unique<Impl>()) {
  impl_->n = static_cast<std::int64_t>(pairs.size());
  impl_->pairs = detail::DeviceBytes(pairs.size_bytes(), "the dot's input");
  if (!pairs.empty())
    SUMLAB_CUDA_CHECK(cudaMemcpy(impl_->pairs.get(), pairs.data(), pairs.size_bytes(), cudaMemcpyHostToDevice));
}
DotInput::~DotInput() = default;
std::int64_t DotInput::size() const { return impl_->n; }
const dot::Pair* DotInput::device_data() const { return impl_->pairs.as<const dot::Pair>(); }

namespace {

template <class Op, int V> void first_pass(const LaunchShape& s, const dot::Pair* d_in, std::int64_t n, float* partials) {
  detail::shuffle_reduce_kernel<Op, V><<<s.grid, s.block>>>(d_in, n, s.mapping, s.warp, s.block_stage,
                                                            CrossBlock::second_kernel, partials, nullptr, nullptr,
                                                            nullptr);
  SUMLAB_CUDA_CHECK_LAUNCH("shuffle_reduce_kernel (dot)");
}

template <class Op> GpuDotResult run(const LaunchShape& s, const DotInput& in, int reps) {
  float* d_partials = nullptr;
  float* d_total = nullptr;
  float* d_out = nullptr;
  detail::Carver c;
  c.add(&d_partials, static_cast<std::size_t>(s.grid)).add(&d_total, 1).add(&d_out, 1);
  c.commit();
  const bool dependent = detail::dependent_launch_supported();
  auto once = [&] {
    switch (s.vector) {
      case 1: first_pass<Op, 1>(s, in.device_data(), in.size(), d_partials); break;
      case 2: first_pass<Op, 2>(s, in.device_data(), in.size(), d_partials); break;
      case 4: first_pass<Op, 4>(s, in.device_data(), in.size(), d_partials); break;
      default: throw GpuError("vector width " + std::to_string(s.vector) + " not supported");
    }
    detail::launch_reduce_partials<Op>(s, d_partials, d_total, d_out, dependent);
  };
  once();  // warm-up; every launch writes the same bits
  detail::EventTimer timer;
  timer.start();
  for (int r = 0; r < reps; ++r) once();
  GpuDotResult out;
  out.ms = timer.stop() / reps;
  SUMLAB_CUDA_CHECK(cudaDeviceSynchronize());
  out.value = detail::copy_to_host(d_out);
  return out;
}

}  // namespace

GpuDotResult gpu_dot(dot::Subject k, const LaunchShape& s, const DotInput& in, int reps) {
  GpuDotResult r;
  if (!dot::info(k).gpu) {
    r.error = std::string(dot::info(k).name) + " is not a GPU subject";
    return r;
  }
  r.error = validate_shape(GpuKernel::two_pass, s, "float32", in.size());
  if (!r.error.empty()) return r;
  try {
    r = k == dot::Subject::gpu_dot_fma ? run<dot::DotFmaOp>(s, in, reps < 1 ? 1 : reps)
                                       : run<dot::DotOp>(s, in, reps < 1 ? 1 : reps);
  } catch (const GpuError& e) {
    r.error = e.what();
  }
  return r;
}

}  // namespace sumlab::gpu
