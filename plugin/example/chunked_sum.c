/* An example plugin (plugin/sumlab_plugin.h): left-to-right sums over contiguous chunks, the way a
 * CPU reduction with k threads adds.
 *
 * Configuration "chunks=k" splits x into k contiguous chunks (chunk c holds x[c n/k, (c+1) n/k)),
 * adds each chunk left to right in the input's precision starting from its first element, then adds
 * the partial sums of the non-empty chunks left to right. chunks=1 is sumlab's `serial`. Each
 * configuration is one fixed order, so its bits repeat from run to run, while the two orders round
 * differently (on cancelling data most visibly): the subject declares run_to_run.
 *
 * Assumes IEEE binary32/64 with round-to-nearest-even, built with -ffp-contract=off and without
 * -ffast-math (either would change the order measured). n = 0 gives +0; a sum of -0s is -0, as
 * IEEE addition gives.
 *
 * Built by CMake as build/release/plugin/libsumlab_example_plugin.so; by hand:
 *   cc -shared -fPIC -O2 -ffp-contract=off -I plugin plugin/example/chunked_sum.c -o libchunked.so
 * Measured: sumlab study determinism --kernels none --plugin ./libchunked.so:sumlab_example_chunked */
#include <stdio.h>

#include "sumlab_plugin.h"

static const size_t chunk_counts[] = {1, 4};
static const char* const labels[] = {"chunks=1", "chunks=4"};
#define CONFIG_COUNT (sizeof labels / sizeof labels[0])

/* The lab passes only indices below config_count; a host that does not is told so, not crashed. */
static int config_problem(size_t config, char* error, size_t error_size) {
  if (config < CONFIG_COUNT) return 0;
  snprintf(error, error_size, "configuration %zu does not exist (there are %zu)", config, (size_t)CONFIG_COUNT);
  return 1;
}

#define DEFINE_CHUNKED_SUM(T)                                                                              \
  static int chunked_sum_##T(void* context, size_t config, const T* x, size_t n, T* result, char* error, \
                             size_t error_size) {                                                          \
    (void)context;                                                                                         \
    if (config_problem(config, error, error_size)) return 1;                                               \
    const size_t k = chunk_counts[config];                                                                 \
    T total = 0;                                                                                           \
    int have_total = 0;                                                                                    \
    for (size_t c = 0; c < k; ++c) {                                                                       \
      size_t i = c * n / k;                                                                                \
      const size_t end = (c + 1) * n / k;                                                                  \
      if (i == end) continue;                                                                              \
      T part = x[i];                                                                                       \
      while (++i < end) part += x[i];                                                                      \
      total = have_total ? total + part : part;                                                            \
      have_total = 1;                                                                                      \
    }                                                                                                      \
    *result = total;                                                                                       \
    return 0;                                                                                              \
  }

DEFINE_CHUNKED_SUM(float)
DEFINE_CHUNKED_SUM(double)

static const sumlab_plugin descriptor = {
    SUMLAB_PLUGIN_ABI_VERSION, "chunked_sum", SUMLAB_RUN_TO_RUN, CONFIG_COUNT, labels,
    chunked_sum_float,         chunked_sum_double, NULL,
    NULL,                      NULL,               NULL}; /* host entries only: no device entries, no scratch */

SUMLAB_PLUGIN_EXPORT const sumlab_plugin* sumlab_example_chunked(void) { return &descriptor; }
