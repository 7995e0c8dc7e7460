// Where the bulk kernels' per-launch cost goes (H200, float32). Built and run by run 34's script:
//   nvcc -O3 -std=c++20 -arch=sm_90 --fmad=false -I<repo> launch_cost.cu -o launch_cost
//   ./launch_cost            timings: median us per launch over back-to-back launches, inputs
//                            rotated over copies that together pass 4x the L2
//   ./launch_cost timeline   one launch of the loader with per-block clocks
//   ./launch_cost modes      timings, with the quantisation variants (q_*) too, and 3 blocks an SM
//   ./launch_cost one K      3 launches of kernel K (fixed, q_group, q_fmul_only, tiles_end) at 2^26,
//                            132 x 512: for Nsight Compute
// Kernels, each timed at n = 2^24, 2^26, 2^28 (runs 34-37: 2^22, 2^24, 2^26) and at the shapes
// 132x512, 264x256 and 396x256:
//   read        the bench's read roof (16-byte loads, grid stride, a folded word stored never)
//   tiles       gpu/thread/bulk_loads.cuh's loader, the same fold per group, nothing else
//   tiles_half  the loader with half its stages asked for at the start, the rest once the first
//               tile has landed (are the grid's first requests too many at once?)
//   tiles_end   tiles + the fixed-point kernel's end: a 128-bit block sum, 4 atomics
//   fixed       gpu_fixed_point's kernel with the caller's k (gpu/device/kernels)
//   exact       gpu_exact's kernel
//   q_*         tiles_end with the group's fold replaced by parts of the fixed-point quantisation
//               (tiles_kernel's Mode 2 to 5)
//   cub         cub::DeviceReduce::Sum (its temporary storage allocated once)
#include <cub/device/device_reduce.cuh>
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include "gpu/device/kernels/exact_kernel.cuh"
#include "gpu/device/kernels/fixed_point_kernels.cuh"
#include "gpu/thread/bulk_loads.cuh"

using namespace sumlab::gpu::detail;

