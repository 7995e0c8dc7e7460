#include "studies/external.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <map>
#include <mutex>

#include "core/cpu_algorithms.hpp"
#include "core/cpu_peers.hpp"
#include "core/float_traits.hpp"
#include "core/gpu_kernel.hpp"
#include "core/row_reduce/row_kernel.hpp"
#include "core/scan/scan_kernel.hpp"
#include "core/segmented/strategy.hpp"
#include "studies/commands.hpp"
#include "studies/scan_backend.hpp"

namespace sumlab {
namespace {

std::mutex registry_mutex;
std::map<std::string, std::shared_ptr<ExternalSum>>& registry() {
  static std::map<std::string, std::shared_ptr<ExternalSum>> r;
  return r;
}
std::map<std::string, std::shared_ptr<ExternalArray>>& array_registry() {
  static std::map<std::string, std::shared_ptr<ExternalArray>> r;
  return r;
}

constexpr std::pair<ArrayKind, std::string_view> kArrayKinds[] = {
    {ArrayKind::scan, "scan"},       {ArrayKind::variance, "variance"},         {ArrayKind::layer_norm, "layer_norm"},
    {ArrayKind::softmax, "softmax"}, {ArrayKind::segment_sums, "segment_sums"}};

template <class Map> std::string names_in(const Map& m) {
  std::string known;
  for (const auto& [k, v] : m) known += (known.empty() ? "" : ", ") + k;
  return known.empty() ? "none" : known;
}

}  // namespace

void register_external(std::shared_ptr<ExternalSum> s) {
  // A sum's rows sit beside sumlab's algorithms, kernels and peers, named by name: a subject of one
  // of their names would merge into theirs (two "serial" rows a cell, one growth fit over both).
  const std::string name = s->name();
  if (find_cpu_algorithm<float>(name) || find_gpu_kernel(name) || find_cpu_peer<float>(name))
    throw UserError("a subject named '" + name + "' would share its rows' name with sumlab's own '" + name +
                    "': name it otherwise");
  const std::lock_guard<std::mutex> lock(registry_mutex);
  registry()[name] = std::move(s);
}

std::string_view to_string(ArrayKind k) {
  for (const auto& [kind, name] : kArrayKinds)
    if (kind == k) return name;
  return "?";
}

std::optional<ArrayKind> parse_array_kind(std::string_view s) {
  for (const auto& [kind, name] : kArrayKinds)
    if (name == s) return kind;
  return std::nullopt;
}

void register_external_array(std::shared_ptr<ExternalArray> s) {
  // The same for the other families' rows: the scans', the row kernels' and the segment strategies'.
  const std::string name = s->name();
  const bool cpu_scan = std::find(std::begin(kCpuScans), std::end(kCpuScans), name) != std::end(kCpuScans);
  if (cpu_scan || scan::parse_gpu_scan(name) || row_reduce::find_row_kernel(name) || segmented::find_strategy(name))
    throw UserError("a subject named '" + name + "' would share its rows' name with sumlab's own '" + name +
                    "': name it otherwise");
  const std::lock_guard<std::mutex> lock(registry_mutex);
  array_registry()[name] = std::move(s);
}

void unregister_external(const std::string& name) {
  const std::lock_guard<std::mutex> lock(registry_mutex);
  registry().erase(name);
  array_registry().erase(name);
}

std::vector<std::shared_ptr<ExternalArray>> external_arrays(const std::vector<std::string>& names,
                                                            std::initializer_list<ArrayKind> kinds,
                                                            std::string_view study) {
  const std::lock_guard<std::mutex> lock(registry_mutex);
  std::string wanted, known;
  for (ArrayKind k : kinds) wanted += (wanted.empty() ? "" : " or ") + std::string(to_string(k));
  for (const auto& [name, s] : array_registry())
    if (std::find(kinds.begin(), kinds.end(), s->kind()) != kinds.end()) known += (known.empty() ? "" : ", ") + name;
  std::vector<std::shared_ptr<ExternalArray>> out;
  for (const auto& n : names) {
    const auto it = array_registry().find(n);
    if (it == array_registry().end() || std::find(kinds.begin(), kinds.end(), it->second->kind()) == kinds.end())
      throw UserError(fmt::format("--external '{}' is not a {} subject this process knows for the {} study (known: "
                                  "{}); register it from Python (sumlab.Subject(fn, kind=...))",
                                  n, wanted, study, known.empty() ? "none" : known));
    out.push_back(it->second);
  }
  return out;
}

std::shared_ptr<ExternalSum> find_external(const std::string& name) {
  const std::lock_guard<std::mutex> lock(registry_mutex);
  const auto it = registry().find(name);
  return it == registry().end() ? nullptr : it->second;
}

std::string config_name(const std::string& name, const std::string& label) {
  return label.empty() ? name : name + "[" + label + "]";
}

std::vector<std::shared_ptr<ExternalSum>> externals(const std::vector<std::string>& names) {
  std::vector<std::shared_ptr<ExternalSum>> out;
  for (const auto& n : names) {
    auto s = find_external(n);
    if (!s) {
      std::string known;
      {
        const std::lock_guard<std::mutex> lock(registry_mutex);
        known = names_in(registry());
      }
      throw UserError(fmt::format("--external '{}' is not a subject this process knows (known: {}); register it "
                                  "from Python (sumlab.study.*(fn, ...)) or load it with --plugin",
                                  n, known));
    }
    out.push_back(std::move(s));
  }
  return out;
}

bool ExternalSum::has_device_entry(std::string_view) const { return false; }
double ExternalSum::run_device(std::size_t, const float*, std::size_t, std::uint64_t) {
  throw ExternalError("this subject has no device entry");
}
double ExternalSum::run_device(std::size_t, const double*, std::size_t, std::uint64_t) {
  throw ExternalError("this subject has no device entry");
}

namespace {

// One timed call, its result checked: `call` returns the subject's value as a double.
template <class T, class Call>
ExternalOutcome<T> measure_call(const ExternalSum& s, Call&& call, bool input_finite) {
  ExternalOutcome<T> o;
  const auto t0 = std::chrono::steady_clock::now();
  double v = 0;
  try {
    v = call();
  } catch (const std::exception& e) {
    o.error = e.what();
    return o;
  } catch (...) {
    o.error = "the subject threw something that is not an exception";
    return o;
  }
  o.ms = s.last_call_ms().value_or(std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count());
  o.error = result_error<T>(v, input_finite);
  o.ok = o.error.empty();
  if (o.ok) o.value = static_cast<T>(v);
  return o;
}

}  // namespace

template <class T> std::string result_error(double v, bool input_finite) {
  if (std::isnan(v)) return input_finite ? "returned NaN for an input of finite values" : "";
  if (static_cast<double>(static_cast<T>(v)) != v)
    return fmt::format("returned {}, which is not a {} value: return values of the input's dtype", v,
                       FloatTraits<T>::dtype);
  return "";
}
template std::string result_error<float>(double, bool);
template std::string result_error<double>(double, bool);

template <class T>
Outcome<std::vector<T>> run_external_array(ExternalArray& s, std::size_t config, const ExternalData& x,
                                           std::size_t count, bool input_finite) {
  Outcome<std::vector<T>> o;
  const auto t0 = std::chrono::steady_clock::now();
  try {
    const std::vector<double> r = s.run(config, x);
    o.ms = s.last_call_ms().value_or(std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count());
    if (r.size() != count) throw ExternalError(fmt::format("returned {} values where {} were due", r.size(), count));
    o.value.resize(count);
    for (std::size_t i = 0; i < count; ++i) {
      if (const std::string why = result_error<T>(r[i], input_finite); !why.empty())
        throw ExternalError(fmt::format("output {} {}", i, why));
      o.value[i] = static_cast<T>(r[i]);
    }
    o.has_value = true;
  } catch (const std::exception& e) {
    o.failed = true;
    o.value.clear();
    o.note = e.what();
  } catch (...) {
    o.failed = true;
    o.value.clear();
    o.note = "the subject threw something that is not an exception";
  }
  return o;
}
template Outcome<std::vector<float>> run_external_array<float>(ExternalArray&, std::size_t, const ExternalData&,
                                                               std::size_t, bool);
template Outcome<std::vector<double>> run_external_array<double>(ExternalArray&, std::size_t, const ExternalData&,
                                                                 std::size_t, bool);

template <class T>
ExternalOutcome<T> run_external(ExternalSum& s, std::size_t config, std::span<const T> x, bool input_finite,
                                std::uint64_t input) {
  return measure_call<T>(s, [&] { return s.run(config, x, input); }, input_finite);
}

template <class T>
ExternalOutcome<T> run_external(ExternalSum& s, std::size_t config, KernelInput<T>& x, bool input_finite) {
  const T* d_x = x.device_data();  // nullptr for n = 0, which the ABI allows
  if (x.on_device() && s.has_device_entry(FloatTraits<T>::dtype)) {
    const auto n = static_cast<std::size_t>(x.size());
    return measure_call<T>(s, [&] { return s.run_device(config, d_x, n, x.input_id()); }, input_finite);
  }
  // The host copy outside the timed call: its download (once per input) is not the subject's cost.
  ExternalOutcome<T> o;
  std::span<const T> h;
  try {
    h = x.host();
  } catch (const std::exception& e) {
    o.error = e.what();
    return o;
  }
  return run_external<T>(s, config, h, input_finite, x.input_id());
}

template <class T> bool reads_device(const std::vector<std::shared_ptr<ExternalSum>>& subjects) {
  return std::any_of(subjects.begin(), subjects.end(),
                     [](const auto& s) { return s->has_device_entry(FloatTraits<T>::dtype); });
}

template ExternalOutcome<float> run_external<float>(ExternalSum&, std::size_t, std::span<const float>, bool,
                                                   std::uint64_t);
template ExternalOutcome<double> run_external<double>(ExternalSum&, std::size_t, std::span<const double>, bool,
                                                     std::uint64_t);
template ExternalOutcome<float> run_external<float>(ExternalSum&, std::size_t, KernelInput<float>&, bool);
template ExternalOutcome<double> run_external<double>(ExternalSum&, std::size_t, KernelInput<double>&, bool);
template bool reads_device<float>(const std::vector<std::shared_ptr<ExternalSum>>&);
template bool reads_device<double>(const std::vector<std::shared_ptr<ExternalSum>>&);

}  // namespace sumlab
