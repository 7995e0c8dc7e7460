// Host dispatch of the shuffle family: one launcher for every Op of core/order_model/reduce_ops.hpp
// (with_shuffle_op picks the kernel's, as the CPU model does).
#include <type_traits>

#include "core/order_model/reduce_ops.hpp"
#include "gpu/device/dispatch.cuh"
#include "gpu/device/kernels/shuffle_reduce_kernels.cuh"

namespace sumlab::gpu::detail {
namespace {

template <class Op, int V>
void launch_first_pass(const LaunchShape& s, const typename Op::In* d_in, std::int64_t n,
                       typename Op::Acc* d_partials, typename Op::Acc* d_total, typename Op::Out* d_out,
                       unsigned int* d_counter) {
  shuffle_reduce_kernel<Op, V><<<s.grid, s.block>>>(d_in, n, s.mapping, s.warp, s.block_stage, s.cross,
                                                    d_partials, d_total, d_out, d_counter);
  SUMLAB_CUDA_CHECK_LAUNCH("shuffle_reduce_kernel");
}

template <class Op>
LaunchOutcome<typename Op::Out> run(const LaunchShape& s, const LaunchInputs<typename Op::In>& in, std::int64_t n) {
  using Acc = typename Op::Acc;
  using Out = typename Op::Out;
  Acc* d_partials = nullptr;
  Acc* d_total = nullptr;
  Out* d_out = nullptr;
  unsigned int* d_counter = nullptr;
  Carver c;
  c.add(&d_partials, static_cast<std::size_t>(s.grid)).add(&d_total, 1).add(&d_out, 1).add(&d_counter, 1);
  c.commit();
  // The last-block counter is reset before the launches (and by the last block after each).
  SUMLAB_CUDA_CHECK(cudaMemset(d_out, 0, sizeof(Out)));
  SUMLAB_CUDA_CHECK(cudaMemset(d_total, 0, sizeof(Acc)));
  SUMLAB_CUDA_CHECK(cudaMemset(d_counter, 0, sizeof(unsigned int)));

  const bool dependent = s.cross == CrossBlock::second_kernel && dependent_launch_supported();
  EventTimer timer;
  timer.start();
  for (int l = 0; l < in.launches; ++l) {
    // +0 for the atomic kernel's accumulator, before every launch (timed: it is part of the sum).
    if (s.cross == CrossBlock::atomic && l > 0) SUMLAB_CUDA_CHECK(cudaMemsetAsync(d_out, 0, sizeof(Out)));
    switch (s.vector) {
      case 1: launch_first_pass<Op, 1>(s, in.at(l), n, d_partials, d_total, d_out, d_counter); break;
      case 2: launch_first_pass<Op, 2>(s, in.at(l), n, d_partials, d_total, d_out, d_counter); break;
      case 4: launch_first_pass<Op, 4>(s, in.at(l), n, d_partials, d_total, d_out, d_counter); break;
      default: throw GpuError("vector width " + std::to_string(s.vector) + " not supported");
    }
    if (s.cross == CrossBlock::second_kernel) launch_reduce_partials<Op>(s, d_partials, d_total, d_out, dependent);
  }
  LaunchOutcome<Out> r;
  r.ms = timer.stop() / in.launches;
  SUMLAB_CUDA_CHECK(cudaDeviceSynchronize());
  r.value = copy_to_host(d_out);
  if constexpr (std::is_same_v<Acc, double> && std::is_same_v<Out, float>) {
    r.accumulator = copy_to_host(d_total);
  } else {
    r.accumulator = static_cast<double>(r.value);
  }
  return r;
}

}  // namespace

template <class T>
LaunchOutcome<T> dispatch_shuffle(GpuKernel k, const LaunchShape& s, const LaunchInputs<T>& in, std::int64_t n) {
  LaunchOutcome<T> r;
  const bool ran = with_shuffle_op<T>(k, [&]<class Op>() {
    if constexpr (std::is_same_v<typename Op::In, T>) r = run<Op>(s, in, n);
  });
  if (!ran) throw GpuError(std::string(info(k).name) + ": not a shuffle-family kernel for this input type");
  return r;
}

template LaunchOutcome<float> dispatch_shuffle<float>(GpuKernel, const LaunchShape&, const LaunchInputs<float>&, std::int64_t);
template LaunchOutcome<double> dispatch_shuffle<double>(GpuKernel, const LaunchShape&, const LaunchInputs<double>&, std::int64_t);

}  // namespace sumlab::gpu::detail
