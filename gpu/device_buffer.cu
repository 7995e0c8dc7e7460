#include "gpu/device_buffer.hpp"

#include <cuda_runtime.h>

#include <string>

#include "gpu/cuda_check.cuh"
#include "gpu/host/cuda_host.cuh"

namespace sumlab::gpu {

template <class T> struct DeviceBuffer<T>::Impl {
  T* allocation = nullptr;
  T* d = nullptr;  // allocation + offset
  std::int64_t n = 0;
  ~Impl() {
    if (allocation) cudaFree(allocation);  // a destructor cannot report; the next checked call would
  }
};

template <class T> DeviceBuffer<T>::DeviceBuffer() : impl_(std::make_unique<Impl>()) {}

template <class T> DeviceBuffer<T>::DeviceBuffer(std::int64_t n) : DeviceBuffer(n, 0) {}

template <class T> DeviceBuffer<T>::DeviceBuffer(std::int64_t n, int offset) : impl_(std::make_unique<Impl>()) {
  if (n < 0) throw GpuError("DeviceBuffer: negative size " + std::to_string(n));
  if (offset < 0 || offset >= 16) throw GpuError("DeviceBuffer: offset " + std::to_string(offset) + " outside [0, 16)");
  impl_->n = n;
  if (n == 0) return;
  const std::size_t bytes = static_cast<std::size_t>(n + offset) * sizeof(T);
  const std::string what = "an input of n = " + std::to_string(n) + " elements";
  detail::require_free(double(bytes), what);
  impl_->allocation = static_cast<T*>(detail::checked_malloc(bytes, what));
  impl_->d = impl_->allocation + offset;
}

template <class T> DeviceBuffer<T> DeviceBuffer<T>::borrow(const T* device_data, std::int64_t n) {
  if (n < 0) throw GpuError("DeviceBuffer::borrow: negative size " + std::to_string(n));
  if (n > 0 && !device_data) throw GpuError("DeviceBuffer::borrow: null device pointer");
  cudaPointerAttributes a{};
  if (n > 0) {
    SUMLAB_CUDA_CHECK(cudaPointerGetAttributes(&a, device_data));
    if (a.type != cudaMemoryTypeDevice && a.type != cudaMemoryTypeManaged)
      throw GpuError("DeviceBuffer::borrow: the pointer is not device memory");
  }
  DeviceBuffer b;
  b.impl_->n = n;
  b.impl_->d = const_cast<T*>(device_data);  // never written through: kernels only read their input
  return b;
}

template <class T> DeviceBuffer<T> DeviceBuffer<T>::copy_of(const T* device_data, std::int64_t n) {
  (void)borrow(device_data, n);  // (checks the pointer)
  DeviceBuffer b(n);
  if (n == 0) return b;
  const std::size_t bytes = static_cast<std::size_t>(n) * sizeof(T);
  SUMLAB_CUDA_CHECK(cudaMemcpy(b.impl_->d, device_data, bytes, cudaMemcpyDeviceToDevice));
  // A device-to-device cudaMemcpy may return before the copy ends; its reader may be on any stream.
  SUMLAB_CUDA_CHECK(cudaDeviceSynchronize());
  return b;
}

template <class T> int DeviceBuffer<T>::device_id() const {
  int device = 0;
  if (size() == 0) {
    SUMLAB_CUDA_CHECK(cudaGetDevice(&device));
    return device;
  }
  cudaPointerAttributes a{};
  SUMLAB_CUDA_CHECK(cudaPointerGetAttributes(&a, impl_->d));
  return a.device;
}

template <class T> DeviceBuffer<T>::~DeviceBuffer() = default;
template <class T> DeviceBuffer<T>::DeviceBuffer(DeviceBuffer&&) noexcept = default;
template <class T> DeviceBuffer<T>& DeviceBuffer<T>::operator=(DeviceBuffer&&) noexcept = default;

template <class T> std::int64_t DeviceBuffer<T>::size() const { return impl_ ? impl_->n : 0; }
template <class T> const T* DeviceBuffer<T>::device_data() const { return impl_ ? impl_->d : nullptr; }
template <class T> T* DeviceBuffer<T>::device_data() { return impl_ ? impl_->d : nullptr; }

template <class T> void DeviceBuffer<T>::upload(std::span<const T> host) {
  if (static_cast<std::int64_t>(host.size()) != size())
    throw GpuError("DeviceBuffer::upload: " + std::to_string(host.size()) + " elements for a buffer of " +
                   std::to_string(size()));
  if (host.empty()) return;
  SUMLAB_CUDA_CHECK(cudaMemcpy(impl_->d, host.data(), host.size() * sizeof(T), cudaMemcpyHostToDevice));
}

template <class T> void DeviceBuffer<T>::download(std::span<T> host) const {
  if (static_cast<std::int64_t>(host.size()) != size())
    throw GpuError("DeviceBuffer::download: " + std::to_string(host.size()) + " elements for a buffer of " +
                   std::to_string(size()));
  if (host.empty()) return;
  SUMLAB_CUDA_CHECK(cudaMemcpy(host.data(), impl_->d, host.size() * sizeof(T), cudaMemcpyDeviceToHost));
}

template <class T> std::vector<T> DeviceBuffer<T>::download() const {
  std::vector<T> h(static_cast<std::size_t>(size()));
  download(std::span<T>(h));
  return h;
}

template <class T> T DeviceBuffer<T>::at(std::int64_t i) const {
  if (i < 0 || i >= size())
    throw GpuError("DeviceBuffer::at: element " + std::to_string(i) + " of a buffer of " + std::to_string(size()));
  T v;
  SUMLAB_CUDA_CHECK(cudaMemcpy(&v, impl_->d + i, sizeof(T), cudaMemcpyDeviceToHost));
  return v;
}

template <class T> std::vector<T> DeviceBuffer<T>::strided(std::int64_t step, std::int64_t count) const {
  if (step < 1 || count < 0 || (count > 0 && (count - 1) > (size() - 1) / step))
    throw GpuError("DeviceBuffer::strided: " + std::to_string(count) + " elements " + std::to_string(step) +
                   " apart from a buffer of " + std::to_string(size()));
  std::vector<T> out(static_cast<std::size_t>(count));
  if (count == 0) return out;
  // One 2-D copy, one element per row, while the source pitch is within what cudaMemcpy2D takes
  // (cudaDevAttrMaxPitch, 2^31 - 1 bytes on current GPUs); beyond it one copy per element.
  int max_pitch = 0;
  int device = 0;
  SUMLAB_CUDA_CHECK(cudaGetDevice(&device));
  SUMLAB_CUDA_CHECK(cudaDeviceGetAttribute(&max_pitch, cudaDevAttrMaxPitch, device));
  if (count == 1 || static_cast<std::uint64_t>(step) * sizeof(T) <= static_cast<std::uint64_t>(max_pitch)) {
    SUMLAB_CUDA_CHECK(cudaMemcpy2D(out.data(), sizeof(T), impl_->d, static_cast<std::size_t>(step) * sizeof(T),
                                   sizeof(T), static_cast<std::size_t>(count), cudaMemcpyDeviceToHost));
    return out;
  }
  for (std::int64_t k = 0; k < count; ++k) out[static_cast<std::size_t>(k)] = at(k * step);
  return out;
}

template class DeviceBuffer<float>;
template class DeviceBuffer<double>;

}  // namespace sumlab::gpu
