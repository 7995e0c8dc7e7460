// Plugins for tests/studies/plugin_test.cpp, written in C++ against the C header (the example
// plugin is the C one): a subject whose calls fail, and descriptors the loader must refuse, one
// fault each.
#include <cstdio>

#include "plugin/sumlab_plugin.h"

namespace {

// "chunks=2" adds the two halves left to right; "chunks=0" fails, as a user's invalid
// configuration would. No float64 entry: its rows say so.
const char* const faulty_labels[] = {"chunks=2", "chunks=0"};

float serial(const float* x, std::size_t lo, std::size_t hi) {
  float s = x[lo];
  while (++lo < hi) s += x[lo];
  return s;
}

int faulty_float32(void*, std::size_t config, const float* x, std::size_t n, float* result, char* error,
                   std::size_t error_size) {
  if (config == 1) {
    std::snprintf(error, error_size, "chunks=0 is not a configuration");
    return 1;
  }
  *result = n < 2 ? (n == 1 ? x[0] : 0.0f) : serial(x, 0, n / 2) + serial(x, n / 2, n);
  return 0;
}

const sumlab_plugin faulty = {SUMLAB_PLUGIN_ABI_VERSION, "faulty_sum", SUMLAB_RUN_TO_RUN, 2, faulty_labels,
                              faulty_float32, nullptr, nullptr};

// Calls that never fail: what the invalid descriptors below break one field of.
int zero32(void*, std::size_t, const float*, std::size_t, float* r, char*, std::size_t) {
  *r = 0;
  return 0;
}
const char* const twin_labels[] = {"block=256", "block=256"};
const char* const null_label[] = {"block=256", nullptr};

// A valid descriptor; each invalid one below changes one field of it.
sumlab_plugin valid(const char* name) {
  return {SUMLAB_PLUGIN_ABI_VERSION, name, SUMLAB_RUN_TO_RUN, 0, nullptr, zero32, nullptr, nullptr};
}
template <class Change> sumlab_plugin broken(Change change) {
  sumlab_plugin d = valid("broken");
  change(d);
  return d;
}
const sumlab_plugin wrong_version = broken([](sumlab_plugin& d) { d.abi_version = 99; });
const sumlab_plugin no_name = broken([](sumlab_plugin& d) { d.name = nullptr; });
const sumlab_plugin comma_name = broken([](sumlab_plugin& d) { d.name = "a,b"; });
const sumlab_plugin no_entries = broken([](sumlab_plugin& d) { d.sum_float32 = nullptr; });
const sumlab_plugin twins = broken([](sumlab_plugin& d) { d.config_count = 2; d.configs = twin_labels; });
const sumlab_plugin hole = broken([](sumlab_plugin& d) { d.config_count = 2; d.configs = null_label; });
const sumlab_plugin no_labels = broken([](sumlab_plugin& d) { d.config_count = 3; });
const sumlab_plugin huge = broken([](sumlab_plugin& d) { d.config_count = 1u << 20; d.configs = twin_labels; });
const sumlab_plugin bad_declared = broken([](sumlab_plugin& d) { d.declared = 7; });
// The example plugin's subject name, from another library.
const sumlab_plugin impostor = valid("chunked_sum");

}  // namespace

SUMLAB_PLUGIN_EXPORT const sumlab_plugin* sumlab_test_faulty() { return &faulty; }
SUMLAB_PLUGIN_EXPORT const sumlab_plugin* sumlab_test_null() { return nullptr; }
SUMLAB_PLUGIN_EXPORT const sumlab_plugin* sumlab_test_wrong_version() { return &wrong_version; }
SUMLAB_PLUGIN_EXPORT const sumlab_plugin* sumlab_test_no_name() { return &no_name; }
SUMLAB_PLUGIN_EXPORT const sumlab_plugin* sumlab_test_comma_name() { return &comma_name; }
SUMLAB_PLUGIN_EXPORT const sumlab_plugin* sumlab_test_no_entries() { return &no_entries; }
SUMLAB_PLUGIN_EXPORT const sumlab_plugin* sumlab_test_twin_labels() { return &twins; }
SUMLAB_PLUGIN_EXPORT const sumlab_plugin* sumlab_test_null_label() { return &hole; }
SUMLAB_PLUGIN_EXPORT const sumlab_plugin* sumlab_test_no_labels() { return &no_labels; }
SUMLAB_PLUGIN_EXPORT const sumlab_plugin* sumlab_test_huge() { return &huge; }
SUMLAB_PLUGIN_EXPORT const sumlab_plugin* sumlab_test_bad_declared() { return &bad_declared; }
SUMLAB_PLUGIN_EXPORT const sumlab_plugin* sumlab_test_impostor() { return &impostor; }
