// The built `sumlab` binary on good and bad input: output and exit codes.
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
#include <nlohmann/json.hpp>
#include <set>
#include <string>
#include <vector>

#include "studies/bound_alarm.hpp"
#include "studies/commands.hpp"
#include "studies/memory_check.hpp"
#include "studies/run_folder.hpp"

namespace {

using sumlab::test::expect_one_line_refusal;
using sumlab::test::Result;
using sumlab::test::run;

std::filesystem::path temp_dir(const std::string& name) { return sumlab::test::fresh_dir("cli_test_" + name); }

TEST(Cli, TenMillionTenthsSerialJson) {
  const Result r = run("sum --dist constant --value 0.1 --n 10000000 --dtype float32 --algorithm serial --json");
  ASSERT_EQ(r.code, 0) << r.out;
  const auto j = nlohmann::json::parse(r.out);
  ASSERT_EQ(j.size(), 1u);
  EXPECT_EQ(j[0]["algorithm"], "serial");
  EXPECT_EQ(j[0]["value"].get<double>(), 1087937.0);
  EXPECT_EQ(j[0]["hex"], "0x4984ce08");
  EXPECT_EQ(j[0]["reference"].get<double>(), 1000000.0);
  EXPECT_EQ(j[0]["reference_hex"], "0x49742400");
  EXPECT_EQ(j[0]["reference_method"], "MPFR");
  for (const char* k : {"abs_error", "rel_error", "ulps"}) EXPECT_TRUE(j[0].contains(k)) << k;
  EXPECT_NEAR(j[0]["abs_error"].get<double>(), 87936.985, 0.01);
}

TEST(Cli, AllAlgorithmsTableAndHelp) {
  const Result r = run("sum --dist uniform --n 1000 --algorithm all");
  ASSERT_EQ(r.code, 0) << r.out;
  for (const char* name : {"serial", "pairwise", "numpy_pairwise", "kahan", "neumaier", "fixed_point", "exact"})
    EXPECT_NE(r.out.find(name), std::string::npos) << name;
  const Result h = run("sum --help");
  EXPECT_EQ(h.code, 0);
  EXPECT_NE(h.out.find("superaccumulator"), std::string::npos);
}

TEST(Cli, ExactIsZeroUlpsInJson) {
  const Result r = run("sum --dist lognormal --n 4097 --dtype float64 --algorithm exact,serial --json");
  ASSERT_EQ(r.code, 0) << r.out;
  const auto j = nlohmann::json::parse(r.out);
  ASSERT_EQ(j.size(), 2u);
  EXPECT_LE(j[0]["ulps"].get<double>(), 0.5);  // against the exact sum: at most half an ulp
  EXPECT_EQ(j[0]["ulps_from_rounded"].get<double>(), 0.0);
  EXPECT_EQ(j[0]["hex"], j[0]["reference_hex"]);
}

// A bound's inputs can overflow (S = sum |x| past the double range; a fixed-point scale that
// saturates): the no-bound reason the summary gives must cover them.
TEST(Cli, NoBoundReasonCoversOverflowingBoundInputs) {
  const auto d = temp_dir("no_bound_overflow");
  {
    std::ofstream csv(d / "x.csv");
    csv << "1.7e308\n-1.7e308\n1.7e308\n-1.6e308\n";
  }
  for (const std::string& args : {"sum --input " + (d / "x.csv").string() + " --dtype float64 -a serial",
                                 std::string("sum -n 1000 -a fixed_point --fixed-scale 70")}) {
    const Result r = run(args);
    EXPECT_NE(r.out.find("with no proven bound"), std::string::npos) << args << "\n" << r.out;
    EXPECT_NE(r.out.find("or the bound's inputs overflow"), std::string::npos) << args << "\n" << r.out;
  }
}

TEST(Cli, ReadsNpyCsvAndRaw) {
  const auto d = temp_dir("files");
  {
    std::ofstream csv(d / "x.csv");
    csv << "0.5, 0.25\n1e-8,inf\n";
  }
  // Two fields a line: a table, read row by row.
  Result r = run("sum --input " + (d / "x.csv").string() + " --flatten C --algorithm exact --json");
  ASSERT_EQ(r.code, 0) << r.out;
  EXPECT_EQ(nlohmann::json::parse(r.out)[0]["value"], "inf");

  {
    std::ofstream npy(d / "x.npy", std::ios::binary);
    std::string header = "{'descr': '<f8', 'fortran_order': False, 'shape': (3,), }";
    while ((10 + header.size() + 1) % 64) header += ' ';
    header += '\n';
    npy << "\x93NUMPY" << char(1) << char(0) << char(header.size() & 0xff) << char(header.size() >> 8) << header;
    const double v[3] = {1.0, 2.0, 0.125};
    npy.write(reinterpret_cast<const char*>(v), sizeof v);
  }
  r = run("sum --input " + (d / "x.npy").string() + " --algorithm serial --json");
  ASSERT_EQ(r.code, 0) << r.out;
  EXPECT_EQ(nlohmann::json::parse(r.out)[0]["value"].get<double>(), 3.125);

  {
    std::ofstream raw(d / "x.bin", std::ios::binary);
    const float v[2] = {1.5f, 2.0f};
    raw.write(reinterpret_cast<const char*>(v), sizeof v);
  }
  r = run("sum --input " + (d / "x.bin").string() + " --dtype float32 --algorithm serial --json");
  ASSERT_EQ(r.code, 0) << r.out;
  EXPECT_EQ(nlohmann::json::parse(r.out)[0]["value"].get<double>(), 3.5);
}

TEST(Cli, BadInputFailsCleanly) {
  const auto d = temp_dir("bad");
  {
    std::ofstream(d / "bad.npy") << "not an npy file at all";
    std::ofstream(d / "bad.csv") << "1.0, 2.0, banana\n";
    std::ofstream(d / "odd.bin") << "abc";
  }
  struct Case {
    std::string args, needle;
  };
  const Case cases[] = {
      {"sum --input /nonexistent/x.npy", "cannot read"},
      {"sum --input " + (d / "bad.npy").string(), "bad magic"},
      {"sum --input " + (d / "bad.csv").string(), "banana"},
      {"sum --input " + (d / "odd.bin").string() + " --dtype float32", "whole number"},
      {"sum --input " + (d / "odd.bin").string(), "needs --dtype"},
      {"sum --dist uniform --n 10 --dtype int8", "unsupported dtype"},
      {"sum --dist uniform --n 10 --algorithm bogus", "unknown algorithm"},
      {"sum --dist nosuch --n 10", "nosuch"},
      {"sum --dist uniform --n 100000000000000", "memory"},
      // The request is checked before n values are generated (or refused for memory): the message
      // names the bad option, whatever n is.
      {"sum --dist uniform --n 2^40 --algorithm bogus", "unknown algorithm"},
      {"sum --dist uniform --n 2^40 --algorithm gpu_two_pass --backend model --block 33", "multiple of 32"},
      {"sum --dist uniform --n 2^40 --algorithm serial --fixed-scale 3", "--fixed-scale applies"},
      {"study error-vs-n --log2-max 40 --gpu-kernels gpu_bogus --out /nonexistent/never", "gpu_bogus"},
      {"study error-vs-cond --n 2^40 --gpu-kernels gpu_bogus --out /nonexistent/never", "gpu_bogus"},
  };
  for (const auto& c : cases) {
    const Result r = run(c.args);
    EXPECT_NE(r.code, 0) << c.args;
    EXPECT_LT(r.code, 128) << c.args << " crashed: " << r.out;
    EXPECT_NE(r.out.find(c.needle), std::string::npos) << c.args << " -> " << r.out;
  }
}

TEST(Cli, ZeroElementsSumToPositiveZero) {
  const Result r = run("sum --dist uniform --n 0 --algorithm all --json");
  ASSERT_EQ(r.code, 0) << r.out;
  for (const auto& row : nlohmann::json::parse(r.out)) EXPECT_EQ(row["hex"], "0x00000000") << row["algorithm"];
}

TEST(Cli, StudyWritesRunFolderAndResumes) {
  const auto d = temp_dir("study") / "run";
  const std::string base = "study error-vs-n --quick --log2-max 8 --seeds 1 --dists uniform,constant --out " + d.string();
  Result r = run(base);
  ASSERT_EQ(r.code, 0) << r.out;
  for (const char* f : {"error_vs_n.csv", "summary.json", "provenance.json"})
    EXPECT_TRUE(std::filesystem::exists(d / f)) << f;
  auto count_lines = [&] {
    std::ifstream in(d / "error_vs_n.csv");
    std::string line;
    int n = 0;
    while (std::getline(in, line)) ++n;
    return n;
  };
  const int lines = count_lines();
  EXPECT_GT(lines, 1);
  // A second run into the same folder refuses to overwrite; --resume adds nothing new.
  r = run(base);
  EXPECT_NE(r.code, 0);
  EXPECT_NE(r.out.find("--resume"), std::string::npos) << r.out;
  r = run(base + " --resume");
  ASSERT_EQ(r.code, 0) << r.out;
  EXPECT_EQ(count_lines(), lines);
}

}  // namespace

