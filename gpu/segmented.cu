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
  detail::DeviceBytes values, offsets;  // `copies` copies of the values, one after another
  std::vector<Offset> host_offsets;
  std::int64_t n = 0;
  int copies = 1;
};

template <class T>
SegmentedInput<T>::SegmentedInput(std::span<const T> values, std::span<const Offset> offsets, int copies)
    : impl_(std::make_unique<Impl>()) {
  if (copies < 1) throw std::invalid_argument("SegmentedInput: copies must be >= 1 (got " + std::to_string(copies) + ")");
  segmented::validate_offsets(offsets, values.size());
  impl_->n = static_cast<std::int64_t>(values.size());
  impl_->copies = copies;
  impl_->host_offsets.assign(offsets.begin(), offsets.end());
  std::string why;
  if (!gpu_available(&why)) throw GpuError(why);
  impl_->values = detail::upload_copies(values.data(), values.size_bytes(), copies, "the segmented values");
  impl_->offsets = detail::DeviceBytes(offsets.size_bytes(), "the segment offsets");
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
template <class T> int SegmentedInput<T>::copies() const { return impl_->copies; }
template <class T> const T* SegmentedInput<T>::device_values(int copy) const {
  return impl_->values.template as<T>() + std::size_t(copy % impl_->copies) * std::size_t(impl_->n);
}
template <class T> const Offset* SegmentedInput<T>::device_offsets() const {
  return impl_->offsets.template as<Offset>();
}

namespace {

unsigned capped_grid(std::int64_t wanted, int grid_cap) {
  return static_cast<unsigned>(std::max<std::int64_t>(1, std::min<std::int64_t>(wanted, grid_cap)));
}

// The segmented scan's device scratch: each tile's first segment and the chained look-back's tile
// states (zeroed once; every launch takes the next epoch).
template <class T> struct ScanScratch {
  detail::DeviceBytes first, records, counter;
  std::int64_t tiles = 0;
  unsigned epoch = 0;
};

template <class T, int ITEMS, int MAX_THREADS>
void launch_chained_tiles(const SegShape& s, const SegmentedInput<T>& in, const T* d_in, ScanScratch<T>& w, T* d_out) {
  using F = scan::Flagged<T>;
  auto kernel = seg_detail::chained_segmented_kernel<T, ITEMS, MAX_THREADS>;
  const std::size_t smem = seg_detail::seg_scan_smem<T>(s.block, ITEMS);
  // Large tiles pass the default 48 KB (1024 x 16 doubles: 150 KB).
  detail::opt_in_shared(reinterpret_cast<const void*>(kernel), smem);
  detail::ChainTiles<F> c;
  c.records = w.records.template as<unsigned long long>();
  c.counter = w.counter.template as<unsigned long long>();
  c.epoch = ++w.epoch;
  c.tiles = w.tiles;
  kernel<<<static_cast<unsigned>(w.tiles), s.block, smem>>>(d_in, in.device_offsets(), in.segments(),
                                                           in.size(), w.first.template as<std::int64_t>(), c, d_out);
  SUMLAB_CUDA_CHECK_LAUNCH("segmented scan tiles");
}

template <class T, int MAX_THREADS>
void launch_chained_items(const SegShape& s, const SegmentedInput<T>& in, const T* d_in, ScanScratch<T>& w, T* d_out) {
  switch (s.items_per_thread) {  // validate_shape refused any other
    case 1: launch_chained_tiles<T, 1, MAX_THREADS>(s, in, d_in, w, d_out); break;
    case 2: launch_chained_tiles<T, 2, MAX_THREADS>(s, in, d_in, w, d_out); break;
    case 3: launch_chained_tiles<T, 3, MAX_THREADS>(s, in, d_in, w, d_out); break;
    case 4: launch_chained_tiles<T, 4, MAX_THREADS>(s, in, d_in, w, d_out); break;
    case 8: launch_chained_tiles<T, 8, MAX_THREADS>(s, in, d_in, w, d_out); break;
    default: launch_chained_tiles<T, 16, MAX_THREADS>(s, in, d_in, w, d_out); break;
  }
}

template <class T>
void launch_scan(const SegShape& s, const SegmentedInput<T>& in, const T* d_in, ScanScratch<T>& w, T* d_out,
                 int grid_cap) {
  const std::int64_t n = in.size(), segs = in.segments();
  if (n == 0) {  // every segment is empty: +0 (all-zero bits)
    SUMLAB_CUDA_CHECK(cudaMemsetAsync(d_out, 0, static_cast<std::size_t>(segs) * sizeof(T)));
    return;
  }
  const std::int64_t tile = std::int64_t(s.block) * s.items_per_thread;
  seg_detail::tile_first_kernel<<<capped_grid((segs + 1 + 255) / 256, grid_cap), 256>>>(
      in.device_offsets(), segs, tile, w.tiles, w.first.template as<std::int64_t>());
  SUMLAB_CUDA_CHECK_LAUNCH("segmented scan tile starts");
  if (s.block > 512) launch_chained_items<T, 1024>(s, in, d_in, w, d_out);
  else launch_chained_items<T, 512>(s, in, d_in, w, d_out);
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
    std::vector<double> times;
    if (inf.where == segmented::Where::gpu_peer) {
      const seg_detail::Copies<T> d_in{in.device_values(), n, in.copies()};
      const std::int64_t* d_off = in.device_offsets();
      const auto t = st == Strategy::cub_segmented_reduce ? seg_detail::cub_segmented_reduce<T>(d_in, d_off, segs, d_out, reps)
                     : st == Strategy::cub_reduce_by_key  ? seg_detail::cub_reduce_by_key<T>(d_in, d_off, n, segs, d_out, reps)
                                                          : seg_detail::cub_scan_by_key<T>(d_in, d_off, n, segs, d_out, reps);
      times = t.ms;
    } else {
      ScanScratch<T> w;
      if (st == Strategy::segmented_scan && n > 0) {
        const std::int64_t tile = std::int64_t(s.block) * s.items_per_thread;
        w.tiles = (n + tile - 1) / tile;
        const auto tiles = static_cast<std::size_t>(w.tiles);
        w.first = detail::DeviceBytes(tiles * sizeof(std::int64_t), "the tiles' first segments");
        const std::size_t record = detail::ChainTiles<scan::Flagged<T>>::record_bytes();
        w.records = detail::DeviceBytes(tiles * record, "the tile records");
        w.counter = detail::DeviceBytes(sizeof(unsigned long long), "the tile counter");
        SUMLAB_CUDA_CHECK(cudaMemset(w.records.get(), 0, tiles * record));
        SUMLAB_CUDA_CHECK(cudaMemset(w.counter.get(), 0, sizeof(unsigned long long)));
      }
      int launches = 0;  // the copy each launch reads, in turn
      times = detail::time_back_to_back([&] {
        const T* const d_in = in.device_values(launches++);
        switch (st) {
          case Strategy::block_per_segment:
            seg_detail::block_per_segment_kernel<T><<<capped_grid(segs, grid_cap), s.block>>>(
                d_in, in.device_offsets(), segs, d_out);
            SUMLAB_CUDA_CHECK_LAUNCH("block_per_segment");
            break;
          case Strategy::warp_per_segment: {
            const int warps = s.block / 32;
            seg_detail::warp_per_segment_kernel<T><<<capped_grid((segs + warps - 1) / warps, grid_cap), s.block>>>(
                d_in, in.device_offsets(), segs, d_out);
            SUMLAB_CUDA_CHECK_LAUNCH("warp_per_segment");
            break;
          }
          default: launch_scan<T>(s, in, d_in, w, d_out, grid_cap); break;
        }
      }, reps);
    }
    SUMLAB_CUDA_CHECK(cudaDeviceSynchronize());
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
