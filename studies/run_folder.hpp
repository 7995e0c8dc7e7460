#pragma once
// A run folder: tidy CSV (one row per measurement, appended and flushed as each cell finishes),
// a JSON summary and provenance.json. Reports read only these files.
//
// Safety: an existing folder that already holds a run is never overwritten unless the caller
// passes --force (start over) or --resume (keep its rows and skip the cells already done).
#include <cstdio>
#include <filesystem>
#include <set>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace sumlab {

enum class RunMode { fresh, force, resume };

class CsvAppender {
 public:
  CsvAppender() = default;
  // Opens `path` for appending; writes the header when the file is new or empty. When resuming,
  // the existing header must match `columns` exactly (else UserError: a different study).
  CsvAppender(const std::filesystem::path& path, const std::vector<std::string>& columns);
  CsvAppender(const CsvAppender&) = delete;
  CsvAppender& operator=(const CsvAppender&) = delete;
  CsvAppender(CsvAppender&& o) noexcept;
  CsvAppender& operator=(CsvAppender&& o) noexcept;
  ~CsvAppender();
  // Writes one row (fields already formatted; quoted if they hold a comma or quote) and flushes.
  void row(const std::vector<std::string>& fields);
  // Several rows written then flushed once: the unit of work that resume skips or redoes whole.
  void rows(const std::vector<std::vector<std::string>>& rows);

 private:
  void write_line(const std::vector<std::string>& fields);
  std::FILE* file_ = nullptr;
  std::size_t columns_ = 0;
};

// Reads a CSV written by CsvAppender: the header and the rows (no embedded newlines).
struct CsvTable {
  std::vector<std::string> header;
  std::vector<std::vector<std::string>> rows;
  int column(const std::string& name) const;  // -1 when absent
};
CsvTable read_csv(const std::filesystem::path& path);

class RunFolder {
 public:
  // Creates (or, with resume/force, reopens) `dir` for `study`. Throws UserError when the folder
  // exists with a run in it and mode is fresh, when it cannot be created or written, or when
  // resuming a folder that holds another study.
  RunFolder(const std::filesystem::path& dir, const std::string& study, RunMode mode,
            const std::string& command_line);
  const std::filesystem::path& dir() const { return dir_; }
  std::filesystem::path file(const std::string& name) const { return dir_ / name; }
  // Keys (a cell's identifying columns joined with '|') of the cells a CSV holds: what resume
  // skips. With redo_last_cell (for studies that write a cell as several rows), the last cell in
  // the file, the only one an interruption can have cut short, is removed from the file and not
  // counted as done.
  std::set<std::string> done_keys(const std::string& csv_name, const std::vector<std::string>& key_columns,
                                  bool redo_last_cell = false) const;
  // Writes `name` atomically (temporary file, then rename): never a half-written file.
  void write_json(const std::string& name, const nlohmann::ordered_json& j) const;

 private:
  std::filesystem::path dir_;
};

// provenance.json content: git commit and dirty flag, compiler and flags, CUDA version, GPU and
// driver (or "model"/"cpu"), date, the exact command line.
nlohmann::ordered_json provenance(const std::string& study, const std::string& command_line,
                                  const std::string& backend);

std::string join_command_line(int argc, const char* const* argv);

// A CSV field for a double: the shortest text that reads back as the same value ("nan", "inf"
// and "-inf" for the specials).
std::string csv_number(double v);
// The command line of this process (from /proc/self/cmdline), quoted for a shell.
std::string this_command_line();

}  // namespace sumlab