namespace {

TEST(CliGpu, ModelBackendRunsAKernelWithTheGivenShape) {
  const Result r = run("sum --n 100003 --algorithm gpu_two_pass,gpu_exact,exact --backend model --grid 7 --block 96 --json");
  ASSERT_EQ(r.code, 0) << r.out;
  const auto j = nlohmann::json::parse(r.out);
  ASSERT_EQ(j.size(), 3u);
  EXPECT_EQ(j[0]["backend"], "cpu");
  EXPECT_EQ(j[1]["backend"], "model");
  EXPECT_EQ(j[1]["shape"]["text"].get<std::string>().rfind("7x96 v4", 0), 0u) << j[1]["shape"];
  EXPECT_EQ(j[2]["hex"], j[0]["hex"]);  // the GPU exact kernel's model is correctly rounded too
}

// --fixed-scale: the CPU algorithm and the kernel (here its model) round to the same grid and give
// the same bits; a coarse grid loses bits, which the error bound must still cover; the data's own
// scale gives the same bits as no option.
TEST(CliGpu, FixedScaleGivesTheCpuBitsAndAValidBound) {
  for (const char* k : {"8", "30", "-3"}) {
    const Result r = run(std::string("sum --dist normal --n 10007 --algorithm fixed_point,gpu_fixed_point --backend model "
                                     "--json --fixed-scale ") + k);
    ASSERT_EQ(r.code, 0) << r.out;
    const auto j = nlohmann::json::parse(r.out);
    ASSERT_EQ(j.size(), 2u);
    EXPECT_EQ(j[0]["hex"], j[1]["hex"]) << k;
    for (const auto& row : j) {
      EXPECT_NE(row["diagnostics"].get<std::string>().find("(caller)"), std::string::npos) << row;
      EXPECT_LE(row["abs_error"].get<double>(), row["bound"].get<double>()) << row;
    }
    if (std::string(k) == "-3") {
      EXPECT_GT(j[0]["abs_error"].get<double>(), 1.0);  // a grid of 8: bits lost
    }
  }
  const Result d = run("sum --dist normal --n 10007 --algorithm fixed_point --json");
  ASSERT_EQ(d.code, 0) << d.out;
  const auto jd = nlohmann::json::parse(d.out);
  const std::string note = jd[0]["diagnostics"];  // "scale 2^-K (from max|x|); ..."
  ASSERT_EQ(note.rfind("scale 2^-", 0), 0u) << note;
  const std::string k = note.substr(9, note.find(' ', 9) - 9);
  const Result g = run("sum --dist normal --n 10007 --algorithm fixed_point --json --fixed-scale " + k);
  ASSERT_EQ(g.code, 0) << g.out;
  EXPECT_EQ(nlohmann::json::parse(g.out)[0]["hex"], jd[0]["hex"]) << k;
  const Result bad = run("sum --n 100 --algorithm serial --fixed-scale 3");
  EXPECT_EQ(bad.code, 2) << bad.out;
  EXPECT_NE(bad.out.find("--fixed-scale"), std::string::npos) << bad.out;
}

TEST(CliGpu, BadShapesAndMissingDeviceFailCleanly) {
  Result r = run("sum --n 1000 --algorithm gpu_two_pass --backend model --block 100");
  EXPECT_EQ(r.code, 2) << r.out;
  EXPECT_NE(r.out.find("multiple of 32"), std::string::npos) << r.out;
  r = run("sum --n 1000 --algorithm gpu_two_pass --backend model --grid 0");
  EXPECT_EQ(r.code, 2) << r.out;
  r = run("sum --n 1000 --algorithm gpu_nosuch --backend model");
  EXPECT_EQ(r.code, 2) << r.out;
  // On a machine without a GPU, asking for one is a clear error (with a GPU this runs).
  r = run("sum --n 1000 --algorithm gpu_two_pass --backend cuda");
  if (r.code != 0) {
    EXPECT_NE(r.out.find("no CUDA device"), std::string::npos) << r.out;
  }
}

}  // namespace

