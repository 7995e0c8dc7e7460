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
 *                                              SUMLAB_RUN_TO_RUN, 2, labels, my_sum32, NULL, NULL,
 *                                              NULL, NULL, NULL};
 *     SUMLAB_PLUGIN_EXPORT const sumlab_plugin* my_sum_plugin(void) { return &descriptor; }
 *
 * and the lab loads it with `--plugin path/libmine.so:my_sum_plugin`. plugin/example/chunked_sum.c is
 * a plugin with host entries; plugin/example/block_sum.cu one whose CUDA kernels read the input
 * where it already lies on the GPU (device entries, below). The header is plain C99 with
 * no other dependency than <stddef.h>: it compiles as C, C++ and CUDA host code.
 *
 * Ownership and lifetime. The descriptor and everything it points to (name, labels, context)
 * belong to the plugin; the lab never writes or frees them, and expects them to stay valid and
 * unchanged while the library is loaded. The lab loads a library once and keeps it loaded until the
 * process exits (it never unloads it), so static storage is the natural home of all of it. The
 * getter may be called more than once and must return the same descriptor each time.
 *
 * Calls. A host entry (sum_float32, sum_float64) receives the input in host memory, valid for the
 * call only: it must not write to it nor keep the pointer. The lab makes one call at a time, not
 * necessarily from the same thread. It times each call as the subject's cost, and takes the result
 * as the subject's answer for that configuration; a NaN result for an input of finite values counts
 * as a failed call.
 *
 * Device entries (device_sum_float32, device_sum_float64; optional) sum data that is already in GPU
 * memory, in place: the lab calls them when the input lives on the device (--backend cuda), so a
 * CUDA kernel is measured without a host round trip, and `sumlab bench` times them against CUB.
 * - Ownership: d_x, d_result and d_scratch are device memory the lab owns, on the current device.
 *   d_x is valid for the call and the work it enqueues, read only; d_result holds one element of
 *   the input's dtype (set to NaN by the lab before the call); d_scratch holds at least the bytes
 *   the scratch query asked for (NULL when it asked for 0 or there is no query), contents undefined.
 *   The plugin keeps none of these pointers after its work finishes.
 * - Stream: `stream` is a cudaStream_t (void* so that this header needs no CUDA header). The entry
 *   enqueues all its work on it (kernels, memsets, async copies) and returns without waiting; the
 *   lab then synchronizes that stream and checks for CUDA errors (an error there fails the call
 *   with CUDA's words). The entry must not synchronize the device (cudaDeviceSynchronize), use the
 *   legacy default stream, change the current device (the lab refuses a call that did), allocate or
 *   free memory per call, nor keep state that a later call reads: scratch exists for that. To time
 *   it, `sumlab bench` enqueues many calls back to back on the stream before synchronizing once.
 * - Status: as for host entries, 0 on success; nonzero with a message in `error` when the entry
 *   refuses the call (an unknown configuration, n too large). The message is for the call's
 *   arguments; failures of the enqueued work surface at the lab's synchronization.
 * - Scratch: scratch_bytes(context, config, n, dtype, &bytes, error, error_size) says how many
 *   bytes of device scratch a device entry needs for (config, n, dtype); the lab asks before calling,
 *   allocates (at least) that much once and reuses it. NULL: no entry needs scratch.
 *
 * Which entries. A descriptor has at least one entry, host or device, in some dtype. With host
 * entries only, the lab copies device-resident data to the host once and calls them (bench skips
 * the plugin with a note). With device entries only, the plugin is measured only where the data
 * is on a GPU: on the model or cpu backend, or without a GPU, each call is a failure row saying
 * "this plugin has only device entries; it needs --backend cuda on a GPU". With both, the device
 * entry runs wherever the data is on the device, the host entry otherwise. A scratch query without
 * any device entry is refused (it could never be used). */
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

/* The input's precision, for the scratch query. */
enum { SUMLAB_FLOAT32 = 0, SUMLAB_FLOAT64 = 1 };

/* One sum on the device: the sum of d_x[0..n) (device memory) under configuration `config`,
 * enqueued on `stream` (a cudaStream_t) and written to *d_result (device memory) in the input's
 * precision. d_scratch: scratch_bytes device bytes for this call (see "Device entries" above).
 * Returns 0 once the work is enqueued; nonzero with a message as a host entry. When n is 0, d_x
 * may be NULL. */
typedef int (*sumlab_device_sum_float32)(void* context, size_t config, const float* d_x, size_t n, float* d_result,
                                         void* d_scratch, size_t scratch_bytes, void* stream, char* error,
                                         size_t error_size);
typedef int (*sumlab_device_sum_float64)(void* context, size_t config, const double* d_x, size_t n,
                                         double* d_result, void* d_scratch, size_t scratch_bytes, void* stream,
                                         char* error, size_t error_size);
/* The device scratch (bytes, into *bytes) that the device entry of `dtype` (SUMLAB_FLOAT32 or
 * SUMLAB_FLOAT64) needs for `config` and n elements; the same answer every time for the same
 * arguments. Returns 0, or nonzero with a message (the call is then a failure). Host code only: no
 * CUDA call is needed to answer. */
typedef int (*sumlab_scratch_bytes)(void* context, size_t config, size_t n, int dtype, size_t* bytes, char* error,
                                    size_t error_size);

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
  /* The host entries per input precision; either or both may be NULL (see "Which entries"): a
   * precision with no entry at all gives a failure per call ("this plugin has no float64 entry"). */
  sumlab_sum_float32 sum_float32;
  sumlab_sum_float64 sum_float64;
  /* Passed unchanged to every call; the lab never reads it. May be NULL. */
  void* context;
  /* The device entries per input precision and the scratch query; each may be NULL. */
  sumlab_device_sum_float32 device_sum_float32;
  sumlab_device_sum_float64 device_sum_float64;
  sumlab_scratch_bytes scratch_bytes;
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
