#pragma once
// The GPU summation kernels behind a plain C++ API: no CUDA types here, so studies/ and tests
// compile with the host compiler. Kernels, their order and their shape rules: core/gpu_kernel.hpp;
// the shape: core/launch_shape.hpp; the CPU model of the same order: core/order_model/.
//
// Errors: a shape the kernel cannot run, an input that does not fit, or any failing CUDA call come
// back in GpuSumResult::error as one line (CUDA failures with the file:line of the call), never as
// a crash or a hang. gpu_available() says whether any of this can run here, and why not.
#include <cstdint>
#include <span>
#include <stdexcept>
#include <string>

#include "core/exact_sum.hpp"
#include "core/generators.hpp"
#include "core/gpu_kernel.hpp"
#include "core/launch_shape.hpp"
#include "gpu/device_buffer.hpp"

namespace sumlab::gpu {

// A CUDA failure (file:line and the CUDA error name/description) or a refused request.
struct GpuError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

// True when a CUDA device is usable; otherwise false and, if why != nullptr, the reason
// ("no CUDA device: cudaGetDeviceCount: no CUDA-capable device is detected").
bool gpu_available(std::string* why = nullptr);

// "" when this build can run kernel k on a GPU; otherwise why not (gpu_cub_gpu_to_gpu needs CCCL
// headers newer than the toolkit's when it is built).
std::string kernel_not_built(GpuKernel k);

struct DeviceInfo {
  std::string name;            // "NVIDIA H200"
  int sm_count = 0;
  int cc_major = 0, cc_minor = 0;
  std::size_t total_memory = 0, free_memory = 0;
  int l2_bytes = 0;
  std::string driver_version;   // the CUDA version the driver supports, "13.0"
  std::string runtime_version;  // the CUDA runtime linked in, "13.0"
};
// Device 0. Throws GpuError when there is none.
DeviceInfo device_info();

// Generates the input on the device: element i = generate_element<T>(spec, seed, i), bit-identical
// to core/generators.hpp's generate() on the CPU. Throws GpuError for ill_conditioned (host-only:
// its elements depend on n; generate() it and upload).
template <class T> void fill(DeviceBuffer<T>& buf, const DistributionSpec& spec, std::uint64_t seed);

template <class T> struct GpuSumResult {
  T value{};
  // gpu_double_acc: the double total before the final rounding (compared with the model's);
  // otherwise the value widened.
  double accumulator = 0;
  double ms = 0;      // device time of the launch(es), CUDA events, input already on the device
  std::string note;   // e.g. the fixed-point scale, or "meaningless value: racy kernel"
  // gpu_fixed_point: the error its grid made on purpose, m * 2^(-k-1) for the m elements the kernel
  // counted off the grid (+inf on overflow), as the CPU's fixed_point_sum reports it; else 0.
  double quantisation = 0;
  // How many times the kernel read the input from memory: 2 for gpu_fixed_point with the scale from
  // the data where its first pass could not decide the sum (data off the grid its guess or range
  // allowed), unless its blocks still held their tiles for the second (small inputs).
  int input_reads = 1;
  std::string error;  // non-empty: nothing ran, or a CUDA call failed (file:line)
  bool ok() const { return error.empty(); }
};

// Runs kernel k with shape s over the buffer (T = input element type; float for double_acc).
// Kernels that take no shape ignore it (core/gpu_kernel.hpp: canonicalize); opt: KernelOptions.
template <class T>
GpuSumResult<T> gpu_sum(GpuKernel k, const LaunchShape& s, const DeviceBuffer<T>& input, const KernelOptions& opt = {});

// Uploads host_input first (one allocation per call; prefer the buffer overload in loops).
template <class T>
GpuSumResult<T> gpu_sum(GpuKernel k, const LaunchShape& s, std::span<const T> host_input, const KernelOptions& opt = {});

// gpu_exact's correctly rounded sum of the n elements at d_in written to *d_out (both device
// memory), asynchronously on the default stream: the totals are rounded on the device by the host's
// code (the same bits as gpu_sum), nothing is copied to the host and nothing waits, so a caller that
// sums again and again pays the kernel's time, not a round trip. Returns "" once launched, else
// why not (a shape gpu_exact refuses, no device, a launch failure). Not for concurrent use from
// several host threads (its totals are one buffer per device and dtype).
template <class T> std::string gpu_exact_into(const T* d_in, std::int64_t n, T* d_out, const LaunchShape& s);

// The exact sum and the exact sum of magnitudes of the n elements at d_in (device memory), computed
// on the device by gpu_exact's kernel (a second pass adds |x|) and brought to the host unrounded,
// as core/exact_sum.hpp's limbs with the special counts of the sum: a study's exact reference where
// its data lies, so that nothing but the limbs crosses PCIe. Blocks of at most 512 threads. Returns
// "" or why not. Waits for the device.
template <class T>
std::string gpu_exact_totals(const T* d_in, std::int64_t n, const LaunchShape& s, Superaccumulator<T>& sum,
                             Superaccumulator<T>& sum_abs);

}  // namespace sumlab::gpu
