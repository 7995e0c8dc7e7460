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
#include <memory>
#include <span>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include "core/determinism.hpp"
#include "studies/backend.hpp"

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
  // The sum of x under configuration c, as a double holding a value of x's dtype. Throws
  // ExternalError (or anything) on failure.
  virtual double run(std::size_t config, std::span<const float> x) = 0;
  virtual double run(std::size_t config, std::span<const double> x) = 0;
  // Subjects that also sum data where it lies on a GPU, in place (a plugin's device entries;
  // Python subjects have none): whether there is such an entry for dtype ("float32", "float64"),
  // and the call on the n elements at d_x, device memory the lab owns. Throws as run().
  virtual bool has_device_entry(std::string_view dtype) const;
  virtual double run_device(std::size_t config, const float* d_x, std::size_t n);
  virtual double run_device(std::size_t config, const double* d_x, std::size_t n);
};

// A scan the user brings (torch.cumsum, a Triton kernel, anything that maps x to its n inclusive
// prefix sums): each output a value of x's dtype, held in a double. `sumlab study scan --external`
// measures it beside the lab's own scans, with the same error and determinism columns.
class ExternalScan {
 public:
  virtual ~ExternalScan() = default;
  virtual std::string name() const = 0;
  virtual Determinism declared() const { return Determinism::not_deterministic; }
  virtual std::vector<std::string> configs() const { return {""}; }
  // Throws (anything) on failure.
  virtual std::vector<double> run(std::size_t config, std::span<const float> x) = 0;
  virtual std::vector<double> run(std::size_t config, std::span<const double> x) = 0;
};

// The subjects a process knows by name (registered by the Python package, or loaded from a
// plugin by --plugin): `--external NAME` in a study names one of them. Sums and scans are known
// apart: a sum study finds only sums, the scan study only scans.
void register_external(std::shared_ptr<ExternalSum> s);
void register_external_scan(std::shared_ptr<ExternalScan> s);
// Forgets a sum or a scan of that name.
void unregister_external(const std::string& name);
// The scans named, in order; UserError for an unknown name (listing the known scans).
std::vector<std::shared_ptr<ExternalScan>> external_scans(const std::vector<std::string>& names);
// nullptr when no subject has that name.
std::shared_ptr<ExternalSum> find_external(const std::string& name);
// The name of a configuration's rows: name[label], or name for the one unnamed configuration.
std::string config_name(const std::string& name, const std::string& label);
// The subjects named, in order; UserError for an unknown name (listing the known ones).
std::vector<std::shared_ptr<ExternalSum>> externals(const std::vector<std::string>& names);

// Why v cannot stand as one of a subject's results in T (empty when it can): NaN for an input of
// finite values, or a value that is not one of T's (a wider result is another subject than the one
// measured in T, and rounding it here would hide what it computed).
template <class T> std::string result_error(double v, bool input_finite);

// One measured call of an external subject: its value in T, or the error that replaced it.
template <class T> struct ExternalOutcome {
  bool ok = false;
  T value{};
  double ms = 0;      // wall time of the call
  std::string error;  // why there is no value
};
// input_finite: every x_i is finite, so a NaN result is the subject's failure, not IEEE's answer.
template <class T>
ExternalOutcome<T> run_external(ExternalSum& s, std::size_t config, std::span<const T> x, bool input_finite);
// The same on an input loaded where the kernels read it: a subject with a device entry for T reads
// the device copy in place when there is one (the cuda backend), with no host round trip; any other
// call is run() on the host copy (downloaded once when the data came from the device).
template <class T>
ExternalOutcome<T> run_external(ExternalSum& s, std::size_t config, KernelInput<T>& x, bool input_finite);
// Whether some subject reads T's data on the device when it is there: a study then keeps (or
// uploads) its cell's input on the cuda backend even when no GPU kernel of its own runs.
template <class T> bool reads_device(const std::vector<std::shared_ptr<ExternalSum>>& subjects);

}  // namespace sumlab
