/* An example CUDA plugin (plugin/sumlab_plugin.h) with device entries only: a block-tree sum of data
 * already on the GPU, the shape of Harris's reductions and of most hand-written ones.
 *
 * Order. grid = min(ceil(n / block), 1024) blocks of `block` threads; thread t of block b adds
 * x[i], i = b*block + t, then i += grid*block, left to right in the input's precision; each block
 * adds its threads' partials in shared memory by a halving tree (thread t adds t + s, s = block/2,
 * block/4, ..., 1). The block partials then meet in one of two ways, the configurations' suffix:
 *   atomic    each block's thread 0 atomicAdds its partial to the result (zeroed first): the
 *             partials arrive in whatever order the blocks finish, so the bits may change from run
 *             to run (the seeds' "8 distinct sums in 20 runs");
 *   two_pass  each block writes its partial to scratch (the scratch query asks for grid elements)
 *             and a second kernel of one block adds them in the same thread-then-tree order: one
 *             fixed order, the same bits on every run of that configuration.
 * The subject declares not_deterministic, the strongest promise true of every configuration; `sumlab
 * study determinism` measures each configuration and shows two_pass's single value per input.
 * Every order is a sum of n terms by n - 1 additions, so the error is within gamma(n-1) sum|x|.
 *
 * Built with --fmad=false like the lab's modelled kernels (a sum multiplies nothing, but the flag
 * keeps any product a plain IEEE one). No host entries: on the model backend the lab reports that
 * this plugin needs --backend cuda on a GPU. Built by CMake (with CUDA) as
 * build/release/plugin/libsumlab_example_cuda_plugin.so; by hand:
 *   nvcc -shared -Xcompiler -fPIC -O2 --fmad=false -arch=sm_90 -I plugin plugin/example/block_sum.cu -o libblock_sum.so
 * Measured: sumlab study determinism --backend cuda --kernels none --plugin ./libblock_sum.so:sumlab_example_block_sum
 *           sumlab bench --quick --plugin ./libblock_sum.so:sumlab_example_block_sum */
#include <cuda_runtime.h>

#include <stdio.h>

#include "sumlab_plugin.h"

static const char* const labels[] = {"block=128,atomic", "block=256,atomic", "block=256,two_pass"};
static const unsigned block_sizes[] = {128, 256, 256};
static const int two_pass[] = {0, 0, 1};
#define CONFIG_COUNT (sizeof labels / sizeof labels[0])
#define MAX_GRID 1024

static size_t grid_for(size_t config, size_t n) {
  const size_t blocks = (n + block_sizes[config] - 1) / block_sizes[config];
  return blocks < MAX_GRID ? blocks : MAX_GRID;
}

/* Thread-then-tree: the block's sum of x[blockIdx.x*blockDim.x + t + k*stride]; valid in thread 0. */
template <class T> __device__ T block_tree_sum(const T* x, size_t n, size_t stride) {
  extern __shared__ __align__(16) unsigned char shared_bytes[];
  T* partial = reinterpret_cast<T*>(shared_bytes);
  T s = 0;
  for (size_t i = size_t(blockIdx.x) * blockDim.x + threadIdx.x; i < n; i += stride) s += x[i];
  partial[threadIdx.x] = s;
  __syncthreads();
  for (unsigned half = blockDim.x / 2; half > 0; half /= 2) {
    if (threadIdx.x < half) partial[threadIdx.x] += partial[threadIdx.x + half];
    __syncthreads();
  }
  return partial[0];
}

template <class T> __global__ void block_sum_atomic(const T* d_x, size_t n, T* d_result) {
  const T s = block_tree_sum(d_x, n, size_t(gridDim.x) * blockDim.x);
  if (threadIdx.x == 0) atomicAdd(d_result, s);
}

