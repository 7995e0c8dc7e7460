#include "studies/row_backend.hpp"

#include <stdexcept>

#include "core/row_reduce/row_model.hpp"
#include "studies/commands.hpp"

#if defined(SUMLAB_WITH_CUDA)
#include "gpu/rows.hpp"
#endif

namespace sumlab {

using row_reduce::RowKernel;
using row_reduce::RowShape;

BackendKind pick_row_backend(const std::string& name) {
  if (name == "model") return BackendKind::model;
  if (!name.empty() && name != "cuda") throw UserError("unknown backend '" + name + "' (valid: cuda, model)");
  std::string why;
  const bool gpu = cuda_backend_available(&why);
  if (name == "cuda" && !gpu) throw UserError(why);
  return gpu ? BackendKind::cuda : BackendKind::model;
}

std::string row_backend_description(BackendKind kind) {
#if defined(SUMLAB_WITH_CUDA)
  if (kind == BackendKind::cuda) {
    try {
      const gpu::DeviceInfo d = gpu::device_info();
      return d.name + " (" + std::to_string(d.sm_count) + " SMs, compute " + std::to_string(d.cc_major) + "." +
             std::to_string(d.cc_minor) + ", driver CUDA " + d.driver_version + ", runtime " + d.runtime_version + ")";
    } catch (const gpu::GpuError& e) {
      throw UserError(e.what());
    }
  }
#endif
  (void)kind;
  return "CPU model of the row kernels' order (core/row_reduce/row_model.hpp)";
}

template <class In> struct RowKernelInput<In>::Impl {
  BackendKind kind;
  std::span<const In> x;
  std::int64_t rows, cols;
#if defined(SUMLAB_WITH_CUDA)
  std::unique_ptr<gpu::RowMatrix<In>> device;
#endif
};

template <class In>
RowKernelInput<In>::RowKernelInput(BackendKind kind, std::span<const In> x, std::int64_t rows, std::int64_t cols)
    : impl_(std::make_unique<Impl>()) {
  impl_->kind = kind;
  impl_->x = x;
  impl_->rows = rows;
  impl_->cols = cols;
#if defined(SUMLAB_WITH_CUDA)
  if (kind == BackendKind::cuda) {
    try {
      impl_->device = std::make_unique<gpu::RowMatrix<In>>(x, rows, cols);
    } catch (const std::exception& e) {
      throw UserError(e.what());
    }
  }
#else
  if (kind == BackendKind::cuda) throw UserError("this sumlab was built without CUDA");
#endif
}

template <class In> RowKernelInput<In>::~RowKernelInput() = default;

template <class In> BackendKind RowKernelInput<In>::backend() const { return impl_->kind; }
template <class In> std::span<const In> RowKernelInput<In>::host() const { return impl_->x; }
template <class In> std::int64_t RowKernelInput<In>::rows() const { return impl_->rows; }
template <class In> std::int64_t RowKernelInput<In>::cols() const { return impl_->cols; }

template <class In>
Outcome<row_reduce::RowOutputs<typename RowKernelInput<In>::Acc>> RowKernelInput<In>::run(RowKernel k, const RowShape& s,
                                                                                         bool want_out, int reps) const {
  Outcome<row_reduce::RowOutputs<Acc>> r;
  r.has_value = true;
#if defined(SUMLAB_WITH_CUDA)
  if (impl_->kind == BackendKind::cuda) {
    gpu::RowRunOptions o;
    o.want_out = want_out;
    o.reps = reps;
    auto g = gpu::gpu_rows<In>(k, s, *impl_->device, o);
    if (!g.ok()) throw UserError(g.error);
    r.value = std::move(g.outputs);
    r.ms = g.ms;
    return r;
  }
#endif
  (void)reps;
  try {
    r.value = row_reduce::model_rows<In>(k, s, impl_->x, impl_->rows, impl_->cols, want_out);
  } catch (const std::invalid_argument& e) {
    throw UserError(e.what());
  }
  return r;
}

std::optional<double> copy_bandwidth(BackendKind kind, std::size_t bytes) {
#if defined(SUMLAB_WITH_CUDA)
  if (kind == BackendKind::cuda) {
    const gpu::CopyBandwidth c = gpu::measure_copy_bandwidth(bytes);
    if (!c.ok()) throw UserError(c.error);
    return c.bytes_per_s;
  }
#endif
  (void)kind;
  (void)bytes;
  return std::nullopt;
}

namespace {

template <class In> class RowKernelRunner final : public RowRunner<In> {
 public:
  RowKernelRunner(RowKernel k, BackendKind b, std::vector<RowShape> shapes, bool want_out, int reps)
      : k_(k), backend_(b), shapes_(std::move(shapes)), want_out_(want_out), reps_(reps) {}
  RunnerKind kind() const override { return backend_ == BackendKind::cuda ? RunnerKind::cuda : RunnerKind::model; }
  std::string name() const override { return std::string(row_reduce::info(k_).name); }
  Determinism declared() const override { return row_reduce::info(k_).determinism; }
  std::size_t configs() const override { return shapes_.size(); }
  std::string config_label(std::size_t c) const override { return row_reduce::to_string(shapes_[c]); }
  Outcome<row_reduce::RowOutputs<row_reduce::row_acc_t<In>>> run(std::size_t c, RowKernelInput<In>& x) override {
    if (x.backend() != backend_) throw std::logic_error(name() + ": the input is on another backend");
    return x.run(k_, shapes_[c], want_out_, reps_);
  }

 private:
  RowKernel k_;
  BackendKind backend_;
  std::vector<RowShape> shapes_;
  bool want_out_;
  int reps_;
};

template <class In> class ExternalRowRunner final : public ExternalRunnerBase<RowRunner<In>, ExternalArray> {
 public:
  using Acc = row_reduce::row_acc_t<In>;
  using ExternalRunnerBase<RowRunner<In>, ExternalArray>::ExternalRunnerBase;
  Outcome<row_reduce::RowOutputs<Acc>> run(std::size_t c, RowKernelInput<In>& x) override {
    const bool per_row = this->s_->kind() == ArrayKind::variance;
    const ExternalData d{row_reduce::RowInput<In>::dtype, x.host().data(), {x.rows(), x.cols()}, {}, x.input_id()};
    const auto count = static_cast<std::size_t>(per_row ? x.rows() : x.rows() * x.cols());
    auto r = run_external_array<Acc>(*this->s_, c, d, count, this->finite_);
    Outcome<row_reduce::RowOutputs<Acc>> o;
    o.has_value = r.has_value;
    o.failed = r.failed;
    o.ms = r.ms;
    o.note = std::move(r.note);
    (per_row ? o.value.variance : o.value.out) = std::move(r.value);
    return o;
  }
};

}  // namespace

template <class In>
std::unique_ptr<RowRunner<In>> external_row_runner(std::shared_ptr<ExternalArray> s, bool input_finite) {
  const ArrayKind k = s->kind();
  if (k != ArrayKind::variance && k != ArrayKind::layer_norm && k != ArrayKind::softmax)
    throw std::logic_error(s->name() + " is not a row subject");
  return std::make_unique<ExternalRowRunner<In>>(std::move(s), input_finite);
}

template <class In>
std::unique_ptr<RowRunner<In>> row_runner(RowKernel k, BackendKind backend, std::vector<RowShape> shapes, bool want_out,
                                          int reps) {
  return std::make_unique<RowKernelRunner<In>>(k, backend, std::move(shapes), want_out, reps);
}

#define SUMLAB_ROWS(In)                                                                                           \
  template class RowKernelInput<In>;                                                                              \
  template std::unique_ptr<RowRunner<In>> row_runner<In>(RowKernel, BackendKind, std::vector<RowShape>, bool, int); \
  template std::unique_ptr<RowRunner<In>> external_row_runner<In>(std::shared_ptr<ExternalArray>, bool);
SUMLAB_ROWS(float)
SUMLAB_ROWS(double)
SUMLAB_ROWS(row_reduce::bfloat16_bits)
#undef SUMLAB_ROWS

}  // namespace sumlab
