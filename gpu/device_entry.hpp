#pragma once
// Calls into device code the lab does not own: a plugin's device entry (plugin/sumlab_plugin.h),
// which enqueues its own kernels on a stream the lab gives it and writes one value to device
// memory the lab gives it. Everything CUDA about such a call is here, every runtime call checked
// (gpu/cuda_check.cuh): the stream, the result slot, the scratch, the synchronisation and the
// error check after the call. No CUDA types in this header (the stream travels as void*), so
// studies/ builds with the host compiler.
#include <cstddef>
#include <functional>
#include <string>

namespace sumlab::gpu {

// Enqueues the sum of the n elements at d_x on `stream` (a cudaStream_t), to be written to
// *d_result, with the d_scratch bytes the caller allocated. Returns "" once enqueued, else why not
// (the entry's own message).
template <class T>
using DeviceEntry = std::function<std::string(const T* d_x, std::size_t n, T* d_result, void* d_scratch, void* stream)>;

template <class T> struct DeviceEntryResult {
  T value{};
  std::string error;  // the entry's message, or the CUDA error its work left; empty: value holds
  bool ok() const { return error.empty(); }
};

// One call, as the ABI promises it: on the lab's stream (created once, blocking with respect to
// the legacy default stream, so the input's upload or generation is ordered before it); a result
// slot set to NaN first (an entry that writes nothing fails as NaN); scratch of scratch_bytes
// (allocated on the first call that needs that much, then reused); after the call, the stream
// synchronised and CUDA's error state read and cleared, and the current device checked unchanged.
// One call at a time (a mutex serialises callers). A CUDA error is the call's error, not an
// exception: a sticky one (an illegal address) leaves the context unusable, and later calls say so.
template <class T>
DeviceEntryResult<T> call_device_entry(const DeviceEntry<T>& entry, const T* d_x, std::size_t n, std::size_t scratch_bytes);

}  // namespace sumlab::gpu