/* Pass 1 writes block partials; pass 2 (one block) sums them: out[blockIdx.x] in both cases. */
template <class T> __global__ void block_sum_partials(const T* d_x, size_t n, T* d_out) {
  const T s = block_tree_sum(d_x, n, size_t(gridDim.x) * blockDim.x);
  if (threadIdx.x == 0) d_out[blockIdx.x] = s;
}

template <class T>
static int block_sum(size_t config, const T* d_x, size_t n, T* d_result, void* d_scratch, size_t scratch_bytes,
                     void* stream, char* error, size_t error_size) {
  if (config >= CONFIG_COUNT) {
    snprintf(error, error_size, "configuration %zu does not exist (there are %zu)", config, (size_t)CONFIG_COUNT);
    return 1;
  }
  cudaStream_t s = static_cast<cudaStream_t>(stream);
  const unsigned block = block_sizes[config];
  const size_t grid = grid_for(config, n), shared = block * sizeof(T);
  if (n == 0 || !two_pass[config]) { /* +0: the sum of nothing, and the atomic sum's start */
    const cudaError_t e = cudaMemsetAsync(d_result, 0, sizeof(T), s);
    if (e != cudaSuccess) {
      snprintf(error, error_size, "clearing the result failed: %s", cudaGetErrorString(e));
      return 1;
    }
  }
  if (n == 0) return 0;
  if (!two_pass[config]) {
    block_sum_atomic<T><<<unsigned(grid), block, shared, s>>>(d_x, n, d_result);
  } else {
    if (scratch_bytes < grid * sizeof(T)) {
      snprintf(error, error_size, "two_pass needs %zu bytes of scratch, got %zu", grid * sizeof(T), scratch_bytes);
      return 1;
    }
    T* partials = static_cast<T*>(d_scratch);
    block_sum_partials<T><<<unsigned(grid), block, shared, s>>>(d_x, n, partials);
    block_sum_partials<T><<<1, block, shared, s>>>(partials, grid, d_result);
  }
  /* A launch's configuration error shows at once; errors while running, at the lab's synchronization. */
  const cudaError_t e = cudaGetLastError();
  if (e != cudaSuccess) {
    snprintf(error, error_size, "launch failed: %s", cudaGetErrorString(e));
    return 1;
  }
  return 0;
}

static int block_sum_float(void* context, size_t config, const float* d_x, size_t n, float* d_result,
                           void* d_scratch, size_t scratch_bytes, void* stream, char* error, size_t error_size) {
  (void)context;
  return block_sum(config, d_x, n, d_result, d_scratch, scratch_bytes, stream, error, error_size);
}
static int block_sum_double(void* context, size_t config, const double* d_x, size_t n, double* d_result,
                            void* d_scratch, size_t scratch_bytes, void* stream, char* error, size_t error_size) {
  (void)context;
  return block_sum(config, d_x, n, d_result, d_scratch, scratch_bytes, stream, error, error_size);
}

/* two_pass keeps one partial per block; atomic needs nothing. */
static int block_sum_scratch(void* context, size_t config, size_t n, int dtype, size_t* bytes, char* error,
                             size_t error_size) {
  (void)context;
  if (config >= CONFIG_COUNT) {
    snprintf(error, error_size, "configuration %zu does not exist (there are %zu)", config, (size_t)CONFIG_COUNT);
    return 1;
  }
  *bytes = two_pass[config] ? grid_for(config, n) * (dtype == SUMLAB_FLOAT32 ? sizeof(float) : sizeof(double)) : 0;
  return 0;
}

static const sumlab_plugin descriptor = {
    SUMLAB_PLUGIN_ABI_VERSION, "block_sum", SUMLAB_NOT_DETERMINISTIC, CONFIG_COUNT, labels,
    NULL, NULL, NULL, /* no host entries, no context */
    block_sum_float, block_sum_double, block_sum_scratch};

SUMLAB_PLUGIN_EXPORT const sumlab_plugin* sumlab_example_block_sum(void) { return &descriptor; }
