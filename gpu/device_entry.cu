// One call of a device entry the lab does not own (gpu/device_entry.hpp).
#include "gpu/device_entry.hpp"

#include "gpu/device/entry_site.cuh"

namespace sumlab::gpu {

template <class T>
DeviceEntryResult<T> call_device_entry(const DeviceEntry<T>& entry, const T* d_x, std::size_t n, std::size_t scratch_bytes) {
  DeviceEntryResult<T> r;
  detail::EntrySite& site = detail::EntrySite::get();
  const auto lock = site.lock();
  try {
    void* d_scratch = site.scratch(scratch_bytes);
    site.poison_result<T>();
    site.enqueue<T>(entry, d_x, n, d_scratch);
    site.finish();
    r.value = site.value<T>();
  } catch (const GpuError& e) {
    r.error = e.what();
    site.drain();
  }
  return r;
}

template DeviceEntryResult<float> call_device_entry<float>(const DeviceEntry<float>&, const float*, std::size_t, std::size_t);
template DeviceEntryResult<double> call_device_entry<double>(const DeviceEntry<double>&, const double*, std::size_t, std::size_t);

}  // namespace sumlab::gpu
