#pragma once
// The dot family: s = sum_i x_i * y_i over two float32 vectors, the reduction inside every matrix
// product. Everything the lab knows about it is here: its subjects (the registry), the arithmetic
// its GPU kernels and their models share, the exact reference and the bound.
//
// Subjects (dot_subjects()):
//   cpu_serial_dot  s = (..((0 + x0*y0) + x1*y1) + ..), every product rounded to float on its own:
//                   the reference BLAS sdot loop.
//   cpu_exact_dot   the exact dot correctly rounded (the reference itself, below).
//   gpu_dot         gpu_two_pass's order (core/gpu_kernel.cpp) over the products: each thread
//                   chains acc = acc + fl(x_i * y_i) over the elements its mapping gives it, then
//                   the warp and block stages and a second kernel over the block partials. Built
//                   with --fmad=false (the model with -ffp-contract=off), so product and add round
//                   separately on both sides.
//   gpu_dot_fma     the same tree with the chain's step acc = fma(x_i, y_i, acc): one rounding
//                   per element instead of two, as a compiler that contracts (nvcc's default, and
//                   cuBLAS) computes it. The same order; other bits.
// The two GPU kernels are the shuffle family's kernels instantiated over DotOp / DotFmaOp below
// (gpu/dot.cu), and their models are the shuffle model over the same Ops: one Op compiled for
// kernel and model, as for the sums. Their launch shape is gpu_two_pass's, validated by its rules.
//
// Exact reference (exact_dot): a product of two floats has at most 48 significant bits and an
// exponent in [-298, 256], so it is exact in double; the exact dot is then the exact sum of n
// doubles, held by Superaccumulator<double> (core/exact_sum.hpp). One rounding to float follows,
// through round-to-odd at 53 bits: RN_24(RO_53(s)) = RN_24(s) whenever 53 >= 24 + 2 (Boldo and
// Melquiond, "Emulation of FMA and correctly rounded sums: proved algorithms using rounding to
// odd", IEEE TC 2008, Thm. 1). RO_53 is RN_53 moved one ulp towards s when s is not representable
// and RN_53's last bit is even; the remainder s - RN_53(s) is exact in the accumulator.
//
// Bound (dot_bound): every product passes through one rounding (its own, or its fma's) and then at
// most d additions, d = gpu_two_pass's tree depth for the shape (serial: n - 1), so
//   |s_hat - s| <= gamma_{d+1} * sum |x_i y_i| + n * 2^-150 * (1 + gamma_d)
// (Higham, Accuracy and Stability of Numerical Algorithms, 2nd ed., Sec. 3.1, eq. (3.5) for any
// order of the additions; the last term covers products or fmas rounded in the subnormal range,
// each off by at most 2^-150 absolutely and carried by additions that grow it by at most
// 1 + gamma_d, Sec. 2.1's model with underflow; dot_bound evaluates n 2^-150 (1 + gamma_d), which
// is below n 2^-149 while d u < 1/2).
#include <bit>
#include <cmath>
#include <cstdint>
#include <limits>
#include <optional>
#include <span>
#include <string_view>
#include <vector>

#include "core/determinism.hpp"
#include "core/error_bound.hpp"
#include "core/exact_sum.hpp"
#include "core/gpu_kernel.hpp"
#include "core/hd.hpp"
#include "core/launch_shape.hpp"
#include "core/order_model/cross_block.hpp"
#include "core/order_model/rounding_depth.hpp"

