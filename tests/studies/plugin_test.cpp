// The plugin ABI (plugin/sumlab_plugin.h) end to end: the loader runs the example plugin's
// configurations with the bits of hand-worked sums; every bad --plugin exits 2 naming its fault
// before a folder is touched; the studies and `sum` measure a plugin's subject like any external
// one (failed calls as rows with the plugin's message), and --resume refuses another plugin.
#include <gtest/gtest.h>
#include <unistd.h>

#include <bit>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <ostream>
#include <set>
#include <span>
#include <string>
#include <vector>

#include "studies/backend.hpp"
#include "studies/commands.hpp"
#include "studies/external.hpp"
#include "studies/plugin.hpp"
#include "tests/studies/run_sumlab.hpp"

namespace {

namespace fs = std::filesystem;
using sumlab::test::read_csv;
using sumlab::test::run;

const std::string example = std::string(SUMLAB_EXAMPLE_PLUGIN) + ":sumlab_example_chunked";
const std::string faulty = std::string(SUMLAB_TEST_PLUGINS) + ":sumlab_test_faulty";
std::string fixture(const std::string& symbol) { return std::string(SUMLAB_TEST_PLUGINS) + ":" + symbol; }

fs::path dir(const std::string& name) {
  return sumlab::test::temp_dir("plugin_" + name + "_" + std::to_string(getpid()));
}

template <class T> std::uint64_t bits(T v) {
  if constexpr (sizeof(T) == 4) return std::bit_cast<std::uint32_t>(v);
  else return std::bit_cast<std::uint64_t>(v);
}

// A big value, two 1s and its negation: the serial order loses each 1 against the big value (a
// tie at half an ulp, rounded to even), while chunks=4 adds the 1s to each other first (chunks
// [0,2) [2,4) [4,6) [6,8): big, 2, -big, 0) and keeps them. Exact sum 2.
template <class T> std::vector<T> lost_ones(T big) { return {big, 0, 1, 1, -big, 0, 0, 0}; }

template <class T> void expect_example_sums(sumlab::ExternalSum& s, T big) {
  const auto x = lost_ones<T>(big);
  EXPECT_EQ(bits(static_cast<T>(s.run(0, std::span<const T>(x), 0))), bits(T(0)));  // chunks=1: serial
  EXPECT_EQ(bits(static_cast<T>(s.run(1, std::span<const T>(x), 0))), bits(T(2)));  // chunks=4
  // Empty chunks (n < 4) are skipped, not added as +0: a sum of -0s stays -0, as IEEE gives.
  const std::vector<T> negative_zero{T(-0.0)};
  for (std::size_t c : {0, 1})
    EXPECT_EQ(bits(static_cast<T>(s.run(c, std::span<const T>(negative_zero), 0))), bits(T(-0.0))) << c;
  EXPECT_EQ(bits(static_cast<T>(s.run(1, std::span<const T>(), 0))), bits(T(0)));
}

TEST(PluginLoader, RunsTheExampleWithTheBitsOfItsOrder) {
  const sumlab::LoadedPlugin p = sumlab::load_plugin(example);
  EXPECT_EQ(p.subject, "chunked_sum");
  EXPECT_EQ(p.symbol, "sumlab_example_chunked");
  EXPECT_EQ(fs::path(p.library), fs::canonical(SUMLAB_EXAMPLE_PLUGIN));
  EXPECT_EQ(p.fnv1a64.size(), 16u);
  const auto s = sumlab::find_external("chunked_sum");
  ASSERT_TRUE(s);
  EXPECT_EQ(s->configs(), (std::vector<std::string>{"chunks=1", "chunks=4"}));
  EXPECT_EQ(s->declared(), sumlab::Determinism::run_to_run);
  expect_example_sums<float>(*s, 0x1p24f);  // ulp 2 at 2^24: 2^24 + 1 ties to 2^24
  expect_example_sums<double>(*s, 0x1p53);
  // Loading it again is the same subject, once.
  EXPECT_EQ(sumlab::load_plugins({example, example}).size(), 1u);
}

TEST(PluginLoader, FailedCallsCarryThePluginsMessage) {
  sumlab::load_plugin(faulty);
  const auto s = sumlab::find_external("faulty_sum");
  ASSERT_TRUE(s);
  const std::vector<float> x{1, 2, 3, 4};
  const auto ok = sumlab::run_external<float>(*s, 0, x, true);
  ASSERT_TRUE(ok.ok) << ok.error;
  EXPECT_EQ(ok.value, 10.0f);
  const auto bad = sumlab::run_external<float>(*s, 1, x, true);
  EXPECT_FALSE(bad.ok);
  EXPECT_EQ(bad.error, "chunks=0 is not a configuration");
  const std::vector<double> y{1, 2};
  const auto none = sumlab::run_external<double>(*s, 0, y, true);
  EXPECT_FALSE(none.ok);
  EXPECT_EQ(none.error, "this plugin has no float64 entry");
}

TEST(PluginLoader, ASecondSubjectOfTheSameNameIsRefused) {
  sumlab::load_plugin(example);
  try {
    sumlab::load_plugin(fixture("sumlab_test_impostor"));
    FAIL() << "two subjects named chunked_sum";
  } catch (const sumlab::UserError& e) {
    EXPECT_NE(std::string(e.what()).find("name 'chunked_sum' is taken by a subject already registered (from " +
                                         fs::canonical(SUMLAB_EXAMPLE_PLUGIN).string() + ":sumlab_example_chunked)"),
              std::string::npos)
        << e.what();
  }
}

// Device entries (plugin/sumlab_plugin.h): accepted by the loader; never called where the data is
// on the host (the model backend), where a plugin with device entries only fails each call with a
// message that says what it needs, and one with both entries runs its host entry.
const char* const needs_gpu = "this plugin has only device entries; it needs --backend cuda on a GPU";

TEST(PluginDevice, TheLoaderAcceptsDeviceEntries) {
  sumlab::load_plugin(fixture("sumlab_test_device_only"));
  sumlab::load_plugin(fixture("sumlab_test_dual"));
  const auto only = sumlab::find_external("device_only_sum");
  const auto dual = sumlab::find_external("dual_sum");
  ASSERT_TRUE(only && dual);
  EXPECT_TRUE(only->has_device_entry("float32"));
  EXPECT_TRUE(only->has_device_entry("float64"));
  EXPECT_EQ(only->declared(), sumlab::Determinism::not_deterministic);
  EXPECT_TRUE(dual->has_device_entry("float32"));
  EXPECT_FALSE(dual->has_device_entry("float64"));
  // The example C plugin and Python subjects: host entries only.
  sumlab::load_plugin(example);
  EXPECT_FALSE(sumlab::find_external("chunked_sum")->has_device_entry("float32"));
}

TEST(PluginDevice, OnTheModelBackendTheHostEntryRunsOrTheCallSaysItNeedsAGpu) {
  sumlab::load_plugin(fixture("sumlab_test_device_only"));
  sumlab::load_plugin(fixture("sumlab_test_dual"));
  const auto only = sumlab::find_external("device_only_sum");
  const auto dual = sumlab::find_external("dual_sum");
  const auto backend = sumlab::make_backend("model");
  const std::vector<float> x{1, 2, 3, 4};
  const std::vector<double> y{1, 2};
  const auto in32 = backend->load(std::span<const float>(x));
  const auto in64 = backend->load(std::span<const double>(y));
  ASSERT_EQ(in32->device_data(), nullptr);
  const auto a = sumlab::run_external<float>(*only, 0, *in32, true);
  EXPECT_FALSE(a.ok);
  EXPECT_EQ(a.error, needs_gpu);
  EXPECT_EQ(sumlab::run_external<double>(*only, 0, *in64, true).error, needs_gpu);
  EXPECT_EQ(sumlab::run_external<float>(*only, 0, std::span<const float>(x), true).error, needs_gpu);
  const auto b = sumlab::run_external<float>(*dual, 0, *in32, true);
  ASSERT_TRUE(b.ok) << b.error;
  EXPECT_EQ(b.value, 10.0f);  // the host entry: (1 + 2) + (3 + 4)
  EXPECT_EQ(sumlab::run_external<double>(*dual, 0, *in64, true).error, "this plugin has no float64 entry");
}

TEST(PluginDevice, DeviceOnlyPluginsGiveFailureRowsOnTheModelBackend) {
  const std::string plugins = fixture("sumlab_test_device_only") + "," + fixture("sumlab_test_dual");
  const auto s = run("sum --dist cancellation --n 1000 --dtype float32 --algorithm serial --backend model --json "
                     "--plugin " + plugins);
  ASSERT_EQ(s.code, 0) << s.out;
  std::map<std::string, nlohmann::json> rows;
  for (const auto& row : nlohmann::json::parse(s.out)) rows[row["algorithm"].get<std::string>()] = row;
  EXPECT_EQ(rows["device_only_sum"]["verdict"], "failed") << s.out;
  EXPECT_EQ(rows["device_only_sum"]["diagnostics"], needs_gpu);
  EXPECT_EQ(rows["dual_sum"]["verdict"], "no_bound") << s.out;  // its host entry
  EXPECT_EQ(rows["dual_sum"]["diagnostics"], "");

  const fs::path out = dir("device_only");
  const auto d = run("study determinism --backend model --kernels none --dists uniform --sizes 1000 --runs 2 "
                     "--plugin " + plugins + " --out " + out.string());
  ASSERT_EQ(d.code, 0) << d.out;
  int failed = 0;
  for (const auto& row : read_csv(out / "determinism_runs.csv").rows)
    if (row.at("kernel") == "device_only_sum") {
      EXPECT_EQ(row.at("source"), "failed");
      EXPECT_EQ(row.at("note"), needs_gpu);
      ++failed;
    }
  EXPECT_EQ(failed, 2) << d.out;  // float32 and float64
  fs::remove_all(out);

  const fs::path evn = dir("device_only_evn");
  const auto e = run("study error-vs-n --quick --backend model --gpu-kernels none --algorithms serial --dists uniform "
                     "--log2-max 6 --plugin " + plugins + " --out " + evn.string());
  ASSERT_EQ(e.code, 0) << e.out;
  int rows_seen = 0;
  for (const auto& row : read_csv(evn / "error_vs_n.csv").rows)
    if (row.at("algorithm") == "device_only_sum") {
      EXPECT_EQ(row.at("verdict"), "failed");
      EXPECT_EQ(row.at("note"), needs_gpu);
      ++rows_seen;
    }
  EXPECT_GT(rows_seen, 0) << e.out;
  fs::remove_all(evn);
}

#if defined(SUMLAB_EXAMPLE_CUDA_PLUGIN)
// The CUDA example loads without a GPU (its cudart is linked in); on the model backend its rows say
// what it needs. tests/gpu/plugin_device_test.cpp runs it on a GPU.
TEST(PluginDevice, TheCudaExampleNeedsAGpuOnTheModelBackend) {
  const std::string cuda_example = std::string(SUMLAB_EXAMPLE_CUDA_PLUGIN) + ":sumlab_example_block_sum";
  const auto r = run("sum --dist uniform --n 1000 --dtype float64 --algorithm serial --backend model --json "
                     "--plugin " + cuda_example);
  ASSERT_EQ(r.code, 0) << r.out;
  int rows = 0;
  for (const auto& row : nlohmann::json::parse(r.out))
    if (row["algorithm"].get<std::string>().rfind("block_sum[", 0) == 0) {
      EXPECT_EQ(row["diagnostics"], needs_gpu) << row.dump();
      ++rows;
    }
  EXPECT_EQ(rows, 3) << r.out;
}
#endif

struct BadPlugin {
  std::string name, spec, message;
};
void PrintTo(const BadPlugin& b, std::ostream* os) { *os << b.spec; }

class PluginRefused : public ::testing::TestWithParam<BadPlugin> {};

// Exit 2, the fault named, and no run folder: the plugin is loaded before anything is written.
TEST_P(PluginRefused, ExitsTwoNamingTheFault) {
  const fs::path out = dir("refused");
  const auto r = run("study error-vs-n --backend cpu --algorithms serial --dists uniform --dtypes float32 "
                     "--log2-max 4 --plugin " + GetParam().spec + " --out " + out.string());
  EXPECT_EQ(r.code, 2) << r.out;
  EXPECT_NE(r.out.find(GetParam().message), std::string::npos) << r.out;
  EXPECT_FALSE(fs::exists(out));
}

INSTANTIATE_TEST_SUITE_P(
    Plugin, PluginRefused,
    ::testing::Values(
        BadPlugin{"NoColon", "no_colon.so", "expected LIB:SYMBOL"},
        BadPlugin{"EmptySymbol", std::string(SUMLAB_EXAMPLE_PLUGIN) + ":", "expected LIB:SYMBOL"},
        BadPlugin{"NoFile", "/no/such/dir/libx.so:getter", "no such file: /no/such/dir/libx.so"},
        BadPlugin{"Folder", std::string(SUMLAB_SOURCE_DIR) + "/plugin:getter",
                  std::string(SUMLAB_SOURCE_DIR) + "/plugin is a folder, not a shared library"},
        BadPlugin{"NotALibrary", std::string(SUMLAB_SOURCE_DIR) + "/README.md:getter",
                  "not a shared library this process can load"},
        BadPlugin{"SymbolMissing", std::string(SUMLAB_EXAMPLE_PLUGIN) + ":no_such_getter",
                  "no symbol 'no_such_getter'"},
        BadPlugin{"DataSymbol", fixture("sumlab_test_descriptor_not_getter"),
                  "'sumlab_test_descriptor_not_getter' in " + fs::canonical(SUMLAB_TEST_PLUGINS).string() +
                      " is a data object, not a function"},
        // dlsym also finds the dependencies' symbols: libc's getpid was called as the getter (SIGSEGV).
        BadPlugin{"DependencysFunction", std::string(SUMLAB_EXAMPLE_PLUGIN) + ":getpid",
                  "'getpid' is not defined in " + std::string(SUMLAB_EXAMPLE_PLUGIN)},
        BadPlugin{"WrongVersion", fixture("sumlab_test_wrong_version"),
                  "built for plugin ABI version 99; this sumlab reads version 1"},
        BadPlugin{"NullDescriptor", fixture("sumlab_test_null"), "the getter returned NULL"},
        BadPlugin{"NullName", fixture("sumlab_test_no_name"), "invalid descriptor: its name is NULL"},
        BadPlugin{"CommaInName", fixture("sumlab_test_comma_name"), "invalid descriptor: its name 'a,b' holds ','"},
        BadPlugin{"NoEntries", fixture("sumlab_test_no_entries"),
                  "invalid descriptor: it has neither a float32 nor a float64 entry, on the host or on the device"},
        BadPlugin{"ScratchWithoutDevice", fixture("sumlab_test_scratch_without_device"),
                  "invalid descriptor: it has a scratch query (scratch_bytes) but no device entry"},
        BadPlugin{"TwinLabels", fixture("sumlab_test_twin_labels"),
                  "invalid descriptor: two configurations are labelled 'block=256'"},
        BadPlugin{"NullLabel", fixture("sumlab_test_null_label"), "invalid descriptor: configs[1] is NULL"},
        BadPlugin{"NoLabels", fixture("sumlab_test_no_labels"),
                  "invalid descriptor: config_count = 3 but configs is NULL"},
        BadPlugin{"TooManyConfigs", fixture("sumlab_test_huge"),
                  "invalid descriptor: config_count = 1048576 (at most 1024)"},
        BadPlugin{"BadDeclared", fixture("sumlab_test_bad_declared"), "invalid descriptor: declared = 7"},
        BadPlugin{"NameTaken", example + "," + fixture("sumlab_test_impostor"),
                  "name 'chunked_sum' is taken by a subject already registered"}),
    [](const ::testing::TestParamInfo<BadPlugin>& p) { return p.param.name; });

// Every command that takes --plugin loads it (here: refuses one), before anything runs.
TEST(PluginCli, EveryCommandTakesIt) {
  for (const std::string cmd : {"sum --n 10", "study error-vs-cond --backend cpu", "study determinism --backend model",
                                "study error-vs-n --backend cpu"}) {
    const auto r = run(cmd + " --plugin no_colon.so");
    EXPECT_EQ(r.code, 2) << cmd << "\n" << r.out;
    EXPECT_NE(r.out.find("expected LIB:SYMBOL"), std::string::npos) << cmd << "\n" << r.out;
  }
}

TEST(PluginCli, DeterminismClassifiesTheExampleAsItDeclares) {
  const fs::path out = dir("determinism");
  const auto r = run("study determinism --backend model --kernels none --dists cancellation --sizes 4099 --runs 3 "
                     "--plugin " + example + "," + faulty + " --out " + out.string());
  ASSERT_EQ(r.code, 0) << r.out;
  std::map<std::string, std::map<std::string, std::string>> classes;
  for (const auto& row : read_csv(out / "determinism_classes.csv").rows) classes[row.at("kernel")] = row;
  ASSERT_TRUE(classes.count("chunked_sum")) << r.out;
  EXPECT_EQ(classes["chunked_sum"]["kind"], "external");
  EXPECT_EQ(classes["chunked_sum"]["declared"], "run_to_run");
  EXPECT_EQ(classes["chunked_sum"]["measured"], "run_to_run");
  EXPECT_EQ(classes["chunked_sum"]["agreement"], "matches");
  for (const auto& [k, row] : classes) EXPECT_NE(row.at("agreement"), "violated") << k;

  // Per dtype: each configuration one value over its runs, the two configurations different bits.
  std::map<std::string, std::set<std::string>> hex_by_config, hex_by_dtype;
  std::map<std::string, std::string> failures;  // kernel|dtype|shape -> note
  for (const auto& row : read_csv(out / "determinism_runs.csv").rows) {
    const std::string key = row.at("kernel") + "|" + row.at("dtype") + "|" + row.at("shape");
    if (row.at("source") == "failed") {
      failures[key] = row.at("note");
      continue;
    }
    hex_by_config[key].insert(row.at("hex"));
    if (row.at("kernel") == "chunked_sum") hex_by_dtype[row.at("dtype")].insert(row.at("hex"));
  }
  for (const char* dtype : {"float32", "float64"}) {
    for (const char* c : {"chunks=1", "chunks=4"})
      EXPECT_EQ(hex_by_config[std::string("chunked_sum|") + dtype + "|" + c].size(), 1u) << dtype << " " << c;
    EXPECT_EQ(hex_by_dtype[dtype].size(), 2u) << dtype;
  }
  EXPECT_EQ(failures["faulty_sum|float32|chunks=0"], "chunks=0 is not a configuration");
  EXPECT_EQ(failures["faulty_sum|float64|chunks=2"], "this plugin has no float64 entry");
  EXPECT_EQ(failures.count("faulty_sum|float32|chunks=2"), 0u);

  const auto plan = nlohmann::json::parse(std::ifstream(out / "provenance.json"))["plan"];
  ASSERT_EQ(plan["plugins"].size(), 2u) << plan.dump();
  EXPECT_EQ(plan["plugins"][0]["symbol"], "sumlab_example_chunked");
  EXPECT_EQ(plan["plugins"][0]["library"], fs::canonical(SUMLAB_EXAMPLE_PLUGIN).string());
  fs::remove_all(out);
}

// What a class rests on is what ran: a slow subject cut short by --max-shape-seconds shows the
// runs it made (not the 20 asked for), a subject whose calls failed shows no figures (not 0s),
// and the headline counts each kind of outcome instead of calling every declaration held.
TEST(PluginCli, DeterminismCountsTheRunsMadeAndClaimsNothingForFailures) {
  const fs::path out = dir("determinism_counts");
  const auto r = run("study determinism --backend model --kernels none --dists uniform --dtypes float32 --sizes 1000 "
                     "--runs 20 --max-shape-seconds 0.15 --plugin " + fixture("sumlab_test_slow") + "," + faulty +
                     " --out " + out.string());
  ASSERT_EQ(r.code, 0) << r.out;
  std::map<std::string, std::map<std::string, std::string>> inputs, classes;
  for (const auto& row : read_csv(out / "determinism_inputs.csv").rows) inputs[row.at("kernel")] = row;
  for (const auto& row : read_csv(out / "determinism_classes.csv").rows) classes[row.at("kernel")] = row;
  ASSERT_TRUE(inputs.count("slow_sum") && classes.count("slow_sum")) << r.out;
  // 40 ms a call, 0.15 s a shape: 2 to 4 runs, never the 20 asked for.
  const int made = std::stoi(inputs["slow_sum"].at("runs_per_shape"));
  EXPECT_GE(made, 2);
  EXPECT_LT(made, 20) << "runs_per_shape must be what ran, not --runs";
  EXPECT_EQ(classes["slow_sum"].at("runs_per_shape_min"), std::to_string(made));
  EXPECT_EQ(classes["slow_sum"].at("measured"), "shape_invariant");
  EXPECT_EQ(classes["slow_sum"].at("shapes_max"), "2");
  int runs_rows = 0;
  for (const auto& row : read_csv(out / "determinism_runs.csv").rows)
    if (row.at("kernel") == "slow_sum") {
      EXPECT_GE(std::stoi(row.at("runs")), made);
      EXPECT_LT(std::stoi(row.at("runs")), 20);
      ++runs_rows;
    }
  EXPECT_EQ(runs_rows, 2);
  // The failed subject: no class, and its figures empty rather than 0.
  ASSERT_TRUE(classes.count("faulty_sum")) << r.out;
  EXPECT_EQ(classes["faulty_sum"].at("measured"), "failed");
  for (const char* c : {"shapes_max", "runs_per_shape_min", "distinct_within_shape_max", "distinct_across_shapes_max",
                        "nan_patterns_max", "spread_ulps_max", "max_abs_ulps"})
    EXPECT_EQ(classes["faulty_sum"].at(c), "") << c;
  for (const char* c : {"distinct_within_shape_max", "distinct_across_shapes", "spread_ulps", "max_abs_ulps"})
    EXPECT_EQ(inputs["faulty_sum"].at(c), "") << c;
  // The headline counts what was measured.
  EXPECT_EQ(r.out.find("every declared class holds"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("declared classes: 1 hold (1 as declared, 0 measured stronger), 0 one_shape (one shape run: "
                       "invariance not measured), 1 failed (no class), 0 violated"),
            std::string::npos)
      << r.out;
  fs::remove_all(out);
}

TEST(PluginCli, ErrorVsNRowsAndFailureRows) {
  const fs::path out = dir("error_vs_n");
  // --external names the example too: it is measured once all the same.
  const auto r = run("study error-vs-n --quick --backend model --gpu-kernels none --algorithms serial "
                     "--dists cancellation --log2-max 8 --external chunked_sum --plugin " + example +
                     " --plugin " + faulty + " --out " + out.string());
  ASSERT_EQ(r.code, 0) << r.out;
  std::map<std::string, std::map<std::string, std::map<std::string, std::string>>> cells;  // cell -> algorithm -> row
  std::map<std::string, int> count;
  for (const auto& row : read_csv(out / "error_vs_n.csv").rows) {
    const std::string cell = row.at("dtype") + " n=" + row.at("n") + " seed=" + row.at("seed");
    cells[cell][row.at("algorithm")] = row;
    ++count[cell + " " + row.at("algorithm")];
  }
  ASSERT_EQ(cells.size(), 2u * 3 * 2) << r.out;  // dtypes x sizes 16, 64, 256 x seeds
  int configs_differ = 0;
  for (auto& [cell, rows] : cells) {
    const bool f32 = cell.rfind("float32", 0) == 0;
    auto& one = rows["chunked_sum[chunks=1]"];
    auto& four = rows["chunked_sum[chunks=4]"];
    EXPECT_EQ(count[cell + " chunked_sum[chunks=1]"], 1) << cell;
    EXPECT_EQ(one["backend"], "external") << cell;
    EXPECT_EQ(one["verdict"], "no_bound") << cell;
    EXPECT_EQ(four["verdict"], "no_bound") << cell;
    EXPECT_EQ(one["hex"], rows["serial"]["hex"]) << cell;  // chunks=1 is the serial order
    configs_differ += one["hex"] != four["hex"];
    EXPECT_EQ(rows["faulty_sum[chunks=0]"]["verdict"], "failed") << cell;
    const char* no_entry = "this plugin has no float64 entry";
    EXPECT_EQ(rows["faulty_sum[chunks=0]"]["note"], f32 ? "chunks=0 is not a configuration" : no_entry) << cell;
    EXPECT_EQ(rows["faulty_sum[chunks=2]"]["verdict"], f32 ? "no_bound" : "failed") << cell;
    EXPECT_EQ(rows["faulty_sum[chunks=2]"]["note"], f32 ? "" : no_entry) << cell;
  }
  EXPECT_GT(configs_differ, 0);
  fs::remove_all(out);
}

TEST(PluginCli, ResumeRefusesAnotherPlugin) {
  const fs::path out = dir("resume");
  const std::string args = "study error-vs-n --backend cpu --algorithms serial --dists uniform --dtypes float32 "
                           "--log2-max 6 --out " + out.string();
  const auto first = run(args + " --plugin " + example);
  ASSERT_EQ(first.code, 0) << first.out;
  const auto same = run(args + " --plugin " + example + " --resume");
  EXPECT_EQ(same.code, 0) << same.out;
  const auto other = run(args + " --plugin " + faulty + " --resume");
  EXPECT_EQ(other.code, 2) << other.out;
  EXPECT_NE(other.out.find("--resume with a different plan"), std::string::npos) << other.out;
  EXPECT_NE(other.out.find("sumlab_test_faulty"), std::string::npos) << other.out;
  const auto none = run(args + " --resume");
  EXPECT_EQ(none.code, 2) << none.out;
  fs::remove_all(out);
}

TEST(PluginCli, SumPrintsARowPerConfiguration) {
  const auto r = run("sum --dist cancellation --n 1000 --dtype float32 --algorithm serial --json --plugin " + example +
                     "," + faulty);
  ASSERT_EQ(r.code, 0) << r.out;
  std::map<std::string, nlohmann::json> rows;
  for (const auto& row : nlohmann::json::parse(r.out)) rows[row["algorithm"].get<std::string>()] = row;
  ASSERT_TRUE(rows.count("chunked_sum[chunks=1]")) << r.out;
  EXPECT_EQ(rows["chunked_sum[chunks=1]"]["backend"], "external");
  EXPECT_EQ(rows["chunked_sum[chunks=1]"]["hex"], rows["serial"]["hex"]);
  EXPECT_EQ(rows["chunked_sum[chunks=4]"]["verdict"], "no_bound");
  EXPECT_EQ(rows["faulty_sum[chunks=0]"]["has_value"], false);
  EXPECT_EQ(rows["faulty_sum[chunks=0]"]["verdict"], "failed");
  EXPECT_EQ(rows["faulty_sum[chunks=0]"]["diagnostics"], "chunks=0 is not a configuration");

  const auto f64 = run("sum --dist cancellation --n 1000 --dtype float64 --algorithm serial --plugin " + faulty);
  ASSERT_EQ(f64.code, 0) << f64.out;
  EXPECT_NE(f64.out.find("FAILED: this plugin has no float64 entry"), std::string::npos) << f64.out;
}

}  // namespace
