// Host dispatch of the classic shared-memory reductions (Harris 1-7), the serial kernel and the
// racy diagnostic tree. Kernels 1-6 and the racy tree are relaunched on their partials until one
// value is left; kernel 7 runs once with the shape's grid, then once with one block.
#include <algorithm>

#include "gpu/device/dispatch.cuh"
#include "gpu/device/kernels/classic_kernels.cuh"

namespace sumlab::gpu::detail {
namespace {

// Kernel 6 and 7 need the block size at compile time.
template <template <int, class> class Launch, class T, class... Args>
void with_static_block(int block, Args&&... args) {
  switch (block) {
    case 32: Launch<32, T>::go(args...); break;
    case 64: Launch<64, T>::go(args...); break;
    case 128: Launch<128, T>::go(args...); break;
    case 256: Launch<256, T>::go(args...); break;
    case 512: Launch<512, T>::go(args...); break;
    case 1024: Launch<1024, T>::go(args...); break;
    default: throw GpuError("block " + std::to_string(block) + " is not a power of two in 32..1024");
  }
}

template <int B, class T> struct LaunchUnrolled {
  static void go(unsigned grid, const T* in, std::int64_t n, T* out) {
    unrolled_kernel<B, T><<<grid, B>>>(in, n, out);
    SUMLAB_CUDA_CHECK_LAUNCH("unrolled_kernel");
  }
};
template <int B, class T> struct LaunchMultiAdd {
  static void go(unsigned grid, const T* in, std::int64_t n, T* out) {
    multi_add_kernel<B, T><<<grid, B>>>(in, n, out);
    SUMLAB_CUDA_CHECK_LAUNCH("multi_add_kernel");
  }
};

template <class T>
void launch_pass(GpuKernel k, unsigned grid, int block, const T* in, std::int64_t n, T* out) {
  const std::size_t smem = static_cast<std::size_t>(block) * sizeof(T);
  switch (k) {
    case GpuKernel::interleaved: interleaved_kernel<T><<<grid, block, smem>>>(in, n, out); break;
    case GpuKernel::strided: strided_kernel<T><<<grid, block, smem>>>(in, n, out); break;
    case GpuKernel::sequential: sequential_kernel<T><<<grid, block, smem>>>(in, n, out); break;
    case GpuKernel::first_add: first_add_kernel<T><<<grid, block, smem>>>(in, n, out); break;
    case GpuKernel::warp_unrolled: warp_unrolled_kernel<T><<<grid, block, smem>>>(in, n, out); break;
    case GpuKernel::racy_tree: racy_tree_kernel<T><<<grid, block, smem>>>(in, n, out); break;
    case GpuKernel::unrolled: with_static_block<LaunchUnrolled, T>(block, grid, in, n, out); return;
    default: throw GpuError("launch_pass: not a classic kernel");
  }
  SUMLAB_CUDA_CHECK_LAUNCH("classic reduction kernel");
}

std::int64_t per_block(GpuKernel k, int block) {
  const bool one = k == GpuKernel::interleaved || k == GpuKernel::strided ||
                   k == GpuKernel::sequential || k == GpuKernel::racy_tree;
  return one ? block : 2 * std::int64_t(block);
}

}  // namespace

template <class T>
LaunchOutcome<T> dispatch_classic(GpuKernel k, const LaunchShape& s, const LaunchInputs<T>& in, std::int64_t n) {
  LaunchOutcome<T> r;
  if (k == GpuKernel::serial) {
    T* d_out = nullptr;
    Carver c;
    c.add(&d_out, 1);
    c.commit();
    EventTimer timer;
    timer.start();
    for (int l = 0; l < in.launches; ++l) {
      serial_kernel<T><<<1, 1>>>(in.at(l), n, d_out);
      SUMLAB_CUDA_CHECK_LAUNCH("serial_kernel");
    }
    r.ms = timer.stop() / in.launches;
    r.value = copy_to_host(d_out);
    r.accumulator = static_cast<double>(r.value);
    return r;
  }
  if (k == GpuKernel::multi_add) {
    T* d_partials = nullptr;
    T* d_out = nullptr;
    Carver c;
    c.add(&d_partials, static_cast<std::size_t>(s.grid)).add(&d_out, 1);
    c.commit();
    EventTimer timer;
    timer.start();
    for (int l = 0; l < in.launches; ++l) {
      with_static_block<LaunchMultiAdd, T>(s.block, static_cast<unsigned>(s.grid), in.at(l), n,
                                           s.grid == 1 ? d_out : d_partials);
      if (s.grid > 1)
        with_static_block<LaunchMultiAdd, T>(s.block, 1u, static_cast<const T*>(d_partials),
                                             std::int64_t(s.grid), d_out);
    }
    r.ms = timer.stop() / in.launches;
    r.value = copy_to_host(d_out);
    r.accumulator = static_cast<double>(r.value);
    return r;
  }
  if (n == 0) return r;  // +0, nothing to launch (no block owns an element)
  const std::int64_t per = per_block(k, s.block);
  const std::int64_t first_grid = (n + per - 1) / per;
  T* d_a = nullptr;
  T* d_b = nullptr;
  Carver c;
  c.add(&d_a, static_cast<std::size_t>(first_grid)).add(&d_b, static_cast<std::size_t>((first_grid + per - 1) / per));
  c.commit();
  EventTimer timer;
  timer.start();
  const T* cur = nullptr;
  for (int l = 0; l < in.launches; ++l) {
    cur = in.at(l);
    std::int64_t cur_n = n;
    int pass = 0;
    do {
      const std::int64_t grid = (cur_n + per - 1) / per;
      T* out = pass % 2 == 0 ? d_a : d_b;
      launch_pass<T>(k, static_cast<unsigned>(grid), s.block, cur, cur_n, out);
      cur = out;
      cur_n = grid;
      ++pass;
    } while (cur_n > 1);
  }
  r.ms = timer.stop() / in.launches;
  r.value = copy_to_host(cur);
  r.accumulator = static_cast<double>(r.value);
  if (k == GpuKernel::racy_tree) r.note = "meaningless value: the racy tree reads words before they are written";
  return r;
}

template LaunchOutcome<float> dispatch_classic<float>(GpuKernel, const LaunchShape&, const LaunchInputs<float>&, std::int64_t);
template LaunchOutcome<double> dispatch_classic<double>(GpuKernel, const LaunchShape&, const LaunchInputs<double>&, std::int64_t);

}  // namespace sumlab::gpu::detail
