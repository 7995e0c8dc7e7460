#include "studies/backend.hpp"

#include <fmt/format.h>

#include <sys/mman.h>

#include <algorithm>
#include <atomic>
#include <bit>
#include <cmath>
#include <cstdlib>
#include <mutex>
#include <optional>
#include <stdexcept>
#include <thread>

#include "core/float_traits.hpp"
#include "core/order_model/model_sum.hpp"
#include "core/order_model/reduce_ops.hpp"
#include "studies/commands.hpp"
#include "studies/memory_check.hpp"
#include "studies/parallel_for.hpp"

#if defined(SUMLAB_WITH_CUDA)
#include "gpu/gpu_sum.hpp"
#endif

namespace sumlab {

std::string_view to_string(BackendKind b) { return b == BackendKind::cuda ? "cuda" : "model"; }

InputIdentity::InputIdentity() {
  static std::atomic<std::uint64_t> next{1};  // 0 stays "unknown" (ExternalData::input)
  id_ = next.fetch_add(1, std::memory_order_relaxed);
}

bool cuda_backend_available(std::string* why) {
#if defined(SUMLAB_WITH_CUDA)
  return gpu::gpu_available(why);
#else
  if (why) *why = "no CUDA device: this sumlab was built without CUDA (configure with -DSUMLAB_CUDA=ON)";
  return false;
#endif
}

namespace {

template <class T> std::vector<T> generate_on_host(const DistributionSpec& spec, std::uint64_t seed, std::int64_t n) {
  check_fits_in_memory(static_cast<std::uint64_t>(n), sizeof(T) * 2,
                       fmt::format("n = {} {} elements", n, FloatTraits<T>::dtype));
  try {
    return generate<T>(spec, seed, static_cast<std::size_t>(n));
  } catch (const std::invalid_argument& e) {
    throw UserError(e.what());
  }
}

// The model's input: the host data, owned or borrowed.
template <class T> class ModelInput final : public KernelInput<T> {
 public:
  explicit ModelInput(std::span<const T> x) : x_(x) {}
  explicit ModelInput(std::vector<T> owned) : owned_(std::move(owned)), x_(owned_) {}
  std::span<const T> host() override { return x_; }
  std::int64_t size() const override { return static_cast<std::int64_t>(x_.size()); }
  KernelOutcome<T> run(GpuKernel k, const LaunchShape& s, const KernelOptions& opt) override {
    const ModelResult<T> m = model_sum<T>(k, s, x_, opt);
    if (!m.error.empty()) throw UserError(m.error);
    KernelOutcome<T> o;
    o.has_value = m.has_value;
    o.value = m.value;
    o.accumulator = m.accumulator;
    o.note = m.note;
    return o;
  }

 private:
  std::vector<T> owned_;
  std::span<const T> x_;
};

class ModelBackend final : public Backend {
 public:
  BackendKind kind() const override { return BackendKind::model; }
  std::string description() const override {
    return "CPU model of the kernels' order (core/order_model), 132 SMs assumed for default grids";
  }
  int sm_count() const override { return 132; }
  std::unique_ptr<KernelInput<float>> load(std::span<const float> x) override { return std::make_unique<ModelInput<float>>(x); }
  std::unique_ptr<KernelInput<double>> load(std::span<const double> x) override { return std::make_unique<ModelInput<double>>(x); }
  std::unique_ptr<KernelInput<float>> generate_f32(const DistributionSpec& s, std::uint64_t seed, std::int64_t n) override {
    return std::make_unique<ModelInput<float>>(generate_on_host<float>(s, seed, n));
  }
  std::unique_ptr<KernelInput<double>> generate_f64(const DistributionSpec& s, std::uint64_t seed, std::int64_t n) override {
    return std::make_unique<ModelInput<double>>(generate_on_host<double>(s, seed, n));
  }
};

#if defined(SUMLAB_WITH_CUDA)
// Every use of the GPU from a study holds this lock: the launchers share one workspace per process
// (gpu/host/cuda_host.cuh), so cells that run side by side take turns on the device while their
// host work (CPU algorithms, MPFR, rows) overlaps.
std::mutex& device_mutex() {
  static std::mutex m;
  return m;
}
using DeviceLock = std::lock_guard<std::mutex>;

// Host memory for a download: not zeroed (the copy writes every byte), in transparent huge pages
// where the kernel gives them, and touched first on every core. A fresh std::vector of 2^26 floats
// spent about 0.17 s in zeroing and 65,536 page faults on one core before the copy could start,
// ten times the copy itself (bench/gpu_busy.cpp's trace of a study on the H200).
template <class T> struct HostPages {
  struct Free {
    void operator()(T* p) const { std::free(p); }
  };
  std::unique_ptr<T[], Free> data;
  explicit HostPages(std::size_t n) {
    constexpr std::size_t huge = std::size_t{2} << 20, page = 4096;
    const std::size_t bytes = std::max(huge, (n * sizeof(T) + huge - 1) / huge * huge);
    data.reset(static_cast<T*>(std::aligned_alloc(huge, bytes)));
    if (!data) throw ResourceError(fmt::format("cannot allocate {} of host memory for a download", bytes_text(static_cast<double>(bytes))));
    ::madvise(data.get(), bytes, MADV_HUGEPAGE);  // advice: without it, 4 KiB pages
    char* const base = reinterpret_cast<char*>(data.get());
    const std::size_t parts = bytes / huge;
    parallel_for(parts, static_cast<int>(std::max(1u, std::thread::hardware_concurrency())), [&](std::size_t i) {
      for (std::size_t b = i * huge; b < (i + 1) * huge; b += page) base[b] = 0;
    });
  }
};

// The device's input: a buffer on the GPU (owned, or borrowed from a framework) and the host copy
// (given, generated beside it, or downloaded on first use).
template <class T> class CudaInput final : public KernelInput<T> {
 public:
  CudaInput(gpu::DeviceBuffer<T> buf, std::optional<std::vector<T>> owned, std::span<const T> given)
      : buf_(std::move(buf)), owned_(std::move(owned)), x_(owned_ ? std::span<const T>(*owned_) : given) {}
  std::span<const T> host() override {
    if (!owned_ && !downloaded_ && x_.empty() && buf_.size() > 0) {
      const auto n = static_cast<std::size_t>(buf_.size());
      downloaded_.emplace(n);
      const DeviceLock lock(device_mutex());
      try {
        buf_.download(std::span<T>(downloaded_->data.get(), n));
      } catch (const std::exception& e) {
        throw UserError(e.what());
      }
      x_ = std::span<const T>(downloaded_->data.get(), n);
    }
    return x_;
  }
  std::int64_t size() const override { return buf_.size(); }
  bool on_device() const override { return true; }
  const T* device_data() const override { return buf_.device_data(); }
  std::optional<ExactTotals<T>> exact_totals() override {
    const DeviceLock lock(device_mutex());
    ExactTotals<T> t;
    const LaunchShape s = default_shape(GpuKernel::exact, device_sm_count(), FloatTraits<T>::dtype);
    if (std::string why = gpu::gpu_exact_totals<T>(buf_.device_data(), buf_.size(), s, t.sum, t.sum_abs); !why.empty())
      throw UserError("the exact reference on the device: " + why);
    return t;
  }
  KernelOutcome<T> run(GpuKernel k, const LaunchShape& s, const KernelOptions& opt) override {
    KernelOutcome<T> o;
    if (o.note = gpu::kernel_not_built(k); !o.note.empty()) return o;  // no value, and why
    const gpu::GpuSumResult<T> r = [&] {
      const DeviceLock lock(device_mutex());
      return gpu::gpu_sum<T>(k, s, buf_, opt);
    }();
    if (!r.ok()) throw UserError(std::string(info(k).name) + " " + to_string(s) + ": " + r.error);
    o.has_value = !info(k).diagnostic_only;
    o.value = r.value;
    o.accumulator = r.accumulator;
    o.ms = r.ms;
    o.note = r.note;
    o.quantisation = r.quantisation;
    return o;
  }

 private:
  gpu::DeviceBuffer<T> buf_;
  std::optional<std::vector<T>> owned_;
  std::optional<HostPages<T>> downloaded_;
  std::span<const T> x_;
};

template <class T> std::unique_ptr<KernelInput<T>> upload(std::span<const T> x) {
  const DeviceLock lock(device_mutex());
  try {
    gpu::DeviceBuffer<T> buf(static_cast<std::int64_t>(x.size()));
    buf.upload(x);
    return std::make_unique<CudaInput<T>>(std::move(buf), std::nullopt, x);
  } catch (const gpu::GpuError& e) {
    throw ResourceError(e.what());
  }
}

template <class T>
std::unique_ptr<KernelInput<T>> generate_on_device(const DistributionSpec& spec, std::uint64_t seed, std::int64_t n) {
  if (spec.kind == Distribution::ill_conditioned) {  // host-only: its elements depend on n
    std::vector<T> x = generate_on_host<T>(spec, seed, n);
    const DeviceLock lock(device_mutex());
    try {
      gpu::DeviceBuffer<T> buf(n);
      buf.upload(std::span<const T>(x));
      return std::make_unique<CudaInput<T>>(std::move(buf), std::move(x), std::span<const T>());
    } catch (const gpu::GpuError& e) {
      throw ResourceError(e.what());
    }
  }
  const DeviceLock lock(device_mutex());
  try {
    gpu::DeviceBuffer<T> buf(n);
    gpu::fill<T>(buf, spec, seed);
    // The device generator must be the CPU's (core/generators.hpp): spot-check it at about 1024
    // evenly spaced indices (one strided copy) and the last, so that the data stays on the device.
    const auto check = [&](std::int64_t i, T v) {
      if (!same_bits(v, generate_element<T>(spec, seed, static_cast<std::uint64_t>(i))))
        throw UserError(fmt::format("the device generator differs from the CPU's at {} element {}",
                                    to_string(spec.kind), i));
    };
    const std::int64_t step = std::max<std::int64_t>(1, n / 1024);
    const std::vector<T> sample = buf.strided(step, n == 0 ? 0 : (n - 1) / step + 1);
    for (std::size_t k = 0; k < sample.size(); ++k) check(static_cast<std::int64_t>(k) * step, sample[k]);
    if (n > 0) check(n - 1, buf.at(n - 1));
    return std::make_unique<CudaInput<T>>(std::move(buf), std::nullopt, std::span<const T>());
  } catch (const gpu::GpuError& e) {
    throw ResourceError(e.what());
  }
}

class CudaBackend final : public Backend {
 public:
  CudaBackend() : info_(gpu::device_info()) {}
  BackendKind kind() const override { return BackendKind::cuda; }
  std::string description() const override {
    return info_.name + " (" + std::to_string(info_.sm_count) + " SMs, compute " + std::to_string(info_.cc_major) +
           "." + std::to_string(info_.cc_minor) + ", driver CUDA " + info_.driver_version + ", runtime " +
           info_.runtime_version + ")";
  }
  int sm_count() const override { return info_.sm_count; }
  std::uint64_t device_memory_budget() const override { return static_cast<std::uint64_t>(0.8 * static_cast<double>(info_.free_memory)); }
  std::unique_ptr<KernelInput<float>> load(std::span<const float> x) override { return upload<float>(x); }
  std::unique_ptr<KernelInput<double>> load(std::span<const double> x) override { return upload<double>(x); }
  std::unique_ptr<KernelInput<float>> generate_f32(const DistributionSpec& s, std::uint64_t seed, std::int64_t n) override {
    return generate_on_device<float>(s, seed, n);
  }
  std::unique_ptr<KernelInput<double>> generate_f64(const DistributionSpec& s, std::uint64_t seed, std::int64_t n) override {
    return generate_on_device<double>(s, seed, n);
  }

