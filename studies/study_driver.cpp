#include "studies/study_driver.hpp"

#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include <csignal>
#include <deque>
#include <exception>
#include <filesystem>
#include <future>
#include <utility>

#include "studies/bound_alarm.hpp"
#include "studies/commands.hpp"
#include "studies/input_options.hpp"
#include "studies/progress.hpp"

namespace sumlab {
namespace {

volatile std::sig_atomic_t interrupted = 0;

// The first Ctrl-C asks the driver to stop after the cell in flight; the handler then steps aside,
// so a second Ctrl-C stops the process at once (the folder stays resumable either way).
extern "C" void on_sigint(int) {
  interrupted = 1;
  std::signal(SIGINT, SIG_DFL);
}

std::vector<std::string> file_names(const std::vector<Table>& tables, std::vector<std::string> names) {
  for (const auto& t : tables) names.push_back(t.name);
  return names;
}

RunMode mode_of(const RunOptions& o) {
  if (o.force && o.resume) throw UserError("--force and --resume exclude each other");
  return o.resume ? RunMode::resume : o.force ? RunMode::force : RunMode::fresh;
}

}  // namespace

GpuModelCheck gpu_model_check(bool gpu_ran, long mismatches) {
  if (!gpu_ran) return {nlohmann::ordered_json(), "GPU-vs-model: not checked (no GPU ran)"};
  return {mismatches, fmt::format("{} GPU-vs-model mismatches", mismatches)};
}

long column_total(const CsvTable& t, std::initializer_list<const char*> columns) {
  long total = 0;
  for (const auto& r : t.rows)
    for (const char* c : columns) total += std::stol(r[static_cast<std::size_t>(t.column(c))]);
  return total;
}

nlohmann::ordered_json verify_entry(const nlohmann::ordered_json& made, const std::string& sweep,
                                    const CsvTable& verify_csv) {
  if (!made.is_null()) return made;
  return {{"sweep", sweep},
          {"gpu", true},
          {"cases", column_total(verify_csv, {"cases"})},
          {"mismatches", column_total(verify_csv, {"mismatches"})},
          {"errors", column_total(verify_csv, {"errors"})},
          {"seconds", nullptr},
          {"resumed", true}};
}

void add_run_options(CLI::App& cmd, RunOptions& o) {
  add_text_option(cmd, "--out", o.out, "Run folder to create (default runs/<study>)");
  cmd.add_flag("--force", o.force, "Start over in --out: removes the files sumlab wrote there (and only those)");
  cmd.add_flag("--resume", o.resume,
               "Continue the run in --out with the same options, skipping the cells it finished");
  cmd.add_flag("--strict", o.strict, "Exit 1 when a result breaks its error bound");
}

Study::Study(std::string name, const RunOptions& o, const nlohmann::ordered_json& plan, const std::string& backend,
             const std::vector<Table>& tables, const std::vector<std::string>& whole_files)
    : name_(std::move(name)),
      options_(o),
      folder_(o.out.empty() ? "runs/" + name_ : o.out, name_, mode_of(o), plan, backend,
              file_names(tables, whole_files)),
      tables_(tables) {
  for (const auto& t : tables_) folder_.table(t.name, t.columns);
}

void Study::run(const std::vector<Cell>& cells, Concurrency conc) {
  total_ += cells.size();
  interrupted = 0;
  auto previous = std::signal(SIGINT, on_sigint);
  Progress progress(name_, cells.size());
  std::vector<const Cell*> todo;
  for (const Cell& c : cells) {
    if (folder_.done().count(c.key)) {
      ++resumed_;
      progress.step(c.description + " (done before)");
    } else {
      todo.push_back(&c);
    }
  }
  // Cells start in order while the limits allow, and are committed in order: the one committed
  // next is always in flight, so at least one cell runs whatever its size. After a Ctrl-C or a
  // failure no cell starts; those in flight finish (committed after a Ctrl-C, dropped after a
  // failure: they come after it).
  std::deque<std::pair<const Cell*, std::future<CellRows>>> flight;
  std::uint64_t bytes = 0;
  std::size_t next = 0;
  std::exception_ptr failed;
  for (;;) {
    while (next < todo.size() && !interrupted && !failed &&
           (flight.empty() || (static_cast<int>(flight.size()) < conc.cells && bytes + todo[next]->bytes <= conc.memory))) {
      const Cell* c = todo[next++];
      bytes += c->bytes;
      flight.emplace_back(c, std::async(conc.cells > 1 ? std::launch::async : std::launch::deferred, c->measure));
    }
    if (flight.empty()) break;
    auto [c, rows] = std::move(flight.front());
    flight.pop_front();
    bytes -= c->bytes;
    try {
      CellRows r = rows.get();
      if (!failed) {
        folder_.commit_cell(c->key, std::move(r));
        progress.step(c->description);
      }
    } catch (...) {
      if (!failed) failed = std::current_exception();
    }
  }
  progress.finish();
  std::signal(SIGINT, previous);
  if (failed) std::rethrow_exception(failed);
  if (interrupted)
    throw Interrupted(fmt::format("{}: interrupted after {} of {} cells; every finished cell is kept in {}. "
                                  "Continue with the same command and --resume.",
                                  name_, folder_.done().size(), total_, folder_.dir().string()));
}

void Study::finish(nlohmann::ordered_json summary, const std::vector<std::string>& headline) {
  BoundAlarm tally;
  for (const auto& t : tables_) tally.add_rows(read_csv(folder_.file(t.name)), folder_.file(t.name).string());
  nlohmann::ordered_json s;
  s["study"] = name_;
  s["cells"] = total_;
  s["cells_resumed"] = resumed_;
  if (tally.total() > 0) s["bounds"] = tally.json();
  for (auto it = summary.begin(); it != summary.end(); ++it) s[it.key()] = it.value();
  folder_.write_json("summary.json", s);

  fmt::print("{}: {} cells{} in {}\n", name_, total_,
             resumed_ ? fmt::format(" ({} from an earlier run)", resumed_) : "", folder_.dir().string());
  for (const auto& line : headline) fmt::print("{}: {}\n", name_, line);
  if (tally.total() > 0) fmt::print("{}", tally.text(name_ + ": "));
  fmt::print("{}: next: sumlab report {}\n", name_, folder_.dir().string());
  if (options_.strict && tally.alarm()) throw CheckFailed("results broke their error bound (--strict)");
}

}  // namespace sumlab