namespace {

// An interruption in the middle of writing a cell leaves a partial line (and maybe a partial
// cell); --resume removes it, reruns that cell, and ends with exactly the rows of a full run.
TEST(CliStudy, ResumeAfterInterruptionKeepsRowsWithoutDuplicates) {
  const auto d = temp_dir("interrupt") / "run";
  const std::string base = "study error-vs-n --quick --log2-max 8 --seeds 1 --dists uniform --backend cpu --out " + d.string();
  ASSERT_EQ(run(base).code, 0);
  const auto csv = d / "error_vs_n.csv";
  std::vector<std::string> lines;
  {
    std::ifstream in(csv);
    std::string line;
    while (std::getline(in, line)) lines.push_back(line);
  }
  ASSERT_GT(lines.size(), 20u);
  {
    // Keep the header and the first 10 rows whole, then half of the 11th: a cut mid-cell.
    std::ofstream out(csv, std::ios::trunc);
    for (std::size_t i = 0; i <= 10; ++i) out << lines[i] << "\n";
    out << lines[11].substr(0, lines[11].size() / 2);
  }
  const Result r = run(base + " --resume");
  ASSERT_EQ(r.code, 0) << r.out;
  std::vector<std::string> after;
  {
    std::ifstream in(csv);
    std::string line;
    while (std::getline(in, line)) after.push_back(line);
  }
  EXPECT_EQ(after.size(), lines.size());
  std::multiset<std::string> a(lines.begin(), lines.end()), b(after.begin(), after.end());
  // Same rows (values are deterministic), none duplicated, none lost.
  EXPECT_TRUE(a == b);
}

// gpu_serial (one GPU thread, CPU serial's order) runs up to --serial-max only; every other kernel
// at every n. The plan records the limit, and a bad one is refused before the folder is made.
TEST(CliStudy, GpuSerialStopsAtSerialMax) {
  const auto d = temp_dir("serial_max") / "run";
  const Result r = run("study error-vs-n --quick --log2-max 8 --seeds 1 --dists uniform --dtypes float32 --backend model "
                       "--gpu-kernels gpu_serial,gpu_two_pass --serial-max 2^6 --out " + d.string());
  ASSERT_EQ(r.code, 0) << r.out;
  std::set<std::string> serial_n, two_pass_n;
  for (const auto& row : sumlab::test::read_csv(d / "error_vs_n.csv").rows) {
    if (row.at("algorithm") == "gpu_serial") serial_n.insert(row.at("n"));
    if (row.at("algorithm") == "gpu_two_pass") two_pass_n.insert(row.at("n"));
  }
  EXPECT_EQ(serial_n, (std::set<std::string>{"16", "64"}));
  EXPECT_EQ(two_pass_n, (std::set<std::string>{"16", "64", "256"}));
  std::ifstream prov(d / "provenance.json");
  EXPECT_NE(std::string(std::istreambuf_iterator<char>(prov), {}).find("\"gpu_serial_max\": 64"), std::string::npos);
  const auto bad = temp_dir("serial_max_bad") / "run";
  EXPECT_EQ(run("study error-vs-n --quick --backend model --serial-max -3 --out " + bad.string()).code, 2);
  EXPECT_FALSE(std::filesystem::exists(bad));
}

// --algorithms none: the GPU kernels alone (no CPU algorithm reads the data, so on cuda it stays on
// the device), every row still measured against the exact sum (gpu_exact's is the correctly rounded one).
TEST(CliStudy, AlgorithmsNoneRunsTheKernelsAlone) {
  const auto d = temp_dir("algorithms_none") / "run";
  const Result r = run("study error-vs-n --quick --log2-max 10 --seeds 1 --dists normal --dtypes float32,float64 "
                       "--backend model --algorithms none --gpu-kernels gpu_exact,gpu_two_pass --out " + d.string());
  ASSERT_EQ(r.code, 0) << r.out;
  std::set<std::string> names;
  for (const auto& row : sumlab::test::read_csv(d / "error_vs_n.csv").rows) {
    names.insert(row.at("algorithm"));
    if (row.at("algorithm") == "gpu_exact") {
      EXPECT_EQ(row.at("hex"), row.at("reference_hex")) << row.at("n");
    }
  }
  EXPECT_EQ(names, (std::set<std::string>{"gpu_exact", "gpu_two_pass"}));
}

// Cells side by side (--cells) change no byte of a study: the model's cells share the host's cores,
// cuda's take turns on the device while their host work overlaps. The same study with --cells 1 and
// --cells 4 (CPU algorithms, GPU kernels and error-vs-cond's host-made inputs included) writes the
// same CSV and summary. On cuda the reference is also the device's, checked against MPFR in each of
// these cells (n <= 2^24). Skips the cuda half without a device, saying so.
void expect_cells_change_no_byte(const std::string& backend) {
  const std::string evn = "study error-vs-n --log2-min 8 --log2-max 16 --log2-step 4 --seeds 2 --dists normal,cancellation "
                          "--algorithms serial,pairwise,kahan --gpu-kernels gpu_exact,gpu_two_pass,gpu_fixed_point --backend " +
                          backend;
  const std::string evc = "study error-vs-cond --quick --algorithms serial,kahan --gpu-kernels gpu_exact,gpu_kahan --backend " +
                          backend;
  for (const auto& [cmd, csv] : {std::pair{evn, "error_vs_n.csv"}, std::pair{evc, "error_vs_cond.csv"}}) {
    std::string bytes[2];
    for (int i = 0; i < 2; ++i) {
      const auto d = temp_dir("cells_" + backend + std::to_string(i) + csv) / "run";
      const Result r = run(cmd + (i == 0 ? " --cells 1" : " --cells 4") + " --out " + d.string());
      if (r.code != 0 && r.out.find("no CUDA device") != std::string::npos) GTEST_SKIP() << r.out;
      ASSERT_EQ(r.code, 0) << r.out;
      std::ifstream in(d / csv);
      bytes[i] = std::string(std::istreambuf_iterator<char>(in), {});
      std::ifstream summary(d / "summary.json");
      bytes[i] += std::string(std::istreambuf_iterator<char>(summary), {});
    }
    EXPECT_GT(bytes[0].size(), 1000u);
    EXPECT_EQ(bytes[0], bytes[1]) << cmd;
  }
}
TEST(CliStudy, CellsSideBySideChangeNoByteOnTheModel) { expect_cells_change_no_byte("model"); }
TEST(CliStudy, CellsSideBySideChangeNoByteOnCuda) { expect_cells_change_no_byte("cuda"); }

// A study whose largest input does not fit the device is refused before anything is generated or
// the run folder made (exit 3, the sizes named), though no host copy of it would be needed.
TEST(CliStudy, LargerThanTheDeviceIsRefusedFirst) {
  const auto d = temp_dir("device_memory") / "run";
  const Result r = run("study error-vs-n --backend cuda --algorithms none --gpu-kernels gpu_exact --log2-min 38 "
                       "--log2-max 38 --dtypes float32 --dists uniform --seeds 1 --out " + d.string());
  if (r.code != 0 && r.out.find("no CUDA device") != std::string::npos) GTEST_SKIP() << r.out;
  EXPECT_EQ(r.code, 3) << r.out;
  EXPECT_NE(r.out.find("of device memory"), std::string::npos) << r.out;
  EXPECT_FALSE(std::filesystem::exists(d));
}

// `sum` of a generated input with GPU kernels on cuda generates it on the device and computes its
// exact sum there: the same reference and the same bits as the model backend's host path, below
// and above the size where the device's reference is checked against MPFR (2^24), with a CPU
// algorithm (a host copy downloaded) and without. Skips without a device, saying so.
TEST(CliGpu, SumGeneratedOnTheDeviceMatchesTheHostPath) {
  for (const std::string args : {"--n 2^20+3 --dist cancellation -a gpu_exact,gpu_two_pass,gpu_fixed_point,kahan",
                                 "--n 2^24+5 --dist lognormal --sigma 6 -a gpu_exact,gpu_kahan,gpu_fixed_point",
                                 "--n 2^24+5 --dist normal --dtype float64 -a gpu_exact,gpu_two_pass"}) {
    const Result cuda = run("sum --json --backend cuda " + args);
    if (cuda.code != 0 && cuda.out.find("no CUDA device") != std::string::npos) GTEST_SKIP() << cuda.out;
    ASSERT_EQ(cuda.code, 0) << cuda.out;
    const Result model = run("sum --json --backend model " + args);
    ASSERT_EQ(model.code, 0) << model.out;
    const auto c = nlohmann::json::parse(cuda.out), m = nlohmann::json::parse(model.out);
    ASSERT_EQ(c.size(), m.size()) << args;
    for (std::size_t i = 0; i < c.size(); ++i) {
      EXPECT_EQ(c[i]["algorithm"], m[i]["algorithm"]) << args;
      EXPECT_EQ(c[i]["reference_hex"], m[i]["reference_hex"]) << args;
      EXPECT_EQ(c[i]["sum_abs"], m[i]["sum_abs"]) << args;
      EXPECT_EQ(c[i]["hex"], m[i]["hex"]) << args << " " << c[i]["algorithm"];
      EXPECT_EQ(c[i]["verdict"], "within") << args << " " << c[i]["algorithm"];
      EXPECT_EQ(m[i]["reference_method"], "MPFR");
      EXPECT_EQ(c[i]["reference_method"], args.find("2^20") != std::string::npos
                                              ? "gpu_exact's limbs on the device, equal to MPFR's"
                                              : "gpu_exact's limbs on the device") << args;
    }
  }
}

// A generated sum larger than the device is refused before anything is generated (exit 3, the
// device's memory named), though with GPU kernels alone no host copy would be needed.
TEST(CliGpu, SumLargerThanTheDeviceIsRefusedFirst) {
  const Result r = run("sum --n 2^38 -a gpu_exact --backend cuda");
  if (r.code != 0 && r.out.find("no CUDA device") != std::string::npos) GTEST_SKIP() << r.out;
  EXPECT_EQ(r.code, 3) << r.out;
  EXPECT_NE(r.out.find("of device memory"), std::string::npos) << r.out;
}

// A sum of 2^26 elements or more shows progress when stderr is a terminal (here a pseudo-terminal
// from util-linux's `script`): the reference first, then each subject as it finishes. Into a pipe
// or a file it prints only the results, so `--json 2>&1` stays one JSON document.
TEST(Cli, BigSumsShowProgressOnATerminalOnly) {
  const Result piped = run("sum --n 2^26 -a serial,kahan --json");
  ASSERT_EQ(piped.code, 0) << piped.out;
  EXPECT_EQ(nlohmann::json::parse(piped.out).size(), 2u);
  if (std::system("command -v script > /dev/null 2>&1") != 0) GTEST_SKIP() << "no `script` (util-linux) for a pseudo-terminal";
  const std::string cmd = std::string("script -qec '") + SUMLAB_BINARY + " sum --n 2^26 -a serial,kahan' /dev/null 2>&1";
  std::string out;
  if (FILE* p = ::popen(cmd.c_str(), "r")) {
    char buf[4096];
    while (std::fgets(buf, sizeof buf, p)) out += buf;
    ::pclose(p);
  }
  EXPECT_NE(out.find("the exact reference (MPFR)"), std::string::npos) << out;
  EXPECT_NE(out.find("3/3"), std::string::npos) << out;
  EXPECT_NE(out.find("reference  "), std::string::npos) << out;  // the results follow
}

}  // namespace