 private:
  gpu::DeviceInfo info_;
};
#endif

}  // namespace

#if defined(SUMLAB_WITH_CUDA)
template <class T> std::unique_ptr<KernelInput<T>> view_device(const T* device_ptr, std::int64_t n) {
  std::string why;
  if (!cuda_backend_available(&why)) throw UserError(why);
  try {
    return std::make_unique<CudaInput<T>>(gpu::DeviceBuffer<T>::borrow(device_ptr, n), std::nullopt,
                                          std::span<const T>());
  } catch (const gpu::GpuError& e) {
    throw UserError(e.what());
  }
}
template std::unique_ptr<KernelInput<float>> view_device<float>(const float*, std::int64_t);
template std::unique_ptr<KernelInput<double>> view_device<double>(const double*, std::int64_t);

template <class T> void exact_sum_into(const T* device_ptr, std::int64_t n, T* device_out, const LaunchShape& s) {
  if (const std::string why = gpu::gpu_exact_into<T>(device_ptr, n, device_out, s); !why.empty())
    throw UserError("gpu_exact: " + why);
}
template void exact_sum_into<float>(const float*, std::int64_t, float*, const LaunchShape&);
template void exact_sum_into<double>(const double*, std::int64_t, double*, const LaunchShape&);

int device_sm_count() {
  static const int sms = [] {
    std::string why;
    if (!cuda_backend_available(&why)) throw UserError(why);
    try {
      return gpu::device_info().sm_count;
    } catch (const gpu::GpuError& e) {
      throw UserError(e.what());
    }
  }();
  return sms;
}
#endif

template <class T> ExactTotals<T> host_exact_totals(std::span<const T> x) {
  constexpr std::size_t kMinPerThread = std::size_t{1} << 22, kBlock = 4096;
  const std::size_t threads = std::max<std::size_t>(
      1, std::min<std::size_t>(std::max(1u, std::thread::hardware_concurrency()), x.size() / kMinPerThread));
  std::vector<ExactTotals<T>> part(threads);
  const std::size_t step = (x.size() + threads - 1) / threads;
  parallel_for(threads, static_cast<int>(threads), [&](std::size_t t) {
    const std::size_t begin = std::min(x.size(), t * step);
    const std::span<const T> mine = x.subspan(begin, std::min(step, x.size() - begin));
    part[t].sum.add(mine);
    std::vector<T> magnitudes(kBlock);
    for (std::size_t b = 0; b < mine.size(); b += kBlock) {
      const std::size_t m = std::min(kBlock, mine.size() - b);
      for (std::size_t i = 0; i < m; ++i) magnitudes[i] = std::fabs(mine[b + i]);
      part[t].sum_abs.add(std::span<const T>(magnitudes.data(), m));
    }
  });
  for (std::size_t t = 1; t < threads; ++t) {
    part[0].sum.merge(part[t].sum);
    part[0].sum_abs.merge(part[t].sum_abs);
  }
  return std::move(part[0]);
}
template ExactTotals<float> host_exact_totals<float>(std::span<const float>);
template ExactTotals<double> host_exact_totals<double>(std::span<const double>);

template <class T> std::unique_ptr<reference::ExactSum<T>> exact_reference(KernelInput<T>& in, bool check) {
  std::optional<ExactTotals<T>> totals = in.exact_totals();
  if (!totals) return std::make_unique<reference::ExactSum<T>>(in.host());
  auto device = std::make_unique<reference::ExactSum<T>>(totals->sum, totals->sum_abs);
  if (!check) return device;
  const auto fault = [&](const std::string& what) {
    return std::runtime_error(fmt::format("the exact reference computed on the device differs from {} for n = {}: "
                                          "a fault of the lab, please report it", what, in.size()));
  };
  if (static_cast<std::uint64_t>(in.size()) > kReferenceCheckMax) {
    const ExactTotals<T> host = host_exact_totals<T>(in.host());
    if (host.sum.limbs() != totals->sum.limbs() || host.sum_abs.limbs() != totals->sum_abs.limbs() ||
        !(host.sum.specials() == totals->sum.specials()))
      throw fault("the CPU superaccumulator's limbs of the host copy");
    return device;
  }
  const reference::ExactSum<T> host(in.host());
  if (!device->same_exact(host)) {
    const auto d = device->measure(T(0)), h = host.measure(T(0));
    throw fault(fmt::format("MPFR's on the host (device: sum {}, sum|x| {}; MPFR: sum {}, sum|x| {}, to double)",
                            d.exact, d.sum_abs, h.exact, h.sum_abs));
  }
  return device;
}
template std::unique_ptr<reference::ExactSum<float>> exact_reference<float>(KernelInput<float>&, bool);
template std::unique_ptr<reference::ExactSum<double>> exact_reference<double>(KernelInput<double>&, bool);

void check_fits_on_device(const Backend& backend, std::uint64_t bytes, const std::string& what) {
  if (backend.kind() != BackendKind::cuda || bytes <= backend.device_memory_budget()) return;
  throw ResourceError(fmt::format("{} needs {} of device memory; {} has {} to give (80% of what is free)", what,
                                  bytes_text(static_cast<double>(bytes)), backend.description(),
                                  bytes_text(static_cast<double>(backend.device_memory_budget()))));
}

std::unique_ptr<Backend> make_backend(const std::string& name) {
  if (name == "model") return std::make_unique<ModelBackend>();
  if (name != "" && name != "cuda") throw UserError("unknown backend '" + name + "' (valid: cuda, model)");
  std::string why;
  const bool gpu = cuda_backend_available(&why);
  if (name == "cuda" && !gpu) throw UserError(why);
#if defined(SUMLAB_WITH_CUDA)
  if (gpu) return std::make_unique<CudaBackend>();
#endif
  return std::make_unique<ModelBackend>();
}

}  // namespace sumlab
