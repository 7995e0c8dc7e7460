// Experiment (not part of the build): how gpu_fixed_point's given-k hot loop should get its input.
// One file, no project headers, so that a lent H200 compiles and runs it in seconds:
//   nvcc -O3 -std=c++17 -arch=sm_90 --fmad=false -o loads loads.cu && ./loads
// Every variant computes sum_i RNE(x_i 2^62) as a wrapping 128-bit integer over the same uniform
// floats (multiples of 2^-24 in [0, 1): every y_i is an integer, the fast path's case) and must give
// the same total (the low words compare: the harness adds the threads' high words without the
// carries out of the low words); the times are medians of CUDA-event timings over rotated inputs
// (larger than L2), beside CUB DeviceReduce::Sum, measured in the same run.
//   reg    the loop committed before this experiment: a thread loads 4 float4 (64 bytes) per
//          group into registers, grid-stride, and quantises the group (F2I.S64, I2F.S64 back for
//          the check, mad.wide)
//   bulk   a block's tiles arrive in shared memory by cp.async.bulk (the Hopper TMA engine, one
//          thread issues a whole tile), STAGES tiles in flight; every thread quantises 16 floats
//          of each tile from shared memory; a barrier per tile before its stage is refilled
//   read   the same two loaders with a plain float sum (the loader's own ceiling)
#include <cub/cub.cuh>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <vector>

