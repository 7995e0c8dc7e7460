#pragma once
// The host CUDA layer every family's launchers share (sums, rows, scans, segmented sums, the
// benchmark): an owned device allocation that checks the fit first, a grow-only workspace carved
// into typed regions, an event timer, and checked copies. Every call goes through
// SUMLAB_CUDA_CHECK, so a failure is a GpuError naming the call; "does not fit" is a sentence with
// the request and the device's free memory, never a crash.
#include <cuda_runtime.h>

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdio>
#include <map>
#include <mutex>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "gpu/cuda_check.cuh"
#include "gpu/host/device_rates.hpp"

namespace sumlab::gpu::detail {

inline std::string gib(double bytes) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.2f GiB", bytes / (1024.0 * 1024.0 * 1024.0));
  return buf;
}

// Throws GpuError unless `bytes` fit in the device's free memory; `what` names the request.
inline void require_free(double bytes, const std::string& what) {
  std::size_t free_b = 0, total_b = 0;
  SUMLAB_CUDA_CHECK(cudaMemGetInfo(&free_b, &total_b));
  if (bytes > double(free_b))
    throw GpuError(what + " needs " + gib(bytes) + " of device memory, but only " + gib(double(free_b)) + " of " +
                   gib(double(total_b)) + " are free");
}

// cudaMalloc that clears the (non-sticky) allocation error and throws a sentence instead.
inline void* checked_malloc(std::size_t bytes, const std::string& what) {
  void* p = nullptr;
  const cudaError_t e = cudaMalloc(&p, bytes);
  if (e != cudaSuccess) {
    cudaGetLastError();
    throw GpuError("cudaMalloc of " + gib(double(bytes)) + " for " + what + " failed: " + cudaGetErrorString(e));
  }
  return p;
}

// An owned device allocation of `bytes` (nullptr for 0), after checking that it fits. Move-only.
class DeviceBytes {
 public:
  DeviceBytes() = default;
  DeviceBytes(std::size_t bytes, const std::string& what) {
    if (bytes == 0) return;
    require_free(double(bytes), what);
    p_ = checked_malloc(bytes, what);
  }
  ~DeviceBytes() {
    if (p_) cudaFree(p_);  // a destructor cannot report; the next checked call would
  }
  DeviceBytes(DeviceBytes&& o) noexcept : p_(std::exchange(o.p_, nullptr)) {}
  DeviceBytes& operator=(DeviceBytes&& o) noexcept {
    std::swap(p_, o.p_);
    return *this;
  }
  DeviceBytes(const DeviceBytes&) = delete;
  DeviceBytes& operator=(const DeviceBytes&) = delete;
  void* get() const { return p_; }
  template <class U> U* as() const { return static_cast<U*>(p_); }

 private:
  void* p_ = nullptr;
};

// `copies` copies of `bytes` host bytes, one after another on the device: the bench's inputs, which
// a run of launches reads in turn so that an input smaller than the L2 is not read from the L2 by
// the next launch. `what` names the data (the out-of-memory message).
inline DeviceBytes upload_copies(const void* host, std::size_t bytes, int copies, const std::string& what) {
  DeviceBytes d(bytes * std::size_t(copies), copies == 1 ? what : std::to_string(copies) + " copies of " + what);
  if (bytes == 0) return d;
  SUMLAB_CUDA_CHECK(cudaMemcpy(d.get(), host, bytes, cudaMemcpyHostToDevice));
  for (int c = 1; c < copies; ++c)
    SUMLAB_CUDA_CHECK(cudaMemcpy(d.as<char>() + std::size_t(c) * bytes, d.get(), bytes, cudaMemcpyDeviceToDevice));
  return d;
}

// The most threads per block `kernel` can run on this GPU (its registers per thread bound it).
// Callers read it once per kernel into a function-local static, keeping the query out of timed
// loops.
inline int max_block_threads(const void* kernel) {
  cudaFuncAttributes a{};
  SUMLAB_CUDA_CHECK(cudaFuncGetAttributes(&a, kernel));
  return a.maxThreadsPerBlock;
}

// One device allocation, grown on demand and kept for the process (freed at exit), so a sweep of
// thousands of launches does not pay a cudaMalloc each.
class Workspace {
 public:
  // At least `bytes` bytes, 256-byte aligned; contents undefined; invalidated by the next call.
  void* reserve(std::size_t bytes) {
    if (bytes > bytes_) {
      mem_ = DeviceBytes();
      bytes_ = 0;
      mem_ = DeviceBytes(bytes, "the launch workspace");
      bytes_ = bytes;
    }
    return mem_.get();
  }

 private:
  DeviceBytes mem_;
  std::size_t bytes_ = 0;
};

inline Workspace& workspace() {
  static Workspace w;
  return w;
}

