#include "core/gpu_kernel.hpp"

#include <array>
#include <limits>

#include "core/order_model/rounding_depth.hpp"

namespace sumlab {
namespace {

constexpr std::string_view tree_source =
    "Higham 2002, Lemma 3.1 on each term's path; d from core/order_model/rounding_depth.cpp";
constexpr BoundDoc tree_bound{"gamma(d) S, d = the longest path of the tree for this shape and n", tree_source};
constexpr BoundDoc serial_bound{"gamma(n-1) S", tree_source};
constexpr BoundDoc atomic_bound{
    "gamma(d) S, d = the longest path of the tree for this shape and n; float adds (1 + gamma(d)) grid 2^-125 "
    "(its global atomicAdd flushes subnormal operands and results to zero)",
    tree_source};
constexpr BoundDoc any_order_bound{"gamma(n-1) S: any summation order",
                       "Higham 2002, Sec. 4.2: no term of any summation tree meets more than n-1 additions"};
constexpr BoundDoc kahan_bound{"u|s| + (1+u) alpha S, alpha from the chain length and the combine levels",
                         "Kahan steps and TwoSum-compensated combines: proof in core/error_bound.cpp"};
constexpr BoundDoc wide_bound{"u|s| + (1+u) gamma_double(d) S + 2^-150",
                        "Higham 2002, Lemma 3.1 in double, Thm 2.2 for the one rounding to float"};
constexpr BoundDoc fixed_bound{"Q (1+u) + max(u|s|, 2^(emin-1)), Q = m 2^(-k-1)",
                         "core/fixed_point_sum.hpp (the same integers as fixed_point)"};
constexpr BoundDoc exact_bound{"max(u|s|, 2^(emin-1)): correctly rounded", "Higham 2002, Thm 2.2"};
constexpr BoundDoc no_bound{"none: a data race has no value to bound", "-"};
constexpr BoundDoc unproved_bound{"none claimed: the library's binned accumulator has no bound proved here", "-"};

constexpr unsigned shuffle_fields =
    field_grid | field_block | field_vector | field_mapping | field_warp | field_block_stage;
// Kernels whose input arrives as bulk-copied tiles (gpu/thread/bulk_loads.cuh) and whose totals
// are integers (any order, the same bits): only the grid and block size reach the launch.
constexpr unsigned tile_fields = field_grid | field_block;

constexpr FloatFormat wide_double(FloatFormat) { return format_of<double>(); }
// A double word hi + lo of p-bit halves: Joldes, Muller and Popescu bound each AccurateDWPlusDW by
// 3u^2 + 13u^3 (u = 2^-p, p >= 6), below 4u^2 = 2^-(2p-2): the unit roundoff of a (2p-2)-bit format.
constexpr FloatFormat double_word_of(FloatFormat f) { return {2 * f.precision - 2, f.min_subnormal_exp}; }
constexpr BoundDoc double_word_bound{
    "u|s| + (1+u) gamma_dw(d) S + 2^(emin-1), u_dw = 2^-(2p-2), d = the longest path of the tree",
    "Joldes, Muller, Popescu 2017 (ACM TOMS 44(2)), Algorithm 6 per add; Higham 2002 Lemma 3.1 over "
    "the tree; Thm 2.2 for the final rounding"};

constexpr std::array<GpuKernelInfo, 20> kernels{{
    {GpuKernel::serial, "gpu_serial", "one GPU thread adds left to right (the CPU serial sum's order)",
     "s = x0; s += x1; ...; s += x_{n-1}; one thread, no shape", Determinism::shape_invariant, true,
     0, false, false, false,
     BoundKind::tree, serial_bound,
     KernelFamily::serial, nullptr, ""},
    {GpuKernel::interleaved, "gpu_interleaved",
     "Harris 1: shared-memory tree, interleaved addressing (divergent warps)",
     "block of B loads x[bB+t] (0 past n); for s = 1,2,..,B/2: threads t with t%2s==0 do "
     "w[t] += w[t+s]; relaunch on the block partials until one value",
     Determinism::run_to_run, true, field_block, true, false, false,
     BoundKind::tree, tree_bound,
     KernelFamily::classic, nullptr, ""},
    {GpuKernel::strided, "gpu_strided",
     "Harris 2: shared-memory tree, strided indexing (bank conflicts)",
     "as gpu_interleaved, with thread t adding w[2st] += w[2st+s]: the same pairs, so the same bits",
     Determinism::run_to_run, true, field_block, true, false, false,
     BoundKind::tree, tree_bound,
     KernelFamily::classic, nullptr, "gpu_interleaved"},
    {GpuKernel::sequential, "gpu_sequential",
     "Harris 3: shared-memory tree, sequential addressing",
     "block of B loads x[bB+t]; for h = B/2..1: t < h does w[t] += w[t+h]; relaunch until one",
     Determinism::run_to_run, true, field_block, true, false, false,
     BoundKind::tree, tree_bound,
     KernelFamily::classic, nullptr, ""},
    {GpuKernel::first_add, "gpu_first_add", "Harris 4: first add during load, then sequential tree",
     "w[t] = x[2bB+t] (+ x[2bB+t+B] if < n); sequential tree; relaunch until one",
     Determinism::run_to_run, true, field_block, true, false, false,
     BoundKind::tree, tree_bound,
     KernelFamily::classic, nullptr, ""},
    {GpuKernel::warp_unrolled, "gpu_warp_unrolled",
     "Harris 5: as 4, last warp unrolled with __syncwarp (no implicit lockstep)",
     "as gpu_first_add; levels h <= 32 run in warp 0 with __syncwarp between them: same pairs, "
     "same bits as gpu_first_add",
     Determinism::run_to_run, true, field_block, true, false, false,
     BoundKind::tree, tree_bound,
     KernelFamily::classic, nullptr, "gpu_first_add"},
    {GpuKernel::unrolled, "gpu_unrolled",
     "Harris 6: as 5, fully unrolled for a compile-time block size, last warp by __shfl_down_sync",
     "as gpu_first_add (same pairs, same bits); block size a template parameter 32..1024",
     Determinism::run_to_run, true, field_block, true, false, false,
     BoundKind::tree, tree_bound,
     KernelFamily::classic, nullptr, "gpu_first_add"},
    {GpuKernel::multi_add, "gpu_multi_add",
     "Harris 7: many elements per thread (grid-stride pairs), unrolled tree, second pass",
     "thread t of block b: v = 0; for i = 2bB+t step 2BG: v += (x[i] + x[i+B]) (or v += x[i] at "
     "the end); unrolled sequential tree; the same kernel with grid 1 over the G partials",
     Determinism::run_to_run, true, field_grid | field_block, true, false, false,
     BoundKind::tree, tree_bound,
     KernelFamily::multi_add, nullptr, ""},
    {GpuKernel::two_pass, "gpu_two_pass",
     "shuffle warp tree + grid-stride loop, a second kernel reduces the block partials",
     "thread chain (mapping, vector) -> warp stage -> block stage -> partial per block; a second "
     "launch of one block reduces the partials with the same chain, warp and block stages",
     Determinism::run_to_run, true, shuffle_fields, false, false, false,
     BoundKind::tree, tree_bound,
     KernelFamily::shuffle, nullptr, ""},
    {GpuKernel::atomic, "gpu_atomic",
     "shuffle warp tree + grid-stride loop, atomicAdd of each block's partial (single pass)",
     "as gpu_two_pass up to the block partials; then out = ((0 + p_a) + p_b) + ... in the order "
     "the blocks happen to arrive (float: subnormal operands and results flushed to zero, as the "
     "hardware's global atomicAdd does)",
     Determinism::not_deterministic, true, shuffle_fields, false, false, false,
     BoundKind::atomic_tree, atomic_bound,
     KernelFamily::shuffle, nullptr, ""},
    {GpuKernel::last_block, "gpu_last_block",
     "single pass; the last block to finish (acq_rel device counter) reduces the partials",
     "as gpu_two_pass; the final reduction runs in the last-arriving block, with the second "
     "kernel's order, so its bits equal gpu_two_pass's for the same shape",
     Determinism::run_to_run, true, shuffle_fields, false, false, false,
     BoundKind::tree, tree_bound,
     KernelFamily::shuffle, nullptr, "gpu_two_pass"},
    {GpuKernel::kahan, "gpu_kahan",
     "Kahan inside each thread; (sum, compensation) pairs combined by TwoSum through the trees",
     "per thread: y = x - c; t = s + y; c = (t - s) - y; s = t. Pairs meet through the warp, "
     "block and cross-block stages by s = a.s + b.s, e = TwoSum error, c = (a.c + b.c) - e; "
     "result s - c",
     Determinism::run_to_run, true, shuffle_fields | field_cross, false, false, false,
     BoundKind::kahan_tree, kahan_bound,
     KernelFamily::shuffle, nullptr, ""},
    {GpuKernel::double_acc, "gpu_double_acc",
     "float input accumulated in double through every stage, rounded to float once",
     "as gpu_two_pass with acc = acc + (double)x and double partials; value = (float)total",
     Determinism::run_to_run, true, shuffle_fields | field_cross, false, true, false,
     BoundKind::wide_tree, wide_bound,
     KernelFamily::shuffle, wide_double, ""},
    {GpuKernel::double_word, "gpu_double_word",
     "a double-word accumulator (hi + lo, about 2p bits) through every stage, rounded once",
     "as gpu_kahan's trees; every add, chain step or tree node, is AccurateDWPlusDW (TwoSum of the "
     "highs, TwoSum of the lows, two Fast2Sum renormalisations); an element enters as (x, 0); the "
     "value is hi, the rounding of hi + lo",
     Determinism::run_to_run, true, shuffle_fields | field_cross, false, false, false,
     BoundKind::wide_tree, double_word_bound,
     KernelFamily::shuffle, double_word_of, ""},
    {GpuKernel::fixed_point, "gpu_fixed_point",
     "quantize to int64 at scale 2^k (k from max|x|, or the caller's), add exactly in 128 bits: "
     "order-independent",
     "k from the data: pass 1 is gpu_exact's kernel, also finding max|x| and min|x| (float), or "
     "quantises each x_i once against its block's guess of k, which gives it at every k the guess "
     "allows, each block adding its integers at each such k into a table (double); pass 2 derives k "
     "from max|x| as core/fixed_point_sum.hpp; if "
     "every x_i is on the grid 2^-k (float) or every guess held (double), pass 1 gave the sum; "
     "else pass 2: q_i = RNE(x_i 2^k) summed as 128-bit integers per thread/warp/block, each "
     "block's sum added by atomics (both passes in one launch, a barrier over the grid between them, "
     "where every block is resident at once); the caller's k: pass 2 alone; the host converts as "
     "the CPU does",
     Determinism::shape_invariant, true, tile_fields, false, false, false,
     BoundKind::fixed_point, fixed_bound,
     KernelFamily::integer, nullptr, ""},
    {GpuKernel::exact, "gpu_exact",
     "correctly rounded: integer limbs per block (shared-memory 64-bit atomics), host rounding",
     "each element split into 32-bit limbs of a fixed-point superaccumulator and added with "
     "integer atomics (order-free); the blocks' limbs added to the launch's by atomics, rounded "
     "once by core/exact_sum.hpp",
     Determinism::shape_invariant, true, tile_fields, false, false, false,
     BoundKind::correctly_rounded, exact_bound,
     KernelFamily::integer, nullptr, ""},
    {GpuKernel::cub, "gpu_cub", "cub::DeviceReduce::Sum (library peer; its order is CUB's)",
     "CUB's own tuning policy; measured, not modelled", Determinism::run_to_run, false, 0, false,
     false, false,
     BoundKind::tree, any_order_bound,
     KernelFamily::library, nullptr, ""},
    {GpuKernel::thrust, "gpu_thrust", "thrust::reduce (library peer; its order is Thrust's)",
     "Thrust's own order (CUB underneath); measured, not modelled", Determinism::run_to_run, false,
     0, false, false, false,
     BoundKind::tree, any_order_bound,
     KernelFamily::library, nullptr, ""},
    // NVIDIA's claim for this mode is the same bits on any GPU: the lab checks run to run and across
    // calls (the determinism study), and claims no error bound it has not proved. Runs where the
    // build had CCCL >= 3.1 headers (gpu::kernel_not_built says why not elsewhere).
    {GpuKernel::cub_gpu_to_gpu, "gpu_cub_gpu_to_gpu",
     "cub::DeviceReduce::Sum under gpu_to_gpu determinism (library peer: CUB's RFA)",
     "CUB's reproducible floating-point accumulator (binned by exponent, Demmel-Ahrens-Nguyen), "
     "its temporary storage from the environment's memory pool; measured, not modelled",
     Determinism::shape_invariant, false, 0, false, false, false,
     BoundKind::none, unproved_bound,
     KernelFamily::library, nullptr, ""},
    {GpuKernel::racy_tree, "gpu_racy_tree",
     "DIAGNOSTIC: sequential tree with the barrier after the load removed (a data race)",
     "as gpu_sequential without the __syncthreads() between the loads and the first level: thread t "
     "may read w[t+h] before thread t+h wrote it. Exists only to show racecheck catching it",
     Determinism::not_deterministic, false, field_block, true, false, true,
     BoundKind::none, no_bound,
     KernelFamily::classic, nullptr, ""},
}};

}  // namespace

std::span<const GpuKernelInfo> gpu_kernels() { return kernels; }

const GpuKernelInfo& info(GpuKernel k) {
  for (const auto& i : kernels)
    if (i.kernel == k) return i;
  return kernels[0];  // unreachable: every enumerator has a row
}

std::optional<GpuKernel> find_gpu_kernel(std::string_view name) {
  for (const auto& i : kernels)
    if (i.name == name) return i.kernel;
  return std::nullopt;
}

std::string gpu_kernel_names(bool include_diagnostic) {
  std::string out;
  for (const auto& i : kernels) {
    if (i.diagnostic_only && !include_diagnostic) continue;
    if (!out.empty()) out += ", ";
    out += i.name;
  }
  return out;
}

std::optional<CrossBlock> fixed_cross_block(GpuKernel k) {
  switch (k) {
    case GpuKernel::two_pass: return CrossBlock::second_kernel;
    case GpuKernel::atomic: return CrossBlock::atomic;
    case GpuKernel::last_block: return CrossBlock::last_block;
    default: return std::nullopt;
  }
}

LaunchShape default_shape(GpuKernel k, int sm_count, std::string_view dtype) {
  const int sms = sm_count > 0 ? sm_count : 132;
  LaunchShape s;
  s.grid = 4 * sms;
  s.block = 256;
  const unsigned f = info(k).shape_fields;
  s.vector = (f & field_vector) ? 4 : 1;
  // A kernel that takes its cross-block stage ends in the last block: one launch where
  // second_kernel takes two, with the same order and bits (order_key): faster by about a launch
  // at small n, level from 2^26 up (docs/performance-notes.md, "Default shapes").
  if (f & field_cross) s.cross = CrossBlock::last_block;
  if (auto c = fixed_cross_block(k)) s.cross = *c;
  if (!(f & field_grid)) s.grid = 1;
  if (k == GpuKernel::serial) s.block = 1;
  if (k == GpuKernel::exact || k == GpuKernel::fixed_point) {
    // Two blocks of 256 per SM for both integer kernels (their 256-thread build holds 128
    // registers, as the 512-thread one does at one block an SM, without spilling): level with one
    // block of 512 from 2^26 up and faster below, but for float64 fixed point from the data when
    // its pass 2 added a record a block (call 160); the shape changes no bit of theirs. 4 x 256 spilled registers
    // in gpu_exact and ran float64 at 2^30 at 0.48 of CUB.
    s.grid = 2 * sms;
    s.block = 256;
    // gpu_exact on float64: one block an SM, the build whose bins cover every double (at two, the
    // window's build sends the elements below a thread's 16 bins to its warp's cells): every
    // double bit pattern 1.7-5.6x faster from 2^20 to 2^26 on an H200, lognormal sigma 12
    // 1.35-1.8x below 2^26 and level there, moderate inputs within 1.5% in short runs; but a long
    // run on an H200 timed uniform doubles from 2^26 at 0.75-0.83 of CUB where two blocks ran
    // 0.97, for a reason not yet shown (fewer tiles in flight is the suspect the build's fifth
    // stage is meant to answer: docs/performance-notes.md, "Default shapes").
    if (k == GpuKernel::exact && dtype == "float64") s.grid = sms;
  }
  return s;
}

LaunchShape canonicalize(GpuKernel k, const LaunchShape& s, int sm_count) {
  const LaunchShape d = default_shape(k, sm_count);
  const unsigned f = info(k).shape_fields;
  LaunchShape c = s;
  if (!(f & field_grid)) c.grid = d.grid;
  if (!(f & field_block)) c.block = d.block;
  if (!(f & field_vector)) c.vector = d.vector;
  if (!(f & field_mapping)) c.mapping = d.mapping;
  if (!(f & field_warp)) c.warp = d.warp;
  if (!(f & field_block_stage)) c.block_stage = d.block_stage;
  if (!(f & field_cross)) c.cross = d.cross;
  if (auto x = fixed_cross_block(k)) c.cross = *x;
  return c;
}

std::string order_key(GpuKernel k, const LaunchShape& s, int sm_count) {
  const GpuKernelInfo& i = info(k);
  const GpuKernelInfo& o = i.same_order_as.empty() ? i : info(*find_gpu_kernel(i.same_order_as));
  if (o.determinism == Determinism::shape_invariant) return std::string(o.name);
  LaunchShape c = canonicalize(o.kernel, s, sm_count);
  // The last block runs the second kernel's order inside the same launch (core/launch_shape.hpp).
  if (c.cross == CrossBlock::last_block) c.cross = CrossBlock::second_kernel;
  return std::string(o.name) + "/" + to_string(c);
}

std::string shape_text(GpuKernel k, const LaunchShape& s) {
  const unsigned f = info(k).shape_fields;
  if (f == 0) return "";
  if (f == (field_grid | field_block | field_vector | field_mapping | field_warp | field_block_stage) ||
      (f & field_cross))
    return to_string(s);
  std::string out;
  if (f & field_grid) out += "grid " + std::to_string(s.grid);
  if (f & field_block) out += (out.empty() ? "" : ", ") + std::string("block ") + std::to_string(s.block);
  return out;
}

double kernel_bound(GpuKernel k, FloatFormat f, const LaunchShape& s, const BoundInput& in) {
  const order_model::TreeDepth d = order_model::tree_depth(k, s, in.n);
  switch (info(k).bound_kind) {
    case BoundKind::tree: return bound::tree(f, d.roundings(), in);
    case BoundKind::atomic_tree: return bound::atomic_tree(f, d.roundings(), static_cast<std::uint64_t>(s.grid), in);
    case BoundKind::wide_tree: {
      const auto acc = info(k).accumulator;
      return bound::wide_tree(f, acc ? acc(f) : f, d.roundings(), in);
    }
    case BoundKind::kahan_tree: return bound::kahan_tree(f, d.chain, d.levels, in);
    case BoundKind::fixed_point: return bound::fixed_point(f, in);
    case BoundKind::correctly_rounded: return bound::correctly_rounded(f, in);
    case BoundKind::none: break;
  }
  return std::numeric_limits<double>::infinity();
}

std::string validate_options(GpuKernel k, const KernelOptions& o) {
  if (o.fixed_scale && k != GpuKernel::fixed_point)
    return std::string(info(k).name) + " takes no fixed-point scale (only gpu_fixed_point does)";
  return "";
}

std::string validate_shape(GpuKernel k, const LaunchShape& s, std::string_view dtype,
                           std::int64_t n) {
  const GpuKernelInfo& i = info(k);
  if (n < 0) return "n must be >= 0";
  if (i.float_input_only && dtype != "float32")
    return std::string(i.name) + " takes float32 input (it accumulates in double); got " +
           std::string(dtype);
  if (i.shape_fields == 0) return "";  // serial, cub, thrust: no shape
  if (auto e = validate(s); !e.empty()) return std::string(i.name) + ": " + e;
  if (i.block_pow2 && !is_pow2(s.block))
    return std::string(i.name) + ": block must be a power of two (its shared-memory tree halves "
           "the block each level); got " + std::to_string(s.block);
  if (i.block_pow2 && s.block < 32 && k != GpuKernel::racy_tree)
    return std::string(i.name) + ": block must be at least 32 (one full warp); got " +
           std::to_string(s.block);
  if ((i.shape_fields & field_warp) && s.block % 32 != 0)
    return std::string(i.name) + ": block must be a multiple of 32 (whole warps take part in "
           "every shuffle); got " + std::to_string(s.block);
  if (auto c = fixed_cross_block(k); c && s.cross != *c)
    return std::string(i.name) + " always uses the cross-block stage " + std::string(to_string(*c)) +
           " (got " + std::string(to_string(s.cross)) + "); pick gpu_two_pass, gpu_atomic or "
           "gpu_last_block for the stage you want";
  if ((i.shape_fields & field_cross) && s.cross == CrossBlock::atomic)
    return std::string(i.name) + ": cross-block stage must be second_kernel or last_block (atomic "
           "would make it non-deterministic; gpu_atomic is the atomic kernel)";
  if (k == GpuKernel::exact || k == GpuKernel::fixed_point) {
    const std::int64_t launches = n == 0 ? 1 : (n + exact_launch_elements - 1) / exact_launch_elements;
    if (launches * s.grid >= exact_max_block_totals)
      return std::string(i.name) + ": " + std::to_string(launches) + " launches of " + std::to_string(s.grid) +
             " blocks would add 2^30 or more block totals into one 64-bit limb column; use a grid below " +
             std::to_string(exact_max_block_totals / launches) + " for this n";
  }
  return "";
}

}  // namespace sumlab