#define CK(x)                                                                          \
  do {                                                                                 \
    cudaError_t e_ = (x);                                                              \
    if (e_ != cudaSuccess) {                                                           \
      std::fprintf(stderr, "%s:%d %s: %s\n", __FILE__, __LINE__, #x, cudaGetErrorString(e_)); \
      std::exit(1);                                                                    \
    }                                                                                  \
  } while (0)

__device__ __forceinline__ unsigned long long gtimer() {
  unsigned long long t;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
  return t;
}
__device__ __forceinline__ unsigned smid() {
  unsigned s;
  asm volatile("mov.u32 %0, %%smid;" : "=r"(s));
  return s;
}

__global__ void read_kernel(const float* __restrict__ d_in, long long n, unsigned long long* sink) {
  const long long threads = (long long)gridDim.x * blockDim.x, g = (long long)blockIdx.x * blockDim.x + threadIdx.x;
  unsigned fold = 0;
  const float4* v = reinterpret_cast<const float4*>(d_in);
  for (long long i = g; i < n / 4; i += threads) {
    const float4 x = v[i];
    fold ^= __float_as_uint(x.x) ^ __float_as_uint(x.y) ^ __float_as_uint(x.z) ^ __float_as_uint(x.w);
  }
  if (fold == 0x9e3779b9u) *sink = fold;
}

// The loader of gpu/thread/bulk_loads.cuh (whole tiles, round robin, proxy fence before each
// refill), with `first` stages asked for at the start and the rest after the first tile landed,
// and optional per-block clocks: rec[4 * block + 0..3] = globaltimer at entry, at the first tile's
// arrival, at the last tile's arrival, at the end; clk[3 * block + 0..2] = clock64 differences
// (first arrival - entry, last arrival - entry, end - entry), smid in rec's 5th word.
// Mode: 0 the fold only; 1 the fold and the end (a 128-bit sum of the words); 2 to 5 the end and a
// quantisation of each group instead of the fold, by
//   2 fixed_quantise_group (the fixed-point kernel's group step as of the commit built; in runs
//     34-42: y = x 2^k, q = RNE(y) to int64, the check
//     |y - T(q)| = 0 back in floating point, max |y|),
//   3 the same without the conversion back (no check: timing only),
//   4 q = RNE(y) to int64 and its 128-bit sum only,
//   5 y = x 2^k summed in floating point (no conversion at all).
template <int Mode>
__global__ void __launch_bounds__(512) tiles_kernel(const float* __restrict__ d_in, long long n, int first,
                                                     unsigned long long* sink, unsigned long long* rec,
                                                     float two_k = 0x1p30f, unsigned one = 1) {
  constexpr int End = Mode >= 1;
  constexpr int per_thread = bulk_group<float>;
  extern __shared__ __align__(128) unsigned char bulk_stage[];
  __shared__ __align__(8) unsigned long long full[bulk_max_stages];
  __shared__ unsigned long long s_lo[32], s_hi[32];
  const unsigned long long t0 = rec ? gtimer() : 0;
  const long long c0 = rec ? clock64() : 0;
  unsigned long long t1 = 0, t2 = 0;
  long long c1 = 0, c2 = 0;
  const int stages = bulk_stages(static_cast<int>(blockDim.x));
  const long long per_tile = (long long)blockDim.x * per_thread;
  const long long tiles = n / per_tile;
  const unsigned tile_bytes = blockDim.x * bulk_group_bytes;
  auto fill = [&](int s, long long j) {
    if (j < tiles) bulk::load(bulk_stage + s * tile_bytes, d_in + j * per_tile, tile_bytes, &full[s]);
  };
  if (threadIdx.x == 0) {
    for (int s = 0; s < stages; ++s) bulk::init(&full[s]);
    bulk::fence_init();
    for (int s = 0; s < first; ++s) fill(s, blockIdx.x + (long long)s * gridDim.x);
  }
  __syncthreads();
  unsigned fold = 0;
  unsigned __int128 sum = 0;
  int s = 0;
  unsigned parity = 0;
  bool first_tile = true;
  for (long long j = blockIdx.x; j < tiles; j += gridDim.x) {
    bulk::wait(&full[s], parity);
    if (rec && threadIdx.x == 0) {
      t2 = gtimer();
      c2 = clock64();
      if (first_tile) {
        t1 = t2;
        c1 = c2;
      }
    }
    if (first_tile && first < stages && threadIdx.x == 0)
      for (int r = first; r < stages; ++r) fill(r, blockIdx.x + (long long)r * gridDim.x);
    first_tile = false;
    const uint4* chunks = reinterpret_cast<const uint4*>(bulk_stage + s * tile_bytes);
    uint4 x[per_thread / 4];
#pragma unroll
    for (int c = 0; c < per_thread / 4; ++c) x[c] = chunks[c * blockDim.x + threadIdx.x];
    __syncthreads();
    if (threadIdx.x == 0) {
      asm volatile("fence.proxy.async.shared::cta;" ::: "memory");
      fill(s, j + (long long)stages * gridDim.x);
    }
    if constexpr (Mode <= 1) {
#pragma unroll
      for (int c = 0; c < per_thread / 4; ++c) {
        fold ^= x[c].x ^ x[c].y ^ x[c].z ^ x[c].w;
        if (End) sum += x[c].x + x[c].y;
      }
    } else {
      float v[per_thread];
      memcpy(v, x, sizeof v);
      if constexpr (Mode == 2) {
        float largest = 0;
        if (!sumlab::order_model::fixed_quantise_group<float>(v, two_k, sum, largest))
          fold ^= 1u;
        if (largest == 0.0f) fold ^= 2u;
      } else if constexpr (Mode == 3 || Mode == 4) {
        float big = 0;
        unsigned long long l = 0;
        long long h = 0;
#pragma unroll
        for (int i = 0; i < per_thread; ++i) {
          const float y = v[i] * two_k;
          const long long q = __float2ll_rn(y);
          if (Mode == 3) big = fmaxf(big, fabsf(y));
          asm("mad.wide.u32 %0, %1, %2, %0;" : "+l"(l) : "r"(static_cast<unsigned>(q)), "r"(one));
          asm("mad.wide.s32 %0, %1, %2, %0;" : "+l"(h) : "r"(static_cast<int>(q >> 32)), "r"(static_cast<int>(one)));
        }
        if (Mode == 3 && big >= 0x1p63f) fold ^= 1u;
        sum += (static_cast<unsigned __int128>(static_cast<__int128>(h)) << 32) + l;
      } else {
        float f = 0;
#pragma unroll
        for (int i = 0; i < per_thread; ++i) f += v[i] * two_k;
        sum += static_cast<unsigned long long>(__float_as_uint(f));
      }
    }
    if (++s == stages) {
      s = 0;
      parity ^= 1u;
    }
  }
  if (End) {  // the fixed-point kernel's end: the block's 128-bit sum, four 32-bit digits by atomics
    const unsigned __int128 block = block_sum_u128(sum, s_lo, s_hi);
    if (threadIdx.x == 0)
      for (int d = 0; d < 4; ++d) {
        const unsigned long long digit = static_cast<unsigned long long>(block >> (32 * d)) & 0xffffffffull;
        if (digit != 0) atomicAdd(&sink[1 + d], digit);
      }
  }
  if (fold == 0x9e3779b9u) *sink = fold;
  if (rec && threadIdx.x == 0) {
    rec[5 * blockIdx.x + 0] = t0;
    rec[5 * blockIdx.x + 1] = t1;
    rec[5 * blockIdx.x + 2] = t2;
    rec[5 * blockIdx.x + 3] = gtimer();
    rec[5 * blockIdx.x + 4] = smid() | (static_cast<unsigned long long>(clock64() - c0) << 32);
    rec[5 * gridDim.x + 3 * blockIdx.x + 0] = c1 - c0;
    rec[5 * gridDim.x + 3 * blockIdx.x + 1] = c2 - c0;
  }
}

struct Input {
  float* base = nullptr;
  long long n = 0, stride = 0;
  int copies = 1;
  const float* at(int l) const { return base + (long long)(l % copies) * stride; }
};

template <class Launch> double time_us(const Input& in, Launch&& launch) {
  cudaEvent_t a, b;
  CK(cudaEventCreate(&a));
  CK(cudaEventCreate(&b));
  launch(in.at(0), 0);  // warm-up
  CK(cudaGetLastError());
  CK(cudaDeviceSynchronize());
  const int launches = 200;
  std::vector<double> us;
  for (int sample = 0; sample < 7; ++sample) {
    CK(cudaEventRecord(a));
    for (int l = 0; l < launches; ++l) launch(in.at(l), l);
    CK(cudaEventRecord(b));
    CK(cudaEventSynchronize(b));
    CK(cudaGetLastError());
    float ms = 0;
    CK(cudaEventElapsedTime(&ms, a, b));
    us.push_back(1000.0 * ms / launches);
  }
  std::sort(us.begin(), us.end());
  CK(cudaEventDestroy(a));
  CK(cudaEventDestroy(b));
  return us[us.size() / 2];
}

__global__ void fill_kernel(float* p, long long count) {
  for (long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x; i < count; i += (long long)gridDim.x * blockDim.x) {
    unsigned long long h = (unsigned long long)i * 0x9e3779b97f4a7c15ull;
    h ^= h >> 29;
    p[i] = (float)((h >> 40) & 0xffffff) / 16777216.0f;  // uniform [0, 1)
  }
}

int main(int argc, char** argv) {
  const bool timeline = argc > 1 && std::string(argv[1]) == "timeline";
  const bool mode_rows = argc > 1 && std::string(argv[1]) == "modes";
  cudaDeviceProp prop{};
  CK(cudaGetDeviceProperties(&prop, 0));
  const int sms = prop.multiProcessorCount;
  int khz = 0;
  CK(cudaDeviceGetAttribute(&khz, cudaDevAttrClockRate, 0));
  unsigned long long* sink = nullptr;
  CK(cudaMalloc(&sink, 64 * sizeof(unsigned long long)));
  CK(cudaMemset(sink, 0, 64 * sizeof(unsigned long long)));
  const size_t smem256 = bulk_smem_bytes(256), smem512 = bulk_smem_bytes(512);
  CK(cudaFuncSetAttribute(tiles_kernel<0>, cudaFuncAttributeMaxDynamicSharedMemorySize, (int)smem512));
  CK(cudaFuncSetAttribute(tiles_kernel<1>, cudaFuncAttributeMaxDynamicSharedMemorySize, (int)smem512));
  CK(cudaFuncSetAttribute(tiles_kernel<2>, cudaFuncAttributeMaxDynamicSharedMemorySize, (int)smem512));
  CK(cudaFuncSetAttribute(tiles_kernel<3>, cudaFuncAttributeMaxDynamicSharedMemorySize, (int)smem512));
  CK(cudaFuncSetAttribute(tiles_kernel<4>, cudaFuncAttributeMaxDynamicSharedMemorySize, (int)smem512));
  CK(cudaFuncSetAttribute(tiles_kernel<5>, cudaFuncAttributeMaxDynamicSharedMemorySize, (int)smem512));
  CK(cudaFuncSetAttribute(fixed_point_kernel<float, 512>, cudaFuncAttributeMaxDynamicSharedMemorySize, (int)smem512));
  CK(cudaFuncSetAttribute(exact_limbs_kernel<float, false, 256, 2>, cudaFuncAttributeMaxDynamicSharedMemorySize, (int)smem256));
  CK(cudaFuncSetAttribute(exact_limbs_kernel<float, false, 512, 1>, cudaFuncAttributeMaxDynamicSharedMemorySize, (int)smem512));
  unsigned long long* sets = nullptr;
  CK(cudaMalloc(&sets, 2 * 128 * sizeof(unsigned long long)));
  CK(cudaMemset(sets, 0, 2 * 128 * sizeof(unsigned long long)));
  const long long l2 = prop.l2CacheSize;
  if (argc > 1 && std::string(argv[1]) == "one") {  // one kernel, 3 launches at 2^26, 132 x 512 (for ncu)
    const std::string which = argc > 2 ? argv[2] : "fixed";
    Input in;
    in.n = 1ll << 26;
    in.stride = in.n;
    CK(cudaMalloc(&in.base, (size_t)in.n * sizeof(float)));
    fill_kernel<<<1024, 256>>>(in.base, in.n);
    const int grid = sms, block = 512;
    const size_t smem = bulk_smem_bytes(block);
    for (int l = 0; l < 3; ++l) {
      if (which == "tiles_end") tiles_kernel<1><<<grid, block, smem>>>(in.base, in.n, bulk_stages(block), sink, nullptr);
      else if (which == "q_fmul_only") tiles_kernel<5><<<grid, block, smem>>>(in.base, in.n, bulk_stages(block), sink, nullptr);
      else if (which == "q_group") tiles_kernel<2><<<grid, block, smem>>>(in.base, in.n, bulk_stages(block), sink, nullptr);
      else {
        FixedBuffers f;
        f.k = 30;
        f.sets = sets;
        f.parity = l & 1;
        fixed_point_kernel<float, 512><<<grid, block, smem>>>(in.base, in.n, f);
      }
      CK(cudaGetLastError());
    }
    CK(cudaDeviceSynchronize());
    std::printf("one %s done\n", which.c_str());
    return 0;
  }
  for (int log2n : {24, 26, 28}) {
    Input in;
    in.n = 1ll << log2n;
    in.stride = in.n;
    in.copies = (int)std::max<long long>(1, (4 * l2 + in.n * 4 - 1) / (in.n * 4));
    CK(cudaMalloc(&in.base, (size_t)in.stride * in.copies * sizeof(float)));
    fill_kernel<<<1024, 256>>>(in.base, in.stride * in.copies);
    CK(cudaDeviceSynchronize());
    if (timeline) {
      for (int per_sm : {1, 2}) {
        const int block = per_sm == 1 ? 512 : 256, grid = sms * per_sm;
        const size_t smem = bulk_smem_bytes(block);
        for (int first : {bulk_stages(block), 1}) {
          unsigned long long* d_rec = nullptr;
          CK(cudaMalloc(&d_rec, (size_t)grid * 8 * sizeof(unsigned long long)));
          for (int rep = 0; rep < 3; ++rep) {  // the third launch is recorded, after two warm-ups
            tiles_kernel<0><<<grid, block, smem>>>(in.at(rep), in.n, first, sink, rep == 2 ? d_rec : nullptr);
            CK(cudaGetLastError());
          }
          CK(cudaDeviceSynchronize());
          std::vector<unsigned long long> rec((size_t)grid * 8);
          CK(cudaMemcpy(rec.data(), d_rec, rec.size() * sizeof(unsigned long long), cudaMemcpyDeviceToHost));
          CK(cudaFree(d_rec));
          unsigned long long t_min = ~0ull, t_end = 0;
          for (int b = 0; b < grid; ++b) {
            t_min = std::min(t_min, rec[5 * b]);
            t_end = std::max(t_end, rec[5 * b + 3]);
          }
          std::vector<double> start, firstg, lastg, endg, c_first, c_last, c_end;
          for (int b = 0; b < grid; ++b) {
            start.push_back((rec[5 * b] - t_min) / 1000.0);
            firstg.push_back((rec[5 * b + 1] - t_min) / 1000.0);
            lastg.push_back((rec[5 * b + 2] - t_min) / 1000.0);
            endg.push_back((rec[5 * b + 3] - t_min) / 1000.0);
            c_first.push_back(rec[5 * grid + 3 * b] / (khz / 1000.0));  // kHz
            c_last.push_back(rec[5 * grid + 3 * b + 1] / (khz / 1000.0));
            c_end.push_back((rec[5 * b + 4] >> 32) / (khz / 1000.0));
          }
          auto q = [](std::vector<double> v, double p) {
            std::sort(v.begin(), v.end());
            return v[std::min(v.size() - 1, (size_t)(p * (v.size() - 1) + 0.5))];
          };
          std::printf("timeline 2^%d %dx%d first=%d: globaltimer us from the earliest entry (min/median/max)\n", log2n, grid,
                      block, first);
          std::printf("  entry       %7.3f %7.3f %7.3f\n", q(start, 0), q(start, 0.5), q(start, 1));
          std::printf("  first tile  %7.3f %7.3f %7.3f\n", q(firstg, 0), q(firstg, 0.5), q(firstg, 1));
          std::printf("  last tile   %7.3f %7.3f %7.3f\n", q(lastg, 0), q(lastg, 0.5), q(lastg, 1));
          std::printf("  end         %7.3f %7.3f %7.3f\n", q(endg, 0), q(endg, 0.5), q(endg, 1));
          std::printf("  clock64 us from the block's entry: first tile %7.3f %7.3f %7.3f, last tile %7.3f %7.3f %7.3f, end %7.3f %7.3f %7.3f\n",
                      q(c_first, 0), q(c_first, 0.5), q(c_first, 1), q(c_last, 0), q(c_last, 0.5), q(c_last, 1), q(c_end, 0),
                      q(c_end, 0.5), q(c_end, 1));
          std::printf("  globaltimer span %.3f us\n", (t_end - t_min) / 1000.0);
        }
      }
      CK(cudaFree(in.base));
      continue;
    }
    void* cub_tmp = nullptr;
    size_t cub_bytes = 0;
    float* d_out = reinterpret_cast<float*>(sink + 32);
    CK(cub::DeviceReduce::Sum(nullptr, cub_bytes, in.base, d_out, in.n));
    CK(cudaMalloc(&cub_tmp, cub_bytes));
    const double cub = time_us(in, [&](const float* p, int) { cub::DeviceReduce::Sum(cub_tmp, cub_bytes, p, d_out, in.n); });
    std::printf("2^%d cub %.2f us\n", log2n, cub);
    for (int per_sm : {1, 2, 3}) {
      const int block = per_sm == 1 ? 512 : 256, grid = sms * per_sm;
      const size_t smem = bulk_smem_bytes(block);
      const int stages = bulk_stages(block);
      auto row = [&](const char* name, double us) {
        std::printf("2^%d %dx%d %-11s %7.2f us  cub/this %.3f\n", log2n, grid, block, name, us, cub / us);
      };
      row("read", time_us(in, [&](const float* p, int) { read_kernel<<<grid, block>>>(p, in.n, sink); }));
      row("tiles", time_us(in, [&](const float* p, int) { tiles_kernel<0><<<grid, block, smem>>>(p, in.n, stages, sink, nullptr); }));
      row("tiles_half",
          time_us(in, [&](const float* p, int) { tiles_kernel<0><<<grid, block, smem>>>(p, in.n, stages / 2, sink, nullptr); }));
      row("tiles_end", time_us(in, [&](const float* p, int) { tiles_kernel<1><<<grid, block, smem>>>(p, in.n, stages, sink, nullptr); }));
      if (mode_rows) {
        row("q_group", time_us(in, [&](const float* p, int) { tiles_kernel<2><<<grid, block, smem>>>(p, in.n, stages, sink, nullptr); }));
        row("q_no_back", time_us(in, [&](const float* p, int) { tiles_kernel<3><<<grid, block, smem>>>(p, in.n, stages, sink, nullptr); }));
        row("q_f2i_only", time_us(in, [&](const float* p, int) { tiles_kernel<4><<<grid, block, smem>>>(p, in.n, stages, sink, nullptr); }));
        row("q_fmul_only", time_us(in, [&](const float* p, int) { tiles_kernel<5><<<grid, block, smem>>>(p, in.n, stages, sink, nullptr); }));
      }
      row("fixed", time_us(in, [&](const float* p, int l) {
            FixedBuffers f;
            f.k = 30;
            f.sets = sets;
            f.parity = l & 1;
            fixed_point_kernel<float, 512><<<grid, block, smem>>>(p, in.n, f);
          }));
      if (per_sm == 3) continue;  // gpu_exact's 256-thread build holds 2 blocks an SM
      row("exact", time_us(in, [&](const float* p, int l) {
            ExactBuffers e;
            e.sets = sets;
            e.parity = l & 1;
            if (block == 256) exact_limbs_kernel<float, false, 256, 2><<<grid, block, smem>>>(p, in.n, e);
            else exact_limbs_kernel<float, false, 512, 1><<<grid, block, smem>>>(p, in.n, e);
          }));
    }
    CK(cudaFree(cub_tmp));
    CK(cudaFree(in.base));
  }
  return 0;
}
