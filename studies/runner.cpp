// The four kinds of runner (runner.hpp).
#include "studies/runner.hpp"

#include <algorithm>
#include <chrono>
#include <exception>
#include <future>
#include <limits>
#include <mutex>
#include <thread>
#include <stdexcept>
#include <utility>

#include "core/fixed_point_sum.hpp"
#include "core/float_traits.hpp"
#include "studies/parallel_for.hpp"

namespace sumlab {

std::string_view to_string(RunnerKind k) {
  switch (k) {
    case RunnerKind::cpu: return "cpu";
    case RunnerKind::cuda: return "cuda";
    case RunnerKind::model: return "model";
    case RunnerKind::external: return "external";
  }
  return "?";
}

namespace {

constexpr double kNoBound = std::numeric_limits<double>::infinity();

template <class F> double wall_ms(F&& f) {
  const auto t0 = std::chrono::steady_clock::now();
  f();
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
}

template <class T> class CpuRunner final : public Runner<T> {
 public:
  CpuRunner(const CpuAlgorithm<T>& a, std::function<SumResult<T>(std::span<const T>)> sum,
            std::function<double(const BoundInput&)> bound)
      : a_(a), sum_(std::move(sum)), bound_(std::move(bound)) {}
  RunnerKind kind() const override { return RunnerKind::cpu; }
  std::string name() const override { return std::string(a_.info.name); }
  Determinism declared() const override { return a_.info.determinism; }
  std::string config_label(std::size_t) const override { return "threads=1"; }
  int threads(std::size_t) const override { return 1; }
  Outcome<T> run(std::size_t, KernelInput<T>& x) override {
    const std::span<const T> h = x.host();
    Outcome<T> o;
    SumResult<T> r;
    o.ms = wall_ms([&] { r = sum_(h); });
    o.has_value = true;
    o.value = r.value;
    o.quantisation = r.extra_error_bound;
    o.note = r.diagnostics;
    return o;
  }
  double bound(std::size_t, const Outcome<T>& o, KernelInput<T>&, BoundInput in) const override {
    in.quantisation = o.quantisation;
    return bound_(in);
  }

 private:
  const CpuAlgorithm<T>& a_;
  std::function<SumResult<T>(std::span<const T>)> sum_;
  std::function<double(const BoundInput&)> bound_;
};

template <class T> class PeerRunner final : public Runner<T> {
 public:
  PeerRunner(const CpuPeer<T>& p, std::vector<int> threads) : p_(p), threads_(std::move(threads)) {}
  RunnerKind kind() const override { return RunnerKind::cpu; }
  std::string name() const override { return std::string(p_.info.name); }
  Determinism declared() const override { return p_.info.determinism; }
  std::size_t configs() const override { return threads_.size(); }
  std::string config_label(std::size_t c) const override { return "threads=" + std::to_string(threads_[c]); }
  int threads(std::size_t c) const override { return threads_[c]; }
  Outcome<T> run(std::size_t c, KernelInput<T>& x) override {
    const std::span<const T> h = x.host();
    Outcome<T> o;
    o.ms = wall_ms([&] { o.value = p_.sum(h, threads_[c]); });
    o.has_value = true;
    return o;
  }
  // A peer's documented bound is text (AlgorithmInfo::bound); none is claimed for its rows.
  double bound(std::size_t, const Outcome<T>&, KernelInput<T>&, BoundInput) const override { return kNoBound; }

 private:
  const CpuPeer<T>& p_;
  std::vector<int> threads_;
};

template <class T> class KernelRunner final : public Runner<T> {
 public:
  KernelRunner(GpuKernel k, BackendKind b, std::vector<LaunchShape> shapes, KernelOptions opt,
               std::vector<std::vector<std::string>> ignored)
      : k_(k), backend_(b), shapes_(std::move(shapes)), opt_(opt), ignored_(std::move(ignored)) {}
  RunnerKind kind() const override { return backend_ == BackendKind::cuda ? RunnerKind::cuda : RunnerKind::model; }
  std::string name() const override { return std::string(info(k_).name); }
  Determinism declared() const override { return info(k_).determinism; }
  std::size_t configs() const override { return shapes_.size(); }
  std::string config_label(std::size_t c) const override { return to_string(shapes_[c]); }
  std::optional<GpuKernel> kernel() const override { return k_; }
  std::optional<LaunchShape> shape(std::size_t c) const override { return shapes_[c]; }
  std::vector<std::string> ignored(std::size_t c) const override {
    return c < ignored_.size() ? ignored_[c] : std::vector<std::string>{};
  }
  Outcome<T> run(std::size_t c, KernelInput<T>& x) override {
    const KernelOutcome<T> r = x.run(k_, shapes_[c], opt_);
    Outcome<T> o;
    o.has_value = r.has_value;
    o.value = r.value;
    o.ms = r.ms;
    o.note = r.note;
    o.quantisation = r.quantisation;
    return o;
  }
  double bound(std::size_t c, const Outcome<T>& o, KernelInput<T>& x, BoundInput in) const override {
    // The fixed-point kernel's grid error: on cuda its own count of the elements off the grid (the
    // data stays on the device); on the model the CPU fixed-point sum's at the same scale (both
    // round each element to the grid the scale sets).
    if (k_ == GpuKernel::fixed_point)
      in.quantisation = backend_ == BackendKind::cuda ? o.quantisation
                                                      : fixed_point_sum<T>(x.host(), opt_.fixed_scale).extra_error_bound;
    return kernel_bound(k_, format_of<T>(), shapes_[c], in);
  }

 private:
  GpuKernel k_;
  BackendKind backend_;
  std::vector<LaunchShape> shapes_;
  KernelOptions opt_;
  std::vector<std::vector<std::string>> ignored_;
};

template <class T> class ExternalRunner final : public ExternalRunnerBase<Runner<T>, ExternalSum> {
 public:
  using ExternalRunnerBase<Runner<T>, ExternalSum>::ExternalRunnerBase;
  Outcome<T> run(std::size_t c, KernelInput<T>& x) override {
    const ExternalOutcome<T> r = run_external<T>(*this->s_, c, x, this->finite_);
    Outcome<T> o;
    o.has_value = r.ok;
    o.failed = !r.ok;
    o.value = r.ok ? r.value : std::numeric_limits<T>::quiet_NaN();
    o.ms = r.ms;
    o.note = r.error;
    return o;
  }
  // Measured, no bound claimed (the report draws comparable algorithms' bounds for orientation).
  double bound(std::size_t, const Outcome<T>&, KernelInput<T>&, BoundInput) const override { return kNoBound; }
};

template <class T> class HostInput final : public KernelInput<T> {
 public:
  explicit HostInput(std::span<const T> x) : x_(x) {}
  std::span<const T> host() override { return x_; }
  std::int64_t size() const override { return static_cast<std::int64_t>(x_.size()); }
  KernelOutcome<T> run(GpuKernel k, const LaunchShape&, const KernelOptions&) override {
    throw std::logic_error(std::string(info(k).name) + ": a host input runs no GPU kernel (load it on a backend)");
  }

 private:
  std::span<const T> x_;
};

}  // namespace

template <class T> std::unique_ptr<Runner<T>> cpu_runner(const CpuAlgorithm<T>& a) {
  return std::make_unique<CpuRunner<T>>(a, a.sum, a.bound);
}
template <class T>
std::unique_ptr<Runner<T>> cpu_runner(const CpuAlgorithm<T>& a, std::function<SumResult<T>(std::span<const T>)> sum,
                                      std::function<double(const BoundInput&)> bound) {
  return std::make_unique<CpuRunner<T>>(a, std::move(sum), std::move(bound));
}
template <class T> std::unique_ptr<Runner<T>> peer_runner(const CpuPeer<T>& p, const std::vector<int>& threads) {
  return std::make_unique<PeerRunner<T>>(p, p.takes_threads ? threads : std::vector<int>{1});
}
template <class T>
std::unique_ptr<Runner<T>> kernel_runner(GpuKernel k, BackendKind backend, std::vector<LaunchShape> shapes,
                                         KernelOptions options, std::vector<std::vector<std::string>> ignored) {
  return std::make_unique<KernelRunner<T>>(k, backend, std::move(shapes), options, std::move(ignored));
}
template <class T> std::unique_ptr<Runner<T>> external_runner(std::shared_ptr<ExternalSum> s, bool input_finite) {
  return std::make_unique<ExternalRunner<T>>(std::move(s), input_finite);
}
template <class T> std::unique_ptr<KernelInput<T>> host_input(std::span<const T> x) {
  return std::make_unique<HostInput<T>>(x);
}

template <class T>
std::vector<std::vector<Outcome<T>>> run_all(const Runners<T>& runners, KernelInput<T>& x, int threads,
                                             const std::function<void(const std::string&)>& done) {
  std::mutex done_mutex;
  const auto finished = [&](std::size_t r) {
    if (!done) return;
    const std::lock_guard<std::mutex> lock(done_mutex);
    done(runners[r]->name());
  };
  std::vector<std::vector<Outcome<T>>> out(runners.size());
  std::vector<std::size_t> cpu, other;
  for (std::size_t r = 0; r < runners.size(); ++r) {
    out[r].resize(runners[r]->configs());
    // The model is pure host arithmetic too (model_sum keeps no state), so it shares the pool.
    const RunnerKind k = runners[r]->kind();
    (k == RunnerKind::cpu || k == RunnerKind::model ? cpu : other).push_back(r);
  }
  // The host copy made once, before any thread reads it (a device input downloads it on first use).
  if (!cpu.empty()) x.host();
  const int cores = threads > 0 ? threads : static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  auto on_host = std::async(std::launch::async, [&] {
    parallel_for(cpu.size(), cores, [&](std::size_t i) {
      for (std::size_t c = 0; c < out[cpu[i]].size(); ++c) out[cpu[i]][c] = runners[cpu[i]]->run(c, x);
      finished(cpu[i]);
    });
  });
  std::exception_ptr failed;
  try {
    for (std::size_t r : other) {
      for (std::size_t c = 0; c < out[r].size(); ++c) out[r][c] = runners[r]->run(c, x);
      finished(r);
    }
  } catch (...) {
    failed = std::current_exception();
  }
  on_host.get();  // waits for the host threads (and rethrows theirs) before this thread's error
  if (failed) std::rethrow_exception(failed);
  return out;
}

#define SUMLAB_RUNNER(T)                                                                                            \
  template std::unique_ptr<Runner<T>> cpu_runner<T>(const CpuAlgorithm<T>&);                                       \
  template std::unique_ptr<Runner<T>> cpu_runner<T>(const CpuAlgorithm<T>&,                                        \
                                                    std::function<SumResult<T>(std::span<const T>)>,               \
                                                    std::function<double(const BoundInput&)>);                     \
  template std::unique_ptr<Runner<T>> peer_runner<T>(const CpuPeer<T>&, const std::vector<int>&);                  \
  template std::unique_ptr<Runner<T>> kernel_runner<T>(GpuKernel, BackendKind, std::vector<LaunchShape>,           \
                                                       KernelOptions, std::vector<std::vector<std::string>>);      \
  template std::unique_ptr<Runner<T>> external_runner<T>(std::shared_ptr<ExternalSum>, bool);                     \
  template std::unique_ptr<KernelInput<T>> host_input<T>(std::span<const T>);                                   \
  template std::vector<std::vector<Outcome<T>>> run_all<T>(const Runners<T>&, KernelInput<T>&, int,             \
                                                          const std::function<void(const std::string&)>&);
SUMLAB_RUNNER(float)
SUMLAB_RUNNER(double)
#undef SUMLAB_RUNNER

}  // namespace sumlab
