// cub::DeviceScan as the scans' library peer: InclusiveSum / ExclusiveSum for plus, InclusiveScan /
// ExclusiveScan (init = the operator's identity) with the operator's combine for max, segmented and
// affine. CUB's single-pass decoupled look-back combines a tile's predecessors in an order that
// depends on which of them have published their prefix yet, so its bits are measured (scan study),
// never modelled. Built with nvcc's default flags (gpu/CMakeLists.txt).
#include <cub/device/device_scan.cuh>

#include "core/scan/scan_ops.hpp"
#include "gpu/cuda_check.cuh"
#include "gpu/scan/cub_scan.hpp"

namespace sumlab::gpu::detail {
namespace {

template <class Op> struct CubCombine {
  __host__ __device__ typename Op::Value operator()(const typename Op::Value& a, const typename Op::Value& b) const {
    return Op::combine(a, b);
  }
};

template <class Op> constexpr bool is_plus = false;
template <class T> constexpr bool is_plus<scan::PlusOp<T>> = true;

template <class Op>
cudaError_t run(void* d_temp, std::size_t& bytes, const typename Op::Value* d_in, typename Op::Value* d_out,
                std::int64_t n, bool inclusive) {
  if constexpr (is_plus<Op>) {
    return inclusive ? cub::DeviceScan::InclusiveSum(d_temp, bytes, d_in, d_out, n)
                     : cub::DeviceScan::ExclusiveSum(d_temp, bytes, d_in, d_out, n);
  } else {
    return inclusive ? cub::DeviceScan::InclusiveScan(d_temp, bytes, d_in, d_out, CubCombine<Op>{}, n)
                     : cub::DeviceScan::ExclusiveScan(d_temp, bytes, d_in, d_out, CubCombine<Op>{}, Op::identity(), n);
  }
}

}  // namespace

template <class Op> std::size_t cub_scan_temp_bytes(std::int64_t n, bool inclusive) {
  std::size_t bytes = 0;
  SUMLAB_CUDA_CHECK((run<Op>(nullptr, bytes, nullptr, nullptr, n, inclusive)));
  return bytes;
}

template <class Op>
void cub_scan(void* d_temp, std::size_t temp_bytes, const typename Op::Value* d_in, typename Op::Value* d_out,
              std::int64_t n, bool inclusive) {
  SUMLAB_CUDA_CHECK((run<Op>(d_temp, temp_bytes, d_in, d_out, n, inclusive)));
}

#define SUMLAB_CUB_SCAN(OP)                                                                                   \
  template std::size_t cub_scan_temp_bytes<OP>(std::int64_t, bool);                                        \
  template void cub_scan<OP>(void*, std::size_t, const OP::Value*, OP::Value*, std::int64_t, bool);
SUMLAB_CUB_SCAN(scan::PlusOp<float>)
SUMLAB_CUB_SCAN(scan::PlusOp<double>)
SUMLAB_CUB_SCAN(scan::MaxOp<float>)
SUMLAB_CUB_SCAN(scan::MaxOp<double>)
SUMLAB_CUB_SCAN(scan::SegmentedOp<float>)
SUMLAB_CUB_SCAN(scan::SegmentedOp<double>)
SUMLAB_CUB_SCAN(scan::AffineOp<float>)
SUMLAB_CUB_SCAN(scan::AffineOp<double>)
#undef SUMLAB_CUB_SCAN

}  // namespace sumlab::gpu::detail
