// Faults injected into run folders: kill -9 at seeded random moments of a study, then --resume,
// must give exactly the rows of an uninterrupted run (none lost, torn or duplicated, every phase
// present); two writers into one folder at once must not mix (one wins, the other fails at once);
// --force must remove what sumlab wrote and nothing else; --resume must refuse another plan.
#include <gtest/gtest.h>
#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <map>
#include <random>
#include <set>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include <nlohmann/json.hpp>

#include "run_sumlab.hpp"
#include "studies/run_folder.hpp"

extern char** environ;

namespace sumlab {
namespace {

namespace fs = std::filesystem;
using test::run;

// Starts `sumlab args...` in the background, its output discarded.
pid_t start(const std::vector<std::string>& args) {
  std::vector<std::string> all{SUMLAB_BINARY};
  all.insert(all.end(), args.begin(), args.end());
  std::vector<char*> argv;
  for (auto& a : all) argv.push_back(a.data());
  argv.push_back(nullptr);
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, STDOUT_FILENO, "/dev/null", O_WRONLY, 0);
  posix_spawn_file_actions_addopen(&actions, STDERR_FILENO, "/dev/null", O_WRONLY, 0);
  pid_t pid = 0;
  const int rc = posix_spawn(&pid, argv[0], &actions, nullptr, argv.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  return rc == 0 ? pid : -1;
}

int wait_for(pid_t pid) {
  int status = 0;
  waitpid(pid, &status, 0);
  return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

// A folder of this process's own (ctest may run these tests beside another checkout's).
fs::path temp(const std::string& name) { return test::temp_dir(name + "_" + std::to_string(::getpid())); }
fs::path fresh(const std::string& name) {
  const fs::path d = temp(name);
  fs::create_directories(d);
  return d;
}

std::vector<std::string> split(const std::string& s) {
  std::istringstream in(s);
  std::vector<std::string> out;
  for (std::string w; in >> w;) out.push_back(w);
  return out;
}

std::multiset<std::string> lines_of(const fs::path& p) {
  std::ifstream in(p);
  std::multiset<std::string> out;
  for (std::string l; std::getline(in, l);) out.insert(l);
  return out;
}

nlohmann::json json_of(const fs::path& p) { return nlohmann::json::parse(std::ifstream(p), nullptr, false); }

double seconds_of(const std::string& args) {
  const auto t0 = std::chrono::steady_clock::now();
  EXPECT_EQ(run(args).code, 0) << args;
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

// Kills the study at `kills` seeded random moments while it runs (each a fresh folder, killed once,
// then resumed to the end, and the resume itself sometimes killed again) and compares every folder
// with `ref`. A run that ends before its kill is checked too but not counted: attempts go on (four
// times `kills` at most) until `kills` kills have landed during a run.
void kill_and_resume(const std::string& args, const std::vector<std::string>& tables, int kills, std::uint64_t seed,
                     const std::string& name) {
  const fs::path ref = temp(name + "_ref");
  // The kill moments are drawn over the run's length, measured once and then shortened whenever a
  // run finished before its kill: a reference run slowed by a loaded machine must not let most
  // kills land after the end.
  double full = seconds_of(args + " --out " + ref.string());
  std::mt19937_64 rng(seed);
  const auto when = [&] { return std::uniform_real_distribution<double>(0.0, full * 1.1)(rng); };
  int interrupted = 0;
  for (int k = 0; interrupted < kills && k < 4 * kills; ++k) {
    const fs::path dir = temp(name + "_" + std::to_string(k));
    std::vector<std::string> a = split(args);
    a.insert(a.end(), {"--out", dir.string()});
    const pid_t pid = start(a);
    ASSERT_GT(pid, 0);
    const double delay = when();
    std::this_thread::sleep_for(std::chrono::duration<double>(delay));
    ::kill(pid, SIGKILL);
    if (wait_for(pid) == 128 + SIGKILL)
      ++interrupted;
    else
      full = std::min(full, delay);
    // The resume may be killed too (a third of the time), then resumed again.
    if (rng() % 3 == 0 && fs::exists(dir / "provenance.json")) {
      std::vector<std::string> r = a;
      r.push_back("--resume");
      const pid_t again = start(r);
      std::this_thread::sleep_for(std::chrono::duration<double>(when() / 3));
      ::kill(again, SIGKILL);
      wait_for(again);
    }
    // A kill before the folder held a run leaves nothing to resume: start it again instead.
    const bool resumable = fs::exists(dir / "provenance.json");
    const auto r = run(args + " --out " + dir.string() + (resumable ? " --resume" : " --force"));
    ASSERT_EQ(r.code, 0) << "kill " << k << ": " << r.out;
    for (const auto& t : tables)
      EXPECT_EQ(lines_of(dir / t), lines_of(ref / t)) << "kill " << k << ": " << t << " differs from the uninterrupted run";
    const auto s = json_of(dir / "summary.json"), s0 = json_of(ref / "summary.json");
    EXPECT_EQ(s["cells"], s0["cells"]) << "kill " << k;
    EXPECT_EQ(s["bounds"], s0["bounds"]) << "kill " << k;
    std::set<std::string> keys;
    std::ifstream log(dir / "cells.log");
    std::size_t lines = 0;
    for (std::string l; std::getline(log, l); ++lines) keys.insert(nlohmann::json::parse(l)["cell"].get<std::string>());
    EXPECT_EQ(keys.size(), lines) << "kill " << k << ": a cell was journalled twice";
    EXPECT_EQ(lines, s0["cells"].get<std::size_t>()) << "kill " << k;
    fs::remove_all(dir);
  }
  EXPECT_EQ(interrupted, kills) << "too few kills landed while the study ran";
  fs::remove_all(ref);
}

TEST(RunFolderFaults, KilledAnywhereThenResumedEqualsAnUninterruptedRun) {
  kill_and_resume("study error-vs-cond --quick --backend model", {"error_vs_cond.csv"}, 50, 2026, "faults_cond");
}

// The error-vs-n study's last phase (the seeds' figures) takes seconds: kills land there too.
TEST(RunFolderFaults, KilledDuringTheHeadlinePhaseThenResumed) {
  kill_and_resume("study error-vs-n --quick --log2-max 10 --seeds 1 --dtypes float32 --dists uniform,cancellation "
                  "--backend model --gpu-kernels gpu_two_pass,gpu_exact",
                  {"error_vs_n.csv", "headlines.csv"}, 6, 7, "faults_evn");
}

// Cells run side by side on the host (cpu and model backends) and are committed in order: a Ctrl-C
// stops new cells, the ones in flight are committed, the exit is 130, and --resume ends with the
// bytes of an uninterrupted run.
TEST(RunFolderFaults, CtrlCWhileCellsRunSideBySideThenResumed) {
  const std::string args = "study error-vs-n --backend cpu --log2-max 21 --seeds 2 --dtypes float32 --dists "
                           "uniform,normal --algorithms serial,pairwise,kahan,exact --out ";
  const fs::path ref = fresh("ctrlc_ref"), dir = fresh("ctrlc");
  ASSERT_EQ(run(args + ref.string()).code, 0);
  const pid_t pid = start(split(args + dir.string()));
  // Once some cells are committed, and well before the last.
  for (int i = 0; i < 500 && lines_of(dir / "cells.log").size() < 3; ++i)
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  ::kill(pid, SIGINT);
  EXPECT_EQ(wait_for(pid), 130);
  const std::size_t done = lines_of(dir / "cells.log").size();
  const std::size_t total = lines_of(ref / "cells.log").size();
  EXPECT_GE(done, 3u);
  EXPECT_LT(done, total);
  EXPECT_FALSE(fs::exists(dir / "summary.json"));
  ASSERT_EQ(run(args + dir.string() + " --resume").code, 0);
  std::ifstream a(ref / "error_vs_n.csv"), b(dir / "error_vs_n.csv");
  const std::string ra((std::istreambuf_iterator<char>(a)), {}), rb((std::istreambuf_iterator<char>(b)), {});
  EXPECT_EQ(ra, rb);  // the same bytes, in the same order
  fs::remove_all(dir);
  fs::remove_all(ref);
}

TEST(RunFolderFaults, TwoWritersNeverMix) {
  const std::string args = "study error-vs-cond --quick --backend model --out ";
  const fs::path ref = temp("two_ref"), dir = temp("two");
  ASSERT_EQ(run(args + ref.string()).code, 0);
  for (int trial = 0; trial < 4; ++trial) {
    fs::remove_all(dir);
    const pid_t a = start(split(args + dir.string())), b = start(split(args + dir.string()));
    const int ca = wait_for(a), cb = wait_for(b);
    // One wins; the other is refused (the lock, or a folder that already holds a run).
    EXPECT_TRUE((ca == 0 && cb == 2) || (ca == 2 && cb == 0)) << "exit codes " << ca << " " << cb;
    EXPECT_EQ(lines_of(dir / "error_vs_cond.csv"), lines_of(ref / "error_vs_cond.csv"));
    EXPECT_EQ(json_of(dir / "provenance.json")["invocations"].size(), 1u);
  }
  // While one writes, a second is refused at once with a message naming the holder.
  fs::remove_all(dir);
  const pid_t slow = start(split("study error-vs-n --quick --backend model --out " + dir.string()));
  for (int i = 0; i < 200 && !fs::exists(dir / "provenance.json"); ++i) std::this_thread::sleep_for(std::chrono::milliseconds(10));
  const auto t0 = std::chrono::steady_clock::now();
  const auto second = run("study error-vs-n --quick --backend model --resume --out " + dir.string());
  EXPECT_LT(std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count(), 2.0);
  EXPECT_EQ(second.code, 2) << second.out;
  EXPECT_NE(second.out.find("being written by another sumlab process (pid"), std::string::npos) << second.out;
  ::kill(slow, SIGKILL);
  wait_for(slow);
  fs::remove_all(dir);
  fs::remove_all(ref);
}

TEST(RunFolderFaults, ForceRemovesOnlyWhatSumlabWrote) {
  const fs::path dir = temp("force");
  const std::string args = "study error-vs-cond --quick --backend model --out " + dir.string();
  ASSERT_EQ(run(args).code, 0);
  ASSERT_EQ(run("report " + dir.string()).code, 0);
  // The user's own files, beside the run and inside the report.
  std::ofstream(dir / "notes.txt") << "mine";
  fs::create_directories(dir / "scripts");
  std::ofstream(dir / "scripts" / "plot.py") << "mine";
  std::ofstream(dir / "report" / "figures" / "sketch.svg") << "mine";
  const auto r = run(args + " --force");
  ASSERT_EQ(r.code, 0) << r.out;
  EXPECT_TRUE(fs::exists(dir / "notes.txt"));
  EXPECT_TRUE(fs::exists(dir / "scripts" / "plot.py"));
  EXPECT_TRUE(fs::exists(dir / "report" / "figures" / "sketch.svg"));
  EXPECT_FALSE(fs::exists(dir / "report" / "report.html")) << "the old report described data that is gone";
  EXPECT_TRUE(fs::exists(dir / "error_vs_cond.csv"));
  // report --force: the report's own files go, the user's stay.
  ASSERT_EQ(run("report " + dir.string()).code, 0);
  ASSERT_EQ(run("report " + dir.string() + " --force").code, 0);
  EXPECT_TRUE(fs::exists(dir / "report" / "figures" / "sketch.svg"));
  EXPECT_TRUE(fs::exists(dir / "report" / "report.html"));

  // A folder of foreign files only: fresh refuses, --force writes beside them.
  const fs::path foreign = fresh("force_foreign");
  std::ofstream(foreign / "data.txt") << "mine";
  const std::string fargs = "study error-vs-cond --quick --backend model --out " + foreign.string();
  EXPECT_EQ(run(fargs).code, 2);
  EXPECT_EQ(run(fargs + " --force").code, 0);
  EXPECT_TRUE(fs::exists(foreign / "data.txt"));
  // A foreign file where sumlab would write: never overwritten or appended to.
  const fs::path clash = fresh("force_clash");
  std::ofstream(clash / "error_vs_cond.csv") << "a,b\n1,2\n";
  const auto c = run("study error-vs-cond --quick --backend model --force --out " + clash.string());
  EXPECT_EQ(c.code, 2);
  EXPECT_NE(c.out.find("sumlab did not write it"), std::string::npos) << c.out;
  EXPECT_EQ(lines_of(clash / "error_vs_cond.csv"), (std::multiset<std::string>{"a,b", "1,2"}));
  fs::remove_all(dir);
  fs::remove_all(foreign);
  fs::remove_all(clash);
}

TEST(RunFolderFaults, ResumeRefusesAnotherPlanOrNoRun) {
  const fs::path dir = temp("plan");
  ASSERT_EQ(run("study error-vs-cond --quick --backend model --out " + dir.string()).code, 0);
  const std::string before = [&] {
    std::ifstream in(dir / "provenance.json");
    return std::string(std::istreambuf_iterator<char>(in), {});
  }();
  const auto r = run("study error-vs-cond --quick --backend model --seeds 3 --resume --out " + dir.string());
  EXPECT_EQ(r.code, 2);
  EXPECT_NE(r.out.find("seeds: 2 -> 3"), std::string::npos) << r.out;
  std::ifstream in(dir / "provenance.json");
  EXPECT_EQ(std::string(std::istreambuf_iterator<char>(in), {}), before) << "a refused resume must change nothing";
  const fs::path empty = temp("plan_empty");
  const auto e = run("study error-vs-cond --quick --backend model --resume --out " + empty.string());
  EXPECT_EQ(e.code, 2);
  EXPECT_NE(e.out.find("nothing to resume"), std::string::npos) << e.out;
  const auto both = run("study error-vs-cond --quick --force --resume --out " + empty.string());
  EXPECT_EQ(both.code, 2);
  fs::remove_all(dir);
  fs::remove_all(empty);
}

std::string text_of(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

TEST(RunFolderFaults, ForceTrustsOnlyAManifestSumlabWrote) {
  // Another program's manifest.json names its own files: --force must not take it for sumlab's.
  const fs::path dir = fresh("foreign_manifest");
  std::ofstream(dir / "index.html") << "mine";
  std::ofstream(dir / "manifest.json") << R"({"name": "my web app", "files": ["index.html"]})";
  const auto r = run("study error-vs-cond --quick --backend model --force --out " + dir.string());
  EXPECT_EQ(r.code, 2) << r.out;
  EXPECT_NE(r.out.find("not a sumlab manifest"), std::string::npos) << r.out;
  EXPECT_EQ(text_of(dir / "index.html"), "mine");
  EXPECT_TRUE(fs::exists(dir / "manifest.json"));
  // sumlab's manifest with a name that is not a string: damaged, exit 2, nothing removed.
  std::ofstream(dir / "manifest.json") << R"({"written_by": "sumlab", "files": [1]})";
  EXPECT_EQ(run("study error-vs-cond --quick --backend model --force --out " + dir.string()).code, 2);
  EXPECT_EQ(text_of(dir / "index.html"), "mine");
  fs::remove_all(dir);
}

TEST(RunFolderFaults, AFreshRunNeverStartsOverInAFolderThatHoldsSomething) {
  // Only a manifest left alone by a kill is "no run": a report, or tables whose provenance.json is
  // gone, keep the folder not empty for a fresh run (only --force replaces sumlab's files).
  const fs::path dir = temp("fresh_over");
  const std::string args = "study error-vs-cond --quick --backend model --out " + dir.string();
  ASSERT_EQ(run(args).code, 0);
  fs::remove(dir / "provenance.json");
  const auto r = run(args);
  EXPECT_EQ(r.code, 2) << r.out;
  EXPECT_TRUE(fs::exists(dir / "error_vs_cond.csv"));
  fs::remove_all(dir);
}

TEST(RunFolderFaults, ForceChecksTheFilesWrittenWholeBeforeRemovingAnything) {
  const fs::path dir = temp("force_whole");
  const std::string args = "study error-vs-n --quick --backend model --log2-max 8 --seeds 1 --out " + dir.string();
  ASSERT_EQ(run(args).code, 0);
  // headlines.csv replaced by the user's own (and so no longer in the manifest).
  fs::remove(dir / "headlines.csv");
  auto manifest = json_of(dir / "manifest.json");
  auto& files = manifest["files"];
  files.erase(std::remove(files.begin(), files.end(), "headlines.csv"), files.end());
  std::ofstream(dir / "manifest.json", std::ios::trunc) << manifest.dump();
  std::ofstream(dir / "headlines.csv") << "mine\n";
  const auto r = run(args + " --force");
  EXPECT_EQ(r.code, 2) << r.out;
  EXPECT_NE(r.out.find("nothing was removed"), std::string::npos) << r.out;
  EXPECT_TRUE(fs::exists(dir / "summary.json")) << "the old run must be whole after a refusal";
  EXPECT_EQ(text_of(dir / "headlines.csv"), "mine\n");
  fs::remove_all(dir);
}

TEST(RunFolderFaults, ARowIsOneLineWhateverItsFieldsHold) {
  const std::string line = csv_line({"a", "two\nlines\r\nhere", "x,y"});
  EXPECT_EQ(line.find('\n'), std::string::npos) << line;
  EXPECT_EQ(line.find('\r'), std::string::npos) << line;
  EXPECT_EQ(line, "a,\"two lines  here\",\"x,y\"");
}

TEST(RunFolderFaults, AnEditedTableIsCutBackAndItsCellsRunAgain) {
  const fs::path dir = temp("edited");
  const std::string args = "study error-vs-cond --quick --backend model --out " + dir.string();
  ASSERT_EQ(run(args).code, 0);
  const auto ref = lines_of(dir / "error_vs_cond.csv");
  // A middle row deleted by hand, then a row duplicated: --resume must end with the uninterrupted
  // rows, none lost, merged or doubled.
  for (const bool duplicate : {false, true}) {
    std::vector<std::string> lines;
    {
      std::ifstream in(dir / "error_vs_cond.csv");
      for (std::string l; std::getline(in, l);) lines.push_back(l);
    }
    ASSERT_GT(lines.size(), 10u);
    const std::size_t mid = lines.size() / 2;
    if (duplicate) lines.insert(lines.begin() + static_cast<long>(mid), lines[mid]);
    else lines.erase(lines.begin() + static_cast<long>(mid));
    {
      std::ofstream out(dir / "error_vs_cond.csv", std::ios::binary | std::ios::trunc);
      for (const auto& l : lines) out << l << '\n';
    }
    const auto r = run(args + " --resume");
    ASSERT_EQ(r.code, 0) << r.out;
    EXPECT_EQ(lines_of(dir / "error_vs_cond.csv"), ref) << (duplicate ? "duplicated row" : "deleted row");
  }
  fs::remove_all(dir);
}

TEST(RunFolderFaults, ResumeByAnotherBuildIsRefused) {
  // Another build: the same binary with one byte more (still runs, hashes differently). A commit
  // made in the tree meanwhile is no other build.
  const fs::path dir = temp("build"), other = temp("build_binary");
  fs::copy_file(SUMLAB_BINARY, other);
  std::ofstream(other, std::ios::app | std::ios::binary) << '\0';
  const std::string args = "study error-vs-cond --quick --backend model --out " + dir.string();
  const auto first = run("--version >/dev/null; " + other.string() + " " + args);
  ASSERT_EQ(first.code, 0) << first.out;
  const auto r = run(args + " --resume");
  EXPECT_EQ(r.code, 2) << r.out;
  EXPECT_NE(r.out.find("another build"), std::string::npos) << r.out;
  ::setenv("SUMLAB_GIT_COMMIT", std::string(40, 'b').c_str(), 1);
  const auto same = run("--version >/dev/null; " + other.string() + " " + args + " --resume");
  ::unsetenv("SUMLAB_GIT_COMMIT");
  EXPECT_EQ(same.code, 0) << same.out;
  fs::remove_all(dir);
  fs::remove(other);
}

TEST(RunFolderFaults, DebrisOfAKillIsClearedAndAFolderWithoutItsRunStartsOver) {
  const fs::path dir = temp("debris");
  const std::string args = "study error-vs-cond --quick --backend model --out " + dir.string();
  ASSERT_EQ(run(args).code, 0);
  std::ofstream(dir / "summary.json.tmp.4242") << "half";
  std::ofstream(dir / "manifest.json.tmp.77") << "half";
  ASSERT_EQ(run(args + " --resume").code, 0);
  EXPECT_FALSE(fs::exists(dir / "summary.json.tmp.4242"));
  EXPECT_FALSE(fs::exists(dir / "manifest.json.tmp.77"));
  // Killed after the manifest but before provenance.json: no run there, so a fresh start is allowed.
  fs::remove_all(dir);
  fs::create_directories(dir);
  std::ofstream(dir / "manifest.json") << R"({"written_by": "sumlab", "files": ["provenance.json"]})";
  std::ofstream(dir / "provenance.json.tmp.5") << "half";
  const auto r = run(args);
  EXPECT_EQ(r.code, 0) << r.out;
  EXPECT_TRUE(fs::exists(dir / "summary.json"));
  fs::remove_all(dir);
}

TEST(RunFolderFaults, OutputsAreNeverWrittenOverADeviceFifoOrLink) {
  const fs::path dir = fresh("plain");
  const fs::path fifo = dir / "fifo", link = dir / "link.svg", target = dir / "target.svg";
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0644), 0);
  std::ofstream(target) << "mine";
  fs::create_symlink(target, link);
  for (const auto& p : {fifo, link}) {
    const auto r = run("explain --algorithm gpu_two_pass --n 16 --grid 2 --block 32 --vector 1 --svg " + p.string());
    EXPECT_EQ(r.code, 2) << r.out;
    EXPECT_NE(r.out.find("not a regular file"), std::string::npos) << r.out;
  }
  EXPECT_TRUE(fs::is_fifo(fs::symlink_status(fifo)));
  EXPECT_TRUE(fs::is_symlink(fs::symlink_status(link)));
  EXPECT_EQ(text_of(target), "mine");
  const auto c = run("explain --algorithm gpu_two_pass --n 16 --grid 2 --block 32 --vector 1 --csv " + fifo.string());
  EXPECT_EQ(c.code, 2) << c.out;  // an append to a FIFO would block
  fs::remove_all(dir);
}

}  // namespace
}  // namespace sumlab

// A copy of the tree sent to a GPU machine names its commit and whether its tracked files differed
// from it (scripts/device-stamp.sh); the copy's own .git, if any, is not asked. Without the stamp's
// state nothing is claimed.
TEST(Provenance, StampedCopySaysWhatItsStampSays) {
  const auto with = [](const char* dirty) {
    ::setenv("SUMLAB_GIT_COMMIT", "0123456789abcdef0123456789abcdef01234567", 1);
    if (dirty) ::setenv("SUMLAB_GIT_DIRTY", dirty, 1);
    else ::unsetenv("SUMLAB_GIT_DIRTY");
    const auto p = sumlab::invocation("sumlab test", "model");
    ::unsetenv("SUMLAB_GIT_COMMIT");
    ::unsetenv("SUMLAB_GIT_DIRTY");
    return p;
  };
  EXPECT_EQ(with("0")["git_commit"], "0123456789abcdef0123456789abcdef01234567");
  EXPECT_EQ(with("0")["git_dirty"], false);
  EXPECT_EQ(with("1")["git_dirty"], true);
  EXPECT_TRUE(with(nullptr)["git_dirty"].is_null());
  // This tree itself: a boolean from git.
  EXPECT_TRUE(sumlab::invocation("sumlab test", "model")["git_dirty"].is_boolean());
}
