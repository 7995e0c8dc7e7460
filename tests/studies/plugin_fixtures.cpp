// Plugins for tests/studies/plugin_test.cpp and tests/gpu/plugin_device_test.cpp, written in C++
// against the C header (the example plugins are the C and CUDA ones): a subject whose calls fail, a
// slow one (so that --max-shape-seconds cuts its runs short),
// subjects with device entries that refuse every call with a message saying they ran (so a row
// shows which entry the lab called, with no CUDA here), and descriptors the loader must refuse,
// one fault each.
#include <chrono>
#include <cstdio>
#include <thread>

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
                              faulty_float32, nullptr, nullptr, nullptr, nullptr, nullptr};

// 40 ms a call, the serial sum in both configurations (the same order: the same bits), declared
// shape_invariant: a run with --max-shape-seconds 0.15 gets 2 to 4 of its runs per configuration.
const char* const slow_labels[] = {"copy=1", "copy=2"};
int slow_float32(void*, std::size_t, const float* x, std::size_t n, float* result, char*, std::size_t) {
  std::this_thread::sleep_for(std::chrono::milliseconds(40));
  *result = n == 0 ? 0.0f : serial(x, 0, n);
  return 0;
}
const sumlab_plugin slow = {SUMLAB_PLUGIN_ABI_VERSION, "slow_sum", SUMLAB_SHAPE_INVARIANT, 2, slow_labels,
                            slow_float32, nullptr, nullptr, nullptr, nullptr, nullptr};

// Device entries that enqueue nothing and refuse the call, saying so: on the model backend they are
// never called (the rows say the plugin needs a GPU, or come from the host entry); on a GPU the
// row's message proves the lab called the device entry in place.
template <class T>
int device_ran(void*, std::size_t, const T*, std::size_t n, T*, void*, std::size_t scratch_bytes, void* stream,
               char* error, std::size_t error_size) {
  std::snprintf(error, error_size, "the device entry ran (n=%zu, scratch %zu bytes, stream %s)", n, scratch_bytes,
                stream ? "given" : "NULL");
  return 1;
}
int scratch_per_element(void*, std::size_t, std::size_t n, int dtype, std::size_t* bytes, char*, std::size_t) {
  *bytes = n * (dtype == SUMLAB_FLOAT32 ? sizeof(float) : sizeof(double));
  return 0;
}
const sumlab_plugin device_only = {SUMLAB_PLUGIN_ABI_VERSION, "device_only_sum", SUMLAB_NOT_DETERMINISTIC, 0,
                                   nullptr, nullptr, nullptr, nullptr, device_ran<float>, device_ran<double>,
                                   scratch_per_element};
// Both entries for float32 (the host one sums halves as faulty_sum's chunks=2), none for float64.
const sumlab_plugin dual = {SUMLAB_PLUGIN_ABI_VERSION, "dual_sum", SUMLAB_RUN_TO_RUN, 0, nullptr,
                            faulty_float32, nullptr, nullptr, device_ran<float>, nullptr, nullptr};

// Calls that never fail: what the invalid descriptors below break one field of.
int zero32(void*, std::size_t, const float*, std::size_t, float* r, char*, std::size_t) {
  *r = 0;
  return 0;
}
const char* const twin_labels[] = {"block=256", "block=256"};
const char* const null_label[] = {"block=256", nullptr};

// A valid descriptor; each invalid one below changes one field of it.
sumlab_plugin valid(const char* name) {
  return {SUMLAB_PLUGIN_ABI_VERSION, name, SUMLAB_RUN_TO_RUN, 0, nullptr, zero32, nullptr, nullptr,
          nullptr, nullptr, nullptr};
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
const sumlab_plugin scratch_without_device = broken([](sumlab_plugin& d) { d.scratch_bytes = scratch_per_element; });
const sumlab_plugin twins = broken([](sumlab_plugin& d) { d.config_count = 2; d.configs = twin_labels; });
const sumlab_plugin hole = broken([](sumlab_plugin& d) { d.config_count = 2; d.configs = null_label; });
const sumlab_plugin no_labels = broken([](sumlab_plugin& d) { d.config_count = 3; });
const sumlab_plugin huge = broken([](sumlab_plugin& d) { d.config_count = 1u << 20; d.configs = twin_labels; });
const sumlab_plugin bad_declared = broken([](sumlab_plugin& d) { d.declared = 7; });
// The example plugin's subject name, from another library.
const sumlab_plugin impostor = valid("chunked_sum");

}  // namespace

// The descriptor itself exported where its getter belongs: a data symbol, which the loader must
// refuse rather than call.
SUMLAB_PLUGIN_EXPORT const sumlab_plugin sumlab_test_descriptor_not_getter = valid("data_symbol");

SUMLAB_PLUGIN_EXPORT const sumlab_plugin* sumlab_test_faulty() { return &faulty; }
SUMLAB_PLUGIN_EXPORT const sumlab_plugin* sumlab_test_slow() { return &slow; }
SUMLAB_PLUGIN_EXPORT const sumlab_plugin* sumlab_test_device_only() { return &device_only; }
SUMLAB_PLUGIN_EXPORT const sumlab_plugin* sumlab_test_dual() { return &dual; }
SUMLAB_PLUGIN_EXPORT const sumlab_plugin* sumlab_test_scratch_without_device() { return &scratch_without_device; }
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
