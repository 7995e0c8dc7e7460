#pragma once
// Thread level: grid-stride loads staged through shared memory (cp.async), for kernels whose
// per-group work would otherwise leave the memory idle. The order of the elements is
// for_each_owned_grouped's (gpu/thread/thread_chain.cuh).
#include <cuda_pipeline.h>

#include <cstddef>
#include <cstdint>
#include <cstring>

#include "gpu/thread/thread_chain.cuh"

namespace sumlab::gpu::detail {

// The grid-stride walk of for_each_owned_grouped (same groups, same tail, same order), with each
// group's bytes brought into shared memory by cp.async `load_stages` groups ahead, for kernels that
// compute much per group (gpu_exact, gpu_fixed_point): their registers let few warps fit on an SM,
// and loads into registers issued only between groups keep too few bytes in flight to reach the
// memory's bandwidth; asynchronous copies to shared memory hold load_stages * 64 bytes per thread
// in flight without a register (gpu_exact's float32 went from 0.78 to 0.92 of CUB at 2^30). Each thread reads back only the
// 16-byte chunks it copied itself (chunk-major, thread-minor: no bank conflicts), so a thread's
// own __pipeline_wait_prior is all the synchronisation needed.
inline constexpr int load_stages = 3;
template <class T, int V> inline constexpr int stage_chunks = load_ahead<T, V> * V * int(sizeof(T)) / 16;
template <class T, int V> constexpr std::size_t stage_bytes(int block) {
  return std::size_t(load_stages) * stage_chunks<T, V> * block * 16;
}

template <class T, int V, class F, class G>
__device__ __forceinline__ void staged_grid_stride(const T* __restrict__ d_in, std::int64_t n, std::int64_t g,
                                                   std::int64_t threads, uint4* stage, F&& f, G&& group) {
  constexpr int U = load_ahead<T, V>;
  constexpr int C = stage_chunks<T, V>;  // 16-byte chunks per group
  constexpr int CV = V * int(sizeof(T)) / 16;   // per vector
  static_assert(CV >= 1 && C == U * CV, "a vector must be a whole number of 16-byte chunks");
  const std::int64_t nvec = n / V;
  const std::int64_t step = std::int64_t(U) * threads;
  const char* bytes = reinterpret_cast<const char*>(d_in);
  const unsigned tid = threadIdx.x, nthr = blockDim.x;
  auto exists = [&](std::int64_t j) { return j + std::int64_t(U - 1) * threads < nvec; };
  auto issue = [&](std::int64_t j, int s) {
    if (exists(j)) {
#pragma unroll
      for (int u = 0; u < U; ++u)
#pragma unroll
        for (int c = 0; c < CV; ++c)
          __pipeline_memcpy_async(&stage[(std::size_t(s) * C + u * CV + c) * nthr + tid],
                                  bytes + (j + u * threads) * (V * sizeof(T)) + c * 16, 16);
    }
    __pipeline_commit();  // an empty batch too: the wait below counts batches
  };
  std::int64_t j = g;
#pragma unroll
  for (int s = 0; s < load_stages; ++s) issue(j + s * step, s);
  int s = 0;
  for (; exists(j); j += step) {
    __pipeline_wait_prior(load_stages - 1);  // this group's batch has landed
    T x[U * V];
#pragma unroll
    for (int c = 0; c < C; ++c) {
      const uint4 chunk = stage[(std::size_t(s) * C + c) * nthr + tid];
      memcpy(reinterpret_cast<char*>(x) + c * 16, &chunk, 16);
    }
    issue(j + load_stages * step, s);  // the slot is free again
    group(x);
    s = s + 1 == load_stages ? 0 : s + 1;
  }
  __pipeline_wait_prior(0);
  const Vec<T, V>* __restrict__ vin = reinterpret_cast<const Vec<T, V>*>(d_in);
  for (; j < nvec; j += threads) {
    const Vec<T, V> v = vin[j];
#pragma unroll
    for (int k = 0; k < V; ++k) f(v.v[k]);
  }
  if (V > 1 && nvec * V < n && nvec % threads == g)
    for (std::int64_t i = nvec * V; i < n; ++i) f(d_in[i]);
}

}  // namespace sumlab::gpu::detail
