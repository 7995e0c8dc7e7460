// The launch shape value and the GPU kernel registry's shape rules.
#include "core/launch_shape.hpp"

#include <gtest/gtest.h>

#include <set>
#include <string>
#include <string_view>

#include "core/gpu_kernel.hpp"

namespace sumlab {
namespace {

TEST(LaunchShape, EnumNamesRoundTrip) {
  for (auto m : {Mapping::grid_stride, Mapping::contiguous}) EXPECT_EQ(parse_mapping(to_string(m)), m);
  for (auto w : {WarpStage::shfl_down, WarpStage::xor_butterfly}) EXPECT_EQ(parse_warp_stage(to_string(w)), w);
  for (auto b : {BlockStage::smem_tree, BlockStage::warp_of_warps}) EXPECT_EQ(parse_block_stage(to_string(b)), b);
  for (auto c : {CrossBlock::second_kernel, CrossBlock::atomic, CrossBlock::last_block})
    EXPECT_EQ(parse_cross_block(to_string(c)), c);
  EXPECT_FALSE(parse_mapping("strided"));
  EXPECT_FALSE(parse_warp_stage(""));
  EXPECT_FALSE(parse_block_stage("smem"));
  EXPECT_FALSE(parse_cross_block("atomics"));
}

TEST(LaunchShape, ToStringParsesBack) {
  LaunchShape s;
  s.grid = 7;
  s.block = 96;
  s.vector = 2;
  s.mapping = Mapping::contiguous;
  s.warp = WarpStage::xor_butterfly;
  s.block_stage = BlockStage::smem_tree;
  s.cross = CrossBlock::last_block;
  EXPECT_EQ(to_string(s), "7x96 v2 contiguous xor_butterfly smem_tree last_block");
  EXPECT_EQ(parse_launch_shape(to_string(s)), s);
  EXPECT_EQ(parse_launch_shape(to_string(LaunchShape{})), LaunchShape{});
  EXPECT_FALSE(parse_launch_shape("7x96 v2 contiguous"));
  EXPECT_FALSE(parse_launch_shape("7y96 v2 contiguous xor_butterfly smem_tree last_block"));
  EXPECT_FALSE(parse_launch_shape("7x96 2 contiguous xor_butterfly smem_tree last_block"));
}

TEST(LaunchShape, ValidateRejectsBadValuesWithAReason) {
  LaunchShape s;
  EXPECT_EQ(validate(s), "");
  s.grid = 0;
  EXPECT_NE(validate(s).find("grid must be at least 1"), std::string::npos);
  s = LaunchShape{};
  s.block = 1025;
  EXPECT_NE(validate(s).find("1024"), std::string::npos);
  s.block = 0;
  EXPECT_NE(validate(s), "");
  s = LaunchShape{};
  s.vector = 3;
  EXPECT_NE(validate(s).find("1, 2 or 4"), std::string::npos);
  s = LaunchShape{};
  s.grid = max_grid + 1;
  EXPECT_NE(validate(s), "");
}

TEST(LaunchShape, Helpers) {
  EXPECT_EQ(pow2_ceil(1), 1);
  EXPECT_EQ(pow2_ceil(3), 4);
  EXPECT_EQ(pow2_ceil(32), 32);
  EXPECT_EQ(pow2_ceil(33), 64);
  EXPECT_TRUE(is_pow2(1024));
  EXPECT_FALSE(is_pow2(96));
  EXPECT_FALSE(is_pow2(0));
  // ceil(ceil(n / threads) / vector) * vector.
  EXPECT_EQ(contiguous_chunk(0, 64, 4), 0);
  EXPECT_EQ(contiguous_chunk(1, 64, 4), 4);
  EXPECT_EQ(contiguous_chunk(1000, 64, 1), 16);
  EXPECT_EQ(contiguous_chunk(1000, 64, 4), 16);
  EXPECT_EQ(contiguous_chunk(1001, 64, 4), 16);
  EXPECT_EQ(contiguous_chunk(1025, 64, 4), 20);
}

TEST(GpuKernelRegistry, NamesAreUniqueAndFindable) {
  std::set<std::string> names;
  for (const auto& k : gpu_kernels()) {
    EXPECT_TRUE(names.insert(std::string(k.name)).second) << k.name;
    EXPECT_EQ(find_gpu_kernel(k.name), k.kernel);
    EXPECT_EQ(&info(k.kernel), &k);
    EXPECT_FALSE(k.summary.empty());
    EXPECT_FALSE(k.order.empty());
  }
  EXPECT_FALSE(find_gpu_kernel("serial"));  // CPU names are not GPU kernel names
  EXPECT_EQ(gpu_kernel_names().find("racy"), std::string::npos);
  EXPECT_NE(gpu_kernel_names(true).find("gpu_racy_tree"), std::string::npos);
}

TEST(GpuKernelRegistry, DeclaredDeterminism) {
  EXPECT_EQ(info(GpuKernel::atomic).determinism, Determinism::not_deterministic);
  EXPECT_EQ(info(GpuKernel::two_pass).determinism, Determinism::run_to_run);
  EXPECT_EQ(info(GpuKernel::exact).determinism, Determinism::shape_invariant);
  EXPECT_EQ(info(GpuKernel::fixed_point).determinism, Determinism::shape_invariant);
  EXPECT_FALSE(info(GpuKernel::cub).modelled);
  EXPECT_FALSE(info(GpuKernel::thrust).modelled);
  // CUB's gpu_to_gpu reduction: a peer, measured, with no bound claimed (none proved here).
  EXPECT_FALSE(info(GpuKernel::cub_gpu_to_gpu).modelled);
  EXPECT_EQ(info(GpuKernel::cub_gpu_to_gpu).family, KernelFamily::library);
  EXPECT_EQ(info(GpuKernel::cub_gpu_to_gpu).bound_kind, BoundKind::none);
  EXPECT_EQ(find_gpu_kernel("gpu_cub_gpu_to_gpu"), GpuKernel::cub_gpu_to_gpu);
  EXPECT_TRUE(info(GpuKernel::racy_tree).diagnostic_only);
}

TEST(GpuKernelRegistry, DefaultShapesAreValid) {
  for (const auto& k : gpu_kernels())
    for (const char* dtype : {"float32", "float64"}) {
      if (k.float_input_only && std::string_view(dtype) == "float64") continue;
      const LaunchShape s = default_shape(k.kernel, 132, dtype);
      EXPECT_EQ(validate_shape(k.kernel, s, dtype, 1000), "") << k.name << " " << dtype;
      EXPECT_EQ(canonicalize(k.kernel, s, 132), s) << k.name << " " << dtype;
    }
  EXPECT_EQ(default_shape(GpuKernel::two_pass, 132).grid, 528);
  EXPECT_EQ(default_shape(GpuKernel::atomic, 132).cross, CrossBlock::atomic);
  EXPECT_EQ(default_shape(GpuKernel::last_block, 132).cross, CrossBlock::last_block);
  // A kernel that takes its cross-block stage ends in the last block by default, whose order (and
  // so bits) is the second kernel's.
  for (const auto& k : gpu_kernels()) {
    if (!(k.shape_fields & field_cross)) continue;
    LaunchShape s = default_shape(k.kernel, 132);
    EXPECT_EQ(s.cross, CrossBlock::last_block) << k.name;
    const std::string key = order_key(k.kernel, s, 132);
    s.cross = CrossBlock::second_kernel;
    EXPECT_EQ(order_key(k.kernel, s, 132), key) << k.name;
  }
  // The integer kernels: two blocks of 256 an SM, following the machine's SM count; gpu_exact on
  // float64 one (the build whose bins cover every double). No other kernel's default sees the type.
  for (GpuKernel k : {GpuKernel::exact, GpuKernel::fixed_point}) {
    EXPECT_EQ(default_shape(k, 132).grid, 264);
    EXPECT_EQ(default_shape(k, 114).grid, 228);
    EXPECT_EQ(default_shape(k, 132).block, 256);
  }
  EXPECT_EQ(default_shape(GpuKernel::fixed_point, 132, "float64").grid, 264);
  EXPECT_EQ(default_shape(GpuKernel::exact, 132, "float64").grid, 132);
  EXPECT_EQ(default_shape(GpuKernel::exact, 114, "float64").grid, 114);
  EXPECT_EQ(default_shape(GpuKernel::exact, 132, "float64").block, 256);
  for (const auto& k : gpu_kernels()) {
    if (k.kernel == GpuKernel::exact || k.float_input_only) continue;
    EXPECT_EQ(default_shape(k.kernel, 132, "float64"), default_shape(k.kernel, 132, "float32")) << k.name;
  }
}

TEST(GpuKernelRegistry, ShapeRulesGiveClearErrors) {
  LaunchShape s = default_shape(GpuKernel::two_pass);
  s.block = 100;
  EXPECT_NE(validate_shape(GpuKernel::two_pass, s, "float32", 10).find("multiple of 32"), std::string::npos);
  s.block = 96;
  EXPECT_EQ(validate_shape(GpuKernel::two_pass, s, "float32", 10), "");
  EXPECT_NE(validate_shape(GpuKernel::sequential, s, "float32", 10).find("power of two"), std::string::npos);
  s = default_shape(GpuKernel::two_pass);
  s.grid = 0;
  EXPECT_NE(validate_shape(GpuKernel::two_pass, s, "float32", 10).find("grid"), std::string::npos);
  s = default_shape(GpuKernel::two_pass);
  s.cross = CrossBlock::atomic;
  EXPECT_NE(validate_shape(GpuKernel::two_pass, s, "float32", 10).find("second_kernel"), std::string::npos);
  s = default_shape(GpuKernel::kahan);
  s.cross = CrossBlock::atomic;
  EXPECT_NE(validate_shape(GpuKernel::kahan, s, "float32", 10), "");
  s.cross = CrossBlock::last_block;
  EXPECT_EQ(validate_shape(GpuKernel::kahan, s, "float32", 10), "");
  EXPECT_NE(validate_shape(GpuKernel::double_acc, default_shape(GpuKernel::double_acc), "float64", 10)
                .find("float32"),
            std::string::npos);
  // The integer kernels split n into launches of fewer than 2^31 elements: any n a GPU holds, as long
  // as the launches' block totals stay below 2^30 per limb column.
  for (GpuKernel k : {GpuKernel::exact, GpuKernel::fixed_point}) {
    EXPECT_EQ(validate_shape(k, default_shape(k), "float32", std::int64_t(1) << 34), "");
    EXPECT_EQ(validate_shape(k, default_shape(k), "float64", (std::int64_t(1) << 31) + 7), "");
    LaunchShape wide = default_shape(k);
    wide.grid = max_grid;  // 2^24 blocks: 64 launches reach 2^30 block totals
    EXPECT_EQ(validate_shape(k, wide, "float32", 63 * exact_launch_elements), "");
    EXPECT_NE(validate_shape(k, wide, "float32", 64 * exact_launch_elements).find("grid below 16777216"), std::string::npos)
        << validate_shape(k, wide, "float32", 64 * exact_launch_elements);
  }
  // Kernels without a shape accept anything.
  s.grid = 0;
  EXPECT_EQ(validate_shape(GpuKernel::cub, s, "float32", 10), "");
}

TEST(GpuKernelRegistry, CanonicalizeResetsIgnoredFields) {
  LaunchShape a = default_shape(GpuKernel::sequential);
  LaunchShape b = a;
  b.grid = 3;
  b.vector = 2;
  b.mapping = Mapping::contiguous;
  EXPECT_EQ(canonicalize(GpuKernel::sequential, b), canonicalize(GpuKernel::sequential, a));
  b.block = 64;
  EXPECT_NE(canonicalize(GpuKernel::sequential, b), canonicalize(GpuKernel::sequential, a));
  LaunchShape c = default_shape(GpuKernel::two_pass);
  c.cross = CrossBlock::last_block;
  EXPECT_EQ(canonicalize(GpuKernel::two_pass, c).cross, CrossBlock::second_kernel);
  EXPECT_EQ(canonicalize(GpuKernel::kahan, c).cross, CrossBlock::last_block);
}

}  // namespace
}  // namespace sumlab
