#pragma once
// The lab's side of a device entry's call (gpu/device_entry.hpp), shared by the single call
// (gpu/device_entry.cu) and the benchmark's timed sequences (gpu/bench.cu): one stream, one result
// slot and one grow-only scratch allocation for the process (freed at exit), used under a mutex.
// Every function throws GpuError on failure (SUMLAB_CUDA_CHECK), naming the call.
#include <cuda_runtime.h>

#include <cstddef>
#include <limits>
#include <mutex>
#include <string>

#include "gpu/cuda_check.cuh"
#include "gpu/device/dispatch.cuh"
#include "gpu/device_entry.hpp"

namespace sumlab::gpu::detail {

class EntrySite {
 public:
  // The site, created on first use; hold lock() while using it.
  static EntrySite& get() {
    static EntrySite site;
    return site;
  }
  std::unique_lock<std::mutex> lock() { return std::unique_lock<std::mutex>(mutex_); }

  cudaStream_t stream() {
    // Blocking (the default flags): ordered after work on the legacy default stream, where the
    // lab uploads and generates inputs, so an entry never reads an input still being written.
    if (!stream_) SUMLAB_CUDA_CHECK(cudaStreamCreate(&stream_));
    return stream_;
  }
  template <class T> T* result() {
    if (!result_.get()) result_ = DeviceBytes(16, "a device entry's result");
    return result_.as<T>();
  }
  // At least `bytes` bytes (nullptr for 0), reallocated only when a call needs more than before:
  // a Workspace of its own, apart from the kernels' (their launches carve theirs between calls).
  void* scratch(std::size_t bytes) { return bytes == 0 ? nullptr : scratch_.reserve(bytes); }
  // The result slot set to NaN on the stream, before a call: an entry that writes nothing fails.
  template <class T> void poison_result() {
    static const T nan = std::numeric_limits<T>::quiet_NaN();
    SUMLAB_CUDA_CHECK(cudaMemcpyAsync(result<T>(), &nan, sizeof(T), cudaMemcpyHostToDevice, stream()));
  }
  // One call of the entry on the stream: its own refusal is a GpuError with its message; a change
  // of the current device (which the ABI forbids) is one too, after the device is set back.
  template <class T>
  void enqueue(const DeviceEntry<T>& entry, const T* d_x, std::size_t n, void* d_scratch) {
    int before = 0, after = 0;
    SUMLAB_CUDA_CHECK(cudaGetDevice(&before));
    const std::string refused = entry(d_x, n, result<T>(), d_scratch, stream());
    SUMLAB_CUDA_CHECK(cudaGetDevice(&after));
    if (after != before) {
      SUMLAB_CUDA_CHECK(cudaSetDevice(before));
      throw GpuError("the entry changed the current device from " + std::to_string(before) + " to " +
                     std::to_string(after) + " (plugin/sumlab_plugin.h forbids it)");
    }
    if (!refused.empty()) throw GpuError(refused);
  }
  // After the calls: wait for the stream, then read (and so clear) CUDA's error state, where a
  // launch the entry did not check left its configuration error.
  void finish() {
    SUMLAB_CUDA_CHECK(cudaStreamSynchronize(stream()));
    SUMLAB_CUDA_CHECK(cudaGetLastError());
  }
  // After a failure: whatever the entry enqueued finishes before the next call; errors ignored
  // (the failure already has its message).
  void drain() noexcept {
    if (stream_) cudaStreamSynchronize(stream_);
    cudaGetLastError();
  }
  template <class T> T value() { return copy_to_host(result<T>()); }

 private:
  EntrySite() = default;
  ~EntrySite() {  // at exit: nothing useful to do with an error here
    if (stream_) cudaStreamDestroy(stream_);
  }
  std::mutex mutex_;
  cudaStream_t stream_ = nullptr;
  DeviceBytes result_;
  Workspace scratch_;
};

}  // namespace sumlab::gpu::detail
