// Host side of the row kernels: validation, device memory, the launch of each kernel's template
// instance, timing, download. Every CUDA call is checked (gpu/cuda_check.cuh); a GpuError becomes
// GpuRowsResult::error.
#include "gpu/rows.hpp"

#include <cuda_runtime.h>

#include <algorithm>
#include <cstdio>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <vector>

#include "core/metrics.hpp"
#include "gpu/cuda_check.cuh"
#include "gpu/host/cuda_host.cuh"
#include "gpu/rows/argmax_kernel.cuh"
#include "gpu/rows/moments_kernel.cuh"
#include "gpu/rows/softmax_kernel.cuh"

namespace sumlab::gpu {

using row_reduce::RowKernel;
using row_reduce::RowLayout;
using row_reduce::RowShape;
using row_reduce::row_acc_t;

using detail::DeviceBytes;
using detail::download;

namespace {

// Device outputs of one kernel family.
template <class Acc> struct DeviceOutputs {
  DeviceBytes a, b, index, out;  // per-row stat 1, stat 2, argmax index, rows x cols output
};

// The kernel a moments kernel runs as (gpu/rows/moments_kernel.cuh): with the output pass where
// the caller wants the output, the statistics alone where not, each with its rows staged in shared
// memory or not, the staged ones with their thread count fixed or not (Threads, 0: not); the
// same signature for all.
template <RowKernel K, class In, bool Out, bool Staged, bool Exact, int Threads> constexpr auto moments_kernel() {
  if constexpr (!gpu::rows::row_moments_bounded<K, In>())
    return &gpu::rows::row_moments_unbounded_kernel<K, In, Out, Staged>;
  else if constexpr (Out)
    return &gpu::rows::row_moments_kernel<K, In, Staged, Exact, Threads>;
  else
    return &gpu::rows::row_stats_kernel<K, In, Staged, Exact, Threads>;
}

template <RowKernel K, class In, bool Exact, int Threads> constexpr auto moments_kernel(bool out, bool staged) {
  if (out) return staged ? moments_kernel<K, In, true, true, Exact, Threads>() : moments_kernel<K, In, true, false, Exact, 0>();
  // The statistics of one pass are staged for bfloat16 rows only (gpu/rows/row_stage.hpp).
  if constexpr (K == RowKernel::two_pass || sizeof(In) == 2)
    if (staged) return moments_kernel<K, In, false, true, Exact, Threads>();
  return moments_kernel<K, In, false, false, Exact, 0>();
}

// f(std::integral_constant<int, T>) for the thread count row_fixed_threads gave (0: none).
template <class F> constexpr auto with_fixed_threads(int threads, F&& f) {
  if (threads == 128) return f(std::integral_constant<int, 128>{});
  if (threads == 256) return f(std::integral_constant<int, 256>{});
  return f(std::integral_constant<int, 0>{});
}

// exact: the launch's threads each hold row_exact_steps elements (Welford's float and bfloat16
// rows), which take the Exact instance; threads: row_fixed_threads (gpu/rows/row_stage.hpp).
template <RowKernel K, class In>
constexpr auto moments_kernel(bool out, bool staged, [[maybe_unused]] bool exact, int threads) {
  return with_fixed_threads(threads, [&](auto T) {
    if constexpr ((K == RowKernel::welford || K == RowKernel::welford_equal) && sizeof(In) <= 4)
      if (exact) return moments_kernel<K, In, true, T.value>(out, staged);
    return moments_kernel<K, In, false, T.value>(out, staged);
  });
}

template <RowKernel K, class In> constexpr auto softmax_kernel(bool staged, int threads) {
  return with_fixed_threads(threads, [&](auto T) {
    return staged ? &gpu::rows::row_softmax_kernel<K, In, true, T.value> : &gpu::rows::row_softmax_kernel<K, In, false>;
  });
}

// A row kernel's launch with `stage` bytes of dynamic shared memory (0: none), opted in first.
template <class... P, class... A>
void launch_row_kernel(void (*kernel)(P...), unsigned grid, unsigned block, std::size_t stage, A... args) {
  if (stage > 0) detail::opt_in_shared(reinterpret_cast<const void*>(kernel), stage);
  kernel<<<grid, block, stage>>>(args...);
}

template <class In>
void launch(RowKernel k, const RowShape& s, const In* d_in, std::int64_t rows, std::int64_t cols,
            DeviceOutputs<row_acc_t<In>>& o, std::size_t stage) {
  using Acc = row_acc_t<In>;
  using namespace gpu::rows;
  const std::int64_t rpb = s.rows_per_block();
  const unsigned grid = static_cast<unsigned>((rows + rpb - 1) / rpb);
  const unsigned block = static_cast<unsigned>(s.block);
  Acc* a = o.a.template as<Acc>();
  Acc* b = o.b.template as<Acc>();
  Acc* out = o.out.template as<Acc>();
  const bool staged = stage > 0, with_out = out != nullptr;
  const bool exact = row_exact_steps(k, s, cols, sizeof(In), staged) > 0;
  const int threads = row_fixed_threads(s, stage);
  // The moments and softmax kernels share one signature: two per-row results and the output.
  const auto run = [&](auto kernel) { launch_row_kernel(kernel, grid, block, stage, d_in, rows, cols, s.layout, a, b, out); };
  switch (k) {
    case RowKernel::textbook:
      run(moments_kernel<RowKernel::textbook, In>(with_out, staged, exact, threads));
      break;
    case RowKernel::two_pass:
      run(moments_kernel<RowKernel::two_pass, In>(with_out, staged, exact, threads));
      break;
    case RowKernel::welford:
      run(moments_kernel<RowKernel::welford, In>(with_out, staged, exact, threads));
      break;
    case RowKernel::welford_equal:
      run(moments_kernel<RowKernel::welford_equal, In>(with_out, staged, exact, threads));
      break;
    case RowKernel::softmax_online:
      run(softmax_kernel<RowKernel::softmax_online, In>(staged, threads));
      break;
    case RowKernel::softmax_three_pass:
      run(softmax_kernel<RowKernel::softmax_three_pass, In>(staged, threads));
      break;
    case RowKernel::argmax:
      row_argmax_kernel<In><<<grid, block>>>(d_in, rows, cols, s.layout, a, o.index.template as<std::int64_t>());
      break;
  }
  SUMLAB_CUDA_CHECK_LAUNCH("row kernel");
}

template <class Acc> __global__ void row_exp_kernel(const Acc* __restrict__ x, std::size_t n, Acc* __restrict__ y) {
  const std::size_t i = std::size_t(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i < n) y[i] = row_reduce::acc_exp(x[i]);
}

}  // namespace

template <class Acc> GpuExpResult<Acc> gpu_row_exp(std::span<const Acc> x) {
  GpuExpResult<Acc> r;
  if (x.empty()) return r;
  std::string why;
  if (!gpu_available(&why)) {
    r.error = why;
    return r;
  }
  try {
    DeviceBytes in(x.size_bytes(), "the exp's arguments"), out(x.size_bytes(), "the exp's results");
    SUMLAB_CUDA_CHECK(cudaMemcpy(in.template as<Acc>(), x.data(), x.size_bytes(), cudaMemcpyHostToDevice));
    const unsigned block = 256;
    const std::size_t grid = (x.size() + block - 1) / block;
    if (grid > 0x7fffffffu) throw GpuError("gpu_row_exp: " + std::to_string(x.size()) + " arguments in one call");
    row_exp_kernel<Acc><<<static_cast<unsigned>(grid), block>>>(in.template as<Acc>(), x.size(), out.template as<Acc>());
    SUMLAB_CUDA_CHECK_LAUNCH("the row exp");
    SUMLAB_CUDA_CHECK(cudaDeviceSynchronize());
    r.y.resize(x.size());
    download(r.y, out.template as<Acc>());
  } catch (const GpuError& e) {
    r.error = e.what();
  }
  return r;
}

template <class In> struct RowMatrix<In>::Impl {
  DeviceBytes data;  // `copies` copies of the matrix, one after another
  std::int64_t rows = 0, cols = 0;
  int copies = 1;
};

template <class In>
RowMatrix<In>::RowMatrix(std::span<const In> host, std::int64_t rows, std::int64_t cols, int copies)
    : impl_(std::make_unique<Impl>()) {
  if (rows < 0 || cols < 0 || static_cast<std::int64_t>(host.size()) != rows * cols)
    throw std::invalid_argument("RowMatrix: " + std::to_string(host.size()) + " elements for " +
                                std::to_string(rows) + " x " + std::to_string(cols));
  if (copies < 1) throw std::invalid_argument("RowMatrix: copies must be >= 1 (got " + std::to_string(copies) + ")");
  impl_->rows = rows;
  impl_->cols = cols;
  impl_->copies = copies;
  if (host.empty()) return;
  std::string why;
  if (!gpu_available(&why)) throw GpuError(why);
  impl_->data = detail::upload_copies(host.data(), host.size_bytes(), copies,
                                      "a " + std::to_string(rows) + " x " + std::to_string(cols) + " matrix");
}
template <class In> RowMatrix<In>::~RowMatrix() = default;
template <class In> RowMatrix<In>::RowMatrix(RowMatrix&&) noexcept = default;
template <class In> RowMatrix<In>& RowMatrix<In>::operator=(RowMatrix&&) noexcept = default;
template <class In> std::int64_t RowMatrix<In>::rows() const { return impl_->rows; }
template <class In> std::int64_t RowMatrix<In>::cols() const { return impl_->cols; }
template <class In> int RowMatrix<In>::copies() const { return impl_->copies; }
template <class In> const In* RowMatrix<In>::device_data(int copy) const {
  return impl_->data.template as<In>() + std::size_t(copy % impl_->copies) * std::size_t(impl_->rows * impl_->cols);
}

template <class In>
GpuRowsResult<row_acc_t<In>> gpu_rows(RowKernel k, const RowShape& s, const RowMatrix<In>& x,
                                      const RowRunOptions& opts) {
  using Acc = row_acc_t<In>;
  GpuRowsResult<Acc> r;
  const std::int64_t rows = x.rows(), cols = x.cols();
  r.error = row_reduce::validate_row_shape(k, s, row_reduce::RowInput<In>::dtype, rows, cols);
  if (!r.error.empty()) return r;
  if (opts.reps < 1) {
    r.error = "reps must be >= 1";
    return r;
  }
  row_reduce::resize_for(r.outputs, k, rows, cols, opts.want_out);
  if (rows == 0) return r;
  std::string why;
  if (!gpu_available(&why)) {
    r.error = why;
    return r;
  }
  try {
    DeviceOutputs<Acc> o;
    const auto ur = static_cast<std::size_t>(rows);
    const bool argmax = row_reduce::info(k).family == row_reduce::RowFamily::argmax;
    o.a = DeviceBytes(ur * sizeof(Acc), "per-row results");
    if (argmax) {
      o.index = DeviceBytes(ur * sizeof(std::int64_t), "argmax indices");
    } else {
      o.b = DeviceBytes(ur * sizeof(Acc), "per-row results");
    }
    if (!r.outputs.out.empty()) o.out = DeviceBytes(r.outputs.out.size() * sizeof(Acc), "the rows x cols output");

    int device = 0, sm_bytes = 0, optin = 0;
    SUMLAB_CUDA_CHECK(cudaGetDevice(&device));
    SUMLAB_CUDA_CHECK(cudaDeviceGetAttribute(&sm_bytes, cudaDevAttrMaxSharedMemoryPerMultiprocessor, device));
    SUMLAB_CUDA_CHECK(cudaDeviceGetAttribute(&optin, cudaDevAttrMaxSharedMemoryPerBlockOptin, device));
    const std::size_t stage =
        gpu::rows::row_stage_bytes(k, s, cols, sizeof(In), o.out.get() != nullptr, std::size_t(sm_bytes), std::size_t(optin));
    int launches = 0;  // the copy each launch reads, in turn
    r.ms = median(detail::time_back_to_back(
        [&] { launch<In>(k, s, x.device_data(launches++), rows, cols, o, stage); }, opts.reps));
    SUMLAB_CUDA_CHECK(cudaDeviceSynchronize());
    auto& out = r.outputs;
    switch (row_reduce::info(k).family) {
      case row_reduce::RowFamily::moments:
        download(out.mean, o.a.template as<Acc>());
        download(out.variance, o.b.template as<Acc>());
        break;
      case row_reduce::RowFamily::softmax:
        download(out.row_max, o.a.template as<Acc>());
        download(out.row_sum, o.b.template as<Acc>());
        break;
      case row_reduce::RowFamily::argmax:
        download(out.max_value, o.a.template as<Acc>());
        download(out.max_index, o.index.template as<std::int64_t>());
        break;
    }
    download(out.out, o.out.template as<Acc>());
  } catch (const GpuError& e) {
    r.error = e.what();
  }
  return r;
}

template <class In>
GpuRowsResult<row_acc_t<In>> gpu_rows(RowKernel k, const RowShape& s, std::span<const In> x, std::int64_t rows,
                                      std::int64_t cols, const RowRunOptions& opts) {
  try {
    const RowMatrix<In> m(x, rows, cols);
    return gpu_rows<In>(k, s, m, opts);
  } catch (const std::exception& e) {  // GpuError, or a size mismatch
    GpuRowsResult<row_acc_t<In>> r;
    r.error = e.what();
    return r;
  }
}

CopyBandwidth measure_copy_bandwidth(std::size_t bytes, int reps) {
  CopyBandwidth c;
  c.bytes = bytes;
  if (bytes == 0 || reps < 1) {
    c.error = "measure_copy_bandwidth: bytes and reps must be positive";
    return c;
  }
  std::string why;
  if (!gpu_available(&why)) {
    c.error = why;
    return c;
  }
  try {
    DeviceBytes src(bytes, "the bandwidth probe"), dst(bytes, "the bandwidth probe");
    SUMLAB_CUDA_CHECK(cudaMemset(src.as<char>(), 0, bytes));
    c.ms = median(detail::time_back_to_back(
        [&] { SUMLAB_CUDA_CHECK(cudaMemcpyAsync(dst.as<char>(), src.as<char>(), bytes, cudaMemcpyDeviceToDevice)); },
        std::max(reps, 2)));
    c.bytes_per_s = c.ms > 0 ? 2.0 * double(bytes) / (c.ms * 1e-3) : 0;
  } catch (const GpuError& e) {
    c.error = e.what();
  }
  return c;
}

template GpuExpResult<float> gpu_row_exp<float>(std::span<const float>);
template GpuExpResult<double> gpu_row_exp<double>(std::span<const double>);
template class RowMatrix<float>;
template class RowMatrix<double>;
template class RowMatrix<row_reduce::bfloat16_bits>;
template GpuRowsResult<float> gpu_rows<float>(RowKernel, const RowShape&, const RowMatrix<float>&, const RowRunOptions&);
template GpuRowsResult<double> gpu_rows<double>(RowKernel, const RowShape&, const RowMatrix<double>&,
                                                const RowRunOptions&);
template GpuRowsResult<float> gpu_rows<row_reduce::bfloat16_bits>(RowKernel, const RowShape&,
                                                                  const RowMatrix<row_reduce::bfloat16_bits>&,
                                                                  const RowRunOptions&);
template GpuRowsResult<float> gpu_rows<float>(RowKernel, const RowShape&, std::span<const float>, std::int64_t,
                                              std::int64_t, const RowRunOptions&);
template GpuRowsResult<double> gpu_rows<double>(RowKernel, const RowShape&, std::span<const double>, std::int64_t,
                                                std::int64_t, const RowRunOptions&);
template GpuRowsResult<float> gpu_rows<row_reduce::bfloat16_bits>(RowKernel, const RowShape&,
                                                                  std::span<const row_reduce::bfloat16_bits>,
                                                                  std::int64_t, std::int64_t, const RowRunOptions&);

}  // namespace sumlab::gpu
