#pragma once
// What every runner is, whatever its family reads and returns. A family (the sums, the row
// statistics, the scans, the segmented sums) names two types: the Input its subjects read, loaded
// once (on the device for the cuda backend) and shared by every configuration of every runner,
// and the Output one run gives (a scalar, per-row outputs, a prefix array, per-segment sums).
// A runner is one subject of the family with its configurations (launch shapes, thread counts,
// the user's keyword sets), of one kind:
//   cpu       an algorithm on the host (a CPU algorithm, a CPU peer at each thread count);
//   cuda      a GPU kernel on the GPU, one configuration per launch shape;
//   model     the same kernel's operations in its order on the CPU, the GPU's bits without a GPU;
//   external  a reduction the user brings (studies/external.hpp: a Python callable, a plugin).
// The studies and verify loop over runners, so every family gets the same verbs (run a
// configuration, label it, say what it declares) and a new family is an Input, an Output and one
// implementation per kind it has. The sums' runners (studies/runner.hpp) add what only a scalar sum
// has: a bound, a kernel's launch shape, thread counts.
#include <cstddef>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/determinism.hpp"

namespace sumlab {

enum class RunnerKind { cpu, cuda, model, external };
std::string_view to_string(RunnerKind k);

template <class Out> struct Outcome {
  bool has_value = false;   // false: the kernel is not modelled (a library peer on the model
                            // backend), or the call failed (`failed`)
  bool failed = false;      // the subject itself failed (an external call that threw or returned
                            // a non-finite value for finite input): an error row, not a skip
  Out value{};
  double ms = 0;            // device time (cuda), wall time of the call (cpu, external), 0 (model)
  double quantisation = 0;  // CPU algorithms: an error made on purpose (fixed point's grid)
  std::string note;         // a remark (the fixed-point scale), or why there is no value
};

template <class Input, class Out> class FamilyRunner {
 public:
  using InputType = Input;
  using Output = Out;
  virtual ~FamilyRunner() = default;
  virtual RunnerKind kind() const = 0;
  virtual std::string name() const = 0;  // the registry's name, or the user's
  virtual Determinism declared() const = 0;
  virtual std::size_t configs() const { return 1; }
  // The rows' name for configuration c: the name, or name[label] for a user's configuration.
  virtual std::string row_name(std::size_t) const { return name(); }
  // Configuration c in the tables: the launch shape, "threads=4", the user's label.
  virtual std::string config_label(std::size_t c) const = 0;
  // Throws UserError for a configuration the subject cannot run or a GPU failure; an external
  // subject's failure is an outcome (failed), never an exception.
  virtual Outcome<Out> run(std::size_t c, Input& x) = 0;
};

// Outcome o's device time, where it is one: cuda runners time their launches, the model none.
template <class Input, class Out>
std::optional<double> device_ms(const FamilyRunner<Input, Out>& r, const Outcome<Out>& o) {
  if (r.kind() != RunnerKind::cuda || !o.has_value) return std::nullopt;
  return o.ms;
}

}  // namespace sumlab
