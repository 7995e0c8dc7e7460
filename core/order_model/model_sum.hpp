#pragma once
// The CPU order model's entry point: for a GPU kernel, a launch shape and an input, the bits the
// kernel returns, computed on the CPU by performing the kernel's floating-point operations in the
// kernel's order (the stages live in thread_chain.hpp, warp_tree.hpp, block_tree.hpp,
// cross_block.hpp and classic_trees.hpp; the arithmetic in reduce_ops.hpp is shared with gpu/).
//
// Reproduced bit for bit, for every valid shape and every n (0, 1, and sizes that are not multiples
// of the block or the vector width): every kernel whose GpuKernelInfo says `modelled`. Special
// cases:
//   gpu_atomic   the value for ONE arrival order (launch order); model_block_partials +
//                sample_atomic_results give the distribution over sampled orders;
//   gpu_fixed_point, gpu_exact  order-independent by construction; the model is the CPU algorithm
//                (core/fixed_point_sum.hpp, core/exact_sum.hpp) the kernels' host merge shares;
//   gpu_cub, gpu_thrust  not modelled (their order is the library's): no value;
//   gpu_racy_tree  no value: smem_race.hpp reports the read-before-write instead.
#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "core/gpu_kernel.hpp"
#include "core/launch_shape.hpp"

namespace sumlab {

template <class T> struct ModelResult {
  bool has_value = false;
  T value{};
  // gpu_double_acc: the double total before the final rounding to float (compared bitwise too);
  // otherwise the value widened.
  double accumulator = 0;
  std::string note;   // what the value stands for, or why there is none
  std::string error;  // non-empty: the shape is invalid for this kernel (validate_shape's text)
};

// T is the input element type (float for gpu_double_acc); opt: core/gpu_kernel.hpp's KernelOptions.
template <class T>
ModelResult<T> model_sum(GpuKernel k, const LaunchShape& shape, std::span<const T> x, const KernelOptions& opt = {});

// The first pass's block partials of the plain shuffle kernels (gpu_two_pass, gpu_atomic,
// gpu_last_block share them): the operands of gpu_atomic's final atomicAdd chain.
template <class T>
std::vector<T> model_block_partials(const LaunchShape& shape, std::span<const T> x);

}  // namespace sumlab