// Carves typed, 256-byte-aligned regions out of the workspace, in order.
class Carver {
 public:
  template <class T> Carver& add(T** out, std::size_t count) {
    if (n_ == max_regions) throw GpuError("Carver: more than " + std::to_string(max_regions) + " regions");
    offsets_[n_] = total_;
    slots_[n_++] = reinterpret_cast<void**>(out);
    total_ += (count * sizeof(T) + 255) / 256 * 256;
    return *this;
  }
  void commit() {
    char* base = static_cast<char*>(workspace().reserve(total_ == 0 ? 256 : total_));
    for (int i = 0; i < n_; ++i) *slots_[i] = base + offsets_[i];
  }

 private:
  static constexpr int max_regions = 12;
  void** slots_[max_regions] = {};
  std::size_t offsets_[max_regions] = {};
  int n_ = 0;
  std::size_t total_ = 0;
};

// The most dynamic shared memory a block of `kernel` may take on the current device: the device's
// opt-in limit per block less the kernel's static shared memory. Cached per device and kernel.
inline std::size_t shared_limit(const void* kernel) {
  static std::mutex m;
  static std::map<std::pair<int, const void*>, std::size_t> known;
  int device = 0;
  SUMLAB_CUDA_CHECK(cudaGetDevice(&device));
  const std::lock_guard<std::mutex> lock(m);
  const auto key = std::make_pair(device, kernel);
  if (const auto it = known.find(key); it != known.end()) return it->second;
  int optin = 0;
  SUMLAB_CUDA_CHECK(cudaDeviceGetAttribute(&optin, cudaDevAttrMaxSharedMemoryPerBlockOptin, device));
  cudaFuncAttributes attributes{};
  SUMLAB_CUDA_CHECK(cudaFuncGetAttributes(&attributes, kernel));
  const std::size_t limit = static_cast<std::size_t>(optin);
  return known[key] = attributes.sharedSizeBytes < limit ? limit - attributes.sharedSizeBytes : 0;
}

// Raises `kernel`'s dynamic shared-memory limit to at least `bytes` (past the default 48 KB a
// launch must opt in), never lowering it: setting it to each launch's own size let a host thread
// launching a smaller block lower the limit between another thread's opt-in and its launch, which
// then failed. One lock over every kernel's limit; a kernel already at `bytes` costs no CUDA call
// but cudaGetDevice (the limit is per device). A raise past what the GPU allows a block
// (shared_limit) is a GpuError that says so, with what() naming the launch, where CUDA's own error
// says only "invalid argument".
template <class What> void opt_in_shared(const void* kernel, std::size_t bytes, What&& what) {
  static std::mutex m;
  static std::map<std::pair<int, const void*>, std::size_t> limits;
  int device = 0;
  SUMLAB_CUDA_CHECK(cudaGetDevice(&device));
  const std::lock_guard<std::mutex> lock(m);
  std::size_t& have = limits[std::make_pair(device, kernel)];
  if (bytes <= have) return;
  if (const std::size_t limit = shared_limit(kernel); bytes > limit)
    throw GpuError(std::string(what()) + " needs " + std::to_string(bytes) + " bytes of shared memory a block; this GPU allows " +
                   std::to_string(limit) + " (a smaller block takes less)");
  SUMLAB_CUDA_CHECK(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, static_cast<int>(bytes)));
  have = bytes;
}
inline void opt_in_shared(const void* kernel, std::size_t bytes) {
  opt_in_shared(kernel, bytes, [] { return "this launch"; });
}

// The current device's L2 size in bytes.
inline std::size_t l2_cache_bytes() {
  int device = 0, bytes = 0;
  SUMLAB_CUDA_CHECK(cudaGetDevice(&device));
  SUMLAB_CUDA_CHECK(cudaDeviceGetAttribute(&bytes, cudaDevAttrL2CacheSize, device));
  return static_cast<std::size_t>(bytes);
}

// The current device's memory_bytes_per_sm_cycle (device_rates.hpp), from its attributes. Cached
// per device.
inline double memory_bytes_per_sm_cycle() {
  static std::mutex m;
  static std::map<int, double> known;
  int device = 0;
  SUMLAB_CUDA_CHECK(cudaGetDevice(&device));
  const std::lock_guard<std::mutex> lock(m);
  if (const auto it = known.find(device); it != known.end()) return it->second;
  int memory_khz = 0, bus_bits = 0, sms = 0, sm_khz = 0;
  SUMLAB_CUDA_CHECK(cudaDeviceGetAttribute(&memory_khz, cudaDevAttrMemoryClockRate, device));
  SUMLAB_CUDA_CHECK(cudaDeviceGetAttribute(&bus_bits, cudaDevAttrGlobalMemoryBusWidth, device));
  SUMLAB_CUDA_CHECK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device));
  SUMLAB_CUDA_CHECK(cudaDeviceGetAttribute(&sm_khz, cudaDevAttrClockRate, device));
  return known[device] = gpu::memory_bytes_per_sm_cycle(memory_khz, bus_bits, sms, sm_khz);
}

