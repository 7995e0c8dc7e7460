#include "studies/plugin.hpp"

#include <dlfcn.h>
#include <link.h>

#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <cstdint>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <limits>
#include <map>
#include <mutex>
#include <set>
#include <span>

#include "core/float_traits.hpp"
#include "plugin/sumlab_plugin.h"
#include "studies/commands.hpp"
#include "studies/external.hpp"
#include "studies/fnv1a.hpp"
#if defined(SUMLAB_WITH_CUDA)
#include "gpu/device_entry.hpp"
#endif

namespace sumlab {
namespace {

namespace fs = std::filesystem;

constexpr std::size_t max_name = 64, max_label = 128, max_configs = 1024;
constexpr std::size_t error_capacity = 1024;  // the header promises at least 256
static_assert(static_cast<int>(Determinism::not_deterministic) == SUMLAB_NOT_DETERMINISTIC &&
              static_cast<int>(Determinism::run_to_run) == SUMLAB_RUN_TO_RUN &&
              static_cast<int>(Determinism::shape_invariant) == SUMLAB_SHAPE_INVARIANT);

// A descriptor that passed valid(): its strings are copied once, its entries called as they are.
class PluginSubject final : public ExternalSum {
 public:
  PluginSubject(const sumlab_plugin& d, std::vector<std::string> configs)
      : d_(d), name_(d.name), configs_(std::move(configs)) {}
  std::string name() const override { return name_; }
  Determinism declared() const override { return static_cast<Determinism>(d_.declared); }
  std::vector<std::string> configs() const override { return configs_; }
  // The input's id stays here: a plugin reads the lab's buffer where it lies and keeps nothing of it.
  double run(std::size_t c, std::span<const float> x, std::uint64_t) override {
    return call(d_.sum_float32, "float32", c, x);
  }
  double run(std::size_t c, std::span<const double> x, std::uint64_t) override {
    return call(d_.sum_float64, "float64", c, x);
  }
  bool has_device_entry(std::string_view dtype) const override {
    return dtype == "float32" ? d_.device_sum_float32 != nullptr : d_.device_sum_float64 != nullptr;
  }
  double run_device(std::size_t c, const float* d_x, std::size_t n, std::uint64_t) override {
    return call_device<float>(c, d_x, n);
  }
  double run_device(std::size_t c, const double* d_x, std::size_t n, std::uint64_t) override {
    return call_device<double>(c, d_x, n);
  }

  // The device entry of T for configuration c and n elements as gpu/ calls it (no entry: empty),
  // with the scratch it asks for; ExternalError when the query fails.
  template <class T> PluginDeviceCall<T> device_call(std::size_t c, std::size_t n) const {
    PluginDeviceCall<T> e;
    const auto bind = [&](auto* f) {
      e.scratch_bytes = scratch_bytes<T>(c, n);
      e.entry = [f, c, context = d_.context, bytes = e.scratch_bytes](const T* d_x, std::size_t m, T* d_result,
                                                                       void* d_scratch, void* stream) {
        std::array<char, error_capacity> error{};
        const int status = f(context, c, d_x, m, d_result, d_scratch, bytes, stream, error.data(), error.size());
        return status == 0 ? std::string() : message(status, error);
      };
    };
    if constexpr (sizeof(T) == 4) {
      if (d_.device_sum_float32) bind(d_.device_sum_float32);
    } else {
      if (d_.device_sum_float64) bind(d_.device_sum_float64);
    }
    return e;
  }

