#pragma once
// Reductions the user brings: a Python callable, a compiled kernel behind the plugin ABI
// (plugin/sumlab_plugin.h), anything that maps an array to its sum. The studies measure them
// exactly as they measure sumlab's own subjects (same rows, same classes, same report), but never
// model them. Their "launch shapes" are the user's configurations (keyword sets, block sizes,
// deterministic mode on/off), named by labels.
//
// A subject that misbehaves never stops a study: a call that throws, returns a non-finite value for
// finite input, or returns a value that is not of the input's dtype becomes an error row with the
// message, and the study goes on. (A call that hangs is the caller's to bound: the Python package
// runs each call under a timeout.)
#include <cstddef>
#include <cstdint>
#include <initializer_list>
#include <memory>
#include <optional>
#include <span>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include "core/determinism.hpp"
#include "studies/backend.hpp"
#include "studies/family_runner.hpp"

namespace sumlab {

// A subject's failure on one call: the study records the message and goes on.
struct ExternalError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

class ExternalSum {
 public:
  virtual ~ExternalSum() = default;
  virtual std::string name() const = 0;
  // What the subject promises (the determinism study compares it with what it measures);
  // nothing promised is not_deterministic.
  virtual Determinism declared() const { return Determinism::not_deterministic; }
  // The configurations' labels; {""}: one, unnamed.
  virtual std::vector<std::string> configs() const { return {""}; }
  // The sum of x under configuration c, as a double holding a value of x's dtype. input: which
  // input x is (InputIdentity: calls with the same nonzero id read the same bytes; 0 when the
  // caller cannot say). Throws ExternalError (or anything) on failure.
  virtual double run(std::size_t config, std::span<const float> x, std::uint64_t input) = 0;
  virtual double run(std::size_t config, std::span<const double> x, std::uint64_t input) = 0;
  // Subjects that also sum data where it lies on a GPU (a plugin's device entries, a Python
  // subject made with device=True): whether there is such an entry for dtype ("float32",
  // "float64"), and the call on the n elements at d_x, device memory the lab owns, input as run()'s.
  // Throws as run().
  virtual bool has_device_entry(std::string_view dtype) const;
  virtual double run_device(std::size_t config, const float* d_x, std::size_t n, std::uint64_t input);
  virtual double run_device(std::size_t config, const double* d_x, std::size_t n, std::uint64_t input);
  // The last call's own time in ms where the subject times it itself (a Python subject times its
  // function alone, without the harness's copy, thread and checks); nullopt: the lab's wall time
  // of the call stands.
  virtual std::optional<double> last_call_ms() const { return std::nullopt; }
};

// What a user's array-valued reduction computes, and so which study measures it:
//   scan          the n inclusive prefix sums of x (torch.cumsum, a Triton scan): `study scan`;
//   variance      the population variance of each row of a rows x cols matrix (torch.var with
//                 correction=0): `study variance`, beside the lab's moment kernels;
//   layer_norm    each row normalised, (x - mean) / sqrt(variance + 1e-5), rows x cols values
//                 (torch.nn.functional.layer_norm without weights): `study variance`;
//   softmax       each row's probabilities, rows x cols values: `study variance`'s softmax table;
//   segment_sums  one sum per segment of x (torch.index_add_, scatter_add_, segment_sum):
//                 `study segmented`.
enum class ArrayKind { scan, variance, layer_norm, softmax, segment_sums };
std::string_view to_string(ArrayKind k);
std::optional<ArrayKind> parse_array_kind(std::string_view s);

// The data of one call, row-major: `dtype` is "float32", "float64" or "bfloat16" (the raw 16-bit
// patterns); `shape` is {n} or {rows, cols}; `offsets` (segment sums only) the segments'
// boundaries, segments + 1 values from 0 to n; `input` which input this is, as ExternalSum::run's.
struct ExternalData {
  std::string_view dtype;
  const void* data = nullptr;
  std::vector<std::int64_t> shape;
  std::span<const std::int64_t> offsets;
  std::uint64_t input = 0;
};

// A reduction the user brings whose result is an array (its length follows from the kind and the
// data: n, rows, rows x cols or segments), each value one of the result type's (the input's dtype;
// float for bfloat16 rows) held in a double.
class ExternalArray {
 public:
  virtual ~ExternalArray() = default;
  virtual std::string name() const = 0;
  virtual ArrayKind kind() const = 0;
  virtual Determinism declared() const { return Determinism::not_deterministic; }
  virtual std::vector<std::string> configs() const { return {""}; }
  // Throws (anything) on failure.
  virtual std::vector<double> run(std::size_t config, const ExternalData& x) = 0;
  // As ExternalSum::last_call_ms.
  virtual std::optional<double> last_call_ms() const { return std::nullopt; }
};

// The subjects a process knows by name (registered by the Python package, or loaded from a
// plugin by --plugin): `--external NAME` in a study names one of them. Sums and array-valued
// subjects are known apart: a sum study finds only sums, the other studies only their kinds.
void register_external(std::shared_ptr<ExternalSum> s);
void register_external_array(std::shared_ptr<ExternalArray> s);
// Forgets a subject of that name.
void unregister_external(const std::string& name);
// The array-valued subjects named, in order; UserError for an unknown name or one of a kind the
// study does not take (`study` names the study in the message).
std::vector<std::shared_ptr<ExternalArray>> external_arrays(const std::vector<std::string>& names,
                                                            std::initializer_list<ArrayKind> kinds,
                                                            std::string_view study);
// nullptr when no subject has that name.
std::shared_ptr<ExternalSum> find_external(const std::string& name);
// The name of a configuration's rows: name[label], or name for the one unnamed configuration.
std::string config_name(const std::string& name, const std::string& label);
// The subjects named, in order; UserError for an unknown name (listing the known ones).
std::vector<std::shared_ptr<ExternalSum>> externals(const std::vector<std::string>& names);

// What every family's runner of a user's subject (Base: that family's runner interface) answers from
// the subject itself: kind external, its name and promise, its configurations (labelled "default"
// for the one unnamed), each configuration's rows named name[label]. input_finite: every input
// value is finite, so a NaN result is the subject's failure.
template <class Base, class Subject> class ExternalRunnerBase : public Base {
 public:
  ExternalRunnerBase(std::shared_ptr<Subject> s, bool input_finite)
      : s_(std::move(s)), labels_(s_->configs()), finite_(input_finite) {}
  RunnerKind kind() const override { return RunnerKind::external; }
  std::string name() const override { return s_->name(); }
  Determinism declared() const override { return s_->declared(); }
  std::size_t configs() const override { return labels_.size(); }
  std::string row_name(std::size_t c) const override { return config_name(s_->name(), labels_[c]); }
  std::string config_label(std::size_t c) const override { return labels_[c].empty() ? "default" : labels_[c]; }

 protected:
  std::shared_ptr<Subject> s_;
  std::vector<std::string> labels_;
  bool finite_;
};

// Why v cannot stand as one of a subject's results in T (empty when it can): NaN for an input of
// finite values, or a value that is not one of T's (a wider result is another subject than the one
// measured in T, and rounding it here would hide what it computed).
template <class T> std::string result_error(double v, bool input_finite);

// One timed call of an array-valued subject, checked: `count` values of T (input_finite: a NaN is
// the subject's failure), or failed with the message (the call threw, returned another length, NaN
// for finite input, or a value that is not one of T's).
template <class T>
Outcome<std::vector<T>> run_external_array(ExternalArray& s, std::size_t config, const ExternalData& x,
                                           std::size_t count, bool input_finite);

// One measured call of an external subject: its value in T, or the error that replaced it.
template <class T> struct ExternalOutcome {
  bool ok = false;
  T value{};
  double ms = 0;      // the call's time: the subject's own (last_call_ms) or the lab's wall time
  std::string error;  // why there is no value
};
// input_finite: every x_i is finite, so a NaN result is the subject's failure, not IEEE's answer.
// input: x's InputIdentity, or 0 when unknown.
template <class T>
ExternalOutcome<T> run_external(ExternalSum& s, std::size_t config, std::span<const T> x, bool input_finite,
                                std::uint64_t input = 0);
// The same on an input loaded where the kernels read it: a subject with a device entry for T reads
// the device copy in place when there is one (the cuda backend), with no host round trip; any other
// call is run() on the host copy (downloaded once when the data came from the device).
template <class T>
ExternalOutcome<T> run_external(ExternalSum& s, std::size_t config, KernelInput<T>& x, bool input_finite);
// Whether some subject reads T's data on the device when it is there: a study then keeps (or
// uploads) its cell's input on the cuda backend even when no GPU kernel of its own runs.
template <class T> bool reads_device(const std::vector<std::shared_ptr<ExternalSum>>& subjects);

}  // namespace sumlab
