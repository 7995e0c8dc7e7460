#pragma once
// The registry of GPU summation kernels: name, one-line summary, order of operations, declared
// determinism, whether the CPU order model (core/order_model/) reproduces its bits, and which
// launch-shape fields it takes. The CLI, `sumlab verify`, the CUDA dispatch and the model all take
// their names and rules from here. Lives in core/ (no CUDA) so the model backend works everywhere.
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>

#include "core/determinism.hpp"
#include "core/error_bound.hpp"
#include "core/launch_shape.hpp"

namespace sumlab {

enum class GpuKernel {
  serial,          // one thread, left to right
  interleaved,     // Harris 1: interleaved addressing, divergent
  strided,         // Harris 2: strided indexing, bank conflicts
  sequential,      // Harris 3: sequential addressing
  first_add,       // Harris 4: first add during load
  warp_unrolled,   // Harris 5: last warp unrolled with __syncwarp
  unrolled,        // Harris 6: fully unrolled for a compile-time block size
  multi_add,       // Harris 7: many elements per thread
  two_pass,        // shuffles + grid-stride loop, second kernel over the block partials
  atomic,          // shuffles + grid-stride loop, atomicAdd of the block partials
  last_block,      // shuffles + grid-stride loop, last block done reduces the partials
  kahan,           // Kahan per thread, compensated pair combine through the trees
  double_acc,      // float input, double accumulator everywhere
  double_word,     // a double-word (hi + lo) accumulator through every stage
  fixed_point,     // integer accumulation of quantized values (core/fixed_point_sum.hpp)
  exact,           // correctly rounded: integer limbs, merged by core/exact_sum.hpp
  cub,             // cub::DeviceReduce::Sum (library peer)
  thrust,          // thrust::reduce (library peer)
  cub_gpu_to_gpu,  // cub::DeviceReduce::Sum under gpu_to_gpu determinism (library peer)
  racy_tree,       // sequential tree with its first barrier removed: exists for racecheck only
};

// Shape fields a kernel reads; the others are ignored (and canonicalize() resets them).
enum ShapeField : unsigned {
  field_grid = 1u << 0,
  field_block = 1u << 1,
  field_vector = 1u << 2,
  field_mapping = 1u << 3,
  field_warp = 1u << 4,
  field_block_stage = 1u << 5,
  field_cross = 1u << 6,
};

// Which theorem of core/error_bound.hpp bounds a kernel's error.
enum class BoundKind {
  tree,               // gamma_d S, d = the longest path of the kernel's tree for the shape
  atomic_tree,        // a tree ending in float atomicAdds, which flush subnormals (gpu_atomic)
  wide_tree,          // a tree in double, rounded once to float
  kahan_tree,         // Kahan chains and compensated combines
  fixed_point,        // quantisation plus one rounding
  correctly_rounded,  // half an ulp
  none,               // no value to bound (the racy diagnostic)
};

// How a kernel is built, which fixes its launcher (gpu/device/dispatch_*.cu), its CPU model and
// its tree depth. A new kernel of the shuffle family is its Op (core/order_model/reduce_ops.hpp,
// compiled for the kernel and the model alike) and its row here: the launcher, the model, the depth
// and the bound follow from the row.
enum class KernelFamily {
  serial,     // one thread, left to right
  classic,    // Harris 1-6 and the racy tree: one shared-memory tree per block, relaunched
  multi_add,  // Harris 7: grid-stride pairs, tree, one more pass
  shuffle,    // thread chain -> warp stage -> block stage -> cross-block stage, over an Op
  integer,    // order-free integer totals, rounded once on the host
  library,    // a library's own order: measured, never modelled
};

struct GpuKernelInfo {
  GpuKernel kernel;
  std::string_view name;     // CLI name, CSV column value, plot label ("gpu_two_pass")
  std::string_view summary;  // one line
  std::string_view order;    // the order of operations, in terms of the shape
  Determinism determinism;   // declared; the determinism study measures it
  bool modelled;             // core/order_model reproduces its bits for every shape and n
  unsigned shape_fields;     // ShapeField bits the kernel reads
  bool block_pow2;           // block must be a power of two (the classic shared-memory trees)
  bool float_input_only;     // double_acc: float in, double accumulator
  bool diagnostic_only;      // racy_tree: never part of a sum or a sweep
  BoundKind bound_kind;
  BoundDoc bound;            // the formula and the theorem it comes from
  KernelFamily family;
  // The format the kernel accumulates in, for an input of format f (wide_tree bounds); nullptr:
  // the input's own.
  FloatFormat (*accumulator)(FloatFormat f);
  // The kernel whose order of operations this one runs for every shape ("" for its own): the same
  // pairs added in the same order, so the same bits on every input. `sumlab verify` checks it on
  // the GPU (both kernels against the one model); the studies evaluate such a pair once.
  std::string_view same_order_as;
};

// What a kernel takes besides its shape. fixed_scale: gpu_fixed_point with the caller's scale k
// (grid 2^-k), as fixed_point_sum(x, k): one read of the input, no range pass. Empty: k from max|x|.
struct KernelOptions {
  std::optional<int> fixed_scale;
};
// "" when kernel k takes options o, otherwise the sentence saying why not.
std::string validate_options(GpuKernel k, const KernelOptions& o);

std::span<const GpuKernelInfo> gpu_kernels();
const GpuKernelInfo& info(GpuKernel k);
std::optional<GpuKernel> find_gpu_kernel(std::string_view name);
// "gpu_serial, gpu_interleaved, ..." (diagnostic kernels excluded unless asked).
std::string gpu_kernel_names(bool include_diagnostic = false);

// The shape a kernel runs with on dtype's data when the caller gives none: 4 blocks per SM, 256
// threads, grid-stride, 4-wide loads where the kernel takes them, and the kernel's own cross-block
// stage (last_block where it takes one); 2 blocks of 256 per SM for the integer kernels, but one
// for gpu_exact on float64 (its build over the whole exponent range).
LaunchShape default_shape(GpuKernel k, int sm_count = 132, std::string_view dtype = "float32");

// The shape with every field the kernel ignores reset to default_shape's value (and, for kernels
// that fix their cross-block stage, that stage). Two shapes with the same canonical form run the
// same order; `sumlab verify` deduplicates on it.
LaunchShape canonicalize(GpuKernel k, const LaunchShape& s, int sm_count = 132);

// gpu_exact's kernel (and gpu_fixed_point's first pass) covers at most this many elements per
// launch: a block's 64-bit limbs then stay below 2^63 (gpu/device/kernels/exact_kernel.cuh), and
// longer inputs are summed by several launches into the same integer totals (no bit changes).
inline constexpr std::int64_t exact_launch_elements = (std::int64_t(1) << 31) - (std::int64_t(1) << 20);
// The launches' block totals one 64-bit column can take: each adds less than 2^33.
inline constexpr std::int64_t exact_max_block_totals = std::int64_t(1) << 30;

// "" when kernel k can run shape s on n elements of dtype `dtype` ("float32"/"float64");
// otherwise a sentence naming the problem and what would be accepted.
std::string validate_shape(GpuKernel k, const LaunchShape& s, std::string_view dtype,
                           std::int64_t n);

// The bound on |result - exact sum| of kernel k run with shape s on an input of format f
// (in.quantisation: gpu_fixed_point's m 2^(-k-1), as fixed_point_sum reports it for the same k);
// +inf where no bound holds.
double kernel_bound(GpuKernel k, FloatFormat f, const LaunchShape& s, const BoundInput& in);

// Equal keys: the same order of operations, so the same bits for every input. Kernels that share
// an order (same_order_as) or read fewer shape fields map many (kernel, shape) pairs to one key;
// a shape-invariant kernel has one key for every shape.
std::string order_key(GpuKernel k, const LaunchShape& s, int sm_count = 132);

// The shape as kernel k runs it, naming only the fields it reads: "block 256" (Harris 1-6: their grid
// follows from n), "grid 264, block 256" (the integer kernels), the whole to_string(s) for the
// shuffle kernels; "" for kernels that take no shape.
std::string shape_text(GpuKernel k, const LaunchShape& s);

// The fixed cross-block stage of two_pass/atomic/last_block; nullopt for kernels that take it
// from the shape (kahan, double_acc) or have none.
std::optional<CrossBlock> fixed_cross_block(GpuKernel k);

}  // namespace sumlab
