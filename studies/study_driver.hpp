#pragma once
// The one study driver: plan -> cells -> resume -> rows -> summary -> alarms, the same for every
// study. A study resolves its options into a plan (a JSON value: what it will measure), lists its
// cells (a key, a description and a function that measures the cell and returns its rows) and its
// tables; the driver opens the run folder (lock, mode, the plan checked on --resume), runs the
// cells that are not done yet in order with progress, commits each cell's rows atomically, and
// ends with summary.json, the bound tally, a short headline and the next command.
// Ctrl-C between cells stops cleanly (a second Ctrl-C stops at once; either way the folder is
// resumable, because a cell counts only once its rows are committed).
#include <cstdint>
#include <functional>
#include <initializer_list>
#include <stdexcept>
#include <map>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "studies/run_folder.hpp"

namespace CLI { class App; }

namespace sumlab {

// --out, --force, --resume, --strict: every study takes them.
struct RunOptions {
  std::string out;
  bool force = false, resume = false, strict = false;
};
void add_run_options(CLI::App& cmd, RunOptions& o);

// A study's GPU-vs-model comparison as summary.json and its headline state it: the count where a
// GPU ran; null and "not checked" where none did (nothing compared is not 0 mismatches).
struct GpuModelCheck {
  nlohmann::ordered_json count;
  std::string words;
};
GpuModelCheck gpu_model_check(bool gpu_ran, long mismatches);

// The sum of integer counts in `columns` over a table's rows.
long column_total(const CsvTable& t, std::initializer_list<const char*> columns);

// A family study's summary.json `verify` entry: `made`, the one its verify cell built in this
// invocation, or, where --resume found that cell done, the same counts read back from its CSV
// (columns cases, mismatches, errors), with `seconds` null (the earlier invocation's time is not
// kept) and `resumed` true. A verify cell runs only with a GPU (--verify needs --backend cuda).
nlohmann::ordered_json verify_entry(const nlohmann::ordered_json& made, const std::string& sweep,
                                    const CsvTable& verify_csv);

using Rows = std::vector<std::vector<std::string>>;
using CellRows = std::map<std::string, Rows>;  // table name -> the cell's rows

struct Cell {
  std::string key;          // unique in the study: what --resume matches
  std::string description;  // for progress lines
  std::function<CellRows()> measure;
  std::uint64_t bytes = 0;  // memory the cell holds while it runs (Concurrency's budget; 0: none)
};

// How many cells may run at once: their measure() functions must then be safe to call from
// several threads together (no shared mutable state, no subject that is not thread-safe). The
// rows are committed in cell order whatever order the cells finish in, so the folder is the one
// a sequential run writes, and a kill leaves it as resumable.
struct Concurrency {
  int cells = 1;                 // cells in flight at most
  std::uint64_t memory = 0;      // their bytes together at most (a larger cell runs alone)
};

struct Table {
  std::string name;
  std::vector<std::string> columns;
};

class Study {
 public:
  // Opens the run folder (RunOptions::out, or runs/<name>) in the mode the options ask for.
  // Throws UserError before touching anything when --force and --resume are both given.
  // whole_files: the files the study writes whole at its end (besides summary.json), which --force
  // checks with the tables before it removes anything.
  Study(std::string name, const RunOptions& o, const nlohmann::ordered_json& plan, const std::string& backend,
        const std::vector<Table>& tables, const std::vector<std::string>& whole_files = {});

  RunFolder& folder() { return folder_; }
  // Runs every cell not yet done, committing them in order (throws Interrupted after a Ctrl-C,
  // once the cells in flight are committed; rethrows a cell's exception once the cells before it
  // are committed and those in flight have stopped).
  void run(const std::vector<Cell>& cells, Concurrency c = {});
  std::size_t cells_total() const { return total_; }
  std::size_t cells_resumed() const { return resumed_; }

  // Writes summary.json (adding "cells", "cells_resumed" and, over every table with a verdict
  // column, "bounds"), prints "<study>: N cells in DIR", the headline lines, the bound tally and
  // the next command; with --strict, throws CheckFailed when a result broke its bound.
  void finish(nlohmann::ordered_json summary, const std::vector<std::string>& headline = {});

 private:
  std::string name_;
  RunOptions options_;
  RunFolder folder_;
  std::vector<Table> tables_;
  std::size_t total_ = 0, resumed_ = 0;
};

// A study stopped by Ctrl-C between cells: main() prints how to continue and exits 130.
struct Interrupted : std::runtime_error {
  using std::runtime_error::runtime_error;
};

}  // namespace sumlab
