#pragma once
// The cub::DeviceScan peer, compiled apart (gpu/device/scan_peers.cu, nvcc's default flags, as a
// user builds CUB: AffineOp's product and sum may be fused there). Internal to gpu/.
#include <cstddef>
#include <cstdint>

namespace sumlab::gpu::detail {

// Temporary storage cub needs for n values.
template <class Op> std::size_t cub_scan_temp_bytes(std::int64_t n, bool inclusive);
// Enqueues one scan on the default stream; throws GpuError on a CUDA error.
template <class Op>
void cub_scan(void* d_temp, std::size_t temp_bytes, const typename Op::Value* d_in, typename Op::Value* d_out,
              std::int64_t n, bool inclusive);

}  // namespace sumlab::gpu::detail
