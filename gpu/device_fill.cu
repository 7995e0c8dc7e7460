#include <cuda_runtime.h>

#include "gpu/cuda_check.cuh"
#include "gpu/device/kernels/fill_kernel.cuh"
#include "gpu/gpu_sum.hpp"

namespace sumlab::gpu {

template <class T> void fill(DeviceBuffer<T>& buf, const DistributionSpec& spec, std::uint64_t seed) {
  if (spec.kind == Distribution::ill_conditioned)
    throw GpuError("ill_conditioned inputs are generated on the host (their elements depend on n); "
                   "generate() them and upload");
  const std::int64_t n = buf.size();
  if (n == 0) return;
  int sms = 132;
  SUMLAB_CUDA_CHECK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0));
  const std::int64_t blocks_needed = (n + 255) / 256;
  const int grid = static_cast<int>(blocks_needed < 32LL * sms ? blocks_needed : 32LL * sms);
  detail::fill_kernel<T><<<grid, 256>>>(buf.device_data(), n, spec, seed);
  SUMLAB_CUDA_CHECK_LAUNCH("fill_kernel");
  SUMLAB_CUDA_CHECK(cudaDeviceSynchronize());
}

template void fill<float>(DeviceBuffer<float>&, const DistributionSpec&, std::uint64_t);
template void fill<double>(DeviceBuffer<double>&, const DistributionSpec&, std::uint64_t);

}  // namespace sumlab::gpu
