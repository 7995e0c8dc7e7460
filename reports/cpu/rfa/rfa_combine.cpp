// CUB's reproducible accumulator (cub/detail/rfa.cuh, CCCL 3.5.0) run on the host, as
// DeterministicDeviceReduceKernel runs it: each thread sets the accumulator's range from a tile of
// 13 values, deposits them, and renormalises after every endurance() deposits; the block's
// reduction then adds two threads' accumulators as they end their loops. Each sum is compared with
// the exact sum (__float128, exact here: a few thousand values of one type), as |error| / sum|x| (so
// that a sum that cancels is not called wrong for the accumulator's own small error), in 200 trials
// per length K, for one thread, for the combine as the kernel does it, and for the combine of the
// two accumulators each renormalised first. See docs/performance-notes.md (CUB's reproducible
// reduction); run.sh builds and runs it.
#include <cub/detail/rfa.cuh>

#include <quadmath.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <random>
#include <type_traits>
#include <vector>

using cub::detail::rfa::ReproducibleFloatingAccumulator;
using cub::detail::rfa::get_shared_bin_array;

template <class T> using Acc = ReproducibleFloatingAccumulator<T>;

// The bins the kernel's threads initialise in shared memory (a static array here).
template <class T> void init_bins() {
  constexpr int len = Acc<T>::max_index + Acc<T>::max_fold;
  T* bins = get_shared_bin_array<T, len>();
  for (int i = 0; i < len; ++i) bins[i] = Acc<T>::initialize_bin(i);
}

// One thread's loop of the kernel over its values, tiles of `ipt`.
template <class T> Acc<T> thread_loop(const std::vector<T>& x, int ipt) {
  Acc<T> a{};
  int count = 0;
  for (std::size_t i = 0; i < x.size(); i += ipt) {
    std::vector<T> tile(ipt, T(0));
    T mx = 0;
    for (int j = 0; j < ipt; ++j) {
      if (i + j < x.size()) tile[j] = x[i + j];
      mx = std::fmax(std::fabs(tile[j]), mx);
    }
    a.set_max_val(mx);
    for (T v : tile) {
      a.unsafe_add(v);
      if (++count >= a.endurance()) {
        a.renorm();
        count = 0;
      }
    }
  }
  return a;
}

// Whether adding b's primaries to a's, as binned_add does at equal bin indices, reaches the next
// binade of a primary's bin (the bin is 1.5 2^e: 2^(e+1) is 4/3 of it).
template <class T> bool reaches_next_binade(const Acc<T>& a, const Acc<T>& b) {
  if (a.binned_index() != b.binned_index()) return false;
  constexpr int len = Acc<T>::max_index + Acc<T>::max_fold;
  const T* bins = get_shared_bin_array<T, len>();
  for (int i = 0; i < 3; ++i) {
    const T bin = bins[i + a.binned_index()];
    if (std::fabs(a.data[i] + (b.data[i] - bin)) >= std::fabs(bin) * T(4) / T(3)) return true;
  }
  return false;
}

template <class T> double scaled_error(const Acc<T>& a, __float128 exact, __float128 sum_abs) {
  return static_cast<double>(fabsq(static_cast<__float128>(a.conv_to_fp()) - exact) / sum_abs);
}

template <class T> void run(const char* dtype, bool normal) {
  init_bins<T>();
  std::mt19937_64 g(7);
  std::uniform_real_distribution<T> u(0, 1);
  std::normal_distribution<T> nd(0, 1);
  // Far above the accumulator's own error (3 folds) on these sums, far below a wrong one's.
  const double tol = std::is_same_v<T, float> ? 1e-6 : 1e-14;
  const int trials = 200;
  int reached_wrong = 0, reached_right = 0, stayed_wrong = 0, stayed_right = 0;
  for (int k : {100, 256, 511, 513, 600, 800, 1000, 1500, 2047, 2049, 2600, 3000, 4000, 5000, 8000}) {
    int one = 0, two = 0, renormalised = 0;
    double worst = 0;
    for (int t = 0; t < trials; ++t) {
      std::vector<T> x(k), y(k);
      __float128 ex = 0, ey = 0, ax = 0, ay = 0;
      for (int i = 0; i < k; ++i) {
        x[i] = normal ? nd(g) : u(g);
        y[i] = normal ? nd(g) : u(g);
        ex += x[i];
        ey += y[i];
        ax += std::fabs(x[i]);
        ay += std::fabs(y[i]);
      }
      const Acc<T> a = thread_loop(x, 13), b = thread_loop(y, 13);
      Acc<T> c = a;
      c += b;  // the block reduction's combine of two threads' accumulators
      Acc<T> ra = a, rb = b;
      ra.renorm();
      rb.renorm();
      ra += rb;
      one += scaled_error(a, ex, ax) > tol;
      two += scaled_error(c, ex + ey, ax + ay) > tol;
      renormalised += scaled_error(ra, ex + ey, ax + ay) > tol;
      worst = std::max(worst, scaled_error(c, ex + ey, ax + ay));
      const bool wrong = scaled_error(c, ex + ey, ax + ay) > tol;
      (reaches_next_binade(a, b) ? (wrong ? reached_wrong : reached_right) : (wrong ? stayed_wrong : stayed_right))++;
    }
    std::printf("%s %-7s K=%5d (%4d deposits since the last renorm): wrong %3d/%d one thread, %3d/%d combined "
                "(worst |error|/sum|x| %.2g), %3d/%d combined after renorm()\n",
                dtype, normal ? "normal" : "uniform", k, k % Acc<T>{}.endurance(), one, trials, two, trials, worst,
                renormalised, trials);
  }
  std::printf("%s %-7s every length: %d combines whose primary sum reached the next binade, %d of them wrong; %d "
              "that did not, %d of them wrong\n",
              dtype, normal ? "normal" : "uniform", reached_wrong + reached_right, reached_wrong,
              stayed_wrong + stayed_right, stayed_wrong);
}

int main() {
  run<float>("float32", false);
  run<float>("float32", true);
  run<double>("float64", false);
  run<double>("float64", true);
}