 private:
  template <class T> std::size_t scratch_bytes(std::size_t c, std::size_t n) const {
    if (!d_.scratch_bytes) return 0;
    std::array<char, error_capacity> error{};
    std::size_t bytes = 0;
    const int status = d_.scratch_bytes(d_.context, c, n, sizeof(T) == 4 ? SUMLAB_FLOAT32 : SUMLAB_FLOAT64, &bytes,
                                        error.data(), error.size());
    if (status != 0) throw ExternalError("the scratch query failed: " + message(status, error));
    return bytes;
  }
  template <class T, class Entry>
  double call(Entry entry, const char* dtype, std::size_t c, std::span<const T> x) const {
    if (!entry) {
      if (!d_.sum_float32 && !d_.sum_float64)
        throw ExternalError("this plugin has only device entries; it needs --backend cuda on a GPU");
      if (has_device_entry(dtype))
        throw ExternalError(fmt::format("this plugin's {} entry is a device entry only; it needs --backend cuda on a GPU",
                                        dtype));
      throw ExternalError(fmt::format("this plugin has no {} entry", dtype));
    }
    std::array<char, error_capacity> error{};
    // A plugin that reports success without writing its result leaves NaN: run_external's failure.
    T result = std::numeric_limits<T>::quiet_NaN();
    const int status = entry(d_.context, c, x.data(), x.size(), &result, error.data(), error.size());
    if (status == 0) return result;
    throw ExternalError(message(status, error));
  }
  static std::string message(int status, std::array<char, error_capacity>& error) {
    error.back() = '\0';  // a plugin that filled the buffer to the end
    if (error[0] == '\0') return fmt::format("failed (status {}) without a message", status);
    return error.data();
  }
  template <class T> double call_device(std::size_t c, const T* d_x, std::size_t n) {
    const PluginDeviceCall<T> bound = device_call<T>(c, n);
    if (!bound.entry) throw ExternalError(fmt::format("this plugin has no {} device entry", FloatTraits<T>::dtype));
#if defined(SUMLAB_WITH_CUDA)
    const gpu::DeviceEntryResult<T> r = gpu::call_device_entry<T>(bound.entry, d_x, n, bound.scratch_bytes);
    if (!r.ok()) throw ExternalError(r.error);
    return r.value;
#else
    (void)d_x;
    throw ExternalError("this sumlab was built without CUDA; a device entry cannot run");
#endif
  }
  const sumlab_plugin& d_;
  std::string name_;
  std::vector<std::string> configs_;
};

// Printable ASCII of 1..max characters, none of `banned`: what a CSV cell and a figure label take.
std::string text_problem(const char* s, std::size_t max, const char* banned) {
  if (!s) return "is NULL";
  const std::size_t n = std::strlen(s);
  if (n == 0) return "is empty";
  if (n > max) return fmt::format("is {} characters long (at most {})", n, max);
  for (const char* p = s; *p; ++p) {
    if (*p < 0x20 || *p > 0x7e) return fmt::format("holds the byte 0x{:02x}, which is not printable ASCII", *p & 0xff);
    if (std::strchr(banned, *p)) return fmt::format("'{}' holds '{}' (none of '{}' is allowed)", s, *p, banned);
  }
  return "";
}

// Why the descriptor cannot be used (empty: it can); its configuration labels into `labels`.
std::string descriptor_problem(const sumlab_plugin& d, std::vector<std::string>& labels) {
  if (auto p = text_problem(d.name, max_name, ",[]"); !p.empty()) return "its name " + p;
  if (d.declared < SUMLAB_NOT_DETERMINISTIC || d.declared > SUMLAB_SHAPE_INVARIANT)
    return fmt::format("declared = {} is none of SUMLAB_NOT_DETERMINISTIC, SUMLAB_RUN_TO_RUN, SUMLAB_SHAPE_INVARIANT",
                       d.declared);
  const bool device = d.device_sum_float32 || d.device_sum_float64;
  if (!d.sum_float32 && !d.sum_float64 && !device)
    return "it has neither a float32 nor a float64 entry, on the host or on the device";
  if (d.scratch_bytes && !device) return "it has a scratch query (scratch_bytes) but no device entry to use the scratch";
  if (d.config_count > max_configs) return fmt::format("config_count = {} (at most {})", d.config_count, max_configs);
  if (d.config_count > 0 && !d.configs) return fmt::format("config_count = {} but configs is NULL", d.config_count);
  if (d.config_count == 0) labels = {""};
  std::set<std::string> seen;
  for (std::size_t c = 0; c < d.config_count; ++c) {
    if (auto p = text_problem(d.configs[c], max_label, ""); !p.empty()) return fmt::format("configs[{}] {}", c, p);
    if (!seen.insert(d.configs[c]).second) return fmt::format("two configurations are labelled '{}'", d.configs[c]);
    labels.emplace_back(d.configs[c]);
  }
  return "";
}

std::string file_hash(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::array<char, 1 << 16> buf;
  Fnv1a64 h;
  while (in) {
    in.read(buf.data(), buf.size());
    h.add(buf.data(), static_cast<std::size_t>(in.gcount()));
  }
  return h.hex();
}

// The library's getter: dlopen and dlsym, their failures in the loader's own words.
sumlab_plugin_getter find_getter(const std::string& spec, const fs::path& library, const std::string& symbol) {
  // RTLD_LOCAL: two plugins may define the same helper names without binding to each other's.
  void* handle = dlopen(library.c_str(), RTLD_NOW | RTLD_LOCAL);  // never closed: see plugin.hpp
  if (!handle)
    throw UserError(fmt::format("--plugin '{}': not a shared library this process can load: {}", spec, dlerror()));
  dlerror();
  void* address = dlsym(handle, symbol.c_str());
  if (const char* e = dlerror(); e || !address)
    throw UserError(fmt::format("--plugin '{}': no symbol '{}' in {} ({})", spec, symbol, library.string(),
                                e ? e : "it resolves to NULL"));
  // The getter is called, so the symbol must be code: a data symbol (an exported variable, a
  // descriptor exported in place of its getter) would be jumped into. The dynamic symbol table
  // entry that covers the address says which; with none, nothing says it is code.
  Dl_info info{};
  void* entry_address = nullptr;
  if (dladdr1(address, &info, &entry_address, RTLD_DL_SYMENT) == 0 || !entry_address)
    throw UserError(fmt::format("--plugin '{}': '{}' resolves to an address that no symbol table entry covers, so it "
                                "cannot be called as the getter (plugin/sumlab_plugin.h)",
                                spec, symbol));
  // dlsym searches the library's dependencies too (LIB:getpid finds libc's): the getter must be the
  // plugin's own, defined in the object the handle names.
  const link_map* own = nullptr;
  if (dlinfo(handle, RTLD_DI_LINKMAP, &own) != 0 || !own || !info.dli_fname || !own->l_name ||
      std::string(info.dli_fname) != own->l_name)
    throw UserError(fmt::format("--plugin '{}': '{}' is not defined in {}{}; name the getter the plugin exports "
                                "(plugin/sumlab_plugin.h)",
                                spec, symbol, library.string(),
                                info.dli_fname ? fmt::format(" (it was found in {})", info.dli_fname) : ""));
  const auto* entry = static_cast<const ElfW(Sym)*>(entry_address);
  if (const auto type = ELF64_ST_TYPE(entry->st_info); type != STT_FUNC && type != STT_GNU_IFUNC)
    throw UserError(fmt::format("--plugin '{}': '{}' in {} is {}, not a function; name the getter "
                                "(plugin/sumlab_plugin.h)",
                                spec, symbol, library.string(),
                                type == STT_OBJECT ? "a data object" : fmt::format("a symbol of ELF type {}", type)));
  sumlab_plugin_getter getter;
  static_assert(sizeof getter == sizeof address);
  std::memcpy(&getter, &address, sizeof getter);  // POSIX: a symbol's address converts to a function pointer
  return getter;
}

// Which plugin registered each subject name (a name may be loaded again only from the same place).
std::mutex origins_mutex;
std::map<std::string, std::string> origins;

void register_plugin_subject(const std::string& spec, const std::string& origin, std::shared_ptr<PluginSubject> s) {
  const std::lock_guard<std::mutex> lock(origins_mutex);
  const auto it = origins.find(s->name());
  const bool ours = it != origins.end() && it->second == origin;
  if (!ours && find_external(s->name()))
    throw UserError(fmt::format("--plugin '{}': its subject's name '{}' is taken by a subject already registered{}; "
                                "give one of them another name",
                                spec, s->name(), it == origins.end() ? "" : " (from " + it->second + ")"));
  origins[s->name()] = origin;
  register_external(std::move(s));
}

}  // namespace

LoadedPlugin load_plugin(const std::string& spec) {
  const auto colon = spec.rfind(':');
  if (colon == std::string::npos || colon == 0 || colon + 1 == spec.size())
    throw UserError(fmt::format("--plugin '{}': expected LIB:SYMBOL, a shared library's path and the name of its "
                                "getter (plugin/sumlab_plugin.h)",
                                spec));
  const fs::path path = spec.substr(0, colon);
  const std::string symbol = spec.substr(colon + 1);
  std::error_code ec;
  if (fs::is_directory(path, ec))
    throw UserError(fmt::format("--plugin '{}': {} is a folder, not a shared library", spec, path.string()));
  if (!fs::is_regular_file(path, ec))
    throw UserError(fmt::format("--plugin '{}': no such file: {}", spec, path.string()));
  const fs::path library = fs::canonical(path);
  const sumlab_plugin* d = find_getter(spec, library, symbol)();
  if (!d) throw UserError(fmt::format("--plugin '{}': the getter returned NULL, not a descriptor", spec));
  if (d->abi_version != SUMLAB_PLUGIN_ABI_VERSION)
    throw UserError(fmt::format("--plugin '{}': built for plugin ABI version {}; this sumlab reads version {} "
                                "(rebuild it against plugin/sumlab_plugin.h)",
                                spec, d->abi_version, SUMLAB_PLUGIN_ABI_VERSION));
  std::vector<std::string> labels;
  if (const auto problem = descriptor_problem(*d, labels); !problem.empty())
    throw UserError(fmt::format("--plugin '{}': invalid descriptor: {}", spec, problem));
  auto subject = std::make_shared<PluginSubject>(*d, std::move(labels));
  LoadedPlugin loaded{library.string(), symbol, subject->name(), file_hash(library)};
  register_plugin_subject(spec, loaded.library + ":" + symbol, std::move(subject));
  return loaded;
}

std::vector<LoadedPlugin> load_plugins(const std::vector<std::string>& specs) {
  std::vector<LoadedPlugin> out;
  for (const auto& spec : specs) {
    LoadedPlugin p = load_plugin(spec);
    const auto same = [&](const LoadedPlugin& q) { return q.subject == p.subject; };
    if (std::none_of(out.begin(), out.end(), same)) out.push_back(std::move(p));
  }
  return out;
}

template <class T>
PluginDeviceCall<T> plugin_device_call(const std::string& subject, std::size_t config, std::size_t n) {
  const auto s = std::dynamic_pointer_cast<PluginSubject>(find_external(subject));
  if (!s) throw UserError(fmt::format("'{}' is not a loaded plugin's subject", subject));
  return s->device_call<T>(config, n);
}
template PluginDeviceCall<float> plugin_device_call<float>(const std::string&, std::size_t, std::size_t);
template PluginDeviceCall<double> plugin_device_call<double>(const std::string&, std::size_t, std::size_t);

std::vector<std::string> with_plugins(std::vector<std::string> externals, const std::vector<LoadedPlugin>& plugins) {
  for (const auto& p : plugins)
    if (std::find(externals.begin(), externals.end(), p.subject) == externals.end()) externals.push_back(p.subject);
  return externals;
}

nlohmann::ordered_json plugin_plan(const std::vector<LoadedPlugin>& plugins) {
  nlohmann::ordered_json j = nlohmann::ordered_json::array();
  for (const auto& p : plugins)
    j.push_back({{"library", p.library}, {"symbol", p.symbol}, {"subject", p.subject}, {"fnv1a64", p.fnv1a64}});
  return j;
}

void add_plugin_option(CLI::App& cmd, std::vector<std::string>& specs) {
  cmd.add_option("--plugin", specs,
                 "A compiled reduction to measure: LIB:SYMBOL, a shared library built against "
                 "plugin/sumlab_plugin.h and its getter (repeatable, or a comma list); its subject is "
                 "measured without naming it in --external, and the library's path and hash go into the plan")
      ->delimiter(',');
}

}  // namespace sumlab
