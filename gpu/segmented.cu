// Host side of the segmented strategies: upload, shape validation, the launches of each strategy,
// timing (CUDA events, warm-up, median), download. Every CUDA call is checked; a GpuError becomes
// GpuSegmentedResult::error.
#include "gpu/segmented.hpp"

#include <cuda_runtime.h>

#include <algorithm>
#include <stdexcept>
#include <string>
#include <vector>

#include "core/metrics.hpp"
#include "gpu/cuda_check.cuh"
#include "gpu/host/cuda_host.cuh"
#include "gpu/segmented/peers.hpp"
#include "gpu/segmented/per_segment_kernels.cuh"
#include "gpu/segmented/segmented_scan_kernels.cuh"

namespace sumlab::gpu {

using segmented::Offset;
using segmented::SegShape;
using segmented::Strategy;

template <class T> struct SegmentedInput<T>::Impl {
  detail::DeviceBytes values, offsets;
  std::vector<Offset> host_offsets;
  std::int64_t n = 0;
};

template <class T>
SegmentedInput<T>::SegmentedInput(std::span<const T> values, std::span<const Offset> offsets)
    : impl_(std::make_unique<Impl>()) {
  segmented::validate_offsets(offsets, values.size());
  impl_->n = static_cast<std::int64_t>(values.size());
  impl_->host_offsets.assign(offsets.begin(), offsets.end());
  std::string why;
  if (!gpu_available(&why)) throw GpuError(why);
  impl_->values = detail::DeviceBytes(values.size_bytes(), "the segmented values");
  impl_->offsets = detail::DeviceBytes(offsets.size_bytes(), "the segment offsets");
  if (!values.empty())
    SUMLAB_CUDA_CHECK(cudaMemcpy(impl_->values.get(), values.data(), values.size_bytes(), cudaMemcpyHostToDevice));
  SUMLAB_CUDA_CHECK(cudaMemcpy(impl_->offsets.get(), offsets.data(), offsets.size_bytes(), cudaMemcpyHostToDevice));
}
template <class T> SegmentedInput<T>::~SegmentedInput() = default;
template <class T> SegmentedInput<T>::SegmentedInput(SegmentedInput&&) noexcept = default;
template <class T> SegmentedInput<T>& SegmentedInput<T>::operator=(SegmentedInput&&) noexcept = default;
template <class T> std::int64_t SegmentedInput<T>::size() const { return impl_->n; }
template <class T> std::int64_t SegmentedInput<T>::segments() const {
  return static_cast<std::int64_t>(impl_->host_offsets.size()) - 1;
}
template <class T> std::span<const Offset> SegmentedInput<T>::host_offsets() const { return impl_->host_offsets; }
template <class T> const T* SegmentedInput<T>::device_values() const { return impl_->values.template as<T>(); }
template <class T> const Offset* SegmentedInput<T>::device_offsets() const {
  return impl_->offsets.template as<Offset>();
}

namespace {

unsigned capped_grid(std::int64_t wanted, int grid_cap) {
  return static_cast<unsigned>(std::max<std::int64_t>(1, std::min<std::int64_t>(wanted, grid_cap)));
}

// The segmented scan's device scratch: heads, tile aggregates and carries, every element's scan.
template <class T> struct ScanScratch {
  detail::DeviceBytes head, agg, carry, scanned;
};

template <class T, int ITEMS>
void launch_scan_tiles(const SegShape& s, const T* d_in, std::int64_t n, ScanScratch<T>& w, std::int64_t tiles) {
  using F = scan::Flagged<T>;
  const auto grid = static_cast<unsigned>(tiles);
  seg_detail::tile_kernel<T, ITEMS, false><<<grid, s.block>>>(d_in, w.head.template as<unsigned char>(), n,
                                                              w.agg.template as<F>(), nullptr, nullptr);
  SUMLAB_CUDA_CHECK_LAUNCH("segmented scan tile aggregates");
  seg_detail::carry_kernel<T><<<1, seg_detail::carry_threads>>>(w.agg.template as<F>(), tiles, w.carry.template as<F>());
  SUMLAB_CUDA_CHECK_LAUNCH("segmented scan carries");
  seg_detail::tile_kernel<T, ITEMS, true><<<grid, s.block>>>(d_in, w.head.template as<unsigned char>(), n, nullptr,
                                                             w.carry.template as<F>(), w.scanned.template as<T>());
  SUMLAB_CUDA_CHECK_LAUNCH("segmented scan tiles");
}

template <class T>
void launch_scan(const SegShape& s, const SegmentedInput<T>& in, ScanScratch<T>& w, T* d_out, int grid_cap) {
  const std::int64_t n = in.size(), segs = in.segments();
  const std::int64_t tile = std::int64_t(s.block) * s.items_per_thread;
  const std::int64_t tiles = (n + tile - 1) / tile;
  if (n > 0) {
    SUMLAB_CUDA_CHECK(cudaMemset(w.head.get(), 0, static_cast<std::size_t>(n)));
    seg_detail::heads_kernel<<<capped_grid((segs + 255) / 256, grid_cap), 256>>>(in.device_offsets(), segs,
                                                                               w.head.template as<unsigned char>());
    SUMLAB_CUDA_CHECK_LAUNCH("segmented scan heads");
    switch (s.items_per_thread) {
      case 1: launch_scan_tiles<T, 1>(s, in.device_values(), n, w, tiles); break;
      case 2: launch_scan_tiles<T, 2>(s, in.device_values(), n, w, tiles); break;
      case 3: launch_scan_tiles<T, 3>(s, in.device_values(), n, w, tiles); break;
      case 4: launch_scan_tiles<T, 4>(s, in.device_values(), n, w, tiles); break;
      case 8: launch_scan_tiles<T, 8>(s, in.device_values(), n, w, tiles); break;
      default: launch_scan_tiles<T, 16>(s, in.device_values(), n, w, tiles); break;
    }
  }
  seg_detail::gather_kernel<T><<<capped_grid((segs + 255) / 256, grid_cap), 256>>>(w.scanned.template as<T>(),
                                                                                 in.device_offsets(), segs, d_out);
  SUMLAB_CUDA_CHECK_LAUNCH("segmented scan gather");
}

}  // namespace

template <class T>
GpuSegmentedResult<T> gpu_segmented(Strategy st, const SegShape& s, const SegmentedInput<T>& in, int reps,
                                    int grid_cap) {
  GpuSegmentedResult<T> r;
  const auto& inf = segmented::info(st);
  if (inf.where == segmented::Where::cpu) {
    r.error = std::string(inf.name) + " is a CPU algorithm, not a GPU strategy";
    return r;
  }
  r.error = segmented::validate_shape(st, s);
  if (!r.error.empty()) return r;
  if (reps < 1) {
    r.error = "reps must be >= 1";
    return r;
  }
  const std::int64_t n = in.size(), segs = in.segments();
  r.sums.assign(static_cast<std::size_t>(segs), T(0));
  if (segs == 0) return r;
  try {
    if (grid_cap <= 0) grid_cap = 8 * device_info().sm_count;
    detail::DeviceBytes out(static_cast<std::size_t>(segs) * sizeof(T), "the segment sums");
    T* d_out = out.as<T>();
    const int runs = reps > 1 ? reps + 1 : 1;  // the first of several is the warm-up
    std::vector<double> times;
    if (inf.where == segmented::Where::gpu_peer) {
      const auto t = st == Strategy::cub_segmented_reduce
                         ? seg_detail::cub_segmented_reduce<T>(in.device_values(), in.device_offsets(), segs, d_out, runs)
                         : seg_detail::cub_reduce_by_key<T>(in.device_values(), in.device_offsets(), n, segs, d_out, runs);
      times = t.ms;
    } else {
      ScanScratch<T> w;
      if (st == Strategy::segmented_scan) {
        const std::int64_t tile = std::int64_t(s.block) * s.items_per_thread;
        const auto tiles = static_cast<std::size_t>((n + tile - 1) / tile);
        w.head = detail::DeviceBytes(static_cast<std::size_t>(n), "segment heads");
        w.agg = detail::DeviceBytes(tiles * sizeof(scan::Flagged<T>), "tile aggregates");
        w.carry = detail::DeviceBytes(tiles * sizeof(scan::Flagged<T>), "tile carries");
        w.scanned = detail::DeviceBytes(static_cast<std::size_t>(n) * sizeof(T), "the scanned values");
      }
      detail::EventTimer timer;
      for (int i = 0; i < runs; ++i) {
        timer.start();
        switch (st) {
          case Strategy::block_per_segment:
            seg_detail::block_per_segment_kernel<T><<<capped_grid(segs, grid_cap), s.block>>>(
                in.device_values(), in.device_offsets(), segs, d_out);
            SUMLAB_CUDA_CHECK_LAUNCH("block_per_segment");
            break;
          case Strategy::warp_per_segment: {
            const int warps = s.block / 32;
            seg_detail::warp_per_segment_kernel<T><<<capped_grid((segs + warps - 1) / warps, grid_cap), s.block>>>(
                in.device_values(), in.device_offsets(), segs, d_out);
            SUMLAB_CUDA_CHECK_LAUNCH("warp_per_segment");
            break;
          }
          default: launch_scan<T>(s, in, w, d_out, grid_cap); break;
        }
        times.push_back(timer.stop());
      }
    }
    SUMLAB_CUDA_CHECK(cudaDeviceSynchronize());
    if (times.size() > 1) times.erase(times.begin());
    r.ms = median(times);
    SUMLAB_CUDA_CHECK(cudaMemcpy(r.sums.data(), d_out, r.sums.size() * sizeof(T), cudaMemcpyDeviceToHost));
  } catch (const GpuError& e) {
    r.sums.clear();
    r.error = e.what();
  }
  return r;
}

template <class T>
GpuSegmentedResult<T> gpu_segmented(Strategy st, const SegShape& s, std::span<const T> values,
                                    std::span<const Offset> offsets, int reps, int grid_cap) {
  try {
    const SegmentedInput<T> in(values, offsets);
    return gpu_segmented<T>(st, s, in, reps, grid_cap);
  } catch (const std::exception& e) {  // GpuError, or invalid offsets
    GpuSegmentedResult<T> r;
    r.error = e.what();
    return r;
  }
}

template class SegmentedInput<float>;
template class SegmentedInput<double>;
template GpuSegmentedResult<float> gpu_segmented<float>(Strategy, const SegShape&, const SegmentedInput<float>&, int,
                                                        int);
template GpuSegmentedResult<double> gpu_segmented<double>(Strategy, const SegShape&, const SegmentedInput<double>&,
                                                          int, int);
template GpuSegmentedResult<float> gpu_segmented<float>(Strategy, const SegShape&, std::span<const float>,
                                                        std::span<const Offset>, int, int);
template GpuSegmentedResult<double> gpu_segmented<double>(Strategy, const SegShape&, std::span<const double>,
                                                          std::span<const Offset>, int, int);

}  // namespace sumlab::gpu
