// sumlab._sumlab: the C++ lab behind the Python package (python/sumlab/). A thin layer: arrays in
// through DLPack or the buffer protocol (nanobind's ndarray), the same library calls as the CLI
// out (studies/sum_api.hpp, studies/cli.hpp), results as the CLI's own JSON. The GIL is released
// while C++ works and taken back only to call the user's Python subjects.
#include <nanobind/nanobind.h>
#include <nanobind/ndarray.h>
#include <nanobind/stl/optional.h>
#include <nanobind/stl/pair.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/vector.h>

#include <chrono>
#include <cmath>
#include <cstring>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "core/cpu_algorithms.hpp"
#include "core/determinism_classify.hpp"
#include "core/gpu_kernel.hpp"
#include "reference/mpfr_sum.hpp"
#include "studies/backend.hpp"
#include "studies/cli.hpp"
#include "studies/commands.hpp"
#include "studies/external.hpp"
#include "studies/input_file.hpp"
#include "studies/shape_options.hpp"
#include "studies/sum_api.hpp"
#if defined(SUMLAB_WITH_CUDA)
#include "gpu/device_buffer.hpp"
#endif

namespace nb = nanobind;
using namespace nb::literals;

namespace sumlab {
namespace {

// An array as the lab takes it: its elements in index order as float32 or float64 on the host
// (float16 and bfloat16 widened to float32, which holds them exactly), and, for a contiguous
// float32/float64 CUDA array, the device pointer the kernels read in place.
struct Prepared {
  std::string dtype;              // the input's own: float16, bfloat16, float32, float64
  std::vector<float> f32;         // host copies, when the data is not usable in place
  std::vector<double> f64;
  std::span<const float> host32;  // what the CPU side reads
  std::span<const double> host64;
  const void* device = nullptr;   // a CUDA array's data, read in place by the GPU kernels
  std::int64_t n = 0;
  bool wide() const { return dtype == "float64"; }
};

float half_to_float(std::uint16_t h) {
  const std::uint32_t sign = (h & 0x8000u) << 16, exp = (h >> 10) & 0x1f, frac = h & 0x3ff;
  if (exp == 0) return (sign ? -1.0f : 1.0f) * std::ldexp(static_cast<float>(frac), -24);  // zero, subnormal
  std::uint32_t bits;
  if (exp == 31) bits = sign | 0x7f800000u | (frac << 13);  // Inf, NaN
  else bits = sign | ((exp + 112) << 23) | (frac << 13);
  float f;
  std::memcpy(&f, &bits, 4);
  return f;
}

float bfloat_to_float(std::uint16_t b) {
  const std::uint32_t bits = static_cast<std::uint32_t>(b) << 16;
  float f;
  std::memcpy(&f, &bits, 4);
  return f;
}

// `tag`: "bfloat16" when Python handed bfloat16 data as its uint16 bits (NumPy has no bfloat16).
Prepared prepare(const nb::ndarray<nb::ro>& a, const std::string& tag) {
  Prepared p;
  const auto dt = a.dtype();
  const bool cuda = a.device_type() == nb::device::cuda::value;
  if (a.device_type() != nb::device::cpu::value && !cuda)
    throw UserError("sumlab takes arrays on the CPU or a CUDA device");
  if (a.ndim() != 1)
    throw UserError("sumlab sums one sequence: pass a 1-D array, or flatten it yourself with an explicit order "
                    "(sumlab.sum(x, order='C') or order='F' does that)");
  p.n = static_cast<std::int64_t>(a.shape(0));
  const bool contiguous = p.n <= 1 || a.stride(0) == 1;
  if (dt == nb::dtype<float>()) p.dtype = "float32";
  else if (dt == nb::dtype<double>()) p.dtype = "float64";
  else if (dt.code == static_cast<std::uint8_t>(nb::dlpack::dtype_code::Float) && dt.bits == 16) p.dtype = "float16";
  else if (dt.code == static_cast<std::uint8_t>(nb::dlpack::dtype_code::Bfloat) && dt.bits == 16) p.dtype = "bfloat16";
  else if (tag == "bfloat16" && dt == nb::dtype<std::uint16_t>()) p.dtype = "bfloat16";
  else throw UserError("sumlab sums float16, bfloat16, float32 and float64 arrays");
  if (cuda) {
    if (!contiguous) throw UserError("a CUDA array must be contiguous (make it so with .contiguous() or a copy)");
    if (p.dtype == "float32" || p.dtype == "float64") {
      p.device = a.data();  // the kernels read it where it is; the host copy comes later if asked
      return p;
    }
    throw UserError("float16 and bfloat16 CUDA arrays: convert to float32 on the device first (sumlab's kernels "
                    "accumulate in float32 or float64)");
  }
  const auto stride = p.n <= 1 ? 1 : a.stride(0);
  auto at = [&](auto* base, std::int64_t i) { return base[i * stride]; };
  if (p.dtype == "float32" && contiguous) {
    p.host32 = {static_cast<const float*>(a.data()), static_cast<std::size_t>(p.n)};
  } else if (p.dtype == "float64" && contiguous) {
    p.host64 = {static_cast<const double*>(a.data()), static_cast<std::size_t>(p.n)};
  } else if (p.dtype == "float64") {  // a strided view: its elements in index order (a copy, not a reorder)
    p.f64.resize(static_cast<std::size_t>(p.n));
    for (std::int64_t i = 0; i < p.n; ++i) p.f64[static_cast<std::size_t>(i)] = at(static_cast<const double*>(a.data()), i);
    p.host64 = p.f64;
  } else {
    p.f32.resize(static_cast<std::size_t>(p.n));
    const void* d = a.data();
    for (std::int64_t i = 0; i < p.n; ++i) {
      float v;
      if (p.dtype == "float32") v = at(static_cast<const float*>(d), i);
      else if (p.dtype == "float16") v = half_to_float(at(static_cast<const std::uint16_t*>(d), i));
      else v = bfloat_to_float(at(static_cast<const std::uint16_t*>(d), i));
      p.f32[static_cast<std::size_t>(i)] = v;
    }
    p.host32 = p.f32;
  }
  return p;
}

// The host span of the prepared array as T (empty for a CUDA array).
template <class T> std::span<const T> host_of(const Prepared& p) {
  if constexpr (sizeof(T) == 4) return p.host32;
  else return p.host64;
}

// The CUDA array as a kernel input read in place (nullptr for a host array).
template <class T> std::unique_ptr<KernelInput<T>> device_of(const Prepared& p) {
  if (!p.device) return nullptr;
#if defined(SUMLAB_WITH_CUDA)
  return view_device<T>(static_cast<const T*>(p.device), p.n);
#else
  throw UserError("this sumlab was built without CUDA: it cannot read CUDA arrays");
#endif
}

// Runs the request on one dtype; the device input (a CUDA array) is borrowed in place.
template <class T> std::string run_sum(const SumRequest& req, const Prepared& p) {
  const auto device = device_of<T>(p);
  // A CUDA array's exact sum is computed on the device; the CPU algorithms (and the reference's
  // check up to 2^24 elements) read a host copy, downloaded once when they ask.
  const SumReport<T> report = device ? sum_report<T>(req, *device) : sum_report<T>(req, host_of<T>(p));
  nlohmann::ordered_json out = nlohmann::ordered_json::array();
  for (const auto& r : report.rows) out.push_back(row_json(report, r, static_cast<std::size_t>(p.n)));
  return out.dump();
}

template <class T> double run_value(const SumRequest& req, const Prepared& p) {
  const auto device = device_of<T>(p);
  return static_cast<double>(sum_value<T>(req, host_of<T>(p), device.get()));
}

ShapeOverrides shape_of(const nb::dict& d) {
  ShapeOverrides s;
  auto get_int = [&](const char* k, std::optional<int>& v) {
    if (d.contains(k) && !d[k].is_none()) v = nb::cast<int>(d[k]);
  };
  auto get_str = [&](const char* k, std::optional<std::string>& v) {
    if (d.contains(k) && !d[k].is_none()) v = nb::cast<std::string>(d[k]);
  };
  get_int("grid", s.grid);
  get_int("block", s.block);
  get_int("vector", s.vector);
  get_str("mapping", s.mapping);
  get_str("warp_stage", s.warp_stage);
  get_str("block_stage", s.block_stage);
  get_str("cross_block", s.cross_block);
  return s;
}

SumRequest request(const std::vector<std::string>& algorithms, const std::string& backend, const nb::dict& shape,
                   std::size_t pairwise_base, std::optional<int> fixed_scale) {
  SumRequest req;
  req.algorithms = algorithms;
  req.backend = backend;
  req.shape = shape_of(shape);
  req.pairwise_base = pairwise_base;
  req.fixed_scale = fixed_scale;
  return req;
}

std::string sum_json(const nb::ndarray<nb::ro>& a, const std::string& tag, const std::vector<std::string>& algorithms,
                     const std::string& backend, const nb::dict& shape, std::size_t pairwise_base,
                     std::optional<int> fixed_scale) {
  const Prepared p = prepare(a, tag);
  const SumRequest req = request(algorithms, backend, shape, pairwise_base, fixed_scale);
  nb::gil_scoped_release release;
  return p.wide() ? run_sum<double>(req, p) : run_sum<float>(req, p);
}

double value(const nb::ndarray<nb::ro>& a, const std::string& tag, const std::string& algorithm,
             const std::string& backend, const nb::dict& shape, std::size_t pairwise_base,
             std::optional<int> fixed_scale) {
  const Prepared p = prepare(a, tag);
  const SumRequest req = request({algorithm}, backend, shape, pairwise_base, fixed_scale);
  nb::gil_scoped_release release;
  return p.wide() ? run_value<double>(req, p) : run_value<float>(req, p);
}

// gpu_exact's sum of a CUDA array written into `out` (a CUDA array of one element of x's dtype on
// x's device), on the device and asynchronously: sumlab.value(x, "gpu_exact", out=...).
void value_into(const nb::ndarray<nb::ro>& a, const std::string& tag, nb::ndarray<>& out, const nb::dict& shape) {
  const Prepared p = prepare(a, tag);
  if (!p.device) throw UserError("out=: x must be a float32 or float64 CUDA array (the sum stays on the device)");
  if (out.device_type() != nb::device::cuda::value || out.device_id() != a.device_id())
    throw UserError("out= must be a CUDA array on x's device");
  if (out.size() != 1) throw UserError("out= must hold exactly one element (shape () or (1,))");
  if (out.dtype() != (p.wide() ? nb::dtype<double>() : nb::dtype<float>()))
    throw UserError("out= must have x's dtype (" + p.dtype + ")");
#if defined(SUMLAB_WITH_CUDA)
  const LaunchShape s = resolve_shape(shape_of(shape), GpuKernel::exact, device_sm_count(), p.dtype, p.n).shape;
  if (p.wide()) exact_sum_into<double>(static_cast<const double*>(p.device), p.n, static_cast<double*>(out.data()), s);
  else exact_sum_into<float>(static_cast<const float*>(p.device), p.n, static_cast<float*>(out.data()), s);
#else
  (void)shape;
  throw UserError("this sumlab was built without CUDA");
#endif
}

// Seconds per call of the C++ work behind sum_json ("sum": sum_report) or value ("value":
// sum_value), timed in C++ on the array as prepared once: the peer against which
// bench/python_overhead.py measures what the Python face adds.
std::vector<double> time_in_cpp(const nb::ndarray<nb::ro>& a, const std::string& tag, const std::string& what,
                                const std::vector<std::string>& algorithms, const std::string& backend,
                                const nb::dict& shape, int repeats) {
  if (what != "sum" && what != "value") throw UserError("what must be 'sum' or 'value'");
  const Prepared p = prepare(a, tag);
  const SumRequest req = request(algorithms, backend, shape, 1, std::nullopt);
  nb::gil_scoped_release release;
  std::vector<double> seconds;
  auto once = [&]<class T>() {
    const auto device = device_of<T>(p);
    const std::span<const T> host = host_of<T>(p);
    for (int r = 0; r < repeats; ++r) {
      const auto t0 = std::chrono::steady_clock::now();
      if (what == "sum") {
        const auto report = device ? sum_report<T>(req, *device) : sum_report<T>(req, host);
        if (report.rows.empty()) throw UserError("nothing was run");
      } else {
        volatile T v = sum_value<T>(req, host, device.get());
        (void)v;
      }
      seconds.push_back(std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
    }
  };
  if (p.wide()) once.template operator()<double>();
  else once.template operator()<float>();
  return seconds;
}

// The exact sum correctly rounded to the array's own dtype.
double reference_of(const nb::ndarray<nb::ro>& a, const std::string& tag) {
  Prepared p = prepare(a, tag);
  std::unique_ptr<KernelInput<float>> d32;
  std::unique_ptr<KernelInput<double>> d64;
  if (p.device && p.wide()) p.host64 = (d64 = device_of<double>(p))->host();
  else if (p.device) p.host32 = (d32 = device_of<float>(p))->host();
  nb::gil_scoped_release release;
  if (p.dtype == "float64") return reference::correctly_rounded_sum<double>(p.host64);
  if (p.dtype == "float32") return reference::correctly_rounded_sum<float>(p.host32);
  return reference::correctly_rounded_sum_in(p.host32, p.dtype == "float16" ? reference::float16_format
                                                                            : reference::bfloat16_format);
}

std::string algorithms_json() {
  nlohmann::ordered_json out = nlohmann::ordered_json::array();
  for (const auto& a : cpu_algorithms<double>())
    out.push_back({{"name", a.info.name}, {"summary", a.info.summary}, {"order", a.info.order},
                   {"bound", a.info.bound.formula}, {"bound_source", a.info.bound.source},
                   {"determinism", to_string(a.info.determinism)}});
  return out.dump();
}

std::string kernels_json() {
  nlohmann::ordered_json out = nlohmann::ordered_json::array();
  for (const auto& k : gpu_kernels()) {
    if (k.diagnostic_only) continue;
    std::vector<std::string> fields;
    for (const auto& [bit, name] : {std::pair{field_grid, "grid"}, std::pair{field_block, "block"},
                                    std::pair{field_vector, "vector"}, std::pair{field_mapping, "mapping"},
                                    std::pair{field_warp, "warp_stage"}, std::pair{field_block_stage, "block_stage"},
                                    std::pair{field_cross, "cross_block"}})
      if (k.shape_fields & bit) fields.emplace_back(name);
    nlohmann::ordered_json defaults;  // per dtype the kernel takes
    for (const char* dtype : {"float32", "float64"})
      if (!k.float_input_only || std::string_view(dtype) == "float32")
        defaults[dtype] = to_string(default_shape(k.kernel, 132, dtype));
    out.push_back({{"name", k.name}, {"summary", k.summary}, {"order", k.order}, {"bound", k.bound.formula},
                   {"bound_source", k.bound.source}, {"determinism", to_string(k.determinism)},
                   {"modelled", k.modelled}, {"shape_fields", fields}, {"default_shape", defaults}});
  }
  return out.dump();
}

// A Python callable as a study subject, of the lab's interface Base (ExternalSum, ExternalArray):
// the name, configurations and promise it was registered with, and the callable. The lab calls it
// with the GIL released elsewhere, so each call takes the GIL back; so does the destructor.
template <class Base> class PySubject : public Base {
 public:
  PySubject(std::string name, nb::object fn, std::vector<std::string> configs, Determinism declared)
      : name_(std::move(name)), fn_(std::move(fn)), configs_(std::move(configs)), declared_(declared) {}
  ~PySubject() override {
    nb::gil_scoped_acquire gil;
    fn_.reset();
  }
  std::string name() const override { return name_; }
  Determinism declared() const override { return declared_; }
  std::vector<std::string> configs() const override { return configs_; }
  // sumlab.Subject times the user's function and the reading of its result (which waits for a
  // device's work), not the harness around them: its last_call_ms, where it has one.
  std::optional<double> last_call_ms() const override {
    nb::gil_scoped_acquire gil;
    if (!nb::hasattr(fn_, "last_call_ms")) return std::nullopt;
    const nb::object ms = fn_.attr("last_call_ms");
    if (ms.is_none()) return std::nullopt;
    return nb::cast<double>(ms);
  }

 protected:
  const nb::object& fn() const { return fn_; }
  // fn(c, a read-only NumPy view of the lab's copy, valid for the call only, input_id=its
  // InputIdentity) as R; the exception's own message (sumlab.Subject puts the type in front), not
  // the traceback through the lab's frames. The views are by reference: an array without an owner
  // is otherwise exported as a copy, and sumlab.Subject, which copies the view itself, then made a
  // second copy of the whole input every call.
  template <class R, class T> R call(std::size_t c, std::span<const T> x, std::uint64_t input, const char* not_r) {
    nb::gil_scoped_acquire gil;
    const std::size_t shape[1] = {x.size()};
    const nb::ndarray<nb::numpy, const T, nb::ndim<1>> view(x.data(), 1, shape, nb::handle());
    return call_on<R>(c, nb::cast(view, nb::rv_policy::reference), input, not_r);
  }
  // The same on a view the caller made (under the GIL).
  template <class R> R call_on(std::size_t c, const nb::object& view, std::uint64_t input, const char* not_r) {
    try {
      return nb::cast<R>(fn_(c, view, "input_id"_a = input));
    } catch (const nb::python_error& e) {
      throw ExternalError(nb::str(e.value()).c_str());
    } catch (const nb::cast_error&) {
      throw ExternalError(not_r);
    }
  }

 private:
  std::string name_;
  nb::object fn_;
  std::vector<std::string> configs_;
  Determinism declared_;
};

// A sum: fn(config_index, array, input_id=...) -> the sum as a float. With `device` (sumlab.Subject's
// device=True), data the lab holds on a CUDA device reaches fn where it lies, as a read-only CUDA
// array over the lab's memory (DLPack), valid for the call only: sumlab.Subject hands its user a
// copy made on the device (device_copy, below), never that memory.
class PyExternal final : public PySubject<ExternalSum> {
 public:
  PyExternal(std::string name, nb::object fn, std::vector<std::string> configs, Determinism declared, bool device)
      : PySubject(std::move(name), std::move(fn), std::move(configs), declared), device_(device) {}
  double run(std::size_t c, std::span<const float> x, std::uint64_t input) override { return sum(c, x, input); }
  double run(std::size_t c, std::span<const double> x, std::uint64_t input) override { return sum(c, x, input); }
  bool has_device_entry(std::string_view dtype) const override {
    return device_ && (dtype == "float32" || dtype == "float64");
  }
  double run_device(std::size_t c, const float* d_x, std::size_t n, std::uint64_t input) override {
    return device_sum(c, d_x, n, input);
  }
  double run_device(std::size_t c, const double* d_x, std::size_t n, std::uint64_t input) override {
    return device_sum(c, d_x, n, input);
  }

 private:
  static constexpr const char* not_a_number = "the subject's result is not a number";
  template <class T> double sum(std::size_t c, std::span<const T> x, std::uint64_t input) {
    return call<double>(c, x, input, not_a_number);
  }
  template <class T> double device_sum(std::size_t c, const T* d_x, std::size_t n, std::uint64_t input) {
#if defined(SUMLAB_WITH_CUDA)
    const int device = gpu::DeviceBuffer<T>::borrow(d_x, static_cast<std::int64_t>(n)).device_id();
    nb::gil_scoped_acquire gil;
    const std::size_t shape[1] = {n};
    // (array_api: a Python object with __dlpack__ and __dlpack_device__, where no framework gives a bare
    // DLPack capsule; by reference, which the call's lifetime allows, where a copy cannot be made)
    const nb::ndarray<nb::array_api, const T, nb::ndim<1>, nb::device::cuda> view(
        d_x, 1, shape, nb::handle(), nullptr, nb::dtype<T>(), nb::device::cuda::value, device);
    return call_on<double>(c, nb::cast(view, nb::rv_policy::reference), input, not_a_number);
#else
    (void)c, (void)d_x, (void)n, (void)input;
    throw ExternalError("this sumlab was built without CUDA");
#endif
  }
  bool device_;
};

// A copy of a 1-D float32 or float64 CUDA array (contiguous), made on its device and finished when
// this returns, owned by the array returned (its memory freed with it): sumlab.Subject's copy of
// the lab's data for a device=True subject, which the user's function may change or keep.
nb::object device_copy(const nb::ndarray<nb::ro, nb::ndim<1>, nb::device::cuda>& a) {
  if (a.dtype() != nb::dtype<float>() && a.dtype() != nb::dtype<double>())
    throw UserError("device_copy takes float32 and float64 arrays");
  if (a.shape(0) > 1 && a.stride(0) != 1) throw UserError("device_copy takes contiguous arrays");
#if defined(SUMLAB_WITH_CUDA)
  auto copy = [&]<class T>() {
    const auto n = static_cast<std::int64_t>(a.shape(0));
    const T* const from = static_cast<const T*>(a.data());
    auto buffer = std::make_unique<gpu::DeviceBuffer<T>>(gpu::DeviceBuffer<T>::copy_of(from, n));
    nb::capsule owner(buffer.get(), [](void* p) noexcept { delete static_cast<gpu::DeviceBuffer<T>*>(p); });
    gpu::DeviceBuffer<T>* const held = buffer.release();  // the capsule's now
    const std::size_t shape[1] = {a.shape(0)};
    return nb::cast(nb::ndarray<nb::array_api, T, nb::ndim<1>, nb::device::cuda>(
        held->device_data(), 1, shape, owner, nullptr, nb::dtype<T>(), nb::device::cuda::value, held->device_id()));
  };
  return a.dtype() == nb::dtype<float>() ? copy.template operator()<float>() : copy.template operator()<double>();
#else
  throw UserError("this sumlab was built without CUDA");
#endif
}

// An array-valued subject (a scan, row statistics, segment sums): fn(config_index, array) or, for
// segment sums, fn(config_index, values, offsets), with input_id=... as a sum's -> its values as a
// 1-D float64 NumPy array (sumlab.Subject converts whatever the user's function returns). bfloat16
// data is passed as its uint16 bit patterns (NumPy has no bfloat16).
class PyExternalArray final : public PySubject<ExternalArray> {
 public:
  PyExternalArray(std::string name, nb::object fn, std::vector<std::string> configs, Determinism declared,
                  ArrayKind kind)
      : PySubject(std::move(name), std::move(fn), std::move(configs), declared), kind_(kind) {}
  ArrayKind kind() const override { return kind_; }
  std::vector<double> run(std::size_t c, const ExternalData& x) override {
    nb::gil_scoped_acquire gil;  // the arrays' lifetimes are Python's
    std::vector<std::size_t> shape(x.shape.begin(), x.shape.end());
    nb::object view = x.dtype == "float64" ? array_view<double>(x.data, shape)
                      : x.dtype == "float32" ? array_view<float>(x.data, shape)
                                             : array_view<std::uint16_t>(x.data, shape);
    try {
      const nb::object r =
          kind_ == ArrayKind::segment_sums
              ? fn()(c, view, array_view<std::int64_t>(x.offsets.data(), {x.offsets.size()}), "input_id"_a = x.input)
              : fn()(c, view, "input_id"_a = x.input);
      const auto out = nb::cast<nb::ndarray<const double, nb::ndim<1>, nb::c_contig, nb::device::cpu>>(r);
      return std::vector<double>(out.data(), out.data() + out.shape(0));
    } catch (const nb::python_error& e) {
      throw ExternalError(nb::str(e.value()).c_str());
    } catch (const nb::cast_error&) {
      throw ExternalError("the subject's result is not a 1-D float64 array");
    }
  }

 private:
  // (by reference, as PySubject::call's view)
  template <class T> static nb::object array_view(const void* data, const std::vector<std::size_t>& shape) {
    const nb::ndarray<nb::numpy, const T> a(data, shape.size(), shape.data(), nb::handle());
    return nb::cast(a, nb::rv_policy::reference);
  }
  ArrayKind kind_;
};

// (the exit code, the failure's one line): a notebook does not show the lab's stderr.
std::pair<int, std::string> run_cli_py(const std::vector<std::string>& args) {
  std::vector<const char*> argv{"sumlab"};
  for (const auto& a : args) argv.push_back(a.c_str());
  std::string error;
  nb::gil_scoped_release release;
  const int code = run_cli(static_cast<int>(argv.size()), argv.data(), &error);
  return {code, error};
}

// A study's data: a contiguous float32 or float64 array is read where it lies (a view kept alive by
// a reference to it, given back under the GIL; the study checks at its end that the bytes did not
// change); others were widened or gathered by prepare into a copy of their own, registered as is.
void register_array_py(const std::string& name, const nb::ndarray<nb::ro>& a, const std::string& tag) {
  Prepared p = prepare(a, tag);
  if (p.device) throw UserError("a study's data must be on the host: pass x.cpu() or cupy.asnumpy(x)");
  if (!p.f32.empty()) return register_array(name, std::move(p.f32), p.dtype == "float32" ? "" : p.dtype);
  if (!p.f64.empty()) return register_array(name, std::move(p.f64));
  std::shared_ptr<const void> owner(new nb::ndarray<nb::ro>(a), [](const void* held) {
    nb::gil_scoped_acquire gil;
    delete static_cast<const nb::ndarray<nb::ro>*>(held);
  });
  register_array_view(name, p.wide() ? ArraySpans(p.host64) : ArraySpans(p.host32), std::move(owner));
}

void register_external_py(const std::string& name, nb::object fn, const std::vector<std::string>& configs,
                          const std::string& declared, bool device) {
  const auto d = parse_determinism(declared);
  if (!d) throw UserError("declared must be not_deterministic, run_to_run or shape_invariant");
  register_external(std::make_shared<PyExternal>(name, std::move(fn), configs, *d, device));
}

void register_external_array_py(const std::string& name, nb::object fn, const std::vector<std::string>& configs,
                                const std::string& declared, const std::string& kind) {
  const auto d = parse_determinism(declared);
  if (!d) throw UserError("declared must be not_deterministic, run_to_run or shape_invariant");
  const auto k = parse_array_kind(kind);
  if (!k) throw UserError("kind must be scan, variance, layer_norm, softmax or segment_sums");
  register_external_array(std::make_shared<PyExternalArray>(name, std::move(fn), configs, *d, *k));
}

}  // namespace
}  // namespace sumlab

NB_MODULE(_sumlab, m) {
  using namespace sumlab;
  m.doc() = "The C++ lab behind the sumlab package (use the package's functions, not these)";
  m.attr("__version__") = SUMLAB_VERSION;
  nb::register_exception_translator([](const std::exception_ptr& p, void*) {
    try {
      std::rethrow_exception(p);
    } catch (const UserError& e) {
      PyErr_SetString(PyExc_ValueError, e.what());
    } catch (const ResourceError& e) {
      PyErr_SetString(PyExc_MemoryError, e.what());
    }
  });
  m.def("sum_json", &sum_json, "x"_a, "tag"_a, "algorithms"_a, "backend"_a, "shape"_a, "pairwise_base"_a,
        "fixed_scale"_a.none());
  m.def("value", &value, "x"_a, "tag"_a, "algorithm"_a, "backend"_a, "shape"_a, "pairwise_base"_a,
        "fixed_scale"_a.none());
  m.def("value_into", &value_into, "x"_a, "tag"_a, "out"_a, "shape"_a);
  m.def("time_in_cpp", &time_in_cpp, "x"_a, "tag"_a, "what"_a, "algorithms"_a, "backend"_a, "shape"_a, "repeats"_a);
  m.def("reference", &reference_of, "x"_a, "tag"_a);
  m.def("algorithms_json", &algorithms_json);
  m.def("kernels_json", &kernels_json);
  m.def("run_cli", &run_cli_py, "args"_a);
  m.def("register_array", &register_array_py, "name"_a, "x"_a, "tag"_a);
  m.def("unregister_array", &unregister_array, "name"_a);
  m.def("register_external", &register_external_py, "name"_a, "fn"_a, "configs"_a, "declared"_a, "device"_a = false);
  m.def("device_copy", &device_copy, "x"_a);
  m.def("register_external_array", &register_external_array_py, "name"_a, "fn"_a, "configs"_a, "declared"_a,
        "kind"_a);
  m.def("unregister_external", &unregister_external, "name"_a);
  m.def("cuda_available", [] {
    std::string why;
    const bool ok = cuda_backend_available(&why);
    return nb::make_tuple(ok, why);
  });
}
