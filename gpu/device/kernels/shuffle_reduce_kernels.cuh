#pragma once
// __global__ kernels of the shuffle family: gpu_two_pass, gpu_atomic, gpu_last_block, gpu_kahan,
// gpu_double_acc. One first-pass kernel (thread chain -> warp stage -> block stage -> cross-block
// stage) templated on the arithmetic (core/order_model/reduce_ops.hpp) and the vector width, and one
// single-block kernel that reduces the partials (the second kernel), launched as the first pass's
// programmatic dependent where the device takes one (launch_reduce_partials).
#include <cuda/atomic>

#include <cstdint>
#include <cstring>
#include <type_traits>

#include "core/launch_shape.hpp"
#include "core/order_model/reduce_ops.hpp"
#include "gpu/block/block_reduce.cuh"
#include "gpu/device/kernels/dependent_launch.cuh"
#include "gpu/thread/thread_chain.cuh"

namespace sumlab::gpu::detail {

// Loads a partial written by another block in this launch with ld.global.cg (L2, bypassing this
// SM's L1, which is not coherent with other SMs' stores).
__device__ __forceinline__ float load_cg(const float* p) { return __ldcg(p); }
__device__ __forceinline__ double load_cg(const double* p) { return __ldcg(p); }
// Any pair state (Kahan, double word) word by word: its bits as the other block stored them.
template <class S> __device__ __forceinline__ S load_cg(const S* p) {
  static_assert(sizeof(S) % 4 == 0, "a state is made of 32-bit words");
  unsigned w[sizeof(S) / 4];
  const unsigned* q = reinterpret_cast<const unsigned*>(p);
#pragma unroll
  for (int i = 0; i < static_cast<int>(sizeof(S) / 4); ++i) w[i] = __ldcg(q + i);
  S r;
  memcpy(&r, w, sizeof(S));
  return r;
}

// One block reduces count partials: thread t chains p[t], p[t+B], .. with Op::combine from the
// identity (grid-stride, one element per load), then the block stage. Thread 0 returns the total.
// Used by the second kernel and by the last block, so both run the same order.
template <class Op>
__device__ __forceinline__ typename Op::Acc reduce_partials_block(const typename Op::Acc* d_partials, int count,
                                                                  WarpStage w, BlockStage bs,
                                                                  typename Op::Acc* s_warp) {
  typename Op::Acc v = Op::identity();
  for (int i = static_cast<int>(threadIdx.x); i < count; i += static_cast<int>(blockDim.x))
    v = Op::combine(v, load_cg(d_partials + i));
  return block_reduce<Op>(v, w, bs, s_warp);
}

// The first pass. Per cross-block stage:
//   second_kernel  thread 0 stores the block total in d_partials[blockIdx.x];
//   atomic         thread 0 does atomicAdd(d_out, total) (plain sums only; d_out starts at +0);
//   last_block     stores the partial, then increments *d_counter with a device-scope acq_rel
//                  fetch_add through cuda::atomic_ref. Why acq_rel and atomic_ref rather than
//                  __threadfence + atomicAdd: the release half publishes this block's partial
//                  before the increment, the acquire half makes every earlier block's partial
//                  visible to the block that sees count == grid - 1, and the C++ memory model
//                  states that pairing directly (it compiles to atom.acq_rel.gpu) instead of
//                  relying on a fence next to a relaxed RMW. __syncthreads then extends the
//                  acquire to the whole last block, whose threads read the partials with
//                  ld.global.cg. The last block resets the counter to 0 for the next launch (the
//                  launcher also zeroes it before every launch, so a launch aborted midway cannot
//                  leave a stale count behind).
template <class Op, int V>
__global__ void shuffle_reduce_kernel(const typename Op::In* __restrict__ d_in, std::int64_t num_items,
                                      Mapping mapping, WarpStage warp, BlockStage block, CrossBlock cross,
                                      typename Op::Acc* d_partials, typename Op::Acc* d_total,
                                      typename Op::Out* d_out, unsigned int* d_counter) {
  using Acc = typename Op::Acc;
  __shared__ Acc s_warp[32];
  __shared__ bool s_is_last;
  // A second kernel launched as this grid's dependent may start once every block has started: its
  // launch overlaps this pass, and it waits for this grid's end before it reads a partial.
  let_dependents_start();
  const std::int64_t threads = std::int64_t(gridDim.x) * blockDim.x;
  const std::int64_t g = std::int64_t(blockIdx.x) * blockDim.x + threadIdx.x;

  Acc v = thread_chain<Op, V>(d_in, num_items, g, threads, mapping);
  v = block_reduce<Op>(v, warp, block, s_warp);

  if (cross == CrossBlock::atomic) {
    if constexpr (std::is_same_v<typename Op::Acc, typename Op::Out> &&
                  std::is_same_v<typename Op::Acc, typename Op::In>) {
      if (threadIdx.x == 0) atomicAdd(d_out, v);
    }
    return;
  }
  if (threadIdx.x == 0) d_partials[blockIdx.x] = v;
  if (cross == CrossBlock::second_kernel) return;

  if (threadIdx.x == 0) {
    cuda::atomic_ref<unsigned int, cuda::thread_scope_device> counter(*d_counter);
    const unsigned int arrived = counter.fetch_add(1u, cuda::memory_order_acq_rel);
    s_is_last = arrived == gridDim.x - 1;
  }
  __syncthreads();   // also separates block_reduce's last reads of s_warp from their reuse below
  if (!s_is_last) return;  // uniform across the block: the whole last block continues
  const Acc total = reduce_partials_block<Op>(d_partials, static_cast<int>(gridDim.x), warp, block, s_warp);
  if (threadIdx.x == 0) {
    *d_total = total;
    *d_out = Op::finish(total);
    cuda::atomic_ref<unsigned int, cuda::thread_scope_device> counter(*d_counter);
    counter.store(0u, cuda::memory_order_relaxed);
  }
}

// The second kernel: one block of the first pass's block size reduces the partials.
template <class Op>
__global__ void reduce_partials_kernel(const typename Op::Acc* d_partials, int count, WarpStage warp,
                                       BlockStage block, typename Op::Acc* d_total, typename Op::Out* d_out) {
  __shared__ typename Op::Acc s_warp[32];
  wait_for_prerequisite_grid();  // every partial written and visible (a no-op after an ordinary launch)
  const typename Op::Acc total = reduce_partials_block<Op>(d_partials, count, warp, block, s_warp);
  if (threadIdx.x == 0) {
    *d_total = total;
    *d_out = Op::finish(total);
  }
}

// The second kernel after a first pass of shape s, as that pass's programmatic dependent where
// `dependent` (dependent_launch_supported, asked once per sum, outside the timed launches): the
// same kernel and bits, its launch hidden behind the first pass's end.
template <class Op>
void launch_reduce_partials(const LaunchShape& s, const typename Op::Acc* d_partials, typename Op::Acc* d_total,
                            typename Op::Out* d_out, bool dependent) {
  cudaLaunchAttribute attr{};
  attr.id = cudaLaunchAttributeProgrammaticStreamSerialization;
  attr.val.programmaticStreamSerializationAllowed = 1;
  cudaLaunchConfig_t config{};
  config.gridDim = dim3(1);
  config.blockDim = dim3(static_cast<unsigned>(s.block));
  config.attrs = &attr;
  config.numAttrs = dependent ? 1 : 0;
  SUMLAB_CUDA_CHECK(cudaLaunchKernelEx(&config, reduce_partials_kernel<Op>, d_partials, s.grid, s.warp, s.block_stage,
                                       d_total, d_out));
  SUMLAB_CUDA_CHECK_LAUNCH("reduce_partials_kernel");
}

}  // namespace sumlab::gpu::detail
