// cub_segmented_reduce, cub_reduce_by_key and cub_scan_by_key (gpu/segmented/peers.hpp): CUB's
// segmented sums as peers. Their order is CUB's tuning policy for this GPU, so they are measured,
// never modelled; built with nvcc's default flags (gpu/CMakeLists.txt) as users build them.
#include <cub/device/device_reduce.cuh>
#include <cub/device/device_scan.cuh>
#include <cub/device/device_segmented_reduce.cuh>
#include <cuda/std/functional>

#include <cstddef>
#include <limits>
#include <string>

#include "gpu/cuda_check.cuh"
#include "gpu/gpu_sum.hpp"
#include "gpu/host/cuda_host.cuh"
#include "gpu/segmented/peers.hpp"

namespace sumlab::gpu::seg_detail {

namespace {

// keys[i] = j for every element i of segment j (int32: validated by the caller).
__global__ void segment_ids_kernel(const std::int64_t* d_offsets, std::int64_t num_segments, int* d_keys) {
  for (std::int64_t j = blockIdx.x; j < num_segments; j += gridDim.x)
    for (std::int64_t i = d_offsets[j] + threadIdx.x; i < d_offsets[j + 1]; i += blockDim.x)
      d_keys[i] = static_cast<int>(j);
}

template <class T>
__global__ void scatter_runs_kernel(const int* d_unique, const T* d_agg, const int* d_num_runs,
                                    std::int64_t max_runs, T* d_out) {
  const std::int64_t runs = *d_num_runs;
  for (std::int64_t r = std::int64_t(blockIdx.x) * blockDim.x + threadIdx.x; r < runs && r < max_runs;
       r += std::int64_t(gridDim.x) * blockDim.x)
    d_out[d_unique[r]] = d_agg[r];
}

// out[j] = the scan at segment j's last element, +0 for an empty segment.
template <class T>
__global__ void segment_ends_kernel(const T* d_scanned, const std::int64_t* d_offsets, std::int64_t num_segments,
                                    T* d_out) {
  for (std::int64_t j = std::int64_t(blockIdx.x) * blockDim.x + threadIdx.x; j < num_segments;
       j += std::int64_t(gridDim.x) * blockDim.x) {
    const std::int64_t end = d_offsets[j + 1];
    d_out[j] = end > d_offsets[j] ? d_scanned[end - 1] : T(0);
  }
}

unsigned grid_for(std::int64_t items, int per_block) {
  const std::int64_t g = (items + per_block - 1) / per_block;
  return static_cast<unsigned>(g < 1 ? 1 : (g > 65535 * 16 ? 65535 * 16 : g));
}

// The segment ids of cub_reduce_by_key and cub_scan_by_key, written before their timers start.
detail::DeviceBytes segment_ids(const std::int64_t* d_offsets, std::int64_t n, std::int64_t num_segments,
                                const char* peer) {
  if (num_segments > std::numeric_limits<int>::max())
    throw GpuError(std::string(peer) + ": " + std::to_string(num_segments) +
                   " segments overflow its int32 segment ids");
  detail::DeviceBytes keys(static_cast<std::size_t>(n) * sizeof(int), "segment ids");
  if (num_segments > 0) {
    segment_ids_kernel<<<grid_for(num_segments, 1), 256>>>(d_offsets, num_segments, keys.as<int>());
    SUMLAB_CUDA_CHECK_LAUNCH("segment ids");
  }
  return keys;
}

}  // namespace

template <class T>
PeerTiming cub_segmented_reduce(Copies<T> in, const std::int64_t* d_offsets, std::int64_t num_segments, T* d_out,
                                int samples) {
  PeerTiming t;
  std::size_t temp_bytes = 0;
  SUMLAB_CUDA_CHECK(cub::DeviceSegmentedReduce::Sum(nullptr, temp_bytes, in.first, d_out, num_segments, d_offsets,
                                                    d_offsets + 1));
  detail::DeviceBytes temp(temp_bytes, "CUB temporary storage");
  int calls = 0;
  t.ms = detail::time_back_to_back([&] {
    SUMLAB_CUDA_CHECK(cub::DeviceSegmentedReduce::Sum(temp.get(), temp_bytes, in.at(calls++), d_out, num_segments, d_offsets,
                                                      d_offsets + 1));
    SUMLAB_CUDA_CHECK_LAUNCH("cub::DeviceSegmentedReduce::Sum");
  }, samples);
  return t;
}

template <class T>
PeerTiming cub_reduce_by_key(Copies<T> in, const std::int64_t* d_offsets, std::int64_t n, std::int64_t num_segments,
                             T* d_out, int samples) {
  PeerTiming t;
  const std::size_t us = static_cast<std::size_t>(num_segments);
  detail::DeviceBytes keys = segment_ids(d_offsets, n, num_segments, "cub_reduce_by_key");
  detail::DeviceBytes unique(us * sizeof(int), "run keys"), agg(us * sizeof(T), "run sums"),
      num_runs(sizeof(int), "the run count");
  std::size_t temp_bytes = 0;
  SUMLAB_CUDA_CHECK(cub::DeviceReduce::ReduceByKey(nullptr, temp_bytes, keys.as<int>(), unique.as<int>(), in.first,
                                                   agg.as<T>(), num_runs.as<int>(), ::cuda::std::plus<>{}, n));
  detail::DeviceBytes temp(temp_bytes, "CUB temporary storage");
  int calls = 0;
  t.ms = detail::time_back_to_back([&] {
    if (num_segments > 0) SUMLAB_CUDA_CHECK(cudaMemsetAsync(d_out, 0, us * sizeof(T)));  // all-zero bits: +0
    SUMLAB_CUDA_CHECK(cub::DeviceReduce::ReduceByKey(temp.get(), temp_bytes, keys.as<int>(), unique.as<int>(), in.at(calls++),
                                                     agg.as<T>(), num_runs.as<int>(), ::cuda::std::plus<>{}, n));
    if (num_segments > 0) {
      scatter_runs_kernel<T><<<grid_for(num_segments, 256), 256>>>(unique.as<int>(), agg.as<T>(), num_runs.as<int>(),
                                                                  num_segments, d_out);
      SUMLAB_CUDA_CHECK_LAUNCH("reduce-by-key scatter");
    }
  }, samples);
  return t;
}

template <class T>
PeerTiming cub_scan_by_key(Copies<T> in, const std::int64_t* d_offsets, std::int64_t n, std::int64_t num_segments,
                           T* d_out, int samples) {
  PeerTiming t;
  detail::DeviceBytes keys = segment_ids(d_offsets, n, num_segments, "cub_scan_by_key");
  detail::DeviceBytes scanned(static_cast<std::size_t>(n) * sizeof(T), "the scanned values");
  std::size_t temp_bytes = 0;
  SUMLAB_CUDA_CHECK(cub::DeviceScan::InclusiveSumByKey(nullptr, temp_bytes, keys.as<int>(), in.first, scanned.as<T>(), n));
  detail::DeviceBytes temp(temp_bytes, "CUB temporary storage");
  int calls = 0;
  t.ms = detail::time_back_to_back([&] {
    if (n > 0)
      SUMLAB_CUDA_CHECK(cub::DeviceScan::InclusiveSumByKey(temp.get(), temp_bytes, keys.as<int>(), in.at(calls++),
                                                           scanned.as<T>(), n));
    SUMLAB_CUDA_CHECK_LAUNCH("cub::DeviceScan::InclusiveSumByKey");
    if (num_segments > 0) {
      segment_ends_kernel<T><<<grid_for(num_segments, 256), 256>>>(scanned.as<T>(), d_offsets, num_segments, d_out);
      SUMLAB_CUDA_CHECK_LAUNCH("scan-by-key segment ends");
    }
  }, samples);
  return t;
}

template PeerTiming cub_segmented_reduce<float>(Copies<float>, const std::int64_t*, std::int64_t, float*, int);
template PeerTiming cub_segmented_reduce<double>(Copies<double>, const std::int64_t*, std::int64_t, double*, int);
template PeerTiming cub_reduce_by_key<float>(Copies<float>, const std::int64_t*, std::int64_t, std::int64_t, float*, int);
template PeerTiming cub_reduce_by_key<double>(Copies<double>, const std::int64_t*, std::int64_t, std::int64_t, double*,
                                              int);
template PeerTiming cub_scan_by_key<float>(Copies<float>, const std::int64_t*, std::int64_t, std::int64_t, float*, int);
template PeerTiming cub_scan_by_key<double>(Copies<double>, const std::int64_t*, std::int64_t, std::int64_t, double*,
                                            int);

}  // namespace sumlab::gpu::seg_detail
