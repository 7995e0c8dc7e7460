#pragma once
// The one way the lab runs a subject on an input. A Runner holds one subject with its
// configurations and runs any of them on an input loaded once (KernelInput: on the device for the
// cuda backend, on the host otherwise):
//   cpu       a CPU algorithm (one configuration) or a CPU peer (one per thread count);
//   cuda      a GPU kernel on the GPU, one configuration per launch shape;
//   model     the same kernel's additions in its order on the CPU (core/order_model/), the GPU's
//             bits without a GPU;
//   external  a reduction the user brings (studies/external.hpp: a Python callable, a plugin), one
//             configuration per keyword set the user names.
// `sum`, the accuracy studies (error-vs-n, error-vs-cond) and the determinism study loop over
// runners, so a subject of any kind gets the same rows, verdicts and classes, and a new kind of
// subject is one more implementation of this interface.
#include <cstddef>
#include <functional>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "core/cpu_algorithms.hpp"
#include "core/cpu_peers.hpp"
#include "core/determinism.hpp"
#include "core/error_bound.hpp"
#include "core/gpu_kernel.hpp"
#include "core/launch_shape.hpp"
#include "core/sum_result.hpp"
#include "studies/backend.hpp"
#include "studies/external.hpp"

namespace sumlab {

enum class RunnerKind { cpu, cuda, model, external };
std::string_view to_string(RunnerKind k);

template <class T> struct Outcome {
  bool has_value = false;   // false: the kernel is not modelled (a library peer on the model
                            // backend), or the call failed (`failed`)
  bool failed = false;      // the subject itself failed (an external call that threw or returned
                            // a non-finite value for finite input): an error row, not a skip
  T value{};
  double ms = 0;            // device time (cuda), wall time of the call (cpu, external), 0 (model)
  double quantisation = 0;  // CPU algorithms: an error made on purpose (fixed point's grid)
  std::string note;         // a remark (the fixed-point scale), or why there is no value
};

template <class T> class Runner {
 public:
  virtual ~Runner() = default;
  virtual RunnerKind kind() const = 0;
  virtual std::string name() const = 0;  // the registry's name, or the user's
  virtual Determinism declared() const = 0;
  virtual std::size_t configs() const { return 1; }
  // The rows' name for configuration c: the name, or name[label] for a user's configuration.
  virtual std::string row_name(std::size_t) const { return name(); }
  // Configuration c in the determinism tables: the launch shape, "threads=4", the user's label.
  virtual std::string config_label(std::size_t c) const = 0;
  // CPU subjects: configuration c's thread count (0 for the others).
  virtual int threads(std::size_t) const { return 0; }
  // GPU kernels: the kernel, and configuration c's launch shape.
  virtual std::optional<GpuKernel> kernel() const { return std::nullopt; }
  virtual std::optional<LaunchShape> shape(std::size_t) const { return std::nullopt; }
  // Shape fields the caller set that configuration c's kernel does not read.
  virtual std::vector<std::string> ignored(std::size_t) const { return {}; }
  // Throws UserError for a shape the kernel cannot run or a GPU failure; an external subject's
  // failure is an outcome (failed), never an exception.
  virtual Outcome<T> run(std::size_t c, KernelInput<T>& x) = 0;
  // The bound on |result - exact sum| of outcome o of configuration c on input x
  // (core/error_bound.hpp; `in` without the quantisation, which the runner adds: a fixed-point
  // sum's grid error, computed here and not in run(), so repeated runs do not pay for it); +inf
  // where no theorem holds or none is claimed.
  virtual double bound(std::size_t c, const Outcome<T>& o, KernelInput<T>& x, BoundInput in) const = 0;
};

template <class T> using Runners = std::vector<std::unique_ptr<Runner<T>>>;

// A CPU algorithm of the registry, or the same with the caller's own call and bound (pairwise with
// another base case, fixed point at a given scale).
template <class T> std::unique_ptr<Runner<T>> cpu_runner(const CpuAlgorithm<T>& a);
template <class T>
std::unique_ptr<Runner<T>> cpu_runner(const CpuAlgorithm<T>& a, std::function<SumResult<T>(std::span<const T>)> sum,
                                      std::function<double(const BoundInput&)> bound);
// A CPU peer at each thread count (one run at 1 thread for a peer the count does not change).
template <class T> std::unique_ptr<Runner<T>> peer_runner(const CpuPeer<T>& p, const std::vector<int>& threads);
// A GPU kernel on `backend`'s input (cuda or model), one configuration per shape (each checked by
// validate_shape first: the caller resolves them); `ignored[c]` lists shape fields the caller set
// that shape c's kernel does not read (reported, never silently dropped).
template <class T>
std::unique_ptr<Runner<T>> kernel_runner(GpuKernel k, BackendKind backend, std::vector<LaunchShape> shapes,
                                         KernelOptions options = {},
                                         std::vector<std::vector<std::string>> ignored = {});
// A subject the user brings. input_finite: every x_i is finite, so a NaN result is the subject's
// failure, not IEEE's answer.
template <class T> std::unique_ptr<Runner<T>> external_runner(std::shared_ptr<ExternalSum> s, bool input_finite);

// Every configuration of every runner on x, in the runners' order (outcomes[r][c]). The cpu and
// model runners run on up to `threads` host threads at once (0: every core), while this thread
// runs the others in order: the GPU kernels, which queue on the device, and the user's subjects,
// which need not be thread-safe. The outcomes are the same as one at a time (each subject reads x only); the
// CPU runners' wall times then overlap, so a caller that reports times runs them alone.
// `done(name)`, when given, is called once per runner as it finishes, one call at a time.
template <class T>
std::vector<std::vector<Outcome<T>>> run_all(const Runners<T>& runners, KernelInput<T>& x, int threads = 0,
                                             const std::function<void(const std::string&)>& done = {});

// The caller's data on the host, for CPU and external subjects when no backend is involved
// (running a GPU kernel on it is a logic error).
template <class T> std::unique_ptr<KernelInput<T>> host_input(std::span<const T> x);

}  // namespace sumlab