#define CK(x)                                                                                      \
  do {                                                                                             \
    cudaError_t e_ = (x);                                                                          \
    if (e_ != cudaSuccess) {                                                                       \
      std::fprintf(stderr, "%s:%d %s: %s\n", __FILE__, __LINE__, #x, cudaGetErrorString(e_));      \
      std::exit(1);                                                                                \
    }                                                                                              \
  } while (0)

struct Out {
  unsigned long long* lo;  // wrapping sums of the threads' 128-bit totals, low and high words
  unsigned long long* hi;
  unsigned long long* slow;  // groups the fast path refused (none expected)
  float* fsum;
};

__device__ __forceinline__ unsigned long long warp_sum(unsigned long long v) {
  for (int o = 16; o > 0; o >>= 1) v += __shfl_down_sync(0xffffffffu, v, o);
  return v;
}

// The fast path for 16 floats (order_model::fixed_quantise_group's device branch at the time).
__device__ __forceinline__ bool quantise16(const float (&x)[16], float two_k, unsigned one, unsigned long long& lo,
                                           long long& hi) {
  float err = 0, big = 0;
  unsigned long long l = 0;
  long long h = 0;
#pragma unroll
  for (int i = 0; i < 16; ++i) {
    const float y = x[i] * two_k;
    const long long q = __float2ll_rn(y);
    err += fabsf(y - static_cast<float>(q));
    big = fmaxf(big, fabsf(y));
    asm("mad.wide.u32 %0, %1, %2, %0;" : "+l"(l) : "r"(static_cast<unsigned>(q)), "r"(one));
    asm("mad.wide.s32 %0, %1, %2, %0;" : "+l"(h) : "r"(static_cast<int>(q >> 32)), "r"(static_cast<int>(one)));
  }
  if (!(err == 0.0f && big < 0x1p63f)) return false;
  lo += l;
  hi += h;
  return true;
}

template <bool Read> struct Acc {
  unsigned __int128 sum = 0;
  unsigned long long slow = 0;
  float f = 0;
  __device__ __forceinline__ void group(const float (&x)[16], float two_k, unsigned one) {
    if constexpr (Read) {
#pragma unroll
      for (int i = 0; i < 16; ++i) f += x[i];
    } else {
      unsigned long long lo = 0;
      long long hi = 0;
      if (quantise16(x, two_k, one, lo, hi)) sum += (static_cast<unsigned __int128>(static_cast<__int128>(hi)) << 32) + lo;
      else ++slow;
    }
  }
  __device__ __forceinline__ void finish(Out out) {
    const unsigned long long lo = warp_sum(static_cast<unsigned long long>(sum));
    const unsigned long long hi = warp_sum(static_cast<unsigned long long>(sum >> 64));
    const unsigned long long s = warp_sum(slow);
    float ff = f;
    for (int o = 16; o > 0; o >>= 1) ff += __shfl_down_sync(0xffffffffu, ff, o);
    if ((threadIdx.x & 31u) == 0) {
      atomicAdd(out.lo, lo);
      atomicAdd(out.hi, hi);
      if (s) atomicAdd(out.slow, s);
      atomicAdd(out.fsum, ff);
    }
  }
};

// reg: the loader committed then (gpu/thread/thread_chain.cuh, grid-stride, 4 float4 ahead).
template <bool Read, int MaxThreads>
__global__ void __launch_bounds__(MaxThreads) reg_kernel(const float* __restrict__ in, long long n, float two_k, unsigned one, Out out) {
  Acc<Read> a;
  const float4* v = reinterpret_cast<const float4*>(in);
  const long long nvec = n / 4, threads = static_cast<long long>(gridDim.x) * blockDim.x;
  long long j = static_cast<long long>(blockIdx.x) * blockDim.x + threadIdx.x;
  for (; j + 3 * threads < nvec; j += 4 * threads) {
    float4 w[4];
#pragma unroll
    for (int u = 0; u < 4; ++u) w[u] = v[j + u * threads];
    float x[16];
#pragma unroll
    for (int u = 0; u < 4; ++u) {
      x[4 * u] = w[u].x;
      x[4 * u + 1] = w[u].y;
      x[4 * u + 2] = w[u].z;
      x[4 * u + 3] = w[u].w;
    }
    a.group(x, two_k, one);
  }
  for (; j < nvec; j += threads) {
    const float4 w = v[j];
    float x[16] = {w.x, w.y, w.z, w.w};
    a.group(x, two_k, one);  // zeros add nothing
  }
  a.finish(out);
}

// bulk: tiles of Tile bytes, Stages in flight per block, refilled by thread 0 after a barrier.
__device__ __forceinline__ unsigned smem_addr(const void* p) { return static_cast<unsigned>(__cvta_generic_to_shared(p)); }
__device__ __forceinline__ void mbar_init(unsigned long long* bar, unsigned count) {
  asm volatile("mbarrier.init.shared::cta.b64 [%0], %1;" ::"r"(smem_addr(bar)), "r"(count) : "memory");
}
__device__ __forceinline__ void bulk_load(void* dst, const void* src, unsigned bytes, unsigned long long* bar) {
  asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;" ::"r"(smem_addr(bar)), "r"(bytes) : "memory");
  asm volatile("cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1], %2, [%3];" ::"r"(smem_addr(dst)),
               "l"(src), "r"(bytes), "r"(smem_addr(bar))
               : "memory");
}
__device__ __forceinline__ void mbar_wait(unsigned long long* bar, unsigned parity) {
  asm volatile(
      "{\n.reg .pred p;\nwait_%=:\n"
      "mbarrier.try_wait.parity.shared::cta.b64 p, [%0], %1;\n"
      "@!p bra wait_%=;\n}" ::"r"(smem_addr(bar)),
      "r"(parity)
      : "memory");
}

template <bool Read, int Threads, int Stages, int Tile>
__global__ void __launch_bounds__(Threads) bulk_kernel(const float* __restrict__ in, long long n, float two_k, unsigned one, Out out) {
  static_assert(Tile == Threads * 64, "each thread takes 16 floats of a tile");
  extern __shared__ __align__(128) unsigned char stage[];
  __shared__ __align__(8) unsigned long long full[Stages];
  Acc<Read> a;
  const long long per_tile = Tile / 4, tiles = n / per_tile;
  if (threadIdx.x == 0) {
    for (int s = 0; s < Stages; ++s) mbar_init(&full[s], 1);
    asm volatile("fence.mbarrier_init.release.cluster;" ::: "memory");
  }
  __syncthreads();
  if (threadIdx.x == 0)
    for (int s = 0; s < Stages; ++s) {
      const long long t = blockIdx.x + static_cast<long long>(s) * gridDim.x;
      if (t < tiles) bulk_load(stage + s * Tile, in + t * per_tile, Tile, &full[s]);
    }
  int s = 0;
  unsigned parity = 0;
  for (long long t = blockIdx.x; t < tiles; t += gridDim.x) {
    mbar_wait(&full[s], parity);
    const float4* v = reinterpret_cast<const float4*>(stage + s * Tile);
    float x[16];
#pragma unroll
    for (int u = 0; u < 4; ++u) {
      const float4 w = v[threadIdx.x + u * Threads];
      x[4 * u] = w.x;
      x[4 * u + 1] = w.y;
      x[4 * u + 2] = w.z;
      x[4 * u + 3] = w.w;
    }
    __syncthreads();  // every thread has its 16 floats of stage s: thread 0 may refill it
    if (threadIdx.x == 0) {
      const long long next = t + static_cast<long long>(Stages) * gridDim.x;
      if (next < tiles) {
        asm volatile("fence.proxy.async.shared::cta;" ::: "memory");
        bulk_load(stage + s * Tile, in + next * per_tile, Tile, &full[s]);
      }
    }
    a.group(x, two_k, one);
    if (++s == Stages) {
      s = 0;
      parity ^= 1u;
    }
  }
  // The elements after the last whole tile, by every thread of the grid.
  const long long threads = static_cast<long long>(gridDim.x) * Threads;
  for (long long i = tiles * per_tile + blockIdx.x * static_cast<long long>(Threads) + threadIdx.x; i < n; i += threads) {
    float x[16] = {in[i]};
    a.group(x, two_k, one);
  }
  a.finish(out);
}

__global__ void fill(float* x, long long n, unsigned seed) {
  for (long long i = blockIdx.x * static_cast<long long>(blockDim.x) + threadIdx.x; i < n; i += static_cast<long long>(gridDim.x) * blockDim.x) {
    unsigned long long z = (static_cast<unsigned long long>(i) + seed) * 0x9e3779b97f4a7c15ull;
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    z ^= z >> 31;
    x[i] = static_cast<float>(z >> 40) * 0x1p-24f;
  }
}

struct Result {
  double ms;
  unsigned long long lo, hi, slow;
  float f;
};

int main(int argc, char** argv) {
  const int samples = 9;
  const long long rotate_bytes = 1ll << 30;  // inputs rotated over at least 1 GiB (L2 is 50 MiB)
  const float two_k = 0x1p62f;
  unsigned long long* d_words;
  float* d_f;
  CK(cudaMalloc(&d_words, 3 * sizeof(unsigned long long)));
  CK(cudaMalloc(&d_f, sizeof(float)));
  Out out{d_words, d_words + 1, d_words + 2, d_f};
  int sms = 0;
  CK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0));
  std::printf("# log2n variant grid block ms gb_per_s ratio_cub lo hi slow fsum\n");
  for (int lg : {24, 26, 28, 30}) {
    const long long n = 1ll << lg;
    const int copies = static_cast<int>(std::max(1ll, rotate_bytes / (n * 4)));
    float* d_in;
    CK(cudaMalloc(&d_in, static_cast<size_t>(n) * 4 * copies));
    for (int c = 0; c < copies; ++c) fill<<<1024, 256>>>(d_in + c * n, n, 1);
    CK(cudaGetLastError());
    void* d_tmp = nullptr;
    size_t tmp_bytes = 0;
    CK(cub::DeviceReduce::Sum(d_tmp, tmp_bytes, d_in, d_f, n));
    CK(cudaMalloc(&d_tmp, tmp_bytes));
    cudaEvent_t e0, e1;
    CK(cudaEventCreate(&e0));
    CK(cudaEventCreate(&e1));
    const int launches = std::max(8, static_cast<int>(std::min(200ll, (16ll << 30) / (n * 4))));
    auto time = [&](auto launch) {
      std::vector<double> t;
      Result r{};
      for (int s = 0; s < samples + 1; ++s) {
        CK(cudaMemset(d_words, 0, 3 * sizeof(unsigned long long)));
        CK(cudaMemset(d_f, 0, sizeof(float)));
        launch(d_in);  // the result of one launch over copy 0
        CK(cudaGetLastError());
        CK(cudaDeviceSynchronize());
        unsigned long long w[3];
        CK(cudaMemcpy(w, d_words, sizeof w, cudaMemcpyDeviceToHost));
        CK(cudaMemcpy(&r.f, d_f, sizeof(float), cudaMemcpyDeviceToHost));
        r.lo = w[0];
        r.hi = w[1];
        r.slow = w[2];
        CK(cudaEventRecord(e0));
        for (int l = 0; l < launches; ++l) launch(d_in + (l % copies) * n);
        CK(cudaEventRecord(e1));
        CK(cudaEventSynchronize(e1));
        CK(cudaGetLastError());
        float ms;
        CK(cudaEventElapsedTime(&ms, e0, e1));
        if (s > 0) t.push_back(ms / launches);  // sample 0 is the warm-up
      }
      std::sort(t.begin(), t.end());
      r.ms = t[t.size() / 2];
      return r;
    };
    const Result cub_r = time([&](const float* p) { CK(cub::DeviceReduce::Sum(d_tmp, tmp_bytes, p, d_f, n)); });
    auto report = [&](const char* name, int grid, int block, const Result& r) {
      std::printf("%d %s %d %d %.5f %.1f %.4f %llu %llu %llu %.6g\n", lg, name, grid, block, r.ms, n * 4 / r.ms / 1e6,
                  cub_r.ms / r.ms, r.lo, r.hi, r.slow, r.f);
      std::fflush(stdout);
    };
    report("cub", 0, 0, cub_r);
    for (int per_sm : {1, 2, 4}) {
      const int grid = sms * per_sm;
      report("reg_q_512", grid, 512, time([&](const float* p) { reg_kernel<false, 512><<<grid, 512>>>(p, n, two_k, 1u, out); }));
      report("reg_read_512", grid, 512, time([&](const float* p) { reg_kernel<true, 512><<<grid, 512>>>(p, n, two_k, 1u, out); }));
      if (per_sm <= 2)
        report("reg_q_1024", grid, 1024, time([&](const float* p) { reg_kernel<false, 1024><<<grid, 1024>>>(p, n, two_k, 1u, out); }));
    }
    // bulk: Threads x 64-byte tiles, Stages of them per block.
    auto bulk = [&](auto kernel, const char* name, int threads, int stages, int tile, int per_sm) {
      const int smem = stages * tile;
      CK(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, smem));
      const int grid = sms * per_sm;
      report(name, grid, threads, time([&](const float* p) { kernel<<<grid, threads, smem>>>(p, n, two_k, 1u, out); }));
    };
    for (int per_sm : {1, 2, 3}) {
      bulk(bulk_kernel<false, 256, 4, 256 * 64>, "bulk_q_256x4", 256, 4, 256 * 64, per_sm * 2);
      bulk(bulk_kernel<false, 256, 6, 256 * 64>, "bulk_q_256x6", 256, 6, 256 * 64, per_sm * 2);
      bulk(bulk_kernel<false, 512, 2, 512 * 64>, "bulk_q_512x2", 512, 2, 512 * 64, per_sm);
      bulk(bulk_kernel<false, 512, 3, 512 * 64>, "bulk_q_512x3", 512, 3, 512 * 64, per_sm);
      bulk(bulk_kernel<true, 512, 3, 512 * 64>, "bulk_read_512x3", 512, 3, 512 * 64, per_sm);
      bulk(bulk_kernel<true, 256, 4, 256 * 64>, "bulk_read_256x4", 256, 4, 256 * 64, per_sm * 2);
    }
    bulk(bulk_kernel<false, 1024, 2, 1024 * 64>, "bulk_q_1024x2", 1024, 2, 1024 * 64, 1);
    bulk(bulk_kernel<false, 1024, 3, 1024 * 64>, "bulk_q_1024x3", 1024, 3, 1024 * 64, 1);
    CK(cudaFree(d_tmp));
    CK(cudaFree(d_in));
  }
  return 0;
}
