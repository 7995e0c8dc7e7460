// Plugins' device entries on a GPU (label `gpu`: skips without a CUDA device). The CUDA example
// (plugin/example/block_sum.cu) read in place from device memory: its two_pass configuration gives
// the same bits in 20 calls and every configuration a value within gamma(n-1) sum|x| of the exact
// sum (any order of n - 1 additions is); the determinism study does not find its declaration
// violated; bench times its configurations beside CUB; and `sum --backend cuda` calls the device
// entries (the example has no host entries, and the fixtures' device entries say that they ran).
#include <gtest/gtest.h>
#include <unistd.h>

#include <bit>
#include <cmath>
#include <cstdint>
#include <filesystem>
#include <map>
#include <nlohmann/json.hpp>
#include <set>
#include <span>
#include <string>
#include <vector>

#include "core/error_bound.hpp"
#include "core/float_traits.hpp"
#include "core/generators.hpp"
#include "reference/mpfr_sum.hpp"
#include "studies/backend.hpp"
#include "studies/external.hpp"
#include "studies/plugin.hpp"
#include "tests/gpu/require_gpu.hpp"
#include "tests/studies/run_sumlab.hpp"

namespace sumlab {
namespace {

namespace fs = std::filesystem;
using test::read_csv;
using test::run;

const std::string cuda_example = std::string(SUMLAB_EXAMPLE_CUDA_PLUGIN) + ":sumlab_example_block_sum";
std::string fixture(const std::string& symbol) { return std::string(SUMLAB_TEST_PLUGINS) + ":" + symbol; }
fs::path dir(const std::string& name) { return test::temp_dir("plugin_device_" + name + "_" + std::to_string(getpid())); }

template <class T> class PluginDevice : public ::testing::Test {};
using FloatTypes = ::testing::Types<float, double>;
TYPED_TEST_SUITE(PluginDevice, FloatTypes);

// Sizes around the block sizes and the grid cap (1024 blocks of 256), and past it.
TYPED_TEST(PluginDevice, TheExampleIsWithinTheBoundAndTwoPassRepeatsItsBits) {
  SUMLAB_REQUIRE_GPU();
  using T = TypeParam;
  load_plugin(cuda_example);
  const auto s = find_external("block_sum");
  ASSERT_TRUE(s);
  ASSERT_TRUE(s->has_device_entry(FloatTraits<T>::dtype));
  const auto configs = s->configs();
  ASSERT_EQ(configs.size(), 3u);
  ASSERT_EQ(configs[2], "block=256,two_pass");
  const auto backend = make_backend("cuda");
  DistributionSpec spec;
  spec.kind = Distribution::cancellation;
  for (const std::int64_t n : {0, 1, 31, 32, 33, 255, 257, 100003, 262145, 1 << 20}) {
    const std::vector<T> x = generate<T>(spec, 5, static_cast<std::size_t>(n));
    const auto input = backend->load(std::span<const T>(x));
    ASSERT_TRUE(input->on_device());
    if (n > 0) {
      ASSERT_NE(input->device_data(), nullptr);
    }
    const reference::ExactSum<T> exact{std::span<const T>(x)};
    const double sum_abs = exact.measure(T(0)).sum_abs;
    const double bound = n < 2 ? 0.0 : bound::gamma(format_of<T>(), double(n - 1)) * sum_abs;
    for (std::size_t c = 0; c < configs.size(); ++c) {
      SCOPED_TRACE(configs[c] + " n=" + std::to_string(n));
      std::set<std::string> bits;
      for (int call = 0; call < 20; ++call) {
        const ExternalOutcome<T> r = run_external<T>(*s, c, *input, true);
        ASSERT_TRUE(r.ok) << r.error;
        EXPECT_LE(exact.measure(r.value).abs_error, bound) << r.value;
        bits.insert(hex_bits(r.value));
      }
      if (configs[c] == "block=256,two_pass") {
        EXPECT_EQ(bits.size(), 1u);
      }
      if (n == 0) {
        EXPECT_EQ(*bits.begin(), hex_bits(T(0)));  // the sum of nothing is +0
      }
    }
  }
}

// The lab's side of the ABI: the device entry is the one called where the data is on the device,
// with the lab's stream and the scratch its query asked for.
TEST(PluginDeviceCli, SumOnCudaCallsTheDeviceEntries) {
  SUMLAB_REQUIRE_GPU();
  const auto r = run("sum --dist uniform --n 1000 --dtype float32 --algorithm serial --backend cuda --json --plugin " +
                     cuda_example + "," + fixture("sumlab_test_device_only") + "," + fixture("sumlab_test_dual"));
  ASSERT_EQ(r.code, 0) << r.out;
  std::map<std::string, nlohmann::json> rows;
  for (const auto& row : nlohmann::json::parse(r.out)) rows[row["algorithm"].get<std::string>()] = row;
  // The example has no host entry: a value is the device entry's.
  for (const char* c : {"block_sum[block=128,atomic]", "block_sum[block=256,atomic]", "block_sum[block=256,two_pass]"}) {
    ASSERT_TRUE(rows.count(c)) << r.out;
    EXPECT_EQ(rows[c]["backend"], "external") << c;
    EXPECT_EQ(rows[c]["has_value"], true) << c << " " << rows[c].dump();
    EXPECT_EQ(rows[c]["verdict"], "no_bound") << c;
  }
  EXPECT_EQ(rows["device_only_sum"]["diagnostics"], "the device entry ran (n=1000, scratch 4000 bytes, stream given)");
  // dual_sum has a host entry too; on the device the device entry runs.
  EXPECT_EQ(rows["dual_sum"]["diagnostics"], "the device entry ran (n=1000, scratch 0 bytes, stream given)");
}

TEST(PluginDeviceCli, DeterminismOnCudaDoesNotFindTheDeclarationViolated) {
  SUMLAB_REQUIRE_GPU();
  const fs::path out = dir("determinism");
  const auto r = run("study determinism --backend cuda --kernels none --dists cancellation --sizes 100003,1048576 "
                     "--runs 20 --plugin " + cuda_example + " --out " + out.string());
  ASSERT_EQ(r.code, 0) << r.out;
  std::map<std::string, std::string> agreement;
  for (const auto& row : read_csv(out / "determinism_classes.csv").rows) agreement[row.at("kernel")] = row.at("agreement");
  ASSERT_TRUE(agreement.count("block_sum")) << r.out;
  EXPECT_NE(agreement["block_sum"], "violated");
  std::map<std::string, std::set<std::string>> hex;  // dtype|n|config -> bits over the runs
  for (const auto& row : read_csv(out / "determinism_runs.csv").rows) {
    if (row.at("kernel") != "block_sum") continue;
    EXPECT_NE(row.at("source"), "failed") << row.at("note");
    hex[row.at("dtype") + "|" + row.at("n") + "|" + row.at("shape")].insert(row.at("hex"));
  }
  int two_pass = 0;
  for (const auto& [key, bits] : hex)
    if (key.find("two_pass") != std::string::npos) {
      EXPECT_EQ(bits.size(), 1u) << key;
      ++two_pass;
    }
  EXPECT_EQ(two_pass, 4) << r.out;  // 2 dtypes x 2 sizes
  fs::remove_all(out);
}

TEST(PluginDeviceCli, ErrorVsNOnCudaReadsTheDeviceCopy) {
  SUMLAB_REQUIRE_GPU();
  const fs::path out = dir("error_vs_n");
  const auto r = run("study error-vs-n --quick --backend cuda --gpu-kernels none --algorithms serial --dists uniform "
                     "--log2-max 12 --plugin " + cuda_example + " --out " + out.string());
  ASSERT_EQ(r.code, 0) << r.out;
  int rows = 0;
  for (const auto& row : read_csv(out / "error_vs_n.csv").rows)
    if (row.at("algorithm").rfind("block_sum[", 0) == 0) {
      EXPECT_EQ(row.at("verdict"), "no_bound") << row.at("algorithm") << " " << row.at("note");
      ++rows;
    }
  EXPECT_GT(rows, 0) << r.out;
  fs::remove_all(out);
}

TEST(PluginDeviceCli, BenchTimesEachConfigurationBesideCub) {
  SUMLAB_REQUIRE_GPU();
  const fs::path out = dir("bench");
  const auto r = run("bench --quick --no-cpu --no-families --kernels gpu_cub --plugin " + cuda_example + "," +
                     std::string(SUMLAB_TEST_PLUGINS) + ":sumlab_test_faulty --out " + out.string());
  ASSERT_EQ(r.code, 0) << r.out;
  EXPECT_NE(r.out.find("plugin 'faulty_sum' has host entries only"), std::string::npos) << r.out;
  std::map<std::string, int> per_config;
  for (const auto& row : read_csv(out / "bench_gpu.csv").rows) {
    if (row.at("role") != "plugin") continue;
    SCOPED_TRACE(row.at("kernel") + " " + row.at("dtype") + " n=" + row.at("n"));
    ASSERT_EQ(row.at("error"), "");  // then ms and ratio_cub are numbers
    const double ratio = std::stod(row.at("ratio_cub"));
    EXPECT_TRUE(std::isfinite(ratio) && ratio > 0) << ratio;
    EXPECT_GT(std::stod(row.at("ms")), 0.0);
    ++per_config[row.at("kernel")];
  }
  ASSERT_EQ(per_config.size(), 3u) << r.out;
  for (const auto& [k, count] : per_config) EXPECT_EQ(count, 4) << k;  // 2 dtypes x n = 2^20, 2^24
  fs::remove_all(out);
}

}  // namespace
}  // namespace sumlab
