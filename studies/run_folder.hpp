#pragma once
// A run folder is a transaction log: what a study measured, written so that no interruption,
// concurrent writer or --force can lose, mix or destroy data. Reports read only these files.
//
//   .sumlab.lock    held (flock) by the one process writing the folder: a second writer fails at
//                   once, naming the holder; the kernel drops the lock when the holder dies.
//   manifest.json   every file sumlab wrote here, recorded BEFORE the file is created: --force
//                   removes exactly these (and the report's, report/manifest.json), never a
//                   foreign file, and a file sumlab did not write is never appended to.
//   provenance.json the plan (the study's resolved options, the backend) and its hash, plus one
//                   entry per invocation (command line, date, commit, version, compiler and flags,
//                   the binary's hash, host, GPU). --resume with a different plan, or by another
//                   build (another binary: its hash differs from the first invocation's), is
//                   refused, saying what.
//   <table>.csv     tidy rows, created atomically with their header; a cell's rows are appended to
//                   each table with one write() and an fsync.
//   cells.log       one line per finished cell (its key, every table's size after its rows, and
//                   where those rows start with their FNV-1a hash), appended with one write() and
//                   an fsync: a cell is done when its line is there and its rows are intact. On
//                   resume, every table is cut back to the last such line, so the rows of a cell
//                   cut short by a kill (or edited since) vanish and the cell runs again.
//   other files     (summary.json, whole-file tables) written to a temporary name, fsynced and
//                   renamed: complete or absent.
#include <cstdint>
#include <filesystem>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace sumlab {

enum class RunMode { fresh, force, resume };

// Reads a CSV written by sumlab: the header and the rows (no embedded newlines). A row whose field
// count is not the header's (a torn line of a run folder from before the log, an edit) is dropped
// and counted. `limit`: only the first `limit` bytes (finished_sizes: the last finished cell's).
struct CsvTable {
  std::vector<std::string> header;
  std::vector<std::vector<std::string>> rows;
  std::size_t torn = 0;
  int column(const std::string& name) const;  // -1 when absent
};
CsvTable read_csv(const std::filesystem::path& path, std::optional<std::uint64_t> limit = std::nullopt);
// The appendable tables' sizes after a run folder's last finished cell (cells.log's last whole
// line; empty without one): rows past them belong to a cell a kill cut short.
std::map<std::string, std::uint64_t> finished_sizes(const std::filesystem::path& dir);

// The lock of a folder sumlab writes (.sumlab.lock, flock): held for the object's life; a second
// process fails at once with a message naming the holder. The kernel drops it when the holder dies.
class FolderLock {
 public:
  explicit FolderLock(const std::filesystem::path& dir);  // the folder must exist
  ~FolderLock();
  FolderLock(const FolderLock&) = delete;
  FolderLock& operator=(const FolderLock&) = delete;

 private:
  int fd_ = -1;
};

class RunFolder {
 public:
  // Opens `dir` for `study`, takes its lock, and checks it against the mode:
  //   fresh   the folder is absent or empty;
  //   force   removes what sumlab wrote there (its manifests' files) and starts over; foreign files
  //           stay, and a foreign file with a name sumlab needs is an error, not overwritten;
  //   resume  the folder holds the same study with the same plan (else UserError with the
  //           differences), and its tables are cut back to the last finished cell.
  // Records this invocation in provenance.json. Throws UserError for every refusal.
  // `files`: the tables the study will write (checked, with sumlab's own files, before --force
  // removes or writes anything). Leftover temporary files of sumlab's are removed; a folder that a
  // kill left with its manifest alone holds no run, and a fresh run starts over in it. --resume by
  // another build (the hash of the binary or extension this code is in) is refused.
  RunFolder(const std::filesystem::path& dir, const std::string& study, RunMode mode,
            const nlohmann::ordered_json& plan, const std::string& backend, const std::vector<std::string>& files = {});
  RunFolder(const RunFolder&) = delete;
  RunFolder& operator=(const RunFolder&) = delete;

