// `sumlab report RUN_DIR... [--out DIR] [--force]`: renders run folders into figures and a
// self-contained HTML report (plus Markdown) with reports/render.py under a Python that has
// matplotlib. The report reads only the run folders; this command only checks them, picks the
// output folder, finds the interpreter and runs the script.
#include <CLI/CLI.hpp>
#include <fmt/format.h>
#include <fcntl.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <system_error>
#include <vector>

#include <nlohmann/json.hpp>

#include "studies/bound_alarm.hpp"
#include "studies/commands.hpp"
#include "studies/input_options.hpp"
#include "studies/run_folder.hpp"

extern char** environ;

namespace sumlab {
namespace {

namespace fs = std::filesystem;

struct ReportOptions {
  std::vector<std::string> runs;
  std::string out;
  bool force = false;
  bool strict = false;  // exit 1 when a run holds a result outside its bound
  bool linked_figures = false;  // report.html links figures/*.svg instead of holding them
};

// Runs argv[0] (looked up on PATH when it has no '/') with argv and waits. Its stdout and stderr
// go to /dev/null when `quiet`. Returns the exit status, 128 + signal, or -1 when it cannot start.
int spawn_and_wait(const std::vector<std::string>& args, bool quiet) {
  std::vector<char*> argv;
  for (const auto& a : args) argv.push_back(const_cast<char*>(a.c_str()));
  argv.push_back(nullptr);
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  if (quiet) {
    posix_spawn_file_actions_addopen(&actions, STDOUT_FILENO, "/dev/null", O_WRONLY, 0);
    posix_spawn_file_actions_addopen(&actions, STDERR_FILENO, "/dev/null", O_WRONLY, 0);
  }
  std::fflush(nullptr);  // our own output first, in order
  pid_t pid = 0;
  const int rc = posix_spawnp(&pid, argv[0], &actions, nullptr, argv.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  if (rc != 0) return -1;
  int status = 0;
  while (waitpid(pid, &status, 0) < 0) {
    if (errno != EINTR) return -1;
  }
  if (WIFEXITED(status)) return WEXITSTATUS(status);
  return WIFSIGNALED(status) ? 128 + WTERMSIG(status) : -1;
}

// The first of $SUMLAB_PYTHON, /usr/bin/python3, python3 on PATH that imports matplotlib.
// /usr/bin/python3 comes before PATH because Debian's python3-matplotlib installs for it, while a
// python3 earlier on PATH (pyenv, a venv) often lacks it.
std::string find_python() {
  std::vector<std::string> candidates;
  if (const char* env = std::getenv("SUMLAB_PYTHON"); env && *env) candidates.emplace_back(env);
  candidates.emplace_back("/usr/bin/python3");
  candidates.emplace_back("python3");
  for (const auto& c : candidates)
    if (spawn_and_wait({c, "-c", "import matplotlib"}, true) == 0) return c;
  throw UserError(
      "no Python with matplotlib found (tried $SUMLAB_PYTHON, /usr/bin/python3, python3 on PATH); "
      "install python3-matplotlib or set SUMLAB_PYTHON to an interpreter that has it");
}

// A run folder is what `sumlab study` writes: provenance.json and at least one CSV. Which CSVs
// it can draw is render.py's business (it lists the ones it skips).
void check_run_folder(const fs::path& dir) {
  std::error_code ec;
  if (!fs::is_directory(dir, ec))
    throw UserError(fmt::format("'{}' is not a folder (expected a run folder written by `sumlab study`)",
                                dir.string()));
  if (!fs::is_regular_file(dir / "provenance.json", ec))
    throw UserError(fmt::format("'{}' holds no run (no provenance.json; expected a folder written by "
                                "`sumlab study`)",
                                dir.string()));
  for (const auto& e : fs::directory_iterator(dir, ec))
    if (e.is_regular_file() && e.path().extension() == ".csv") return;
  throw UserError(fmt::format("'{}' holds no run data (provenance.json but no CSV file)", dir.string()));
}

// Moves the freshly rendered files of `tmp` into `out`, replacing the previous report's recorded
// files (and only those), and records the new ones in out/manifest.json.
void install_report(const fs::path& tmp, const fs::path& out) {
  std::set<std::string> files;
  for (const auto& e : fs::recursive_directory_iterator(tmp))
    if (e.is_regular_file()) files.insert(fs::relative(e.path(), tmp).string());
  const std::set<std::string> previous = read_manifest(out);
  for (const auto& f : files)
    if (fs::exists(out / f) && !previous.count(f))
      throw UserError(fmt::format("'{}' exists but sumlab did not write it: move it away (nothing was replaced)",
                                  (out / f).string()));
  remove_recorded_files(out);
  write_manifest(out, files);
  for (const auto& f : files) {
    fs::create_directories((out / f).parent_path());
    fs::rename(tmp / f, out / f);
  }
}

void run_report(const ReportOptions& o) {
  for (const auto& r : o.runs) check_run_folder(r);
  if (o.runs.size() > 1 && o.out.empty())
    throw UserError("several run folders need --out DIR for the combined report");
  const fs::path out = o.out.empty() ? fs::path(o.runs.front()) / "report" : fs::path(o.out);

  std::error_code ec;
  if (fs::exists(out, ec) && !fs::is_directory(out, ec))
    throw UserError(fmt::format("output '{}' exists and is not a folder", out.string()));
  // A report never goes into a run folder (whose manifest lists the run's files, not a report's):
  // replacing "the previous report" there would remove the run.
  if (fs::exists(out / "provenance.json", ec))
    throw UserError(fmt::format("'{}' holds a run (provenance.json): a report goes in a folder of its own "
                                "(the default is RUN_DIR/report)",
                                out.string()));
  const bool has_report =
      fs::exists(out / "manifest.json", ec) || fs::exists(out / "report.html", ec) || fs::exists(out / "report.md", ec);
  if (has_report && !o.force)
    throw UserError(fmt::format("'{}' already holds a report; pass --force to replace it", out.string()));

  const fs::path script = fs::path(SUMLAB_SOURCE_DIR) / "reports" / "render.py";
  if (!fs::is_regular_file(script, ec))
    throw UserError(fmt::format("the report script {} is missing (sumlab renders reports from its source "
                                "tree)",
                                script.string()));
  const std::string python = find_python();

  const bool created = !fs::exists(out, ec);
  fs::create_directories(out, ec);
  if (ec) throw UserError(fmt::format("cannot create output folder '{}': {}", out.string(), ec.message()));
  {
    const FolderLock lock(out);
    // Rendered into a folder of its own first: a failure or a kill leaves the old report whole. A
    // .render-PID folder found here is what a killed report left (the lock says none is running).
    for (const auto& e : fs::directory_iterator(out, ec)) {
      const std::string name = e.path().filename().string();
      if (e.is_directory() && name.size() > 8 && name.rfind(".render-", 0) == 0 &&
          name.find_first_not_of("0123456789", 8) == std::string::npos)
        fs::remove_all(e.path(), ec);
    }
    const fs::path tmp = out / fmt::format(".render-{}", ::getpid());
    fs::create_directories(tmp);
    std::vector<std::string> args{python, script.string()};
    args.insert(args.end(), o.runs.begin(), o.runs.end());
    args.insert(args.end(), {"--out", tmp.string(), "--quiet"});
    if (o.linked_figures) args.emplace_back("--linked-figures");
    const int rc = spawn_and_wait(args, false);
    try {
      if (rc != 0)
        throw UserError(rc < 0 ? fmt::format("cannot run {}", python)
                               : fmt::format("rendering failed: {} exited with status {} (the folder keeps its "
                                             "earlier report, if any)",
                                             script.string(), rc));
      install_report(tmp, out);
    } catch (...) {
      fs::remove_all(tmp, ec);
      if (created) {  // a folder we made for nothing (only our lock in it)
        fs::remove(out / ".sumlab.lock", ec);
        fs::remove(out, ec);
      }
      throw;
    }
    fs::remove_all(tmp, ec);
  }
  fmt::print("{}\n", (out / "report.html").string());
  // The same bound tally the studies printed, read back from the rows the report drew (up to the
  // last finished cell), and held against the count the study wrote into summary.json: rows lost
  // or torn since are a broken folder, not a clean bill.
  bool alarm = false;
  std::vector<std::string> damaged;
  for (const auto& r : o.runs) {
    const auto sizes = finished_sizes(r);
    std::size_t checked = 0;
    for (const auto& e : fs::directory_iterator(r, ec)) {
      if (!e.is_regular_file() || e.path().extension() != ".csv") continue;
      const auto limit = sizes.find(e.path().filename().string());
      const CsvTable t = read_csv(e.path(), limit == sizes.end() ? std::nullopt : std::optional(limit->second));
      if (t.torn) damaged.push_back(fmt::format("{}: {} torn row(s) left out", e.path().string(), t.torn));
      BoundAlarm tally;
      tally.add_rows(t, e.path().string());
      if (tally.total() == 0) continue;
      if (limit != sizes.end()) checked += tally.total();  // summary.json counts the appendable tables
      fmt::print("{}", tally.text(e.path().filename().string() + ": "));
      alarm = alarm || tally.alarm();
    }
    const auto summary = nlohmann::json::parse(std::ifstream(fs::path(r) / "summary.json"), nullptr, false);
    if (!sizes.empty() && summary.is_object() && summary.contains("bounds") && summary["bounds"].is_object() &&
        summary["bounds"].contains("checked") && summary["bounds"]["checked"].is_number_unsigned() &&
        summary["bounds"]["checked"].get<std::size_t>() != checked)
      damaged.push_back(fmt::format("{}: its tables hold {} results with a verdict where its summary.json counted {}",
                                    r, checked, summary["bounds"]["checked"].get<std::size_t>()));
  }
  for (const auto& d : damaged) fmt::print("DAMAGED: {}\n", d);
  if (!damaged.empty() && o.strict) throw CheckFailed("a run folder changed after its study wrote it (--strict)");
  if (alarm && o.strict) throw CheckFailed("results broke their error bound (--strict)");
}

}  // namespace

void register_report(CLI::App& app) {
  auto o = std::make_shared<ReportOptions>();
  auto* cmd = app.add_subcommand(
      "report",
      "Render run folders into figures (SVG) and a self-contained report.html (+ report.md); "
      "prints the HTML path");
  cmd->add_option("run_dirs", o->runs, "Run folders written by `sumlab study`")->required();
  add_text_option(*cmd, "--out", o->out, "Output folder (default RUN_DIR/report; required for several folders)");
  cmd->add_flag("--force", o->force, "Replace a report already in the output folder");
  cmd->add_flag("--strict", o->strict, "Exit 1 when a run holds a result outside its error bound");
  cmd->add_flag("--linked-figures", o->linked_figures,
                "report.html shows the figures from figures/ instead of inline: the page needs its folder "
                "(half the bytes; the committed reports use it)");
  cmd->callback([o] { run_report(*o); });
}

}  // namespace sumlab
