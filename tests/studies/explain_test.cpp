// `sumlab explain`: the traced tree reproduces the order model's bits, shows the stages the shape
// implies, and rejects what it cannot draw.
#include "tests/studies/run_sumlab.hpp"

#include <gtest/gtest.h>
#include <sys/wait.h>

#include <array>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <string>

namespace {

using sumlab::test::Result;
using sumlab::test::run;

TEST(Explain, TraceMatchesModelForEveryShuffleKernelAndShape) {
  for (const char* k : {"gpu_two_pass", "gpu_last_block", "gpu_atomic"})
    for (const char* shape : {"--grid 2 --block 32 --vector 1", "--grid 3 --block 64 --mapping contiguous",
                              "--grid 5 --block 96 --vector 2 --warp-stage xor_butterfly --block-stage smem_tree"})
      for (const char* n : {"1", "31", "33", "300"}) {
        const Result r = run(std::string("explain --algorithm ") + k + " --n " + n + " " + shape + " --dist normal");
        EXPECT_EQ(r.code, 0) << k << " " << shape << " n=" << n << "\n" << r.out;
        EXPECT_NE(r.out.find("same bits"), std::string::npos) << r.out;
      }
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
  EXPECT_TRUE(std::filesystem::file_size(d / "t.svg") > 100);
  EXPECT_EQ(run("explain --algorithm gpu_kahan --n 8").code, 2);
  EXPECT_EQ(run("explain --n 100000").code, 2);
  EXPECT_EQ(run("explain --n 16 --block 100").code, 2);
}

}  // namespace
