// `sumlab report` on a tiny run folder: the files it writes, the names it shows, and bad input.
// Rendering needs a Python with matplotlib; without one those tests skip with a message (CI
// installs python3-matplotlib). The refusals are checked before any Python is looked for.
#include "tests/studies/run_sumlab.hpp"

#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>
#include <string>
#include <vector>

namespace {

namespace fs = std::filesystem;

using sumlab::test::Result;
using sumlab::test::run;
using sumlab::test::slurp;

fs::path temp_dir(const std::string& name) { return sumlab::test::fresh_dir("report_test_" + name); }

// A tiny error-vs-n run, made once per process (ctest runs each test in its own process, maybe in
// parallel: the folder name carries the pid so no process removes another's run).
// It is removed when the process exits.
const fs::path& tiny_run() {
  struct Run {
    fs::path base = temp_dir("run_" + std::to_string(getpid())), dir = base / "tiny";
    Run() {
      const Result r = run("study error-vs-n --quick --log2-max 8 --seeds 1 --dists uniform,constant --out " +
                           dir.string());
      EXPECT_EQ(r.code, 0) << r.out;
    }
    ~Run() {
      std::error_code ec;
      fs::remove_all(base, ec);
    }
  };
  static const Run run_once;
  return run_once.dir;
}

std::set<std::string> algorithms_in(const fs::path& csv) {
  std::ifstream in(csv);
  std::string line;
  std::getline(in, line);
  std::vector<std::string> header;
  for (std::stringstream s(line); std::getline(s, line, ',');) header.push_back(line);
  std::size_t col = 0;
  while (col < header.size() && header[col] != "algorithm") ++col;
  std::set<std::string> names;
  while (std::getline(in, line)) {
    std::stringstream s(line);
    std::string field;
    for (std::size_t i = 0; i <= col && std::getline(s, field, ','); ++i) {}
    if (!field.empty()) names.insert(field);
  }
  return names;
}

TEST(Report, RendersFiguresHtmlAndMarkdown) {
  const fs::path& d = tiny_run();
  const fs::path out = temp_dir("render") / "out";
  const Result r = run("report " + d.string() + " --out " + out.string());
  SKIP_WITHOUT_MATPLOTLIB(r);
  ASSERT_EQ(r.code, 0) << r.out;
  const fs::path html = out / "report.html";
  EXPECT_NE(r.out.find(html.string()), std::string::npos) << "prints the HTML path: " << r.out;
  ASSERT_TRUE(fs::exists(html));
  EXPECT_TRUE(fs::exists(out / "report.md"));
  int svg = 0;
  for (const auto& e : fs::recursive_directory_iterator(out)) svg += e.path().extension() == ".svg";
  EXPECT_GE(svg, 1);

  // Self-contained: every figure is an inline SVG element, nothing is fetched (a link is a data URI
  // or an anchor in the page).
  const std::string page = slurp(html);
  EXPECT_NE(page.find("<figure><svg "), std::string::npos);
  EXPECT_EQ(page.find("<?xml"), std::string::npos);
  EXPECT_EQ(page.find("<img"), std::string::npos);
  for (const std::string attr : {"src=\"", "href=\""})
    for (std::size_t at = page.find(attr); at != std::string::npos; at = page.find(attr, at + 1)) {
      const std::size_t v = at + attr.size();
      EXPECT_TRUE(page.compare(v, 5, "data:") == 0 || page.compare(v, 1, "#") == 0) << page.substr(at, 60);
    }
  EXPECT_EQ(page.find("http://"), std::string::npos);
  EXPECT_EQ(page.find("https://"), std::string::npos);

  // Every algorithm the run measured is named (labels come from the data).
  const auto names = algorithms_in(d / "error_vs_n.csv");
  EXPECT_GE(names.size(), 5u);
  const std::string md = slurp(out / "report.md");
  for (const auto& name : names) {
    EXPECT_NE(page.find(name), std::string::npos) << name;
    EXPECT_NE(md.find(name), std::string::npos) << name;
  }
  // Every figure the Markdown links is there.
  int links = 0;
  for (std::size_t at = md.find("](figures/"); at != std::string::npos; at = md.find("](figures/", at + 1)) {
    const std::size_t end = md.find(')', at);
    ASSERT_NE(end, std::string::npos);
    const std::string target = md.substr(at + 2, end - at - 2);
    EXPECT_TRUE(target.ends_with(".svg") && fs::exists(out / target)) << target;
    ++links;
  }
  EXPECT_GE(links, 1);
}

// --linked-figures: the page shows each figure from its file under figures/ (which exists), holds
// no SVG of its own, and so weighs less than the self-contained page by at least half the figures' bytes
// (inline, an SVG loses its XML header and metadata).
TEST(Report, LinkedFiguresPointAtTheirFilesInsteadOfHoldingThem) {
  const fs::path& d = tiny_run();
  const fs::path base = temp_dir("linked");
  Result r = run("report " + d.string() + " --out " + (base / "inline").string());
  SKIP_WITHOUT_MATPLOTLIB(r);
  ASSERT_EQ(r.code, 0) << r.out;
  r = run("report " + d.string() + " --linked-figures --out " + (base / "linked").string());
  ASSERT_EQ(r.code, 0) << r.out;
  const std::string page = slurp(base / "linked" / "report.html");
  EXPECT_EQ(page.find("<svg"), std::string::npos);
  int images = 0;
  std::uintmax_t figure_bytes = 0;
  for (std::size_t at = page.find("<img src=\""); at != std::string::npos; at = page.find("<img src=\"", at + 1)) {
    const std::size_t v = at + 10, end = page.find('"', v);
    ASSERT_NE(end, std::string::npos);
    const std::string target = page.substr(v, end - v);
    EXPECT_TRUE(target.starts_with("figures/") && target.ends_with(".svg")) << target;
    ASSERT_TRUE(fs::exists(base / "linked" / target)) << target;
    figure_bytes += fs::file_size(base / "linked" / target);
    ++images;
  }
  EXPECT_EQ(images, static_cast<int>(std::count_if(fs::directory_iterator(base / "linked" / "figures"),
                                                    fs::directory_iterator(), [](const auto&) { return true; })));
  EXPECT_GE(images, 1);
  EXPECT_LE(fs::file_size(base / "linked" / "report.html") + figure_bytes / 2,
            fs::file_size(base / "inline" / "report.html"));
  // The Markdown is the same either way.
  EXPECT_EQ(slurp(base / "linked" / "report.md"), slurp(base / "inline" / "report.md"));
}

TEST(Report, DefaultOutputAndForce) {
  const fs::path d = temp_dir("default") / "run";
  fs::copy(tiny_run(), d, fs::copy_options::recursive);
  Result r = run("report " + d.string());
  SKIP_WITHOUT_MATPLOTLIB(r);
  ASSERT_EQ(r.code, 0) << r.out;
  ASSERT_TRUE(fs::exists(d / "report" / "report.html"));
  const auto before = fs::last_write_time(d / "report" / "report.html");

  r = run("report " + d.string());
  EXPECT_EQ(r.code, 2) << r.out;
  EXPECT_NE(r.out.find("--force"), std::string::npos) << r.out;
  EXPECT_EQ(fs::last_write_time(d / "report" / "report.html"), before);

  r = run("report " + d.string() + " --force");
  EXPECT_EQ(r.code, 0) << r.out;
}

TEST(Report, NeverIntoARunFolder) {
  // A run's manifest lists the run's files: taken for a report's, --force would remove the run.
  const fs::path base = temp_dir("into_run");
  fs::copy(tiny_run(), base / "a", fs::copy_options::recursive);
  fs::copy(tiny_run(), base / "b", fs::copy_options::recursive);
  for (const auto& out : {base / "a", base / "b"}) {
    const Result r = run("report " + (base / "a").string() + " --out " + out.string() + " --force");
    EXPECT_EQ(r.code, 2) << r.out;
    EXPECT_NE(r.out.find("holds a run"), std::string::npos) << r.out;
    EXPECT_TRUE(fs::exists(out / "error_vs_n.csv"));
    EXPECT_TRUE(fs::exists(out / "provenance.json"));
  }
}

TEST(Report, KeepsFoldersOfItsOutputThatAreNotItsOwn) {
  // .render-PID is what a killed report leaves; .render-cache is the user's.
  const fs::path out = temp_dir("render_debris");
  fs::create_directories(out / ".render-cache");
  fs::create_directories(out / ".render-424242");
  std::ofstream(out / ".render-cache" / "f") << "mine";
  const Result r = run("report " + tiny_run().string() + " --out " + out.string());
  SKIP_WITHOUT_MATPLOTLIB(r);
  ASSERT_EQ(r.code, 0) << r.out;
  EXPECT_TRUE(fs::exists(out / ".render-cache" / "f"));
  EXPECT_FALSE(fs::exists(out / ".render-424242"));
}

TEST(Report, StrictFailsOnAFolderChangedAfterItsRun) {
  // Rows cut from a finished run: the tally no longer matches summary.json's, and --strict says so
  // rather than vouching for what is left.
  const fs::path d = temp_dir("damaged") / "run";
  fs::copy(tiny_run(), d, fs::copy_options::recursive);
  std::vector<std::string> lines;
  {
    std::ifstream in(d / "error_vs_n.csv");
    for (std::string l; std::getline(in, l);) lines.push_back(l);
  }
  ASSERT_GT(lines.size(), 3u);
  {
    std::ofstream out(d / "error_vs_n.csv", std::ios::trunc);
    for (std::size_t i = 0; i + 2 < lines.size(); ++i) out << lines[i] << '\n';
    out << lines[lines.size() - 2].substr(0, 10);  // and a torn last row
  }
  const Result r = run("report " + d.string() + " --strict");
  SKIP_WITHOUT_MATPLOTLIB(r);
  EXPECT_EQ(r.code, 1) << r.out;
  EXPECT_NE(r.out.find("DAMAGED"), std::string::npos) << r.out;
}

TEST(Report, SeveralRunFoldersInOneReport) {
  const fs::path base = temp_dir("several");
  fs::copy(tiny_run(), base / "first", fs::copy_options::recursive);
  fs::copy(tiny_run(), base / "second", fs::copy_options::recursive);
  const std::string both = (base / "first").string() + " " + (base / "second").string();
  Result r = run("report " + both);
  EXPECT_NE(r.code, 0);
  EXPECT_NE(r.out.find("--out"), std::string::npos) << r.out;

  r = run("report " + both + " --out " + (base / "out").string());
  SKIP_WITHOUT_MATPLOTLIB(r);
  ASSERT_EQ(r.code, 0) << r.out;
  const std::string page = slurp(base / "out" / "report.html");
  EXPECT_NE(page.find("first"), std::string::npos);
  EXPECT_NE(page.find("second"), std::string::npos);
}

TEST(Report, ExistingReportIsNotOverwrittenWithoutForce) {
  const fs::path out = temp_dir("existing");
  std::ofstream(out / "report.html") << "keep me";
  const Result r = run("report " + tiny_run().string() + " --out " + out.string());
  EXPECT_EQ(r.code, 2) << r.out;
  EXPECT_NE(r.out.find("already holds a report"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("--force"), std::string::npos) << r.out;
  EXPECT_EQ(slurp(out / "report.html"), "keep me");
}

TEST(Report, FolderWithoutRunFailsClearly) {
  const fs::path empty = temp_dir("empty");
  Result r = run("report " + empty.string());
  EXPECT_EQ(r.code, 2) << r.out;
  EXPECT_NE(r.out.find("holds no run"), std::string::npos) << r.out;
  EXPECT_FALSE(fs::exists(empty / "report"));

  r = run("report " + (empty / "nonexistent").string());
  EXPECT_EQ(r.code, 2) << r.out;
  EXPECT_NE(r.out.find("not a folder"), std::string::npos) << r.out;

  std::ofstream(empty / "provenance.json") << "{\"study\": \"error-vs-n\"}";
  r = run("report " + empty.string());
  EXPECT_EQ(r.code, 2) << r.out;
  EXPECT_NE(r.out.find("no CSV"), std::string::npos) << r.out;

  r = run("report");
  EXPECT_NE(r.code, 0);
  EXPECT_LT(r.code, 128) << r.out;
}

// A bench run holding the committed H200 bench's provenance and one table, `file`, of `text`.
fs::path bench_run(const std::string& name, const std::string& file, const std::string& text) {
  const fs::path run_dir = temp_dir(name) / "bench";
  fs::create_directories(run_dir);
  fs::copy_file(fs::path(SUMLAB_SOURCE_DIR) / "data" / "h200" / "bench" / "provenance.json", run_dir / "provenance.json");
  std::ofstream(run_dir / file) << text;
  return run_dir;
}

// The same with bench_families.csv holding `rows`.
fs::path bench_families_run(const std::string& name, const std::string& rows) {
  return bench_run(name, "bench_families.csv",
                   "dtype,n,family,kernel,detail,ms,bytes_per_element,gb_per_s,ratio_read,ratio_cub_reduce,peer,"
                   "ratio_peer,read_ms,cub_ms,error\n" + rows);
}

// The bench's families: one figure and table per family, for the scans one per operator, and for
// the row kernels one per problem (the detail's first part), so that float32 and bfloat16 rows of the same length are not one
// panel of lines with the same names. The provenance is the committed H200 bench's.
TEST(Report, BenchRowKernelsGetAPanelPerProblem) {
  std::string rows;
  for (const char* n : {"67108864", "268435456"}) {
    const std::string at = std::string("float32,") + n + ",";
    rows += at + "scan,warp_hs_chained,\"+ inclusive, b256x23\",0.2,8,2600,0.58,0.3,cub,0.85,0.06,0.07,\n" +
            at + "scan,cub,+ inclusive,0.17,8,3100,0.69,0.4,cub,1,0.06,0.07,\n" +
            at + "scan,warp_hs_chained,\"max inclusive, b512x23\",0.22,8,2400,0.54,0.3,cub,1.06,0.06,0.07,\n" +
            at + "scan,cub,max inclusive,0.23,8,2300,0.51,0.3,cub,1,0.06,0.07,\n" +
            at + "rows,welford,\"rows of 4096, block_per_row/256\",0.16,4.002,1600,0.37,0.4,,,0.06,0.07,\n" +
            at + "rows,welford,\"bfloat16 rows of 4096, block_per_row/256\",0.15,2.002,900,0.21,0.4,,,0.06,0.07,\n" +
            at + "rows,argmax,\"bfloat16 rows of 4096, block_per_row/256\",0.09,2.003,1500,0.33,0.7,,,0.06,0.07,\n";
  }
  const fs::path run_dir = bench_families_run("bench_rows", rows);
  const fs::path out = run_dir.parent_path() / "out";
  const Result r = run("report " + run_dir.string() + " --out " + out.string());
  SKIP_WITHOUT_MATPLOTLIB(r);
  ASSERT_EQ(r.code, 0) << r.out;
  const std::string md = slurp(out / "report.md");
  for (const char* panel :
       {"scan, float32", "scan, max, float32", "rows, rows of 4096, float32", "rows, bfloat16 rows of 4096, float32"})
    EXPECT_NE(md.find(std::string("Bandwidth / read-roof bandwidth, ") + panel), std::string::npos) << panel;
  // The scans: a panel an operator, each against CUB's call for that operator.
  const std::size_t plus = md.find("read-roof bandwidth, scan, float32"), max = md.find("read-roof bandwidth, scan, max");
  ASSERT_NE(plus, std::string::npos);
  ASSERT_NE(max, std::string::npos);
  const std::string plus_table = md.substr(plus, md.find("\n\n", md.find("| --- ", plus)) - plus);
  EXPECT_EQ(plus_table.find("max inclusive"), std::string::npos) << plus_table;
  EXPECT_NE(md.find("| warp_hs_chained | max inclusive, b512x23 | 0.54 | 0.54 | 1.06 (cub) |", max), std::string::npos) << md;
  // Each row problem's table holds its own kernels' ratios, not the other's.
  const std::size_t f32 = md.find("read-roof bandwidth, rows, rows of 4096"), bf16 = md.find("read-roof bandwidth, rows, bfloat16");
  ASSERT_NE(f32, std::string::npos);
  ASSERT_NE(bf16, std::string::npos);
  const std::string f32_table = md.substr(f32, md.find("\n\n", md.find("| --- ", f32)) - f32);
  EXPECT_NE(f32_table.find("| welford | rows of 4096, block_per_row/256 | 0.37 | 0.37 |"), std::string::npos) << f32_table;
  EXPECT_EQ(f32_table.find("argmax"), std::string::npos) << f32_table;
  EXPECT_NE(md.find("| argmax | bfloat16 rows of 4096, block_per_row/256 | 0.33 | 0.33 |", bf16), std::string::npos) << md;
  EXPECT_TRUE(fs::exists(out / "figures" / "bench_rows-bfloat16-rows-of-4096_float32.svg"));
  // A run without in_l2 read every family's input in copies past the L2: no cell is marked.
  EXPECT_NE(md.find("over copies of the input that the launches read in turn"), std::string::npos) << md;
  EXPECT_EQ(md.find("input in L2"), std::string::npos) << md;
  // One shape a kernel: no table of fastest shapes (BenchRowKernelsAtSeveralShapesNameTheFastest).
  EXPECT_EQ(md.find("The fastest shape"), std::string::npos) << md;
}

// A swept bench: the table of the sweep's fastest shapes, then one of each kernel's default shape
// (what a sum given no shape runs), each ratio from its own row.
TEST(Report, SweptBenchShowsTheDefaultShapeBesideTheFastest) {
  const std::string head = "float32,uniform,";
  const fs::path run_dir = bench_run(
      "bench_default", "bench_gpu.csv",
      "dtype,distribution,n,kernel,shape,role,ms,ms_min,ms_max,launches,samples,gb_per_s,ratio_cub,ratio_read,cub_ms,"
      "read_ms,value_hex,error\n" +
          head + "1048576,gpu_cub,,peer,0.008,0.008,0.008,9,9,500,1,0.5,0.008,0.004,,\n" +
          head + "1048576,gpu_kahan,528x256 v4 d last_block,default,0.0064,0.0064,0.0064,9,9,650,1.25,0.6,0.008,0.004,0x1,\n" +
          head + "1048576,gpu_kahan,264x1024 v4 d last_block,sweep,0.0058,0.0058,0.0058,9,9,720,1.379,0.7,0.008,0.004,0x1,\n" +
          head + "1048576,gpu_kahan,264x1024 v4 d second_kernel,sweep,0.0080,0.0080,0.0080,9,9,520,1.0,0.5,0.008,0.004,0x1,\n");
  const fs::path out = run_dir.parent_path() / "out";
  const Result r = run("report " + run_dir.string() + " --out " + out.string());
  SKIP_WITHOUT_MATPLOTLIB(r);
  ASSERT_EQ(r.code, 0) << r.out;
  const std::string md = slurp(out / "report.md");
  const std::size_t best = md.find("CUB time / kernel time, float32, uniform");
  const std::size_t dflt = md.find("CUB time / kernel time at each kernel's default shape, float32, uniform");
  ASSERT_NE(best, std::string::npos) << md;
  ASSERT_NE(dflt, std::string::npos) << md;
  EXPECT_LT(best, dflt);
  EXPECT_NE(md.find("| gpu_kahan | 1.379 | 264x1024 v4 d last_block |", best), std::string::npos) << md;
  EXPECT_NE(md.find("| gpu_kahan | 1.250 | 528x256 v4 d last_block |", dflt), std::string::npos) << md;
  // The peer has no default row of its own: it is not in the default table.
  EXPECT_EQ(md.find("| gpu_cub |", dflt), std::string::npos) << md.substr(dflt);
}

// A row kernel timed at several shapes: the table of its fastest shape names, at each n, the
// shape that won there (which may differ between sizes).
TEST(Report, BenchRowKernelsAtSeveralShapesNameTheFastest) {
  // welford: /64 wins at 2^26, /256 at 2^28.
  const fs::path run_dir = bench_families_run(
      "bench_row_shapes",
      "float32,67108864,rows,welford,\"rows of 4096, block_per_row/256\",0.16,4.002,1600,0.48,0.4,,,0.06,0.07,\n"
      "float32,67108864,rows,welford,\"rows of 4096, block_per_row/64\",0.11,4.002,2400,0.72,0.6,,,0.06,0.07,\n"
      "float32,268435456,rows,welford,\"rows of 4096, block_per_row/256\",0.5,4.002,2000,0.81,0.4,,,0.2,0.25,\n"
      "float32,268435456,rows,welford,\"rows of 4096, block_per_row/64\",0.6,4.002,1900,0.75,0.6,,,0.2,0.25,\n");
  const fs::path out = run_dir.parent_path() / "out";
  const Result r = run("report " + run_dir.string() + " --out " + out.string());
  SKIP_WITHOUT_MATPLOTLIB(r);
  ASSERT_EQ(r.code, 0) << r.out;
  const std::string md = slurp(out / "report.md");
  const std::size_t best = md.find("The fastest shape of each row kernel");
  ASSERT_NE(best, std::string::npos) << md;
  EXPECT_NE(md.find("| welford | 0.72 /64 | 0.81 /256 |", best), std::string::npos) << md.substr(best, 600);
}

TEST(Report, DataWithoutARendererIsShownAsItsTable) {
  const fs::path base = temp_dir("unknown");
  const fs::path mixed = base / "mixed";
  fs::copy(tiny_run(), mixed, fs::copy_options::recursive);
  std::ofstream(mixed / "some_future_study.csv") << "a,b\n1,2\n";
  Result r = run("report " + mixed.string());
  SKIP_WITHOUT_MATPLOTLIB(r);
  ASSERT_EQ(r.code, 0) << r.out;
  EXPECT_NE(slurp(mixed / "report" / "report.html").find("some_future_study.csv"), std::string::npos);

  const fs::path only = base / "only";
  fs::create_directories(only);
  fs::copy_file(tiny_run() / "provenance.json", only / "provenance.json");
  std::ofstream(only / "some_future_study.csv") << "algorithm,abs_error,bound,verdict\nnew_sum,3,2,exceeds\n";
  r = run("report " + only.string());
  ASSERT_EQ(r.code, 0) << r.out;
  const std::string md = slurp(only / "report" / "report.md");
  EXPECT_NE(md.find("| new_sum | 3 | 2 | exceeds |"), std::string::npos) << md;
  EXPECT_NE(md.find("OUTSIDE their algorithm"), std::string::npos) << "the bound check runs on any table";
}

}  // namespace
