// The row kernels on the GPU against their CPU model, bit for bit (label `gpu`: these need a CUDA
// device and skip with the reason when there is none, so CI without a GPU stays green).
#include "gpu/rows.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <span>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "core/counter_rng.hpp"
#include "core/generators.hpp"
#include "core/portable_math.hpp"
#include "core/row_reduce/row_input.hpp"
#include "core/row_reduce/row_kernel.hpp"
#include "core/row_reduce/row_math.hpp"
#include "core/row_reduce/row_model.hpp"
#include "gpu/rows/row_stage.hpp"
#include "tests/gpu/require_gpu.hpp"

namespace sumlab::row_reduce {
namespace {

// block_per_row at 128 and 256: the staged launches whose instances fix their thread count
// (row_fixed_threads in gpu/rows/row_stage.hpp).
const RowShape kShapes[] = {{RowLayout::warp_per_row, 32},   {RowLayout::warp_per_row, 256},
                            {RowLayout::block_per_row, 32},  {RowLayout::block_per_row, 64},
                            {RowLayout::block_per_row, 96},  {RowLayout::block_per_row, 128},
                            {RowLayout::block_per_row, 256}, {RowLayout::block_per_row, 1024}};
const std::int64_t kCols[] = {0, 1, 31, 32, 33, 1000, 1024, 4096, 4097};

// rows x cols: offset 1e4 + N(0,1), with a few specials in the last rows (NaN, +Inf, -Inf runs).
template <class In> std::vector<In> input(std::int64_t rows, std::int64_t cols) {
  std::vector<In> x(static_cast<std::size_t>(rows * cols));
  for (std::size_t i = 0; i < x.size(); ++i) {
    double v = 1e4 + standard_normal(12, i);
    const auto r = static_cast<std::int64_t>(i) / std::max<std::int64_t>(cols, 1);
    const auto j = static_cast<std::int64_t>(i) % std::max<std::int64_t>(cols, 1);
    if (r == rows - 1 && j == cols / 2) v = std::nan("");
    if (r == rows - 2 && j == cols / 3) v = std::numeric_limits<double>::infinity();
    if (r == rows - 3 && j % 2) v = -std::numeric_limits<double>::infinity();
    if constexpr (std::is_same_v<In, bfloat16_bits>) {
      x[i] = to_bfloat16_bits(static_cast<float>(v));
    } else {
      x[i] = static_cast<In>(v);
    }
  }
  return x;
}

template <class In> void check(std::int64_t rows, std::int64_t cols, std::span<const RowShape> shapes) {
  const std::vector<In> x = input<In>(rows, cols);
  const gpu::RowMatrix<In> m(std::span<const In>(x), rows, cols);
  for (const auto& s : shapes)
    for (const auto& i : row_kernels()) {
      const auto g = gpu::gpu_rows<In>(i.kernel, s, m);
      ASSERT_TRUE(g.ok()) << g.error;
      const auto model = model_rows<In>(i.kernel, s, std::span<const In>(x), rows, cols);
      std::string first;
      EXPECT_EQ(count_mismatches(g.outputs, model, &first), 0)
          << i.name << " " << to_string(s) << " cols " << cols << ": " << first;
      // The statistics alone are a kernel of their own (no output pass, fewer registers).
      const auto gs = gpu::gpu_rows<In>(i.kernel, s, m, gpu::RowRunOptions{false, 1});
      ASSERT_TRUE(gs.ok()) << gs.error;
      const auto ms = model_rows<In>(i.kernel, s, std::span<const In>(x), rows, cols, false);
      EXPECT_EQ(count_mismatches(gs.outputs, ms, &first), 0)
          << i.name << " statistics only " << to_string(s) << " cols " << cols << ": " << first;
    }
}

// A thread's elements come from registers where a second pass reads them and they number at most
// 16 (gpu/rows/row_loads.cuh), else from memory in batches of 8 with a guarded last batch; bfloat16
// rows, and longer rows of a kernel of several passes, are copied into shared memory first where a
// thread's share is at most 256 bytes and two blocks fit an SM (gpu/rows.cu), by one bulk copy
// where the row is whole 16-byte words on a 16-byte boundary, else by the threads. The columns
// below cross these limits for every shape (4096 and 4097 at 256 threads, 16384 and 16385 at 1024;
// 1000 at 32 threads: 31 whole batches and a tail of 8 less 1 for some lanes, staged; 4096 at 32
// threads, read again; warp_per_row/256 stages 8 rows of 1000 and reads rows of 4096 again).
// Welford's float and bfloat16 rows unroll their steps whole where every thread holds 32 or 16
// (row_exact_steps): 1024 at 32 threads (both layouts) and at 64, 4096 at 256, 16384 at 1024;
// staged rows also 128 or 64: bfloat16 rows of 4096 at 32 and 64 threads, of 16384 at 128 and 256.
template <class In> void check_all() {
  for (std::int64_t cols : kCols) check<In>(67, cols, kShapes);  // 67: a partly filled last block for warp_per_row/256
  const RowShape wide[] = {{RowLayout::warp_per_row, 256}, {RowLayout::block_per_row, 128}, {RowLayout::block_per_row, 256},
                           {RowLayout::block_per_row, 1024}};
  for (std::int64_t cols : {16384, 16385}) check<In>(5, cols, wide);
}

TEST(Rows, GpuBitsEqualModelBitsFloat32) {
  SUMLAB_REQUIRE_GPU();
  check_all<float>();
}
TEST(Rows, GpuBitsEqualModelBitsBfloat16) {
  SUMLAB_REQUIRE_GPU();
  check_all<bfloat16_bits>();
}
TEST(Rows, GpuBitsEqualModelBitsFloat64) {
  SUMLAB_REQUIRE_GPU();
  check_all<double>();
}

TEST(Rows, ZeroRowsAndOneElementRows) {
  SUMLAB_REQUIRE_GPU();
  const std::vector<float> none;
  for (const auto& i : row_kernels()) {
    const auto g = gpu::gpu_rows<float>(i.kernel, kShapes[1], std::span<const float>(none), 0, 4096);
    ASSERT_TRUE(g.ok()) << g.error;
    EXPECT_TRUE(g.outputs.out.empty() && g.outputs.mean.empty() && g.outputs.max_index.empty());
  }
  const std::vector<float> one{3.5f, -1.0f, 1e4f};
  for (const auto& s : kShapes) {
    const auto g = gpu::gpu_rows<float>(RowKernel::welford, s, std::span<const float>(one), 3, 1);
    ASSERT_TRUE(g.ok()) << g.error;
    for (std::size_t r = 0; r < 3; ++r) {
      EXPECT_EQ(g.outputs.mean[r], one[r]);
      EXPECT_EQ(g.outputs.variance[r], 0.0f);
    }
  }
}

TEST(Rows, RunToRunBitsAreIdentical) {
  SUMLAB_REQUIRE_GPU();
  const std::int64_t rows = 1024, cols = 4096;
  const std::vector<float> x = input<float>(rows, cols);
  const gpu::RowMatrix<float> m(std::span<const float>(x), rows, cols);
  for (const auto& i : row_kernels()) {
    const auto a = gpu::gpu_rows<float>(i.kernel, kShapes[6], m);
    const auto b = gpu::gpu_rows<float>(i.kernel, kShapes[6], m, gpu::RowRunOptions{true, 3});
    ASSERT_TRUE(a.ok() && b.ok()) << a.error << b.error;
    EXPECT_EQ(count_mismatches(a.outputs, b.outputs), 0) << i.name;
    EXPECT_GT(b.ms, 0.0);
  }
}

// A matrix held in several copies, read in turn by a timed run (as the bench rotates inputs past
// the L2): every copy gives the one copy's bits, output pass included, and a copy count below 1 is
// refused.
TEST(Rows, RotatedCopiesGiveTheSameBits) {
  SUMLAB_REQUIRE_GPU();
  const std::int64_t rows = 96, cols = 4096;
  const std::vector<float> x = input<float>(rows, cols);
  const gpu::RowMatrix<float> one(std::span<const float>(x), rows, cols);
  const gpu::RowMatrix<float> three(std::span<const float>(x), rows, cols, 3);
  EXPECT_EQ(three.copies(), 3);
  EXPECT_NE(three.device_data(0), three.device_data(1));
  EXPECT_EQ(three.device_data(0), three.device_data(3));
  for (const auto& i : row_kernels()) {
    const auto a = gpu::gpu_rows<float>(i.kernel, kShapes[6], one);
    for (int reps : {1, 4, 5}) {
      const auto b = gpu::gpu_rows<float>(i.kernel, kShapes[6], three, gpu::RowRunOptions{true, reps});
      ASSERT_TRUE(a.ok() && b.ok()) << a.error << b.error;
      EXPECT_EQ(count_mismatches(a.outputs, b.outputs), 0) << i.name << " reps " << reps;
    }
  }
  EXPECT_THROW(gpu::RowMatrix<float>(std::span<const float>(x), rows, cols, 0), std::invalid_argument);
}

// argmax on rows of nothing but ties, NaNs of two payloads, infinities and signed zeros: the GPU
// picks the model's element (index, and the value's bits, NaN payload included) in every shape,
// across whole and partial batches and rows that fill no thread's first batch, rows read in
// 16-byte words (1000, 4096, 16392 columns) and element by element (the others).
template <class In> void check_argmax_hostile() {
  const double nan = std::numeric_limits<double>::quiet_NaN(), inf = std::numeric_limits<double>::infinity();
  const double alphabet[] = {nan, -nan, -inf, -1.0, -0.0, 0.0, 1.0, inf};
  for (std::int64_t cols : {1, 7, 31, 33, 257, 1000, 4096, 4097, 16385, 16392}) {
    const std::int64_t rows = 40;
    std::vector<In> x(static_cast<std::size_t>(rows * cols));
    for (std::size_t i = 0; i < x.size(); ++i) {
      // Rows differ in how rare each letter is: row r draws from the alphabet's first 2 + r % 7.
      const std::uint64_t r = i / static_cast<std::uint64_t>(cols);
      const double v = alphabet[(random_bits(31, i, 0) % (2 + r % 7) + r) % 8];
      if constexpr (std::is_same_v<In, bfloat16_bits>) {
        x[i] = to_bfloat16_bits(static_cast<float>(v));
      } else {
        x[i] = static_cast<In>(v);
      }
    }
    const gpu::RowMatrix<In> m(std::span<const In>(x), rows, cols);
    for (const auto& s : kShapes) {
      const auto g = gpu::gpu_rows<In>(RowKernel::argmax, s, m);
      ASSERT_TRUE(g.ok()) << g.error;
      const auto model = model_rows<In>(RowKernel::argmax, s, std::span<const In>(x), rows, cols);
      for (std::size_t r = 0; r < static_cast<std::size_t>(rows); ++r) {
        EXPECT_EQ(g.outputs.max_index[r], model.max_index[r]) << to_string(s) << " cols " << cols << " row " << r;
        EXPECT_EQ(std::memcmp(&g.outputs.max_value[r], &model.max_value[r], sizeof model.max_value[r]), 0)
            << to_string(s) << " cols " << cols << " row " << r;
      }
    }
  }
}

TEST(Rows, ArgmaxOnTiesNansInfinitiesAndZeros) {
  SUMLAB_REQUIRE_GPU();
  check_argmax_hostile<float>();
  check_argmax_hostile<bfloat16_bits>();
  check_argmax_hostile<double>();
}

// The kernels' float exp on the device gives the CPU's bits at every one of the 2^32 floats
// (infinities, subnormal results, the underflow threshold, positive x taken as 0); the model's
// softmax bits rest on it. A NaN gives a NaN on both, its payload the hardware's (the GPU's fma
// returns the canonical NaN, the CPU's keeps the operand's): the row outputs compare NaN as NaN.
TEST(Rows, TheFloatExpGivesTheCpusBitsAtEveryFloat) {
  SUMLAB_REQUIRE_GPU();
  const std::uint64_t chunk = std::uint64_t(1) << 26;
  const unsigned threads = std::max(1u, std::thread::hardware_concurrency());
  std::vector<float> x(chunk);
  std::uint64_t mismatches = 0;
  std::uint32_t first_bad = 0;
  for (std::uint64_t base = 0; base < (std::uint64_t(1) << 32); base += chunk) {
    for (std::uint64_t i = 0; i < chunk; ++i) x[i] = float_from_bits(static_cast<std::uint32_t>(base + i));
    const auto g = gpu::gpu_row_exp<float>(std::span<const float>(x));
    ASSERT_TRUE(g.ok()) << g.error;
    std::vector<std::uint64_t> bad(threads, 0), where(threads, 0);
    std::vector<std::thread> pool;
    for (unsigned t = 0; t < threads; ++t)
      pool.emplace_back([&, t] {
        for (std::uint64_t i = t; i < chunk; i += threads)
          if (to_bits(g.y[i]) != to_bits(acc_exp(x[i])) && !(std::isnan(x[i]) && std::isnan(g.y[i])) &&
              bad[t]++ == 0)
            where[t] = base + i;
      });
    for (auto& th : pool) th.join();
    for (unsigned t = 0; t < threads; ++t)
      if (bad[t] != 0 && mismatches++ == 0) first_bad = static_cast<std::uint32_t>(where[t]);
  }
  EXPECT_EQ(mismatches, 0u) << "first at bits 0x" << std::hex << first_bad;
}

// The double exp on 2^22 points over its range (subnormal results, both thresholds) and specials.
TEST(Rows, TheDoubleExpGivesTheCpusBits) {
  SUMLAB_REQUIRE_GPU();
  const double inf = std::numeric_limits<double>::infinity();
  std::vector<double> x{0.0, -0.0, inf, -inf, std::nan(""), 709.78, 709.79, -745.13, -745.14, 1e-300};
  for (std::uint64_t i = 0; i < (std::uint64_t(1) << 22); ++i) x.push_back(-746.0 + 1456.0 * uniform_double(5, i, 0));
  const auto g = gpu::gpu_row_exp<double>(std::span<const double>(x));
  ASSERT_TRUE(g.ok()) << g.error;
  std::size_t bad = 0;
  for (std::size_t i = 0; i < x.size(); ++i)
    bad += double_to_bits(g.y[i]) != double_to_bits(acc_exp(x[i])) && !(std::isnan(x[i]) && std::isnan(g.y[i]));
  EXPECT_EQ(bad, 0u);
}

// Welford's division by the count (core/row_reduce/welford.hpp) on rows of small multiples of the
// smallest subnormal, where d / n falls on subnormal midpoints, the theorem's one exception, and
// where a flush to zero or a contracted fma would show: the GPU's table of reciprocals and the
// model's computed ones give the same bits, with and without the output pass, at every shape (rows
// of 16385 at 32 threads take more steps than the table holds; rows of 1024 and 4096 unroll their
// steps with constant reciprocals at 32, 64 and 256 threads).
TEST(Rows, WelfordOnSubnormalRows) {
  SUMLAB_REQUIRE_GPU();
  auto run = [&](auto tag) {
    using In = decltype(tag);
    using Acc = row_acc_t<In>;
    for (std::int64_t cols : {33, 1024, 4096, 4097, 16385}) {
      const std::int64_t rows = 9;
      std::vector<In> x(static_cast<std::size_t>(rows * cols));
      for (std::size_t i = 0; i < x.size(); ++i) {
        const double m = std::floor(64.0 * uniform_double(23, i, 0)) - 16.0;  // -16 .. 47 subnormals
        const Acc v = static_cast<Acc>(m) * std::numeric_limits<Acc>::denorm_min() * (sizeof(In) == 2 ? Acc(65536) : Acc(1));
        if constexpr (std::is_same_v<In, bfloat16_bits>) x[i] = to_bfloat16_bits(v);
        else x[i] = v;
      }
      const gpu::RowMatrix<In> m(std::span<const In>(x), rows, cols);
      for (const auto& s : kShapes)
        for (RowKernel k : {RowKernel::welford, RowKernel::welford_equal})
          for (bool out : {true, false}) {
            const auto g = gpu::gpu_rows<In>(k, s, m, gpu::RowRunOptions{out, 1});
            ASSERT_TRUE(g.ok()) << g.error;
            const auto model = model_rows<In>(k, s, std::span<const In>(x), rows, cols, out);
            std::string first;
            EXPECT_EQ(count_mismatches(g.outputs, model, &first), 0)
                << info(k).name << " " << to_string(s) << " cols " << cols << " out " << out << ": " << first;
          }
    }
  };
  run(float{});
  run(bfloat16_bits{});
  run(double{});
}

// Softmax over logits of scale 40: x - max reaches the exp's subnormal results and its underflow
// to zero in every row (the shared input's rows stay within a few units of their max).
TEST(Rows, SoftmaxOverTheExpsWholeRange) {
  SUMLAB_REQUIRE_GPU();
  auto run = [&](auto tag) {
    using In = decltype(tag);
    for (std::int64_t cols : {33, 1024, 4096, 4097, 16385}) {
      const std::int64_t rows = 9;
      std::vector<In> x(static_cast<std::size_t>(rows * cols));
      for (std::size_t i = 0; i < x.size(); ++i) {
        const double v = 40.0 * standard_normal(17, i);
        if constexpr (std::is_same_v<In, bfloat16_bits>) x[i] = to_bfloat16_bits(static_cast<float>(v));
        else x[i] = static_cast<In>(v);
      }
      const gpu::RowMatrix<In> m(std::span<const In>(x), rows, cols);
      for (const auto& s : kShapes)
        for (RowKernel k : {RowKernel::softmax_online, RowKernel::softmax_three_pass}) {
          const auto g = gpu::gpu_rows<In>(k, s, m);
          ASSERT_TRUE(g.ok()) << g.error;
          const auto model = model_rows<In>(k, s, std::span<const In>(x), rows, cols);
          std::string first;
          EXPECT_EQ(count_mismatches(g.outputs, model, &first), 0) << to_string(s) << " cols " << cols << ": " << first;
        }
    }
  };
  run(float{});
  run(bfloat16_bits{});
  run(double{});
}

// The host's rules for where a kernel reads its row from (gpu/rows/row_stage.hpp), with an H200's
// shared memory and no GPU: what is staged, what stays in the register slice, what is read again.
TEST(RowStage, Bfloat16RowsAndRowsReadMoreThanOnceThatNoSliceHolds) {
  using gpu::rows::row_stage_bytes;
  constexpr std::size_t sm = 233472, optin = 232448;  // an SM's shared memory, a block's most
  const RowShape b128{RowLayout::block_per_row, 128}, b256{RowLayout::block_per_row, 256},
      b1024{RowLayout::block_per_row, 1024}, w256{RowLayout::warp_per_row, 256};
  auto bytes = [&](RowKernel k, const RowShape& s, std::int64_t cols, std::size_t in, bool out) {
    return row_stage_bytes(k, s, cols, in, out, sm, optin);
  };
  // Float two-pass: 16 a thread fit the slice, 17 and 64 a thread (a row of 16384 at 256) are staged.
  EXPECT_EQ(bytes(RowKernel::two_pass, b256, 4096, 4, false), 0u);
  EXPECT_EQ(bytes(RowKernel::two_pass, b256, 4097, 4, false), 4097u * 4);
  EXPECT_EQ(bytes(RowKernel::two_pass, b256, 16384, 4, false), 16384u * 4);
  EXPECT_EQ(bytes(RowKernel::softmax_three_pass, b256, 4096, 4, false), 4096u * 4);  // no slice
  // The online softmax's plain loop: its rows staged, the whole row in flight at once.
  EXPECT_EQ(bytes(RowKernel::softmax_online, b256, 4096, 4, false), 4096u * 4);
  EXPECT_EQ(bytes(RowKernel::softmax_online, b256, 16384, 4, false), 16384u * 4);
  EXPECT_EQ(bytes(RowKernel::softmax_online, b256, 4096, 8, false), 0u);  // doubles: not measured staged
  // Other float kernels of one pass are staged only for their output pass, where no slice holds
  // the row.
  for (RowKernel k : {RowKernel::textbook, RowKernel::welford, RowKernel::welford_equal})
    EXPECT_EQ(bytes(k, b256, 16384, 4, false), 0u) << info(k).name;
  EXPECT_EQ(bytes(RowKernel::welford, b256, 4096, 4, true), 4096u * 4);
  EXPECT_EQ(bytes(RowKernel::textbook, b256, 4096, 4, true), 0u);
  EXPECT_EQ(bytes(RowKernel::textbook, b256, 16384, 4, true), 16384u * 4);
  // bfloat16: every moments and softmax kernel, where a slice would hold the row too; argmax never.
  EXPECT_EQ(bytes(RowKernel::textbook, b128, 16384, 2, false), 16384u * 2);
  EXPECT_EQ(bytes(RowKernel::two_pass, b128, 4096, 2, false), 4096u * 2);
  EXPECT_EQ(bytes(RowKernel::argmax, b128, 16384, 2, false), 0u);
  EXPECT_EQ(bytes(RowKernel::argmax, b256, 16384, 4, true), 0u);
  // At most 256 bytes a thread: 128 floats a thread are read again.
  EXPECT_EQ(bytes(RowKernel::two_pass, b128, 16384, 4, false), 0u);
  EXPECT_EQ(bytes(RowKernel::textbook, RowShape{RowLayout::block_per_row, 64}, 16384, 2, false), 0u);
  // Two blocks an SM: 128 KB of doubles a block do not fit twice in 228 KB; in twice that they do.
  EXPECT_EQ(bytes(RowKernel::two_pass, b1024, 16384, 8, false), 0u);
  EXPECT_EQ(row_stage_bytes(RowKernel::two_pass, b1024, 16384, 8, false, 2 * sm, 2 * optin), 16384u * 8);
  // warp_per_row: a row a warp, 8 rows a block of 256; rows of 4096 floats are 128 a thread, read again.
  EXPECT_EQ(bytes(RowKernel::two_pass, w256, 1000, 4, false), 8u * 1000 * 4);
  EXPECT_EQ(bytes(RowKernel::two_pass, w256, 4096, 4, false), 0u);
  EXPECT_EQ(bytes(RowKernel::two_pass, b256, 0, 4, false), 0u);
}

// Where Welford's steps are unrolled whole (gpu/rows/moments_kernel.cuh): every thread of the
// group holds exactly 32 or 16 elements, or 128 or 64 where the row is staged; float and bfloat16
// rows, the two Welford kernels only.
TEST(RowStage, WelfordUnrollsWhereEveryThreadHoldsThirtyTwoOrSixteen) {
  using gpu::rows::row_exact_steps;
  const RowShape b128{RowLayout::block_per_row, 128}, b256{RowLayout::block_per_row, 256},
      w256{RowLayout::warp_per_row, 256};
  for (RowKernel k : {RowKernel::welford, RowKernel::welford_equal}) {
    EXPECT_EQ(row_exact_steps(k, b128, 4096, 4), 32) << info(k).name;
    EXPECT_EQ(row_exact_steps(k, b256, 4096, 2), 16) << info(k).name;
    EXPECT_EQ(row_exact_steps(k, w256, 1024, 4), 32) << info(k).name;  // a warp's 32 threads
    EXPECT_EQ(row_exact_steps(k, w256, 512, 4), 16) << info(k).name;
    EXPECT_EQ(row_exact_steps(k, b128, 4096, 8), 0) << info(k).name;   // doubles
    EXPECT_EQ(row_exact_steps(k, b128, 4097, 4), 0) << info(k).name;   // a thread with one more
    EXPECT_EQ(row_exact_steps(k, b128, 4095, 4), 0) << info(k).name;
    EXPECT_EQ(row_exact_steps(k, b128, 8192, 4), 0) << info(k).name;   // 64 a thread: the loop
    EXPECT_EQ(row_exact_steps(k, b128, 8192, 2, true), 64) << info(k).name;  // ... unless staged
    EXPECT_EQ(row_exact_steps(k, b128, 16384, 2, true), 128) << info(k).name;
    EXPECT_EQ(row_exact_steps(k, b128, 4096, 2, true), 32) << info(k).name;
    EXPECT_EQ(row_exact_steps(k, b128, 32768, 2, true), 0) << info(k).name;  // 256 a thread
    EXPECT_EQ(row_exact_steps(k, b128, 16385, 2, true), 0) << info(k).name;
    EXPECT_EQ(row_exact_steps(k, b128, 12288, 2, true), 0) << info(k).name;  // 96 a thread
    EXPECT_EQ(row_exact_steps(k, b128, 1024, 4), 0) << info(k).name;   // 8 a thread
    EXPECT_EQ(row_exact_steps(k, b128, 0, 4), 0) << info(k).name;
  }
  for (RowKernel k : {RowKernel::textbook, RowKernel::two_pass, RowKernel::softmax_online, RowKernel::argmax})
    EXPECT_EQ(row_exact_steps(k, b128, 4096, 4), 0) << info(k).name;
}

// Which staged launches take an instance whose thread count is a compile-time constant: block_per_row
// at 128 or 256 threads, and only with a stage (the kernels that read memory keep one instance).
TEST(RowStage, StagedBlocksOf128And256FixTheirThreadCount) {
  using gpu::rows::row_fixed_threads;
  const std::size_t stage = 4096 * 2;
  EXPECT_EQ(row_fixed_threads(RowShape{RowLayout::block_per_row, 128}, stage), 128);
  EXPECT_EQ(row_fixed_threads(RowShape{RowLayout::block_per_row, 256}, stage), 256);
  EXPECT_EQ(row_fixed_threads(RowShape{RowLayout::block_per_row, 128}, 0), 0);  // no stage
  EXPECT_EQ(row_fixed_threads(RowShape{RowLayout::warp_per_row, 128}, stage), 0);
  EXPECT_EQ(row_fixed_threads(RowShape{RowLayout::warp_per_row, 256}, stage), 0);
  for (int threads : {32, 64, 96, 129, 255, 512, 1024})
    EXPECT_EQ(row_fixed_threads(RowShape{RowLayout::block_per_row, threads}, stage), 0) << threads;
}

TEST(Rows, BadShapesComeBackAsErrors) {
  SUMLAB_REQUIRE_GPU();
  const std::vector<float> x(64, 1.0f);
  const std::span<const float> xs(x);
  auto err = [&](RowShape s, std::int64_t rows, std::int64_t cols) {
    return gpu::gpu_rows<float>(RowKernel::textbook, s, xs, rows, cols).error;
  };
  EXPECT_NE(err({RowLayout::block_per_row, 48}, 2, 32).find("multiple of 32"), std::string::npos);
  EXPECT_NE(err({RowLayout::block_per_row, 2048}, 2, 32).find("32..1024"), std::string::npos);
  EXPECT_NE(err({RowLayout::warp_per_row, 256}, 3, 32).find("3 x 32"), std::string::npos);
  const auto bw = gpu::measure_copy_bandwidth(std::size_t(1) << 24);
  ASSERT_TRUE(bw.ok()) << bw.error;
  EXPECT_GT(bw.bytes_per_s, 1e9);
}

}  // namespace
}  // namespace sumlab::row_reduce
