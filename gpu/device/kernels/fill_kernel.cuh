#pragma once
// __global__ kernel that generates an input in place: element i = generate_element<T>(spec, seed, i)
// (core/generators.hpp), the same bits as the CPU's generate() because the generator uses only
// integer hashing and IEEE +, -, *, /, sqrt (no contraction: this file is built with --fmad=false).
#include <cstdint>

#include "core/generators.hpp"

namespace sumlab::gpu::detail {

template <class T>
__global__ void fill_kernel(T* __restrict__ d_out, std::int64_t num_items, DistributionSpec spec, std::uint64_t seed) {
  const std::int64_t stride = std::int64_t(gridDim.x) * blockDim.x;
  for (std::int64_t i = std::int64_t(blockIdx.x) * blockDim.x + threadIdx.x; i < num_items; i += stride)
    d_out[i] = generate_element<T>(spec, seed, static_cast<std::uint64_t>(i));
}

}  // namespace sumlab::gpu::detail
