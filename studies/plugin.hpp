#pragma once
// --plugin LIB:SYMBOL: a reduction compiled against plugin/sumlab_plugin.h, loaded into the process
// and registered as an external subject (studies/external.hpp), so the studies measure it as they
// measure a Python callable. A study measures every plugin it loads, whether or not --external
// names it: loading one is asking for it.
#include <cstddef>
#include <functional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace CLI { class App; }

namespace sumlab {

struct LoadedPlugin {
  std::string library;  // canonical path
  std::string symbol;
  std::string subject;  // the registered subject's name
  std::string fnv1a64;  // of the library's bytes: a rebuilt library may be another subject
};

// Loads "path/lib.so:symbol" (split at the last ':'; the path is a file, relative to the working
// directory, never looked up on the library search path), calls the getter, checks the
// descriptor and registers its subject. UserError (exit 2) names what is wrong: no ':', no such
// file, not a loadable shared library (the loader's words), no such symbol, another ABI version,
// an invalid descriptor, a subject name some other subject already has. The library stays loaded
// until the process exits: its subject's code and strings live in it.
LoadedPlugin load_plugin(const std::string& spec);
// Each spec loaded once, in order.
std::vector<LoadedPlugin> load_plugins(const std::vector<std::string>& specs);

// A loaded plugin's device entry for T under one configuration at n elements, as gpu/ calls it
// (gpu::DeviceEntry<T>'s type, so that `sumlab bench` times it beside CUB), with the scratch it
// asked for. entry is empty when the plugin has no device entry for T. Throws ExternalError when
// its scratch query fails, UserError when `subject` is no loaded plugin's.
template <class T> struct PluginDeviceCall {
  std::function<std::string(const T* d_x, std::size_t n, T* d_result, void* d_scratch, void* stream)> entry;
  std::size_t scratch_bytes = 0;
};
template <class T>
PluginDeviceCall<T> plugin_device_call(const std::string& subject, std::size_t config, std::size_t n);

// The subjects a study measures: those --external names, then each plugin's that it does not.
std::vector<std::string> with_plugins(std::vector<std::string> externals, const std::vector<LoadedPlugin>& plugins);

// The plan's record of the plugins (so --resume with another library, symbol or build is refused).
nlohmann::ordered_json plugin_plan(const std::vector<LoadedPlugin>& plugins);

// --plugin, with the same help on every command that takes it.
void add_plugin_option(CLI::App& cmd, std::vector<std::string>& specs);

}  // namespace sumlab