namespace {

// A 1-D float32 .npy file of `values`.
std::filesystem::path write_npy32(const std::filesystem::path& path, const std::vector<float>& values) {
  std::string header = "{'descr': '<f4', 'fortran_order': False, 'shape': (" + std::to_string(values.size()) + ",), }";
  while ((10 + header.size() + 1) % 64) header += ' ';
  header += '\n';
  std::ofstream npy(path, std::ios::binary);
  npy << "\x93NUMPY" << char(1) << char(0) << char(header.size() & 0xff) << char(header.size() >> 8) << header;
  npy.write(reinterpret_cast<const char*>(values.data()), static_cast<std::streamsize>(values.size() * sizeof(float)));
  return path;
}


// Every study's and command's seed and output folder are read the same way.
TEST(CliOptions, EveryCommandsSeedAndOutAreChecked) {
  for (const char* cmd : {"study scan --quick --backend model", "study determinism --quick --backend model",
                          "bench --no-families --no-gpu"})
    expect_one_line_refusal(std::string(cmd) + " --seed -1 --out /nonexistent/never", "--seed: '-1' is negative");
  expect_one_line_refusal("study error-vs-n --quick --out ''", "--out: the value is empty");
  expect_one_line_refusal("report runs/x --out ''", "--out: the value is empty");
  expect_one_line_refusal("study determinism --quick --backend model --save-golden '' --out /nonexistent/never",
                          "--save-golden: the value is empty");
}

// A parse error is one line like every other refusal; an unknown command is named.
TEST(CliOptions, ParseErrorsAreOneLine) {
  expect_one_line_refusal("sum --grid 2147483648", "--grid");
  expect_one_line_refusal("frobnicate", "unknown command 'frobnicate' (commands: sum, study,");
  expect_one_line_refusal("sum --no-such-option", "--no-such-option");
}

// Output that cannot be written is a failure: a full disk is out of resources.
TEST(CliOptions, UnwritableOutputIsNotASuccess) {
  if (!std::filesystem::exists("/dev/full")) GTEST_SKIP() << "no /dev/full here";
  for (const char* args : {"sum --n 16 -a serial --json", "algorithms", "explain --n 16"}) {
    // stderr to the pipe, stdout to the full device (run() would send both to the same place).
    FILE* p = popen((std::string(SUMLAB_BINARY) + " " + args + " 2>&1 >/dev/full").c_str(), "r");
    ASSERT_NE(p, nullptr);
    std::string out;
    for (int c; (c = std::fgetc(p)) != EOF;) out.push_back(static_cast<char>(c));
    const int status = pclose(p);
    EXPECT_EQ(WIFEXITED(status) ? WEXITSTATUS(status) : -1, 3) << args << "\n" << out;
    EXPECT_NE(out.find("cannot write the output"), std::string::npos) << args << "\n" << out;
  }
}

// Values CLI11 would clamp, wrap or turn into a default are refused with one line naming the
// option; the edge values still accepted are accepted.
TEST(CliOptions, ValuesAreRefusedNotClampedOrDefaulted) {
  expect_one_line_refusal("sum --n 10 -a serial --seed -1", "--seed: '-1' is negative");
  expect_one_line_refusal("sum --n 10 -a serial --seed 99999999999999999999",
                          "--seed: '99999999999999999999' is too large (at most 18446744073709551615)");
  expect_one_line_refusal("sum --n 10 -a serial --seed 18446744073709551616", "is too large");
  expect_one_line_refusal("sum --n 10 -a serial --seed 0x10", "--seed: '0x10' has a leading zero");
  expect_one_line_refusal("sum --n 10 -a serial --seed 010", "--seed: '010' has a leading zero");
  expect_one_line_refusal("sum --n 10 -a serial --seed '1\n2'", "is not a whole number");  // a line break in the value
  expect_one_line_refusal("sum --n 10 -a serial --dist constant --value '1\n2'", "is not a number");
  expect_one_line_refusal("sum --n 10 -a serial --dist uniform --hi 1e39", "--hi 1e+39 overflows float32");
  const Result top = run("sum --n 10 -a serial --json --seed 18446744073709551615");
  ASSERT_EQ(top.code, 0) << top.out;
  const Result wrapped = run("sum --n 10 -a serial --json --seed 18446744073709551614");
  ASSERT_EQ(wrapped.code, 0) << wrapped.out;
  EXPECT_NE(nlohmann::json::parse(top.out)[0]["hex"], nlohmann::json::parse(wrapped.out)[0]["hex"]);

  // A finite literal past the type's range would silently become an infinity.
  expect_one_line_refusal("sum --n 10 -a serial --dist constant --value 1e400", "--value: '1e400' overflows float64");
  expect_one_line_refusal("sum --n 10 -a serial --dist constant --value 1e39", "--value 1e+39 overflows float32");
  expect_one_line_refusal("sum --n 10 -a serial --dist uniform --hi 1e400", "--hi: '1e400' overflows float64");
  const Result wide = run("sum --n 10 -a serial --json --dist constant --value 1e39 --dtype float64");
  ASSERT_EQ(wide.code, 0) << wide.out;
  EXPECT_EQ(nlohmann::json::parse(wide.out)[0]["reference"].get<double>(), 10 * 1e39);
  const Result largest = run("sum --n 1 -a serial --json --dist constant --value 3.4028235e38");
  ASSERT_EQ(largest.code, 0) << largest.out;
  const Result inf = run("sum --n 10 -a serial --json --dist constant --value inf");
  ASSERT_EQ(inf.code, 0) << inf.out;
  EXPECT_EQ(nlohmann::json::parse(inf.out)[0]["value"], "inf");

  // An empty value is not the option left out.
  expect_one_line_refusal("sum -a serial --input ''", "--input: the value is empty");
  expect_one_line_refusal("sum --n 10 -a serial --dtype ''", "--dtype: the value is empty");
  expect_one_line_refusal("sum --n 10 -a serial --format ''", "--format: the value is empty");
  expect_one_line_refusal("study error-vs-n --quick --input '' --out /nonexistent/never", "--input: the value is empty");
  expect_one_line_refusal("study error-vs-cond --quick --n '' --out /nonexistent/never", "--n: '' is not a number");
  expect_one_line_refusal("verify --quick --allow-no-gpu --csv ''", "--csv: the value is empty");

  // 0 is a step like -1, not "use the default".
  expect_one_line_refusal("study error-vs-cond --quick --decades-step 0 --out /nonexistent/never",
                          "--decades-step must be >= 1");
  expect_one_line_refusal("study error-vs-cond --quick --decades-step -1 --out /nonexistent/never",
                          "--decades-step must be >= 1");
}

// Options that would have no effect are refused rather than dropped: the generator's with --input,
// GPU kernels with --backend cpu, a --dtypes the user's data does not hold.
TEST(CliOptions, OptionsWithoutEffectAreRefused) {
  const auto d = temp_dir("no_effect");
  std::vector<float> values(64);
  for (std::size_t i = 0; i < values.size(); ++i) values[i] = 1.0f + float(i) / 64.0f;
  const std::string f32 = write_npy32(d / "f32.npy", values).string();
  for (const std::string option : {"--n 1000", "--dist normal", "--seed 3", "--value 2", "--order ascending"})
    expect_one_line_refusal("sum -a serial --input " + f32 + " " + option,
                            option.substr(0, option.find(' ')) + " has no effect with --input");
  expect_one_line_refusal("explain --input " + f32 + " --n 16", "--n has no effect with --input");
  const Result plain = run("sum -a serial --json --input " + f32);
  ASSERT_EQ(plain.code, 0) << plain.out;

  const auto out = d / "run";
  expect_one_line_refusal("study error-vs-n --backend cpu --input " + f32 + " --dtypes float64 --out " + out.string(),
                          "--input '" + f32 + "' holds float32 but --dtypes float64 was given");
  expect_one_line_refusal("study error-vs-n --backend cpu --input " + f32 + " --dtypes float32,float64 --out " +
                              out.string(),
                          "holds float32 but --dtypes float32,float64 was given");
  expect_one_line_refusal("study error-vs-cond --backend cpu --input " + f32 + " --dtypes float64 --out " + out.string(),
                          "holds float32 but --dtypes float64 was given");
  // The determinism study's one cell on the data: no distributions, sizes or other dtype to run.
  for (const std::string option : {"--dists uniform", "--sizes 1000"})
    expect_one_line_refusal("study determinism --backend model --input " + f32 + " " + option + " --out " + out.string(),
                            option.substr(0, option.find(' ')) + " has no effect with --input");
  expect_one_line_refusal("study determinism --backend model --input " + f32 + " --dtypes float64 --out " + out.string(),
                          "holds float32 but --dtypes float64 was given");
  EXPECT_FALSE(std::filesystem::exists(out));
  const Result same = run("study error-vs-n --backend cpu --log2-max 6 --seeds 1 --input " + f32 +
                          " --dtypes float32 --out " + out.string());
  ASSERT_EQ(same.code, 0) << same.out;
  std::filesystem::remove_all(out);

  expect_one_line_refusal("study error-vs-n --quick --backend cpu --gpu-kernels gpu_two_pass --out " + out.string(),
                          "--gpu-kernels gpu_two_pass: --backend cpu runs the CPU algorithms only");
  expect_one_line_refusal("study error-vs-cond --quick --backend cpu --gpu-kernels all --out " + out.string(),
                          "--gpu-kernels all: --backend cpu runs the CPU algorithms only");
  EXPECT_FALSE(std::filesystem::exists(out));
  const Result none = run("study error-vs-n --quick --backend cpu --gpu-kernels none --log2-max 6 --seeds 1 "
                          "--dists uniform --out " + out.string());
  ASSERT_EQ(none.code, 0) << none.out;
}

// verify reads --atomic-n with its other options, before the sweep: a bad one is refused even
// without a GPU, where the atomic check would never run.
TEST(CliOptions, VerifyAtomicNIsReadUpFront) {
  for (const char* n : {"abc", "-5", "2^63"}) {
    const auto t0 = std::chrono::steady_clock::now();
    expect_one_line_refusal(std::string("verify --quick --allow-no-gpu --atomic-n ") + n,
                            std::string("--atomic-n: '") + n + "'");
    EXPECT_LT(std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count(), 5.0) << n;
  }
}

// On the model backend gpu_multi_add holds an accumulator per thread of its grid: a shape that
// needs more memory than the machine has is refused up front, naming the shape (not "is n larger
// than this machine's memory?" with n = 16).
TEST(CliGpu, ModelShapeTooLargeForMemoryNamesTheShape) {
  const std::uint64_t threads = std::uint64_t{8388608} * 1024;
  if (sumlab::memory_budget() >= threads * 8) GTEST_SKIP() << "this machine could hold the shape's accumulators";
  expect_one_line_refusal("sum -a gpu_multi_add --backend model --n 16 --dtype float64 --grid 8388608 --block 1024",
                          "the model of gpu_multi_add at --grid 8388608 x --block 1024 (8589934592 threads, an "
                          "accumulator each, for n = 16) needs 64.0 GiB",
                          3);
}

// A verdict cell that names no verdict (emptied, or a word sumlab never writes) is a damaged table:
// bad input naming the row, not an internal error.
TEST(CliReport, UnknownVerdictIsBadInputNamingTheRow) {
  sumlab::CsvTable t;
  t.header = {"algorithm", "dtype", "verdict", "abs_error", "bound"};
  t.rows = {{"serial", "float32", "within", "0", "1"}, {"kahan", "float64", "", "0", "1"}};
  for (const std::string source : {"run/error_vs_n.csv", ""}) {
    sumlab::BoundAlarm tally;
    try {
      tally.add_rows(t, source);
      ADD_FAILURE() << "accepted an empty verdict";
    } catch (const sumlab::UserError& e) {
      const std::string m = e.what();
      EXPECT_NE(m.find("data row 2 (kahan float64): the verdict '' is none of within, exceeds"), std::string::npos)
          << m;
      if (!source.empty()) {
        EXPECT_EQ(m.rfind("'run/error_vs_n.csv', data row 2", 0), 0u) << m;
      }
    }
  }
  t.rows[1][2] = "maybe";
  EXPECT_THROW(sumlab::BoundAlarm().add_rows(t), sumlab::UserError);

  // Through `report --strict`: exit 2, one line (a same-length word, so that the file's size is
  // the one its run recorded).
  const auto dir = temp_dir("report_verdict") / "run";
  ASSERT_EQ(run("study error-vs-n --backend cpu --log2-max 6 --seeds 1 --dists uniform --dtypes float32 "
                "--algorithms serial --out " + dir.string()).code, 0);
  std::string text;
  {
    std::ifstream in(dir / "error_vs_n.csv");
    text.assign(std::istreambuf_iterator<char>(in), {});
  }
  const auto at = text.find(",within,");
  ASSERT_NE(at, std::string::npos) << text.substr(0, 400);
  text.replace(at, 8, ",wxthin,");
  std::ofstream(dir / "error_vs_n.csv", std::ios::binary | std::ios::trunc) << text;
  const Result r = run("report " + dir.string() + " --strict --force");
  EXPECT_EQ(r.code, 2) << r.out;
  EXPECT_NE(r.out.find("the verdict 'wxthin' is none of within, exceeds"), std::string::npos) << r.out;
  EXPECT_EQ(r.out.find("internal error"), std::string::npos) << r.out;
}

}  // namespace
