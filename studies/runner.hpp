#pragma once
// The sums' runners (studies/family_runner.hpp is what every family's runner is). A Runner holds
// one sum with its configurations and runs any of them on an input loaded once (KernelInput: on the
// device for the cuda backend, on the host otherwise): a CPU algorithm (one configuration), a CPU
// peer (one per thread count), a GPU kernel on cuda or its model (one per launch shape), a user's
// reduction (one per keyword set the user names).
// `sum`, the accuracy studies (error-vs-n, error-vs-cond) and the determinism study loop over
// runners, so a subject of any kind gets the same rows, verdicts and classes.
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
#include "studies/family_runner.hpp"

namespace sumlab {

// The sums' runner: a scalar sum of a KernelInput, with what only a sum has (a bound, thread counts,
// a kernel's launch shape).
template <class T> class Runner : public FamilyRunner<KernelInput<T>, T> {
 public:
  // CPU subjects: configuration c's thread count (0 for the others).
  virtual int threads(std::size_t) const { return 0; }
  // GPU kernels: the kernel, and configuration c's launch shape.
  virtual std::optional<GpuKernel> kernel() const { return std::nullopt; }
  virtual std::optional<LaunchShape> shape(std::size_t) const { return std::nullopt; }
  // Shape fields the caller set that configuration c's kernel does not read.
  virtual std::vector<std::string> ignored(std::size_t) const { return {}; }
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
