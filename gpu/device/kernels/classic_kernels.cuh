#pragma once
// __global__ kernels of the seven classic shared-memory reductions (Harris, "Optimizing Parallel
// Reduction in CUDA", 2007), modernised where the original relied on implicit warp lockstep, plus
// the deliberately racy tree. Each block writes one partial; the launcher relaunches on the
// partials. CPU model: core/order_model/classic_trees.hpp. Block sizes are powers of two, 32..1024.
#include <cstdint>

#include "gpu/warp/shuffle.cuh"

namespace sumlab::gpu::detail {

template <class T> __device__ __forceinline__ T* shared_words() {
  extern __shared__ __align__(16) unsigned char classic_smem[];
  return reinterpret_cast<T*>(classic_smem);
}

// Harris 1: interleaved addressing. Active threads are scattered (t % 2s == 0): every warp diverges.
template <class T>
__global__ void interleaved_kernel(const T* __restrict__ d_in, std::int64_t num_items, T* d_out) {
  T* w = shared_words<T>();
  const unsigned t = threadIdx.x;
  const std::int64_t i = std::int64_t(blockIdx.x) * blockDim.x + t;
  w[t] = i < num_items ? d_in[i] : T(0);
  __syncthreads();
  for (unsigned s = 1; s < blockDim.x; s *= 2) {
    if (t % (2 * s) == 0) w[t] = w[t] + w[t + s];
    __syncthreads();
  }
  if (t == 0) d_out[blockIdx.x] = w[0];
}

// Harris 2: strided indexing. Contiguous active threads, but lane t touches word 2st: bank conflicts.
// Pairs the same words as Harris 1, so the same bits.
template <class T>
__global__ void strided_kernel(const T* __restrict__ d_in, std::int64_t num_items, T* d_out) {
  T* w = shared_words<T>();
  const unsigned t = threadIdx.x;
  const std::int64_t i = std::int64_t(blockIdx.x) * blockDim.x + t;
  w[t] = i < num_items ? d_in[i] : T(0);
  __syncthreads();
  for (unsigned s = 1; s < blockDim.x; s *= 2) {
    const unsigned idx = 2 * s * t;
    if (idx < blockDim.x) w[idx] = w[idx] + w[idx + s];
    __syncthreads();
  }
  if (t == 0) d_out[blockIdx.x] = w[0];
}

// Harris 3: sequential addressing. Threads t < h add word t+h: contiguous, conflict-free.
template <class T>
__global__ void sequential_kernel(const T* __restrict__ d_in, std::int64_t num_items, T* d_out) {
  T* w = shared_words<T>();
  const unsigned t = threadIdx.x;
  const std::int64_t i = std::int64_t(blockIdx.x) * blockDim.x + t;
  w[t] = i < num_items ? d_in[i] : T(0);
  __syncthreads();
  for (unsigned h = blockDim.x / 2; h > 0; h >>= 1) {
    if (t < h) w[t] = w[t] + w[t + h];
    __syncthreads();
  }
  if (t == 0) d_out[blockIdx.x] = w[0];
}

// The load of Harris 4-6: each thread adds two elements B apart while loading (2B per block).
template <class T>
__device__ __forceinline__ T first_add_load(const T* __restrict__ d_in, std::int64_t num_items) {
  const std::int64_t i = std::int64_t(blockIdx.x) * (2 * blockDim.x) + threadIdx.x;
  T v = i < num_items ? d_in[i] : T(0);
  if (i + blockDim.x < num_items) v = v + d_in[i + blockDim.x];
  return v;
}

// Harris 4: first add during load, then the sequential tree.
template <class T>
__global__ void first_add_kernel(const T* __restrict__ d_in, std::int64_t num_items, T* d_out) {
  T* w = shared_words<T>();
  const unsigned t = threadIdx.x;
  w[t] = first_add_load(d_in, num_items);
  __syncthreads();
  for (unsigned h = blockDim.x / 2; h > 0; h >>= 1) {
    if (t < h) w[t] = w[t] + w[t + h];
    __syncthreads();
  }
  if (t == 0) d_out[blockIdx.x] = w[0];
}

// Harris 5: as 4, with the levels h <= 32 run by warp 0 alone. The original dropped their barriers
// and relied on the warp's lanes running in lockstep, which Volta's independent thread scheduling
// no longer guarantees; here each level is fenced by __syncwarp() instead (and only lanes t < h
// write, so no lane overwrites a word another lane is still reading in the same level).
template <class T>
__global__ void warp_unrolled_kernel(const T* __restrict__ d_in, std::int64_t num_items, T* d_out) {
  T* w = shared_words<T>();
  const unsigned t = threadIdx.x;
  w[t] = first_add_load(d_in, num_items);
  __syncthreads();
  for (unsigned h = blockDim.x / 2; h > 32; h >>= 1) {
    if (t < h) w[t] = w[t] + w[t + h];
    __syncthreads();
  }
  if (t < 32) {
    if (blockDim.x >= 64) w[t] = w[t] + w[t + 32];
    __syncwarp();
    for (unsigned h = 16; h > 0; h >>= 1) {
      if (t < h) w[t] = w[t] + w[t + h];
      __syncwarp();
    }
  }
  if (t == 0) d_out[blockIdx.x] = w[0];
}

// The unrolled block tree of Harris 6 and 7 for a compile-time block size B: the levels h >= 64
// with barriers, then warp 0 finishes with __shfl_down_sync (lane 0 pairs the same words as the
// sequential tree). Returns the block total in thread 0.
template <int B, class T> __device__ __forceinline__ T unrolled_tree(T* w) {
  const unsigned t = threadIdx.x;
  if constexpr (B >= 1024) { if (t < 512) w[t] = w[t] + w[t + 512]; __syncthreads(); }
  if constexpr (B >= 512) { if (t < 256) w[t] = w[t] + w[t + 256]; __syncthreads(); }
  if constexpr (B >= 256) { if (t < 128) w[t] = w[t] + w[t + 128]; __syncthreads(); }
  if constexpr (B >= 128) { if (t < 64) w[t] = w[t] + w[t + 64]; __syncthreads(); }
  T v = T(0);
  if (t < 32) {
    v = w[t];
    if constexpr (B >= 64) v = v + w[t + 32];
#pragma unroll
    for (int off = 16; off > 0; off >>= 1) v = v + __shfl_down_sync(warp::full_mask, v, off);
  }
  return v;
}

// Harris 6: first add during load, the whole tree unrolled for a compile-time block size.
template <int B, class T>
__global__ void __launch_bounds__(B) unrolled_kernel(const T* __restrict__ d_in, std::int64_t num_items, T* d_out) {
  __shared__ T w[B];
  w[threadIdx.x] = first_add_load(d_in, num_items);
  __syncthreads();
  const T v = unrolled_tree<B>(w);
  if (threadIdx.x == 0) d_out[blockIdx.x] = v;
}

// Harris 7: many elements per thread. Thread t of block b adds the pairs (x[i] + x[i+B]) for
// i = 2bB + t, stepping by 2B * gridDim, into v (the last one alone when i + B is past the end),
// then the unrolled tree. The launcher runs it again with one block over the partials.
template <int B, class T>
__global__ void __launch_bounds__(B) multi_add_kernel(const T* __restrict__ d_in, std::int64_t num_items, T* d_out) {
  __shared__ T w[B];
  const std::int64_t stride = std::int64_t(2) * B * gridDim.x;
  T v = T(0);
  for (std::int64_t i = std::int64_t(blockIdx.x) * (2 * B) + threadIdx.x; i < num_items; i += stride)
    v = (i + B < num_items) ? v + (d_in[i] + d_in[i + B]) : v + d_in[i];
  w[threadIdx.x] = v;
  __syncthreads();
  v = unrolled_tree<B>(w);
  if (threadIdx.x == 0) d_out[blockIdx.x] = v;
}

// DIAGNOSTIC ONLY: Harris 3 with the __syncthreads() between the loads and the first level removed.
// Thread t may read word t+h before thread t+h has stored it: a read-after-write hazard that
// compute-sanitizer --tool racecheck reports, and that core/order_model/smem_race.hpp's model
// reports as "thread t read word t+h before thread t+h wrote it". Never used for a result.
template <class T>
__global__ void racy_tree_kernel(const T* __restrict__ d_in, std::int64_t num_items, T* d_out) {
  T* w = shared_words<T>();
  const unsigned t = threadIdx.x;
  const std::int64_t i = std::int64_t(blockIdx.x) * blockDim.x + t;
  w[t] = i < num_items ? d_in[i] : T(0);
  // (the barrier that belongs here is missing on purpose)
  for (unsigned h = blockDim.x / 2; h > 0; h >>= 1) {
    if (t < h) w[t] = w[t] + w[t + h];
    __syncthreads();
  }
  if (t == 0) d_out[blockIdx.x] = w[0];
}

// gpu_serial: one thread, s = x0, then s = s + x_i left to right (core/serial_sum.hpp's order).
// The loads of the next 32 elements are issued together before they are added in order, so one
// thread keeps 32 loads in flight instead of waiting a full memory latency per element; the
// additions stay one chain, left to right.
template <class T>
__global__ void serial_kernel(const T* __restrict__ d_in, std::int64_t num_items, T* d_out) {
  if (num_items == 0) { *d_out = T(0); return; }
  constexpr int kBatch = 32;
  T s = d_in[0];
  std::int64_t i = 1;
  for (; i + kBatch <= num_items; i += kBatch) {
    T batch[kBatch];
#pragma unroll
    for (int k = 0; k < kBatch; ++k) batch[k] = d_in[i + k];
#pragma unroll
    for (int k = 0; k < kBatch; ++k) s = s + batch[k];
  }
  for (; i < num_items; ++i) s = s + d_in[i];
  *d_out = s;
}

}  // namespace sumlab::gpu::detail
