// What gpu_fixed_point's second launch costs with the scale from the data, and what hides it.
//   nvcc -O3 -std=c++20 -arch=sm_90 --fmad=false -I<overrides> -I<repo> pass2_cost.cu -o pass2_cost
// Pass 1: gpu_exact's kernel with range tracking (Range = true), at 132x256 or 264x256.
// Pass 2 variants. <overrides> holds 71a39bf's two kernel headers with pass2_cost_overrides.diff
// applied: a trigger in pass 1, and griddepcontrol.wait in fixed_point_kernel before it reads the
// range (a no-op without a programmatic launch):
//   none        pass 1 alone (also Range = false: exact0)
//   full        fixed_point_kernel at pass 1's shape with its shared memory (main today)
//   full_pdl1   the same as a programmatic dependent, pass 1 triggering at its start (run 38)
//   full_pdl2   ... pass 1 triggering after its loads, before its block reduction
//   full132     fixed_point_kernel at 132 x 256
//   dec         a 1 x 32 kernel that only decides (the floor of any second launch)
//   dec_pdl1    the same as a programmatic dependent, trigger at the start
//   dec_pdl2    ... trigger after the loads
// float32 uniform (every element on the grid: pass 2 returns) and float64 uniform with 53-bit
// mantissas (off the grid: pass 2 quantises), 2^24, 2^26, 2^28.
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
namespace om = sumlab::order_model;

