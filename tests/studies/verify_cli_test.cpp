// `sumlab verify`, the backend choice and the launch-shape options, on a machine with or without a
// GPU (the GPU half of verify itself is exercised by scripts/device-check.sh on an H200).
#include "tests/studies/run_sumlab.hpp"

#include <CLI/CLI.hpp>
#include <gtest/gtest.h>
#include <sys/wait.h>

#include <algorithm>
#include <array>
#include <cstdio>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include "core/gpu_kernel.hpp"
#include "studies/backend.hpp"
#include "studies/commands.hpp"
#include "studies/sum_api.hpp"
#include "studies/shape_options.hpp"

namespace sumlab {
namespace {

using sumlab::test::Result;
using sumlab::test::run;

bool have_gpu() { return cuda_backend_available(nullptr); }

TEST(VerifyCli, WithoutAGpuSaysWhyAndFails) {
  if (have_gpu()) GTEST_SKIP() << "a GPU is present";
  const Result r = run("verify --quick");
  EXPECT_EQ(r.code, 2) << r.out;
  EXPECT_NE(r.out.find("no CUDA device"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("--allow-no-gpu"), std::string::npos) << r.out;
}

TEST(VerifyCli, ModelSideAloneWithAllowNoGpu) {
  if (have_gpu()) GTEST_SKIP() << "a GPU is present: the full check runs instead (scripts/device-check.sh)";
  const Result r = run("verify --allow-no-gpu --quick --dists uniform,random_bits --threads 2");
  ASSERT_EQ(r.code, 0) << r.out;
  EXPECT_NE(r.out.find("gpu_two_pass"), std::string::npos);
  EXPECT_NE(r.out.find("gpu_exact"), std::string::npos);
  EXPECT_NE(r.out.find("only the model side ran"), std::string::npos);
}

// The bench's wide input by its name there: the model side runs it and the sweep names it.
TEST(VerifyCli, TakesTheBenchsNameAndSigma) {
  if (have_gpu()) GTEST_SKIP() << "a GPU is present: the full check runs instead (scripts/device-check.sh)";
  const Result r = run("verify --allow-no-gpu --quick --kernels gpu_fixed_point --dists lognormal:12 --threads 2");
  ASSERT_EQ(r.code, 0) << r.out;
  EXPECT_NE(r.out.find("inputs   lognormal:12 (seed"), std::string::npos) << r.out;
}

// Without a GPU the family tables count what the model compared with itself (shape_invariant
// kernels across shapes) and print '-' where nothing was compared, never 0; no option that verify
// does not have is named; the footnote gives the reason that applies.
TEST(VerifyCli, WithoutAGpuNothingUncomparedIsCountedAsZero) {
  if (have_gpu()) GTEST_SKIP() << "a GPU is present: the full check runs instead (scripts/device-check.sh)";
  const Result r = run("verify --allow-no-gpu --quick --dists uniform --threads 2");
  ASSERT_EQ(r.code, 0) << r.out;
  EXPECT_EQ(r.out.find("--model-only"), std::string::npos) << r.out;
  EXPECT_EQ(r.out.find("no model to compare with"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("no GPU bits to compare with"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("row kernels: no GPU ran: model only"), std::string::npos) << r.out;
  EXPECT_EQ(r.out.find("\nrow kernels\n"), std::string::npos) << "the table's title once: " << r.out;
  EXPECT_NE(r.out.find("shape-invariance breaks"), std::string::npos) << r.out;
  // kernel, dtype (scans: algorithm, operator, dtype), cases, count, errors.
  std::map<std::string, std::string> count;  // "name dtype" -> the count column
  std::istringstream lines(r.out);
  for (std::string line; std::getline(lines, line);) {
    std::istringstream fields(line);
    std::vector<std::string> f;
    for (std::string w; fields >> w;) f.push_back(w);
    if (f.size() == 5 && (f[1] == "float32" || f[1] == "float64" || f[1] == "bfloat16")) count[f[0] + " " + f[1]] = f[3];
    if (f.size() == 6 && (f[2] == "float32" || f[2] == "float64")) count[f[0] + " " + f[1] + " " + f[2]] = f[4];
  }
  // run_to_run: compared with nothing; shape_invariant: compared across shapes.
  EXPECT_EQ(count["textbook float32"], "-") << r.out;
  EXPECT_EQ(count["welford bfloat16"], "-") << r.out;
  EXPECT_EQ(count["argmax float64"], "0") << r.out;
  EXPECT_EQ(count["block_per_segment float32"], "-") << r.out;
  EXPECT_EQ(count["warp_per_segment float64"], "0") << r.out;
  EXPECT_EQ(count["warp_hillis_steele plus float32"], "-") << r.out;
  EXPECT_EQ(count["block_blelloch max float64"], "0") << r.out;
}

// The help says what the run does: --quick draws 12 shapes and adds the grid-1 ones that the run
// counts in its "sweep N launch shapes" line.
TEST(VerifyCli, QuickHelpMatchesTheShapesThatRun) {
  const Result help = run("verify --help");
  ASSERT_EQ(help.code, 0) << help.out;
  EXPECT_EQ(help.out.find("12 shapes,"), std::string::npos) << help.out;
  EXPECT_NE(help.out.find("12 drawn launch shapes plus the grid-1 shapes"), std::string::npos) << help.out;
  if (have_gpu()) return;
  const Result r = run("verify --allow-no-gpu --quick --kernels gpu_exact --dists uniform --threads 2");
  ASSERT_EQ(r.code, 0) << r.out;
  const auto at = r.out.find("sweep ");
  ASSERT_NE(at, std::string::npos) << r.out;
  const int shapes = std::stoi(r.out.substr(r.out.find_first_not_of(' ', at + 6)));
  EXPECT_GE(shapes, 12);
  EXPECT_LE(shapes, 12 + 3);
}

// `bench --sweep`'s help states the rule bench_shapes applies (9 shapes), not a count it never ran.
TEST(BenchHelp, SweepStatesTheRule) {
  const Result help = run("bench --help");
  ASSERT_EQ(help.code, 0) << help.out;
  EXPECT_EQ(help.out.find("12 grid x block"), std::string::npos) << help.out;
  EXPECT_NE(help.out.find("1, 2, 4, 8 blocks per SM x 256, 512, 1024 threads with at most 2048 threads per SM"),
            std::string::npos)
      << help.out;
}

// The shapes the sweep times: the default once, then the rule's 9 grid x block pairs, each with
// both cross-block ends where the kernel takes one, whatever end its default has.
TEST(BenchShapes, TheSweepTimesEveryPairWithBothEnds) {
  auto count = [](GpuKernel k, int sms) {
    std::map<std::pair<int, int>, std::vector<CrossBlock>> ends;
    const auto shapes = bench_shapes(k, sms, true, "float32");
    EXPECT_EQ(shapes.front().second, "default");
    EXPECT_EQ(shapes.front().first, default_shape(k, sms));
    for (std::size_t i = 0; i < shapes.size(); ++i) {
      for (std::size_t j = 0; j < i; ++j) EXPECT_FALSE(shapes[i].first == shapes[j].first) << "a shape timed twice";
      ends[{shapes[i].first.grid, shapes[i].first.block}].push_back(shapes[i].first.cross);
    }
    EXPECT_EQ(ends.size(), 9u);
    return ends;
  };
  for (const auto& [pair, e] : count(GpuKernel::kahan, 132)) {
    EXPECT_EQ(e.size(), 2u) << pair.first << "x" << pair.second;
    EXPECT_NE(std::count(e.begin(), e.end(), CrossBlock::second_kernel), 0);
    EXPECT_NE(std::count(e.begin(), e.end(), CrossBlock::last_block), 0);
  }
  for (const auto& [pair, e] : count(GpuKernel::two_pass, 114)) EXPECT_EQ(e, std::vector{CrossBlock::second_kernel});
  EXPECT_EQ(count(GpuKernel::exact, 132).size(), 9u);
  // Each type's default first (gpu_exact on float64: one block of 256 an SM), then the same sweep.
  const auto exact64 = bench_shapes(GpuKernel::exact, 132, true, "float64");
  EXPECT_EQ(exact64.front().first, default_shape(GpuKernel::exact, 132, "float64"));
  EXPECT_EQ(exact64.front().first.grid, 132);
  EXPECT_EQ(exact64.size(), bench_shapes(GpuKernel::exact, 132, true, "float32").size());
  EXPECT_EQ(bench_shapes(GpuKernel::kahan, 132, false, "float32").size(), 1u);
  EXPECT_EQ(bench_shapes(GpuKernel::serial, 132, true, "float32").size(), 1u);  // no grid or block to sweep
}

// A list of kernels checks those sum kernels only: the row, segmented and scan kernels run with
// every kernel (the test above) and not with a list.
TEST(VerifyCli, AKernelListChecksThoseSumKernelsOnly) {
  if (have_gpu()) GTEST_SKIP() << "a GPU is present: the full check runs instead (scripts/device-check.sh)";
  const Result r = run("verify --allow-no-gpu --quick --kernels gpu_exact --dists uniform --threads 2");
  ASSERT_EQ(r.code, 0) << r.out;
  EXPECT_NE(r.out.find("gpu_exact"), std::string::npos) << r.out;
  EXPECT_EQ(r.out.find("gpu_two_pass"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("segmented sums and scans: not checked"), std::string::npos) << r.out;
  EXPECT_EQ(r.out.find("row kernels: "), std::string::npos) << r.out;  // no family table
}

// --time-limit stops the family checks too, lists them as not covered and exits 1.
TEST(VerifyCli, TimeLimitStopsEveryPartAndFails) {
  if (have_gpu()) GTEST_SKIP() << "a GPU is present: the full check runs instead (scripts/device-check.sh)";
  const Result r = run("verify --allow-no-gpu --quick --dists uniform --threads 2 --time-limit 1e-9");
  EXPECT_EQ(r.code, 1) << r.out;
  EXPECT_NE(r.out.find("inputs not covered"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("the row kernels, segmented sums and scans not covered"), std::string::npos) << r.out;
  EXPECT_EQ(r.out.find("row kernels: "), std::string::npos) << r.out;
}

TEST(VerifyCli, BadOptionsAreOneLineErrors) {
  Result r = run("verify --allow-no-gpu --sizes 12x");
  EXPECT_EQ(r.code, 2) << r.out;
  EXPECT_NE(r.out.find("not a number"), std::string::npos) << r.out;
  r = run("verify --allow-no-gpu --dists nosuch");
  EXPECT_EQ(r.code, 2) << r.out;
  r = run("verify --allow-no-gpu --dists uniform:3");
  EXPECT_EQ(r.code, 2) << r.out;
  EXPECT_NE(r.out.find("only normal:SIGMA and lognormal:SIGMA take a parameter"), std::string::npos) << r.out;
  r = run("verify --allow-no-gpu --kernels gpu_nosuch");
  EXPECT_EQ(r.code, 2) << r.out;
  EXPECT_NE(r.out.find("gpu_two_pass"), std::string::npos) << r.out;  // lists the valid names
}

TEST(Backend, ChoiceAndErrors) {
  const auto m = make_backend("model");
  EXPECT_EQ(m->name(), "model");
  EXPECT_EQ(m->sm_count(), 132);
  const auto d = make_backend("");
  EXPECT_EQ(d->kind(), have_gpu() ? BackendKind::cuda : BackendKind::model);
  EXPECT_THROW(make_backend("opencl"), UserError);
  if (!have_gpu()) {
    try {
      make_backend("cuda");
      ADD_FAILURE() << "expected a UserError";
    } catch (const UserError& e) {
      EXPECT_NE(std::string(e.what()).find("no CUDA device"), std::string::npos) << e.what();
    }
  }
  // The model backend: a value for a modelled kernel, none for a library peer, an error for a bad shape.
  const std::vector<float> x(1000, 0.5f);
  const auto two = m->sum(GpuKernel::two_pass, default_shape(GpuKernel::two_pass), std::span<const float>(x));
  EXPECT_TRUE(two.has_value);
  EXPECT_EQ(two.value, 500.0f);
  EXPECT_FALSE(m->sum(GpuKernel::cub, LaunchShape{}, std::span<const float>(x)).has_value);
  LaunchShape bad = default_shape(GpuKernel::two_pass);
  bad.block = 33;
  EXPECT_THROW(m->sum(GpuKernel::two_pass, bad, std::span<const float>(x)), UserError);
}

// Parses `args` into ShapeOptions through a CLI11 app, then resolves the shape for kernel k.
LaunchShape resolve(const std::vector<std::string>& args, GpuKernel k) {
  CLI::App app;
  ShapeOptions o;
  add_shape_options(app, o);
  std::vector<std::string> argv = args;
  std::reverse(argv.begin(), argv.end());
  app.parse(argv);
  return resolve_shape(overrides(o), k, 132, "float32", 1000).shape;
}

TEST(ShapeOptions, DefaultsOverridesAndErrors) {
  EXPECT_EQ(resolve({}, GpuKernel::two_pass), default_shape(GpuKernel::two_pass));
  const LaunchShape s = resolve({"--grid", "7", "--block", "96", "--vector", "2", "--mapping", "contiguous",
                                 "--warp-stage", "xor_butterfly", "--block-stage", "smem_tree"},
                                GpuKernel::kahan);
  // The fields not given keep the kernel's default: Kahan's ends in the last block.
  EXPECT_EQ(to_string(s), "7x96 v2 contiguous xor_butterfly smem_tree last_block");
  // A kernel ignores the fields it does not take.
  EXPECT_EQ(resolve({"--vector", "2"}, GpuKernel::sequential).vector, default_shape(GpuKernel::sequential).vector);
  EXPECT_EQ(resolve({"--cross-block", "second_kernel"}, GpuKernel::kahan).cross, CrossBlock::second_kernel);
  auto fails = [](const std::vector<std::string>& args, GpuKernel k, const std::string& needle) {
    try {
      resolve(args, k);
      ADD_FAILURE() << "no error for " << args.front();
    } catch (const UserError& e) {
      EXPECT_NE(std::string(e.what()).find(needle), std::string::npos) << e.what();
    }
  };
  fails({"--block", "100"}, GpuKernel::two_pass, "multiple of 32");
  fails({"--block", "2048"}, GpuKernel::two_pass, "1024");
  fails({"--grid", "0"}, GpuKernel::two_pass, "grid");
  fails({"--grid", "0"}, GpuKernel::sequential, "grid");  // even where the field is ignored
  fails({"--vector", "3"}, GpuKernel::two_pass, "1, 2 or 4");
  fails({"--block", "96"}, GpuKernel::sequential, "power of two");
  fails({"--mapping", "diagonal"}, GpuKernel::two_pass, "grid_stride|contiguous");
  fails({"--cross-block", "atomic"}, GpuKernel::two_pass, "second_kernel");
  fails({"--cross-block", "atomic"}, GpuKernel::kahan, "second_kernel or last_block");
}

TEST(SumApi, SelectRunAndDescribe) {
  EXPECT_TRUE(select_gpu_kernels({"serial", "kahan"}).empty());  // CPU names are not GPU kernels
  const auto some = select_gpu_kernels({"serial", "gpu_two_pass", "gpu_exact"});
  ASSERT_EQ(some.size(), 2u);
  EXPECT_EQ(some[0], GpuKernel::two_pass);
  EXPECT_EQ(select_gpu_kernels({"all"}).size(), gpu_kernels().size() - 1);  // all but the racy tree
  EXPECT_THROW(select_gpu_kernels({"gpu_nosuch"}), UserError);
  SumRequest req;
  req.algorithms = {"gpu"};
  req.backend = "model";
  req.shape.block = 64;
  req.shape.grid = 7;
  const std::vector<double> x(777, 0.25);
  const SumReport<double> r = sum_report<double>(req, std::span<const double>(x));
  EXPECT_EQ(r.rows.size(), gpu_kernels().size() - 2);  // no racy tree; gpu_double_acc needs float32
  for (const auto& row : r.rows) {
    const GpuKernel k = *find_gpu_kernel(row.algorithm);
    if (!info(k).modelled) {
      EXPECT_FALSE(row.has_value) << row.algorithm;
      continue;
    }
    EXPECT_TRUE(row.has_value) << row.algorithm;
    EXPECT_EQ(row.result.value, 194.25) << row.algorithm;
    if (info(k).shape_fields & field_block) {
      EXPECT_EQ(row.shape->block, 64) << row.algorithm;
    }
    // A field the kernel does not read is reported, not silently dropped.
    const bool reads_grid = info(k).shape_fields & field_grid;
    EXPECT_EQ(std::count(row.ignored.begin(), row.ignored.end(), "grid"), reads_grid ? 0 : 1) << row.algorithm;
  }
  const auto j = shape_json(GpuKernel::two_pass, default_shape(GpuKernel::two_pass));
  EXPECT_EQ(j["grid"], 528);
  EXPECT_EQ(j["cross_block"], "second_kernel");
  EXPECT_EQ(shape_json(GpuKernel::sequential, default_shape(GpuKernel::sequential))["text"], "block 256");
  EXPECT_EQ(shape_json(GpuKernel::exact, default_shape(GpuKernel::exact))["text"], "grid 264, block 256");
}

}  // namespace
}  // namespace sumlab