  const std::filesystem::path& dir() const { return dir_; }
  std::filesystem::path file(const std::string& name) const { return dir_ / name; }
  bool resumed() const { return resumed_; }

  // Declares an appendable table: created (atomically, with its header) if absent; on resume its
  // header must be `columns`.
  void table(const std::string& name, const std::vector<std::string>& columns);
  // Keys of the finished cells (from cells.log).
  const std::set<std::string>& done() const { return done_; }
  // Appends one cell's rows (table -> rows, fields already formatted) and then its cells.log line.
  void commit_cell(const std::string& key, const std::map<std::string, std::vector<std::vector<std::string>>>& rows);

  // Writes a whole file atomically (temporary name, fsync, rename), recorded in the manifest.
  void write_file(const std::string& name, const std::string& content);
  void write_json(const std::string& name, const nlohmann::ordered_json& j);
  // A whole-file table (written once, complete or absent).
  void write_csv(const std::string& name, const std::vector<std::string>& columns,
                 const std::vector<std::vector<std::string>>& rows);
  bool exists(const std::string& name) const;

 private:
  void open(const std::string& study, RunMode mode, const nlohmann::ordered_json& plan, const std::string& backend,
            const std::vector<std::string>& files);
  void record(const std::string& name);  // adds `name` to the manifest (before it is created)
  // `inv`: this invocation's record (invocation()), gathered before the lock was taken.
  void open_provenance(const std::string& study, RunMode mode, const nlohmann::ordered_json& plan,
                       nlohmann::ordered_json inv);
  void recover_tables();

  std::filesystem::path dir_;
  std::optional<FolderLock> lock_;
  bool resumed_ = false;
  std::set<std::string> manifest_;
  std::map<std::string, std::vector<std::string>> tables_;  // name -> columns
  std::map<std::string, std::uint64_t> committed_sizes_;    // from the last cells.log line
  std::set<std::string> done_;
};

// Appends rows to a standalone CSV (created atomically with its header; an existing file must have
// `columns`), with one write() and an fsync. When the CSV lies in a run folder, the folder's lock
// is taken and the file is recorded in its manifest (so the study's --force removes it too).
void append_csv(const std::filesystem::path& path, const std::vector<std::string>& columns,
                const std::vector<std::vector<std::string>>& rows);

// Removes the files a manifest (`dir`/manifest.json) lists, then the manifest, and the folders
// they leave empty; foreign files stay. Returns how many files it removed.
std::size_t remove_recorded_files(const std::filesystem::path& dir);
// Writes a whole file complete or not at all: a temporary file in the same folder, fsynced, renamed
// over `path` (UserError/ResourceError naming the file on failure). Not recorded in any manifest.
// `path` must be a regular file or absent (check_plain_file).
void atomic_write(const std::filesystem::path& path, const std::string& content);
// UserError unless `path` is absent or a regular file: a rename over a device, FIFO or link would
// replace the node itself (as root, /dev/null), and an append to a FIFO would block.
void check_plain_file(const std::filesystem::path& path);
// Writes `dir`/manifest.json listing `files` (paths relative to dir), atomically.
void write_manifest(const std::filesystem::path& dir, const std::set<std::string>& files);
std::set<std::string> read_manifest(const std::filesystem::path& dir);

// provenance.json's description of this invocation: command line, date, git commit and dirty flag,
// compiler and flags, host and CPU, CUDA version, GPU and driver (or the backend's name).
nlohmann::ordered_json invocation(const std::string& command_line, const std::string& backend);

std::string join_command_line(int argc, const char* const* argv);

// A CSV field for a double: the shortest text that reads back as the same value ("nan", "inf"
// and "-inf" for the specials).
std::string csv_number(double v);
// One CSV line (no newline) of fields, quoted where they hold a comma or quote.
std::string csv_line(const std::vector<std::string>& fields);
// The command line of this process (from /proc/self/cmdline), quoted for a shell.
std::string this_command_line();

}  // namespace sumlab