#define CK(x)                                                                                   \
  do {                                                                                          \
    cudaError_t e_ = (x);                                                                       \
    if (e_ != cudaSuccess) {                                                                    \
      std::fprintf(stderr, "%s:%d %s: %s\n", __FILE__, __LINE__, #x, cudaGetErrorString(e_)); \
      std::exit(1);                                                                             \
    }                                                                                           \
  } while (0)

template <class T> struct Input {
  T* base = nullptr;
  long long n = 0, stride = 0;
  int copies = 1;
  const T* at(int l) const { return base + (long long)(l % copies) * stride; }
};

template <class T, class Launch> double time_us(const Input<T>& in, Launch&& launch) {
  cudaEvent_t a, b;
  CK(cudaEventCreate(&a));
  CK(cudaEventCreate(&b));
  launch(in.at(0), 0);
  CK(cudaGetLastError());
  CK(cudaDeviceSynchronize());
  const int launches = 200;
  std::vector<double> us;
  for (int sample = 0; sample < 9; ++sample) {
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

template <class T> __global__ void fill_kernel(T* p, long long count) {
  for (long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x; i < count; i += (long long)gridDim.x * blockDim.x) {
    unsigned long long h = (unsigned long long)(i + 1) * 0x9e3779b97f4a7c15ull;
    h ^= h >> 29;
    h *= 0xbf58476d1ce4e5b9ull;
    h ^= h >> 32;
    if constexpr (sizeof(T) == 4) p[i] = (float)((h >> 40) & 0xffffff) / 16777216.0f;  // on the grid 2^-24
    else p[i] = (double)(h >> 11) * 0x1p-53;                                             // 53 bits: off the grid
  }
}

// The decision alone: what pass 2 does when every element is on the grid.
template <class T> __global__ void decide_kernel(FixedBuffers out) {
  using Bits = typename sumlab::FloatTraits<T>::Bits;
  asm volatile("griddepcontrol.wait;" ::: "memory");
  if (threadIdx.x != 0) return;
  for (int w = 0; w < fixed_set_words; ++w) out.sets[(out.parity ^ 1u) * fixed_set_words + w] = 0;
  const om::FixedOnePass d = om::fixed_one_pass<T>(static_cast<Bits>(__ldcg(&out.range[0])),
                                                   static_cast<Bits>(__ldcg(&out.range[1])), decode_grid(__ldcg(&out.range[2])));
  out.scale[0] = d.k;
  out.scale[1] = d.on_grid ? 1 : 0;
}

template <class K, class... Args> void launch_pdl(K kernel, int grid, int block, size_t smem, Args... args) {
  cudaLaunchConfig_t config{};
  config.gridDim = dim3(grid);
  config.blockDim = dim3(block);
  config.dynamicSmemBytes = smem;
  cudaLaunchAttribute pdl{};
  pdl.id = cudaLaunchAttributeProgrammaticStreamSerialization;
  pdl.val.programmaticStreamSerializationAllowed = 1;
  config.attrs = &pdl;
  config.numAttrs = 1;
  CK(cudaLaunchKernelEx(&config, kernel, args...));
}

template <class T> void run(int log2n, int sms, long long l2) {
  const char* tn = sizeof(T) == 4 ? "float32" : "float64";
  Input<T> in;
  in.n = 1ll << log2n;
  in.stride = in.n;
  in.copies = (int)std::max<long long>(1, (4 * l2 + in.n * (long long)sizeof(T) - 1) / (in.n * (long long)sizeof(T)));
  CK(cudaMalloc(&in.base, (size_t)in.stride * in.copies * sizeof(T)));
  fill_kernel<T><<<1024, 256>>>(in.base, in.stride * in.copies);
  CK(cudaGetLastError());
  CK(cudaDeviceSynchronize());
  unsigned long long* esets = nullptr;
  unsigned long long* fsets = nullptr;
  long long* scale = nullptr;
  CK(cudaMalloc(&esets, 2 * exact_set_words<T> * sizeof(unsigned long long)));
  CK(cudaMalloc(&fsets, 2 * fixed_set_words * sizeof(unsigned long long)));
  CK(cudaMalloc(&scale, 2 * sizeof(long long)));
  void* cub_tmp = nullptr;
  size_t cub_bytes = 0;
  T* d_out = reinterpret_cast<T*>(scale);
  CK(cub::DeviceReduce::Sum(nullptr, cub_bytes, in.base, d_out, in.n));
  CK(cudaMalloc(&cub_tmp, cub_bytes));
  const double cub = time_us(in, [&](const T* p, int) { CK(cub::DeviceReduce::Sum(cub_tmp, cub_bytes, p, d_out, in.n)); });
  std::printf("%s 2^%d cub %.2f us\n", tn, log2n, cub);
  const size_t smem = bulk_smem_bytes(256);
  CK(cudaFuncSetAttribute(exact_limbs_kernel<T, true, 256, 2>, cudaFuncAttributeMaxDynamicSharedMemorySize, (int)smem));
  CK(cudaFuncSetAttribute(exact_limbs_kernel<T, false, 256, 2>, cudaFuncAttributeMaxDynamicSharedMemorySize, (int)smem));
  CK(cudaFuncSetAttribute(fixed_point_kernel<T, 512>, cudaFuncAttributeMaxDynamicSharedMemorySize, (int)smem));
  for (int grid : {sms, 2 * sms}) {
    std::vector<unsigned long long> reference;  // the first variant's fixed set, to compare the others with
    auto variant = [&](const char* name, bool range, int trigger, int pass2) {
      // pass2: 0 none, 1 full plain, 2 full PDL, 3 full at 132 x 256 plain, 4 decide plain, 5 decide PDL
      auto one = [&](const T* p, int l) {
        ExactBuffers e;
        e.sets = esets;
        e.parity = l & 1;
        e.trigger = trigger;
        if (range) exact_limbs_kernel<T, true, 256, 2><<<grid, 256, smem>>>(p, in.n, e);
        else exact_limbs_kernel<T, false, 256, 2><<<grid, 256, smem>>>(p, in.n, e);
        CK(cudaGetLastError());
        FixedBuffers f;
        f.range = esets + e.parity * exact_set_words<T> + exact_range_at<T>;
        f.scale = scale;
        f.sets = fsets;
        f.parity = l & 1;
        if (pass2 == 1) fixed_point_kernel<T, 512><<<grid, 256, smem>>>(p, in.n, f);
        else if (pass2 == 2) launch_pdl(fixed_point_kernel<T, 512>, grid, 256, smem, p, (std::int64_t)in.n, f);
        else if (pass2 == 3) fixed_point_kernel<T, 512><<<sms, 256, smem>>>(p, in.n, f);
        else if (pass2 == 4) decide_kernel<T><<<1, 32>>>(f);
        else if (pass2 == 5) launch_pdl(decide_kernel<T>, 1, 32, 0, f);
        CK(cudaGetLastError());
      };
      // Reset both sets of each, then one sum on a fixed input, checked against the first variant.
      std::vector<unsigned long long> w(2 * exact_set_words<T>);
      for (int i = 0; i < (int)w.size(); ++i) w[i] = exact_reset_word<T>(i % exact_set_words<T>);
      CK(cudaMemcpy(esets, w.data(), w.size() * 8, cudaMemcpyHostToDevice));
      CK(cudaMemset(fsets, 0, 2 * fixed_set_words * 8));
      CK(cudaMemset(scale, 0, 16));
      one(in.at(0), 0);
      CK(cudaDeviceSynchronize());
      std::vector<unsigned long long> got(fixed_set_words + exact_set_words<T>);
      CK(cudaMemcpy(got.data(), fsets, fixed_set_words * 8, cudaMemcpyDeviceToHost));
      CK(cudaMemcpy(got.data() + fixed_set_words, esets, exact_set_words<T> * 8, cudaMemcpyDeviceToHost));
      long long sc[2];
      CK(cudaMemcpy(sc, scale, 16, cudaMemcpyDeviceToHost));
      const char* check = "";
      if (pass2 == 1 && trigger == 0) reference = got;
      else if (pass2 != 0 && !reference.empty()) {
        bool same = true;
        for (int i = 0; i < fixed_set_words; ++i) same &= got[i] == reference[i];
        if (sc[1] == 1 || pass2 >= 4) same = true;  // on the grid: pass 2 adds nothing
        check = same ? "same" : "DIFFERENT";
      }
      const double us = time_us(in, one);
      std::printf("%s 2^%d %dx256 %-10s %7.2f us  cub/this %.3f  k=%lld on_grid=%lld %s\n", tn, log2n, grid, name, us, cub / us,
                  pass2 ? sc[0] : -1, pass2 ? sc[1] : -1, check);
    };
    variant("full", true, 0, 1);
    variant("exact0", false, 0, 0);
    variant("exact1", true, 0, 0);
    variant("full_pdl1", true, 1, 2);
    variant("full_pdl2", true, 2, 2);
    variant("full132", true, 0, 3);
    if (sizeof(T) == 4) {
      variant("dec", true, 0, 4);
      variant("dec_pdl1", true, 1, 5);
      variant("dec_pdl2", true, 2, 5);
    }
    variant("full", true, 0, 1);  // again: drift
  }
  CK(cudaFree(cub_tmp));
  CK(cudaFree(esets));
  CK(cudaFree(fsets));
  CK(cudaFree(scale));
  CK(cudaFree(in.base));
}

int main() {
  cudaDeviceProp prop{};
  CK(cudaGetDeviceProperties(&prop, 0));
  std::printf("# %s, %d SMs, L2 %d B\n", prop.name, prop.multiProcessorCount, prop.l2CacheSize);
  for (int log2n : {24, 26, 28}) run<float>(log2n, prop.multiProcessorCount, prop.l2CacheSize);
  for (int log2n : {24, 26}) run<double>(log2n, prop.multiProcessorCount, prop.l2CacheSize);
  return 0;
}
