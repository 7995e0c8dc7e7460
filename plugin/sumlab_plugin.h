/* sumlab_plugin.h: the C ABI through which sumlab measures a reduction the user compiled (a CUDA
 * kernel, a C++ routine, a library call) exactly as it measures its own sums.
 *
 * A plugin is a shared library that exports a getter, a function of no arguments returning a
 * pointer to a static descriptor:
 *
 *     #include "sumlab_plugin.h"
 *     static const char* const labels[] = {"block=128", "block=256"};
 *     static int my_sum32(void* context, size_t config, const float* x, size_t n, float* result,
 *                         char* error, size_t error_size) { ... return 0; }
 *     static const sumlab_plugin descriptor = {SUMLAB_PLUGIN_ABI_VERSION, "my_sum",
 *                                              SUMLAB_RUN_TO_RUN, 2, labels, my_sum32, NULL, NULL};
 *     SUMLAB_PLUGIN_EXPORT const sumlab_plugin* my_sum_plugin(void) { return &descriptor; }
 *
 * and the lab loads it with `--plugin path/libmine.so:my_sum_plugin`. The header is plain C99 with
 * no other dependency than <stddef.h>: it compiles as C, C++ and CUDA host code.
 *
 * Ownership and lifetime. The descriptor and everything it points to (name, labels, context)
 * belong to the plugin; the lab never writes or frees them, and expects them to stay valid and
 * unchanged while the library is loaded. The lab loads a library once and keeps it loaded until the
 * process exits (it never unloads it), so static storage is the natural home of all of it. The
 * getter may be called more than once and must return the same descriptor each time.
 *
 * Calls. An entry receives the input in host memory, valid for the call only: it must not write
 * to it nor keep the pointer (a CUDA plugin copies it to the device itself). The lab makes one call
 * at a time, not necessarily from the same thread. It times each call as the subject's cost, and
 * takes the result as the subject's answer for that configuration; a NaN result for an input of
 * finite values counts as a failed call. */
#ifndef SUMLAB_PLUGIN_H
#define SUMLAB_PLUGIN_H

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

/* The version of this layout. A lab accepts only descriptors of its own version (a mismatch is
 * refused with both numbers named); abi_version stays the first field in every version, so a lab
 * can read it from a descriptor of any version. */
#define SUMLAB_PLUGIN_ABI_VERSION 1

/* What the subject promises, compared by `sumlab study determinism` with what it measures. */
enum {
  SUMLAB_NOT_DETERMINISTIC = 0, /* the bits may change from run to run (atomics, races) */
  SUMLAB_RUN_TO_RUN = 1,        /* the same bits on every run of one configuration */
  SUMLAB_SHAPE_INVARIANT = 2    /* the same bits on every run of every configuration */
};

/* One sum: the sum of x[0..n) under configuration `config` (an index into the descriptor's
 * labels), written to *result in the input's precision. Returns 0 on success. On failure returns
 * nonzero and writes a NUL-terminated message of at most error_size bytes (at least 256) into
 * `error`; the lab records the message in the study's rows and goes on with the next call, and
 * ignores *result. `context` is the descriptor's context. When n is 0, x may be NULL. */
typedef int (*sumlab_sum_float32)(void* context, size_t config, const float* x, size_t n, float* result,
                                  char* error, size_t error_size);
typedef int (*sumlab_sum_float64)(void* context, size_t config, const double* x, size_t n, double* result,
                                  char* error, size_t error_size);

typedef struct sumlab_plugin {
  /* SUMLAB_PLUGIN_ABI_VERSION as the plugin was compiled. */
  unsigned int abi_version;
  /* The subject's name in tables and figures (a configuration's rows say name[label]): non-empty,
   * printable ASCII without ',', '[' or ']', at most 64 characters; unique among the subjects of a
   * process (two plugins may not both call themselves "my_sum"). */
  const char* name;
  /* One of SUMLAB_NOT_DETERMINISTIC, SUMLAB_RUN_TO_RUN, SUMLAB_SHAPE_INVARIANT. */
  int declared;
  /* The configurations ("launch shapes"): config_count labels, each non-empty printable ASCII of
   * at most 128 characters ("block=256,vector=4" is fine), no two the same; at most 1024 of them.
   * config_count 0 (configs then NULL) means one configuration without a name, called with
   * config 0. */
  size_t config_count;
  const char* const* configs;
  /* The entries per input precision; either may be NULL (not both): the lab then records each
   * call in that precision as a failure ("this plugin has no float64 entry"). */
  sumlab_sum_float32 sum_float32;
  sumlab_sum_float64 sum_float64;
  /* Passed unchanged to every call; the lab never reads it. May be NULL. */
  void* context;
} sumlab_plugin;

/* The getter's type: what the symbol named after the ':' of --plugin must be. */
typedef const sumlab_plugin* (*sumlab_plugin_getter)(void);

#ifdef __cplusplus
}
#endif

/* Exports a getter from C, C++ or CUDA with C linkage and default visibility (so that
 * -fvisibility=hidden builds still show it to the lab). */
#ifdef __cplusplus
#define SUMLAB_PLUGIN_C_LINKAGE extern "C"
#else
#define SUMLAB_PLUGIN_C_LINKAGE
#endif
#if defined(__GNUC__) || defined(__clang__)
#define SUMLAB_PLUGIN_EXPORT SUMLAB_PLUGIN_C_LINKAGE __attribute__((visibility("default")))
#else
#define SUMLAB_PLUGIN_EXPORT SUMLAB_PLUGIN_C_LINKAGE
#endif

#endif /* SUMLAB_PLUGIN_H */
