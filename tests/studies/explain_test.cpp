// `sumlab explain`: the traced tree reproduces the order model's bits, shows the stages the shape
// implies, and rejects what it cannot draw.
#include "tests/studies/run_sumlab.hpp"

#include <gtest/gtest.h>
#include <sys/wait.h>

#include <algorithm>
#include <array>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>

namespace {

using sumlab::test::Result;
using sumlab::test::run;

TEST(Explain, TraceMatchesModelForEveryShuffleKernelAndShape) {
  for (const char* k : {"gpu_two_pass", "gpu_last_block", "gpu_atomic", "gpu_kahan", "gpu_double_acc", "gpu_double_word"})
    for (const char* shape : {"--grid 2 --block 32 --vector 1", "--grid 3 --block 64 --mapping contiguous",
                              "--grid 5 --block 96 --vector 2 --warp-stage xor_butterfly --block-stage smem_tree"})
      for (const char* n : {"1", "31", "33", "300"}) {
        const Result r = run(std::string("explain --algorithm ") + k + " --n " + n + " " + shape + " --dist normal");
        EXPECT_EQ(r.code, 0) << k << " " << shape << " n=" << n << "\n" << r.out;
        EXPECT_NE(r.out.find("same bits"), std::string::npos) << r.out;
      }
}

// gpu_atomic over several blocks is explained in launch order: the result line says so, and says
// whether other arrival orders can give other bits (3 or more nonzero block partials) or not.
TEST(Explain, AtomicSaysItIsTheLaunchOrder) {
  const Result many = run("explain --algorithm gpu_atomic --n 300 --grid 4 --block 32 --vector 1 --dist normal");
  ASSERT_EQ(many.code, 0) << many.out;
  EXPECT_NE(many.out.find("same bits (launch order; other arrival orders can differ)"), std::string::npos) << many.out;
  const Result two = run("explain --algorithm gpu_atomic --n 300 --grid 2 --block 32 --vector 1 --dist normal");
  ASSERT_EQ(two.code, 0) << two.out;
  EXPECT_NE(two.out.find("same bits (launch order; here every arrival order gives these bits)"), std::string::npos)
      << two.out;
  const Result one = run("explain --algorithm gpu_atomic --n 300 --grid 1 --block 32 --dist normal");
  ASSERT_EQ(one.code, 0) << one.out;
  EXPECT_EQ(one.out.find("launch order;"), std::string::npos) << one.out;
}

TEST(Explain, TraceMatchesModelForEveryHarrisKernelAndGpuSerial) {
  for (const char* k : {"gpu_serial", "gpu_interleaved", "gpu_strided", "gpu_sequential", "gpu_first_add",
                        "gpu_warp_unrolled", "gpu_unrolled", "gpu_multi_add"})
    for (const char* shape : {"--block 32", "--grid 3 --block 64", "--grid 2 --block 128"})
      for (const char* n : {"1", "31", "33", "300", "1000"}) {
        const Result r = run(std::string("explain --algorithm ") + k + " --n " + n + " " + shape + " --dist normal");
        EXPECT_EQ(r.code, 0) << k << " " << shape << " n=" << n << "\n" << r.out;
        EXPECT_NE(r.out.find("same bits"), std::string::npos) << k << " " << shape << " n=" << n << "\n" << r.out;
      }
}

// Hand-counted: Harris 3 (sequential addressing) on 300 elements in blocks of 64 loads 5 blocks
// (the last with 44 elements, +0 past n: idle additions are not drawn), so the first pass adds 299
// - 4 = 295 pairs inside blocks and the relaunch adds the 5 partials with 4 additions; 300 - 1 in all.
TEST(Explain, HarrisStagesAndCounts) {
  const Result seq = run("explain --algorithm gpu_sequential --n 300 --block 64 --dist normal");
  ASSERT_EQ(seq.code, 0) << seq.out;
  EXPECT_NE(seq.out.find("relaunch: the block partials are the next pass's input"), std::string::npos) << seq.out;
  EXPECT_NE(seq.out.find("additions: thread 0, warp "), std::string::npos) << seq.out;
  EXPECT_NE(seq.out.find("cross-block 4\n"), std::string::npos) << seq.out;
  const Result serial = run("explain --algorithm gpu_serial --n 50 --dist normal");
  ASSERT_EQ(serial.code, 0) << serial.out;
  EXPECT_NE(serial.out.find("additions: thread 49, warp 0, block 0, cross-block 0"), std::string::npos) << serial.out;
  const Result multi = run("explain --algorithm gpu_multi_add --n 1000 --grid 3 --block 64 --dist normal");
  ASSERT_EQ(multi.code, 0) << multi.out;
  EXPECT_NE(multi.out.find("second pass: one block over the block partials"), std::string::npos) << multi.out;
  EXPECT_NE(multi.out.find("cross-block 2\n"), std::string::npos) << multi.out;
  // Harris 1-6 take no grid: said, not silently ignored.
  const Result grid = run("explain --algorithm gpu_interleaved --n 100 --grid 7 --block 32");
  ASSERT_EQ(grid.code, 0) << grid.out;
  EXPECT_NE(grid.out.find("gpu_interleaved does not read --grid"), std::string::npos) << grid.out;
}

// The compensated and wide kernels draw the shuffle tree with their own op at every node, and the
// trace reproduces the model's bits (both dtypes); a double accumulator's nodes are shown
// unrounded; kernels without an additive tree are refused with the list of those that have one.
TEST(Explain, CompensatedTreesShowTheirOwnValues) {
  for (const char* dtype : {"float32", "float64"})
    for (const char* k : {"gpu_kahan", "gpu_double_word"}) {
      const Result r = run(std::string("explain --algorithm ") + k + " --n 100 --grid 2 --block 32 --vector 1 --dist cancellation --dtype " +
                           dtype);
      ASSERT_EQ(r.code, 0) << r.out;
      EXPECT_NE(r.out.find("same bits"), std::string::npos) << r.out;
      EXPECT_NE(r.out.find("grid boundary"), std::string::npos) << r.out;
    }
  const Result wide = run("explain --algorithm gpu_double_acc --n 2 --block 32 --grid 1 --vector 1 --dist uniform");
  ASSERT_EQ(wide.code, 0) << wide.out;
  // 0.70657235 + 0.8402417 in double, shown with all 17 digits (a float would show 1.546814)
  EXPECT_NE(wide.out.find("= 1.5468140244483948"), std::string::npos) << wide.out;
  const Result none = run("explain --algorithm gpu_exact --n 8");
  EXPECT_EQ(none.code, 2) << none.out;
  EXPECT_NE(none.out.find("gpu_double_word"), std::string::npos) << none.out;
}

// The CPU trees are traced by running the algorithms' own code on traced numbers: the bits are the
// algorithm's, and the hand-counted trees hold. pairwise on 8: three levels, 7 additions, the last
// adding the halves s2 (x0..x3) and s5 (x4..x7). numpy_pairwise on 17: 8 chains of 2, the
// 3-level tree of the 8 accumulators, then x16 added last (16 additions; the outer +0 is idle).
TEST(Explain, CpuTreesAreTheAlgorithmsOwn) {
  for (const char* a : {"serial", "pairwise", "pairwise_b128", "numpy_pairwise"})
    for (const char* n : {"0", "1", "7", "8", "9", "127", "128", "129", "300", "1000"}) {
      const Result r = run(std::string("explain --algorithm ") + a + " --n " + n + " --dist normal --dtype float64");
      ASSERT_EQ(r.code, 0) << a << " n=" << n << "\n" << r.out;
      EXPECT_NE(r.out.find("the algorithm itself: "), std::string::npos) << r.out;
      EXPECT_NE(r.out.find("same bits"), std::string::npos) << a << " n=" << n << "\n" << r.out;
    }
  const Result p = run("explain --algorithm pairwise --n 8 --dist uniform");
  ASSERT_EQ(p.code, 0) << p.out;
  EXPECT_NE(p.out.find("s6 = s2 + s5"), std::string::npos) << p.out;
  EXPECT_NE(p.out.find("additions: 7\n"), std::string::npos) << p.out;
  const Result np = run("explain --algorithm numpy_pairwise --n 17 --dist uniform");
  ASSERT_EQ(np.code, 0) << np.out;
  EXPECT_NE(np.out.find("= s14 + x16"), std::string::npos) << np.out;
  EXPECT_NE(np.out.find("additions: 16\n"), std::string::npos) << np.out;
  const Result kahan = run("explain --algorithm kahan --n 8");
  EXPECT_EQ(kahan.code, 2) << kahan.out;
  EXPECT_NE(kahan.out.find("numpy_pairwise"), std::string::npos) << kahan.out;
}

// The modelled scans (+): every output's additions traced by running the scan model on traced
// numbers; each of the n outputs has the model's bits, over one tile and several (the carry).
// Hand-derived: warp_hillis_steele on 8 elements, 2 per thread, one warp: 4 thread additions,
// y1 = x0 + x1 is the first of them, and the total is the last output.
TEST(Explain, ScansTraceEveryOutput) {
  for (const char* a : {"warp_hillis_steele", "block_blelloch", "warp_hs_chained"})
    for (const char* n : {"0", "1", "31", "64", "65", "300"}) {
      const Result r = run(std::string("explain --algorithm ") + a + " --n " + n + " --block 32 --items 2 --dist normal");
      ASSERT_EQ(r.code, 0) << a << " n=" << n << "\n" << r.out;
      EXPECT_NE(r.out.find(std::string("the scan model: ") + n + " outputs -> same bits"), std::string::npos) << r.out;
      if (std::string(n) == "300") {
        EXPECT_NE(r.out.find("carry: the tile totals"), std::string::npos) << r.out;
      }
    }
  const Result hs = run("explain --algorithm warp_hillis_steele --n 8 --block 32 --items 2 --dist uniform");
  ASSERT_EQ(hs.code, 0) << hs.out;
  EXPECT_NE(hs.out.find("additions: thread 4,"), std::string::npos) << hs.out;
  EXPECT_NE(hs.out.find("outputs: y0=x0, y1=s0,"), std::string::npos) << hs.out;
  EXPECT_EQ(run("explain --algorithm block_blelloch --n 8 --block 32 --items 3").code, 2);  // items: a power of two
  EXPECT_EQ(run("explain --algorithm warp_hs_chained --n 8 --block 32 --items 5").code, 2);  // items: not compiled
}

// The modelled segmented strategies: every segment's tree traced by running the strategy's model
// on traced numbers, each segment's sum with the model's bits. A tree over a segment of m elements
// has m - 1 additions, so the drawn additions total n minus the non-empty segments, whatever the
// strategy and shape. Hand-derived: block_per_segment on the default segments 5,0,3,1,7 of 16
// elements loads one element per thread, so all 4 + 2 + 6 additions are the warp's shuffles, the
// first x0 + x4 (shfl_down offset 4 in a segment of 5); the single-element segment is its element.
TEST(Explain, SegmentedTraceEverySegment) {
  auto additions = [](const std::string& out) {
    int t = -1, w = -1, b = -1, c = -1;
    const auto at = out.find("additions: thread ");
    if (at == std::string::npos) return -1;
    std::sscanf(out.c_str() + at, "additions: thread %d, warp %d, block %d, cross-block %d", &t, &w, &b, &c);
    return t + w + b + c;
  };
  for (const char* a : {"block_per_segment", "warp_per_segment", "segmented_scan"})
    for (const char* shape : {"--block 32 --items 2", "--block 64 --items 3", "--block 96 --items 1"}) {
      const Result r = run(std::string("explain --algorithm ") + a + " " + shape +
                           " --n 300 --segment-sizes 0,1,31,33,0,235 --dist normal --dtype float64");
      ASSERT_EQ(r.code, 0) << a << " " << shape << "\n" << r.out;
      EXPECT_NE(r.out.find("the segmented model: 6 sums -> same bits"), std::string::npos) << r.out;
      EXPECT_EQ(additions(r.out), 300 - 4) << a << " " << shape << "\n" << r.out;
      EXPECT_NE(r.out.find("seg0=0 (empty), seg1=x0, seg2=s"), std::string::npos) << r.out;
    }
  for (const char* n : {"0", "1", "33"}) {
    const Result r = run(std::string("explain --algorithm segmented_scan --n ") + n + " --block 32 --items 2");
    ASSERT_EQ(r.code, 0) << n << "\n" << r.out;
    EXPECT_NE(r.out.find("-> same bits"), std::string::npos) << r.out;
  }
  const Result tiles = run("explain --algorithm segmented_scan --n 300 --block 32 --items 2 --segment-sizes 300");
  ASSERT_EQ(tiles.code, 0) << tiles.out;
  EXPECT_NE(tiles.out.find("carry: the tile totals"), std::string::npos) << tiles.out;
  const Result hand = run("explain --algorithm block_per_segment --n 16 --block 32 --dist uniform");
  ASSERT_EQ(hand.code, 0) << hand.out;
  EXPECT_NE(hand.out.find("additions: thread 0, warp 12, block 0, cross-block 0"), std::string::npos) << hand.out;
  EXPECT_NE(hand.out.find(" = x0 + x4 "), std::string::npos) << hand.out;
  EXPECT_NE(hand.out.find("seg1=0 (empty), seg2=s"), std::string::npos) << hand.out;
  EXPECT_NE(hand.out.find("seg3=x8,"), std::string::npos) << hand.out;
  EXPECT_EQ(run("explain --algorithm warp_per_segment --n 10 --segment-sizes 3,4").code, 2);  // sums to 7
  EXPECT_EQ(run("explain --algorithm warp_per_segment --n 10 --segment-sizes 3,-4,11").code, 2);
  EXPECT_EQ(run("explain --algorithm segmented_scan --n 10 --items 5").code, 2);
  EXPECT_EQ(run("explain --algorithm cub_segmented_reduce --n 10").code, 2);  // a peer: no model
}

TEST(Explain, StagesFollowTheShape) {
  // 300 elements over 3 blocks of 64 with 4-wide loads: chains, warp shuffles, a shared-memory block
  // stage (two warps in block 0) and one cross-block addition.
  const Result r = run("explain --n 300 --grid 3 --block 64");
  ASSERT_EQ(r.code, 0) << r.out;
  EXPECT_NE(r.out.find("__syncthreads"), std::string::npos);
  EXPECT_NE(r.out.find("grid boundary"), std::string::npos);
  EXPECT_NE(r.out.find("cross-block 1"), std::string::npos) << r.out;
}

TEST(Explain, CsvAndSvgAndBadInput) {
  const auto d = std::filesystem::temp_directory_path() / "sumlab_explain_test";
  std::filesystem::remove_all(d);
  std::filesystem::create_directories(d);
  const Result r = run("explain --n 16 --grid 2 --block 32 --vector 1 --csv " + (d / "t.csv").string() + " --svg " +
                       (d / "t.svg").string());
  ASSERT_EQ(r.code, 0) << r.out;
  std::ifstream csv(d / "t.csv");
  std::string header, line;
  std::getline(csv, header);
  EXPECT_EQ(header, "kernel,dtype,n,shape,node,lhs,rhs,value,stage,first_thread,last_thread");
  int rows = 0;
  while (std::getline(csv, line)) ++rows;
  EXPECT_EQ(rows, 16 + 15);  // 16 inputs, 15 additions
  std::ifstream svg(d / "t.svg");
  const std::string text((std::istreambuf_iterator<char>(svg)), std::istreambuf_iterator<char>());
  EXPECT_NE(text.find(">gpu_two_pass float32 n=16 shape "), std::string::npos) << text.substr(0, 400);
  EXPECT_NE(text.find(">result "), std::string::npos) << text.substr(0, 400);  // its own line, not clipped
  EXPECT_EQ(run("explain --algorithm gpu_fixed_point --n 8").code, 2);
  EXPECT_EQ(run("explain --n 100000").code, 2);
  EXPECT_EQ(run("explain --n 16 --block 100").code, 2);
}

// One line on stderr, exit 2, the cause named: what every refusal below must be.
void expect_refused(const std::string& args, const std::string& needle) {
  const Result r = run(args);
  EXPECT_EQ(r.code, 2) << args << "\n" << r.out;
  EXPECT_NE(r.out.find(needle), std::string::npos) << args << "\n" << r.out;
  EXPECT_EQ(r.out.rfind("sumlab: ", 0), 0u) << args << "\n" << r.out;
  EXPECT_EQ(std::count(r.out.begin(), r.out.end(), '\n'), 1) << args << "\n" << r.out;
}

// Segment sizes whose int64 sum wraps (2 x (2^63 - 1) + 12 wraps to 10) are refused, not taken
// for n: the sum is checked as it is added.
TEST(Explain, SegmentSizesThatOverflowAreRefused) {
  for (const char* a : {"block_per_segment", "segmented_scan"})
    expect_refused(std::string("explain -a ") + a +
                       " --n 10 --segment-sizes 9223372036854775807,9223372036854775807,12",
                   "--segment-sizes add up to more than 2^63-1, but the input has n = 10 elements");
  expect_refused("explain -a block_per_segment --n 10 --segment-sizes 3,9223372036854775807",
                 "--segment-sizes add up to more than 2^63-1");
}

// A generated n past what explain draws is refused before any value is made: as the documented
// refusal, not a memory error (2^40) or seconds of generating (1e7).
TEST(Explain, LargeNIsRefusedBeforeGenerating) {
  for (const char* n : {"2^40", "1e7", "4097"}) {
    const auto t0 = std::chrono::steady_clock::now();
    expect_refused(std::string("explain --n ") + n, "explain is for small inputs: n <= 4096");
    EXPECT_LT(std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count(), 2.0) << n;
  }
  const Result edge = run("explain --n 4096 -a serial");
  EXPECT_EQ(edge.code, 0) << edge.out.substr(0, 400);
}

// --csv and --svg name files: a folder is refused as a folder, and an empty name is refused
// rather than read as the option left out.
TEST(Explain, OutputPathsThatAreFoldersOrEmptyAreRefused) {
  const auto d = std::filesystem::temp_directory_path() / "sumlab_explain_test_paths";
  std::filesystem::remove_all(d);
  std::filesystem::create_directories(d);
  expect_refused("explain --n 16 --csv " + d.string(), "--csv '" + d.string() + "' is a folder");
  expect_refused("explain --n 16 --svg " + d.string(), "--svg '" + d.string() + "' is a folder");
  EXPECT_TRUE(std::filesystem::is_empty(d));
  expect_refused("explain --n 16 --svg ''", "--svg: the value is empty");
  expect_refused("explain --n 16 --csv ''", "--csv: the value is empty");
  std::filesystem::remove_all(d);
}

}  // namespace
