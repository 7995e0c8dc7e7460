#pragma once
// DeviceBuffer<T>: n elements of T in GPU memory, owned (RAII, move-only). No CUDA types in this
// header, so studies/ and tests build with the host compiler; the allocation lives behind a pimpl.
// One buffer serves many launches: `sumlab verify` fills it once per (distribution, size) and runs
// every kernel and shape on it without re-uploading.
#include <cstdint>
#include <memory>
#include <span>
#include <vector>

namespace sumlab::gpu {

template <class T> class DeviceBuffer {
 public:
  DeviceBuffer();
  // Allocates n elements (uninitialised). Throws GpuError with the request and the device's free
  // memory when it does not fit ("n beyond device memory" is a message, not a crash).
  explicit DeviceBuffer(std::int64_t n);
  // The same, with the data starting `offset` elements past an aligned address (0 <= offset < 16):
  // a view such as a framework tensor's slice, to check kernels on inputs that are not 16-byte
  // aligned.
  DeviceBuffer(std::int64_t n, int offset);
  // A buffer over device memory someone else owns (a framework's tensor): nothing is allocated,
  // copied or freed, so a kernel reads the caller's memory in place. The memory must outlive the
  // buffer and stay unchanged while it is read; upload() would write into it.
  static DeviceBuffer borrow(const T* device_data, std::int64_t n);
  // A buffer of its own holding a copy of n elements of device memory, the copy finished when it
  // returns: what a user's function may change without touching the lab's data.
  static DeviceBuffer copy_of(const T* device_data, std::int64_t n);
  // The ordinal of the device the data lies on (the current device for an empty buffer).
  int device_id() const;
  ~DeviceBuffer();
  DeviceBuffer(DeviceBuffer&&) noexcept;
  DeviceBuffer& operator=(DeviceBuffer&&) noexcept;
  DeviceBuffer(const DeviceBuffer&) = delete;
  DeviceBuffer& operator=(const DeviceBuffer&) = delete;

  std::int64_t size() const;
  void upload(std::span<const T> host);    // host.size() must equal size()
  void download(std::span<T> host) const;  // host.size() must equal size()
  std::vector<T> download() const;
  // Element i (0 <= i < size()), one small copy: for spot checks of data that stays on the device.
  T at(std::int64_t i) const;
  // Elements 0, step, 2 step, ..., (count - 1) step, in one strided copy (a spot check of data that
  // stays on the device, without a round trip per element).
  std::vector<T> strided(std::int64_t step, std::int64_t count) const;
  // The device address, opaque to host code (for the launchers in gpu/).
  const T* device_data() const;
  T* device_data();

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

extern template class DeviceBuffer<float>;
extern template class DeviceBuffer<double>;

}  // namespace sumlab::gpu
