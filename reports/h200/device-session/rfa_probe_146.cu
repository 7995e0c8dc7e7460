// CUB's gpu_to_gpu (RFA) sum on data whose values use their whole significand, against the exact sum
// (integer arithmetic on the host): x_i = s_i m_i 2^-(p + e_i), m_i < 2^p (p = 24 or 53), e_i in
// [0, E), s_i = +-1 (signed) or +1; both pure functions of the index.
#include <cub/device/device_reduce.cuh>
#include <cuda/execution.determinism.h>
#include <cuda/std/execution>
#include <cuda/stream_ref>
#include <cstdio>
#include <cstdint>
#include <cmath>
#define CK(x) do { cudaError_t e_ = (x); if (e_ != cudaSuccess) { printf("CUDA %s at %d\n", cudaGetErrorString(e_), __LINE__); exit(1);} } while (0)
__host__ __device__ inline std::uint64_t mix(std::uint64_t z) {
  z += 0x9e3779b97f4a7c15ull; z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull; z = (z ^ (z >> 27)) * 0x94d049bb133111ebull; return z ^ (z >> 31);
}
template <class T> struct P;
template <> struct P<float> { static constexpr int p = 24; };
template <> struct P<double> { static constexpr int p = 53; };
// the integer k_i = s_i m_i 2^(E-1-e_i), x_i = k_i 2^-(p+E-1)
template <class T> __host__ __device__ inline __int128 k_of(std::uint64_t i, int E, bool sign) {
  const std::uint64_t h = mix(i), g = mix(i ^ 0x5555555555555555ull);
  const std::uint64_t m = h >> (64 - P<T>::p);
  const int e = int(g % unsigned(E));
  __int128 k = (__int128)m << (E - 1 - e);
  return sign && (g >> 63) ? -k : k;
}
template <class T> __global__ void fill(T* x, std::int64_t n, int E, bool sign) {
  for (std::int64_t i = blockIdx.x * (std::int64_t)blockDim.x + threadIdx.x; i < n; i += (std::int64_t)gridDim.x * blockDim.x)
    x[i] = T(std::ldexp((double)k_of<T>(i, E, sign), -(P<T>::p + E - 1)));
}
template <class T> T rfa(const T* d, std::int64_t n, T* out) {
  const auto env = ::cuda::std::execution::env{::cuda::execution::require(::cuda::execution::determinism::gpu_to_gpu),
                                               ::cuda::stream_ref{cudaStream_t{}}};
  CK(cub::DeviceReduce::Sum(d, out, n, env));
  T h; CK(cudaMemcpy(&h, out, sizeof(T), cudaMemcpyDeviceToHost));
  return h;
}
template <class T> T cub_default(const T* d, std::int64_t n, T* out) {
  void* tmp = nullptr; size_t bytes = 0;
  CK(cub::DeviceReduce::Sum(tmp, bytes, d, out, n)); CK(cudaMalloc(&tmp, bytes));
  CK(cub::DeviceReduce::Sum(tmp, bytes, d, out, n)); CK(cudaFree(tmp));
  T h; CK(cudaMemcpy(&h, out, sizeof(T), cudaMemcpyDeviceToHost));
  return h;
}
template <class T> void probe(const char* name, int logmax, int E, bool sign) {
  const std::int64_t nmax = std::int64_t(1) << logmax;
  T* d; T* out; CK(cudaMalloc(&d, nmax * sizeof(T))); CK(cudaMalloc(&out, sizeof(T)));
  fill<<<8192, 256>>>(d, nmax, E, sign); CK(cudaGetLastError()); CK(cudaDeviceSynchronize());
  __int128 s = 0; int next = 20;
  printf("%s E=%d %s: n, rfa, exact (rounded from the integer sum), cub default, rfa rel error\n", name, E, sign ? "signed" : "positive");
  for (std::int64_t i = 0; i < nmax; ++i) {
    s += k_of<T>(std::uint64_t(i), E, sign);
    if (i + 1 == (std::int64_t(1) << next)) {
      const std::int64_t n = i + 1;
      // the exact sum rounded to T: via long double's 64 bits, then T (the sum has far fewer nonzero bits than that fails for? report both)
      const bool neg = s < 0; unsigned __int128 a = neg ? -(unsigned __int128)s : (unsigned __int128)s;
      long double hi = (long double)(std::uint64_t)(a >> 64) * 18446744073709551616.0L + (long double)(std::uint64_t)a;
      const long double exact = std::ldexp(neg ? -hi : hi, -(P<T>::p + E - 1));
      const T r = rfa<T>(d, n, out), c = cub_default<T>(d, n, out);
      printf("  2^%d %.17g %.17Lg %.17g %.3g%s\n", next, double(r), exact, double(c),
             double(std::fabs((long double)r - exact) / std::fabs(exact)), std::fabs((long double)r - exact) > std::fabs(exact) * 1e-6 ? "  WRONG" : "");
      ++next;
    }
  }
  CK(cudaFree(d)); CK(cudaFree(out));
}
int main() {
  int dev; cudaDeviceProp p; CK(cudaGetDevice(&dev)); CK(cudaGetDeviceProperties(&p, dev));
  printf("%s, %d SMs, CCCL %d\n", p.name, p.multiProcessorCount, CCCL_VERSION);
  probe<float>("float32", 31, 1, false);
  probe<float>("float32", 31, 12, true);
  probe<double>("float64", 31, 12, true);
}
