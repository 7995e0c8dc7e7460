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

template <class T>
PeerTiming cub_segmented_reduce(const T* d_in, const std::int64_t* d_offsets, std::int64_t num_segments, T* d_out,
                                int samples);
template <class T>
PeerTiming cub_reduce_by_key(const T* d_in, const std::int64_t* d_offsets, std::int64_t n,
                             std::int64_t num_segments, T* d_out, int samples);
template <class T>
PeerTiming cub_scan_by_key(const T* d_in, const std::int64_t* d_offsets, std::int64_t n, std::int64_t num_segments,
                           T* d_out, int samples);

}  // namespace sumlab::gpu::seg_detail