namespace sumlab::dot {

// One element of the family's input: the kernels read x and y interleaved, one 8-byte load each.
struct Pair {
  float x, y;
};

// The chain steps. add: product and sum rounded separately; DotFmaOp::add: one fused rounding.
struct DotOp {
  using In = Pair;
  using Acc = float;
  using Out = float;
  SUMLAB_HD static Acc identity() { return 0.0f; }
  SUMLAB_HD static Acc add(Acc a, In p) {
    const float prod = p.x * p.y;
    return a + prod;
  }
  SUMLAB_HD static Acc combine(Acc a, Acc b) { return a + b; }
  SUMLAB_HD static Out finish(Acc a) { return a; }
};

struct DotFmaOp {
  using In = Pair;
  using Acc = float;
  using Out = float;
  SUMLAB_HD static Acc identity() { return 0.0f; }
  SUMLAB_HD static Acc add(Acc a, In p) { return fmaf(p.x, p.y, a); }
  SUMLAB_HD static Acc combine(Acc a, Acc b) { return a + b; }
  SUMLAB_HD static Out finish(Acc a) { return a; }
};

enum class Subject { cpu_serial_dot, cpu_exact_dot, gpu_dot, gpu_dot_fma };

struct SubjectInfo {
  Subject subject;
  std::string_view name;
  std::string_view summary;
  bool gpu;                  // a kernel (cuda or its model); otherwise a CPU algorithm
  Determinism determinism;   // declared
};

inline constexpr SubjectInfo kSubjects[] = {
    {Subject::cpu_serial_dot, "cpu_serial_dot", "left to right, each product rounded (reference BLAS sdot)", false,
     Determinism::shape_invariant},
    {Subject::cpu_exact_dot, "cpu_exact_dot", "the exact dot, correctly rounded", false, Determinism::shape_invariant},
    {Subject::gpu_dot, "gpu_dot", "gpu_two_pass's tree over fl(x_i * y_i)", true, Determinism::run_to_run},
    {Subject::gpu_dot_fma, "gpu_dot_fma", "gpu_two_pass's tree, chains of fma(x_i, y_i, acc)", true,
     Determinism::run_to_run},
};
inline std::span<const SubjectInfo> dot_subjects() { return kSubjects; }
inline const SubjectInfo& info(Subject s) { return kSubjects[static_cast<int>(s)]; }

// The element i of a family input from two value streams.
inline std::vector<Pair> interleave(std::span<const float> x, std::span<const float> y) {
  std::vector<Pair> p(x.size());
  for (std::size_t i = 0; i < x.size(); ++i) p[i] = Pair{x[i], y[i]};
  return p;
}

// The shapes a GPU subject runs: gpu_two_pass's default for the GPU and others nobody tuned for
// (small and odd grids and blocks, every mapping, vector widths, both block stages).
inline std::vector<LaunchShape> dot_shapes(int sm_count = 132) {
  const LaunchShape d = default_shape(GpuKernel::two_pass, sm_count);
  std::vector<LaunchShape> out{d};
  auto with = [&](auto&& edit) {
    LaunchShape s = d;
    edit(s);
    out.push_back(s);
  };
  with([](LaunchShape& s) { s.grid = 1; s.block = 32; });
  with([](LaunchShape& s) { s.grid = 7; s.block = 96; s.vector = 1; });
  with([](LaunchShape& s) { s.grid = 33; s.block = 1024; s.vector = 2; s.mapping = Mapping::contiguous; });
  with([](LaunchShape& s) { s.grid = 132; s.block = 64; s.vector = 4; s.block_stage = BlockStage::smem_tree; });
  return out;
}

// The GPU subjects' order on the CPU: the bits gpu/dot.cu gives for the same shape.
template <class Op> float model_dot(std::span<const Pair> p, const LaunchShape& s) {
  const std::vector<float> partials = order_model::block_partials<Op>(p, s);
  return order_model::reduce_partials<Op>(std::span<const float>(partials), s.block, s.warp, s.block_stage);
}
inline float model_dot(Subject k, std::span<const Pair> p, const LaunchShape& s) {
  return k == Subject::gpu_dot_fma ? model_dot<DotFmaOp>(p, s) : model_dot<DotOp>(p, s);
}

inline float serial_dot(std::span<const Pair> p) {
  float s = 0.0f;
  for (const Pair& e : p) s = DotOp::add(s, e);
  return s;
}

// The exact dot: held exactly, correctly rounded to float (round-to-odd at 53 bits, then to nearest
// at 24: see above), and sum |x_i y_i| rounded up (for the bound).
struct ExactDot {
  Superaccumulator<double> sum;
  float value = 0;
  double sum_abs = 0;
  bool input_special = false;  // an x_i or y_i is NaN or +-Inf
  // |v - s|, rounded to double once (v - s is exact in the accumulator).
  double error_of(float v) const {
    Superaccumulator<double> d = sum;
    d.add(-static_cast<double>(v));
    return std::fabs(d.round());
  }
};
inline ExactDot exact_dot(std::span<const Pair> p) {
  ExactDot e;
  Superaccumulator<double> a;
  for (const Pair& q : p) {
    const double prod = static_cast<double>(q.x) * static_cast<double>(q.y);  // exact (see above)
    e.sum.add(prod);
    a.add(std::fabs(prod));
    e.input_special |= !std::isfinite(q.x) || !std::isfinite(q.y);
  }
  double r = e.sum.round();
  if (std::isfinite(r)) {
    Superaccumulator<double> rest = e.sum;
    rest.add(-r);
    const double rem = rest.round();
    if (rem != 0 && (std::bit_cast<std::uint64_t>(r) & 1u) == 0)
      r = std::nextafter(r, rem > 0 ? std::numeric_limits<double>::infinity() : -std::numeric_limits<double>::infinity());
  }
  e.value = static_cast<float>(r);
  e.sum_abs = std::nextafter(a.round(), std::numeric_limits<double>::infinity());  // RN is within half an ulp
  return e;
}

// |s| <= sum |x_i y_i| stands in for |s| in the correctly rounded subject's bound.
inline double dot_bound(Subject k, const LaunchShape& s, std::uint64_t n, double sum_abs) {
  BoundInput in;
  in.n = n;
  in.sum_abs = sum_abs;
  in.abs_sum = sum_abs;
  if (k == Subject::cpu_exact_dot) return bound::correctly_rounded(format_of<float>(), in);
  const std::uint64_t d =
      k == Subject::cpu_serial_dot ? (n > 0 ? n - 1 : 0) : order_model::tree_depth(GpuKernel::two_pass, s, n).roundings();
  // The subnormal products' term: n 2^-150, grown by at most 1 + gamma_d through the additions.
  const double b = bound::tree(format_of<float>(), d + 1, in);
  const double g = bound::gamma(format_of<float>(), static_cast<double>(d));
  if (!std::isfinite(b) || !std::isfinite(g)) return std::numeric_limits<double>::infinity();
  return (b + static_cast<double>(n) * 0x1p-150 * (1 + g)) * (1 + 0x1p-40);  // up past its own rounding
}

}  // namespace sumlab::dot
