// Where does CUB's gpu_to_gpu (RFA) sum go wrong? All-ones input: the exact sum is n.
#include <cub/device/device_reduce.cuh>
#include <cuda/execution.determinism.h>
#include <cuda/std/execution>
#include <cuda/stream_ref>
#include <cstdio>
#include <cstdint>
#include <cmath>
#define CK(x) do { cudaError_t e_ = (x); if (e_ != cudaSuccess) { printf("CUDA %s at %d\n", cudaGetErrorString(e_), __LINE__); exit(1);} } while (0)
template <class T> __global__ void fill(T* x, std::int64_t n, int mode) {
  for (std::int64_t i = blockIdx.x * (std::int64_t)blockDim.x + threadIdx.x; i < n; i += (std::int64_t)gridDim.x * blockDim.x)
    x[i] = mode == 0 ? T(1) : T((i * 2654435761ull % 1024) / 1024.0);  // mode 1: multiples of 1/1024, exact sums
}
template <class T, class N> double rfa(const T* d, N n, T* out) {
  const auto env = ::cuda::std::execution::env{::cuda::execution::require(::cuda::execution::determinism::gpu_to_gpu),
                                               ::cuda::stream_ref{cudaStream_t{}}};
  CK(cub::DeviceReduce::Sum(d, out, n, env));
  T h; CK(cudaMemcpy(&h, out, sizeof(T), cudaMemcpyDeviceToHost));
  return double(h);
}
template <class T> double exact_mode1(std::int64_t n) {  // sum of (i*2654435761 mod 2^32 mod 1024)/1024, in long double-free integer math
  unsigned long long s = 0;
  for (std::int64_t i = 0; i < n; ++i) s += (unsigned long long)(i * 2654435761ull % 1024);
  return double(s) / 1024.0;
}
template <class T> void probe(const char* name, std::int64_t nmax) {
  T* d; T* out; CK(cudaMalloc(&d, nmax * sizeof(T))); CK(cudaMalloc(&out, sizeof(T)));
  fill<<<4096, 256>>>(d, nmax, 0); CK(cudaGetLastError()); CK(cudaDeviceSynchronize());
  auto bad = [&](std::int64_t n) { return rfa<T>(d, n, out) != double(T(double(n))); };
  printf("%s ones: n, rfa(int64 n), rfa(int n), expected\n", name);
  for (int k = 20; (std::int64_t(1) << k) <= nmax; ++k) {
    std::int64_t n = std::int64_t(1) << k;
    double a = rfa<T>(d, n, out), b = n < INT32_MAX ? rfa<T>(d, int(n), out) : NAN;
    printf("  2^%d %.17g %.17g %.17g %s\n", k, a, b, double(T(double(n))), a != double(T(double(n))) ? "WRONG" : "ok");
  }
  // bisect the first wrong n between the last right and the first wrong power of two
  std::int64_t lo = 0, hi = 0;
  for (int k = 20; (std::int64_t(1) << k) <= nmax; ++k) { std::int64_t n = std::int64_t(1) << k; if (bad(n)) { hi = n; break; } lo = n; }
  if (hi) {
    while (hi - lo > 1) { std::int64_t m = lo + (hi - lo) / 2; if (bad(m)) hi = m; else lo = m; }
    printf("%s ones: last right n = %lld, first wrong n = %lld (rfa %.17g)\n", name, (long long)lo, (long long)hi, rfa<T>(d, hi, out));
    int wrong = 0; for (std::int64_t n = hi; n < hi + 64; ++n) wrong += bad(n);
    printf("%s ones: %d of the 64 n from the first wrong one are wrong\n", name, wrong);
  }
  fill<<<4096, 256>>>(d, nmax, 1); CK(cudaGetLastError()); CK(cudaDeviceSynchronize());
  for (int k : {26, 28, 29, 30, 31}) {
    std::int64_t n = std::int64_t(1) << k; if (n > nmax) break;
    double e = exact_mode1<T>(n), a = rfa<T>(d, n, out);
    printf("%s 1/1024 grid 2^%d: rfa %.17g exact %.17g rel %.3g\n", name, k, a, e, std::fabs(a - e) / e);
  }
  CK(cudaFree(d)); CK(cudaFree(out));
}
int main() {
  int dev; cudaDeviceProp p; CK(cudaGetDevice(&dev)); CK(cudaGetDeviceProperties(&p, dev));
  printf("%s, %d SMs, CCCL %d\n", p.name, p.multiProcessorCount, CCCL_VERSION);
  probe<float>("float32", std::int64_t(1) << 31);
  probe<double>("float64", std::int64_t(1) << 31);
}