// How many blocks of `kernel`, at `threads` a block and `smem` bytes of dynamic shared memory, are
// resident on this GPU at once: the largest grid a cooperative launch takes (0 where the GPU takes
// none). The kernel's dynamic shared-memory limit must already cover smem (opt_in_shared). Cached
// per device, kernel, block and size, so that the queries stay out of timed loops.
inline long long resident_blocks(const void* kernel, int threads, std::size_t smem) {
  static std::mutex m;
  static std::map<std::tuple<int, const void*, int, std::size_t>, long long> known;
  int device = 0;
  SUMLAB_CUDA_CHECK(cudaGetDevice(&device));
  const auto key = std::make_tuple(device, kernel, threads, smem);
  const std::lock_guard<std::mutex> lock(m);
  if (const auto it = known.find(key); it != known.end()) return it->second;
  int cooperative = 0, sms = 0, per_sm = 0;
  SUMLAB_CUDA_CHECK(cudaDeviceGetAttribute(&cooperative, cudaDevAttrCooperativeLaunch, device));
  SUMLAB_CUDA_CHECK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device));
  SUMLAB_CUDA_CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, kernel, threads, smem));
  return known[key] = cooperative != 0 ? static_cast<long long>(per_sm) * sms : 0;
}

// Device time between start() and stop(), on the default stream (or the stream given to both).
class EventTimer {
 public:
  EventTimer() {
    SUMLAB_CUDA_CHECK(cudaEventCreate(&start_));
    SUMLAB_CUDA_CHECK(cudaEventCreate(&stop_));
  }
  ~EventTimer() {
    cudaEventDestroy(start_);
    cudaEventDestroy(stop_);
  }
  EventTimer(const EventTimer&) = delete;
  EventTimer& operator=(const EventTimer&) = delete;
  void start(cudaStream_t stream = nullptr) { SUMLAB_CUDA_CHECK(cudaEventRecord(start_, stream)); }
  float stop(cudaStream_t stream = nullptr) {
    SUMLAB_CUDA_CHECK(cudaEventRecord(stop_, stream));
    SUMLAB_CUDA_CHECK(cudaEventSynchronize(stop_));
    float ms = 0;
    SUMLAB_CUDA_CHECK(cudaEventElapsedTime(&ms, start_, stop_));
    return ms;
  }

 private:
  cudaEvent_t start_{};
  cudaEvent_t stop_{};
};

// Operations a timed sample holds so that it lasts about target_ms, from one operation's time
// (at least 1, at most `most`). Both timers size their samples by it, from a second operation:
// the first can pay one-off costs (a module's load, a first cudaFuncSetAttribute).
inline int operations_per_sample(double one_ms, double target_ms, int most) {
  return static_cast<int>(std::clamp(std::ceil(target_ms / std::max(one_ms, 1e-4)), 1.0, double(most)));
}

// The device time of one operation in a stream of them, as the sums' bench times its kernels and
// the read roof (gpu/bench.cu): `enqueue` puts one whole operation (every launch of it) on the
// default stream. One operation timed alone also counts the host's enqueueing, which over
// 2^20-2^24 elements is a large part of a kernel's time, so a sample is a sequence of operations
// back to back between two events: an untimed warm-up, one operation timed alone to size the
// sequences (about 0.5 ms each, at most 256 operations), then `samples` sequences. Returns each
// sample's time per operation, in ms. samples <= 1: one operation, timed alone (a caller after its
// outputs, not a time). The last operation enqueued is the last of the last sample.
template <class F> std::vector<double> time_back_to_back(F&& enqueue, int samples) {
  EventTimer ev;
  if (samples <= 1) {
    ev.start();
    enqueue();
    return {double(ev.stop())};
  }
  enqueue();
  ev.start();
  enqueue();
  const int launches = operations_per_sample(ev.stop(), 0.5, 256);
  std::vector<double> ms;
  for (int i = 0; i < samples; ++i) {
    ev.start();
    for (int l = 0; l < launches; ++l) enqueue();
    ms.push_back(double(ev.stop()) / launches);
  }
  return ms;
}

template <class T> T copy_to_host(const T* d) {
  T h{};
  SUMLAB_CUDA_CHECK(cudaMemcpy(&h, d, sizeof(T), cudaMemcpyDeviceToHost));
  return h;
}

template <class T> void download(std::vector<T>& host, const T* d) {
  if (host.empty()) return;
  SUMLAB_CUDA_CHECK(cudaMemcpy(host.data(), d, host.size() * sizeof(T), cudaMemcpyDeviceToHost));
}

}  // namespace sumlab::gpu::detail
