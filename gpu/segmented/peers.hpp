#pragma once
// The CUB segmented peers, compiled with nvcc's default flags in their own object
// (gpu/device/segmented_peers.cu, like library_peers.cu): measured, never modelled.
// Device pointers in, per-segment sums out on the device; throws GpuError. The timing covers
// exactly what a user would launch: DeviceSegmentedReduce::Sum; or ReduceByKey over segment ids
// (materialised before the timer starts, as a caller with sorted keys has them) plus the scatter
// of the runs to their segments after a memset to +0; or InclusiveSumByKey over the same ids into
// n scanned values, plus the gather of each segment's last one (its sum; +0 for an empty segment).
#include <cstdint>
#include <vector>

namespace sumlab::gpu::seg_detail {

// Timed as every GPU family is (gpu/host/cuda_host.cuh, time_back_to_back): `samples` runs of
// calls back to back, or one call alone when samples is 1.
struct PeerTiming {
  std::vector<double> ms;  // one per sample: its time per call
};

// The values' copies on the device, which a run of calls reads in turn (SegmentedInput's copies).
template <class T> struct Copies {
  const T* first = nullptr;
  std::int64_t stride = 0;  // elements from one copy to the next
  int count = 1;
  const T* at(int call) const { return first + std::int64_t(call % count) * stride; }
};

template <class T>
PeerTiming cub_segmented_reduce(Copies<T> in, const std::int64_t* d_offsets, std::int64_t num_segments, T* d_out,
                                int samples);
template <class T>
PeerTiming cub_reduce_by_key(Copies<T> in, const std::int64_t* d_offsets, std::int64_t n,
                             std::int64_t num_segments, T* d_out, int samples);
template <class T>
PeerTiming cub_scan_by_key(Copies<T> in, const std::int64_t* d_offsets, std::int64_t n, std::int64_t num_segments,
                           T* d_out, int samples);

}  // namespace sumlab::gpu::seg_detail
