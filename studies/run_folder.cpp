#include "studies/run_folder.hpp"

#include <dlfcn.h>
#include <fcntl.h>
#include <fmt/format.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <fstream>
#include <iterator>
#include <sstream>

#include "studies/commands.hpp"
#include "studies/fnv1a.hpp"
#if defined(SUMLAB_WITH_CUDA)
#include "gpu/gpu_sum.hpp"
#endif

namespace fs = std::filesystem;

namespace sumlab {
namespace {

constexpr const char* lock_name = ".sumlab.lock";
constexpr const char* manifest_name = "manifest.json";
constexpr const char* journal_name = "cells.log";
constexpr int format_version = 2;  // 1: before the manifest, cells.log and the plan

// A row is one line (read_csv and cells.log's offsets count lines): a line break inside a field (a
// subject's multi-line error message) is written as a space.
std::string csv_field(const std::string& f) {
  if (f.find_first_of(",\"\n\r") == std::string::npos) return f;
  std::string q = "\"";
  for (char c : f) q += (c == '"') ? std::string("\"\"") : (c == '\n' || c == '\r') ? std::string(" ") : std::string(1, c);
  return q + "\"";
}

std::vector<std::string> split_csv_line(const std::string& line) {
  std::vector<std::string> out;
  std::string cur;
  bool quoted = false;
  for (std::size_t i = 0; i < line.size(); ++i) {
    const char c = line[i];
    if (quoted) {
      if (c == '"' && i + 1 < line.size() && line[i + 1] == '"') { cur += '"'; ++i; }
      else if (c == '"') quoted = false;
      else cur += c;
    } else if (c == '"') {
      quoted = true;
    } else if (c == ',') {
      out.push_back(cur);
      cur.clear();
    } else if (c != '\r') {
      cur += c;
    }
  }
  out.push_back(cur);
  return out;
}

std::string run_command(const std::string& cmd) {
  std::string out;
  if (std::FILE* p = popen(cmd.c_str(), "r")) {
    std::array<char, 256> buf{};
    while (std::fgets(buf.data(), buf.size(), p)) out += buf.data();
    pclose(p);
  }
  while (!out.empty() && (out.back() == '\n' || out.back() == '\r')) out.pop_back();
  return out;
}

std::string utc_now() {
  const std::time_t t = std::time(nullptr);
  std::tm tm{};
  gmtime_r(&t, &tm);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", &tm);
  return buf;
}

// A failed write: out of space is a resource problem (exit 3), anything else the folder's (exit 2).
[[noreturn]] void write_failed(const fs::path& p, int err) {
  const std::string what = fmt::format("cannot write '{}': {}", p.string(), std::strerror(err));
  if (err == ENOSPC || err == EDQUOT || err == EFBIG) throw ResourceError(what);
  throw UserError(what);
}

void write_all(int fd, const std::string& data, const fs::path& p) {
  std::size_t done = 0;
  while (done < data.size()) {
    const ssize_t w = ::write(fd, data.data() + done, data.size() - done);
    if (w < 0) {
      if (errno == EINTR) continue;
      write_failed(p, errno);
    }
    done += static_cast<std::size_t>(w);
  }
}

void fsync_dir(const fs::path& dir) {
  const int fd = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY);
  if (fd >= 0) {
    ::fsync(fd);
    ::close(fd);
  }
}

// Appends `data` with one write() and fsyncs; returns the file's size afterwards. A failed append
// (a full disk) is cut back off: the file ends where it ended, never in half a row.
std::uint64_t append_durably(const fs::path& path, const std::string& data) {
  const int fd = ::open(path.c_str(), O_WRONLY | O_APPEND | O_CLOEXEC);
  if (fd < 0) write_failed(path, errno);
  // The file's own lock for the append: sumlab processes appending to one CSV (explain --csv, in a
  // folder that is no run) take turns, so what follows `before` is this write's alone.
  struct stat before {};
  if (::flock(fd, LOCK_EX) != 0 || ::fstat(fd, &before) != 0) {
    const int err = errno;
    ::close(fd);
    write_failed(path, err);
  }
  try {
    write_all(fd, data, path);
    if (::fsync(fd) != 0) write_failed(path, errno);
  } catch (...) {
    if (::ftruncate(fd, before.st_size) == 0) ::fsync(fd);
    ::close(fd);
    throw;
  }
  struct stat st {};
  ::fstat(fd, &st);
  ::close(fd);
  return static_cast<std::uint64_t>(st.st_size);
}

std::string read_text(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  return std::string((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
}

std::string plan_hash(const nlohmann::ordered_json& plan) {
  const std::string canonical = plan.dump();
  return Fnv1a64().add(canonical.data(), canonical.size()).hex();
}

// "dtypes: [float32] -> [float32,float64]; seeds: 2 -> 3" for the keys whose values differ.
// The build this code runs in: the FNV-1a hash of the file it was loaded from (the sumlab binary, or
// the Python extension), so that two builds of different sources, flags or compilers differ
// whatever the source tree's git state says. "unknown" where the file cannot be read.
std::string build_identity() {
  static const std::string id = [] {
    Dl_info info{};
    std::string file = "/proc/self/exe";
    if (::dladdr(reinterpret_cast<void*>(&build_identity), &info) != 0 && info.dli_fname &&
        std::string(info.dli_fname).find(".so") != std::string::npos)
      file = info.dli_fname;
    std::ifstream in(file, std::ios::binary);
    if (!in) return std::string("unknown");
    Fnv1a64 h;
    std::array<char, 1 << 16> buf{};
    while (in.read(buf.data(), buf.size()) || in.gcount() > 0) h.add(buf.data(), static_cast<std::size_t>(in.gcount()));
    return h.hex();
  }();
  return id;
}

// What tells the build that started a run from this one (the hash of its binary, and sumlab's
// version, the compiler and its flags, which runs of an older sumlab recorded alone), as "key:
// first -> now"; empty when they agree. "unknown" compares with nothing. The source tree's commit
// is not compared: it is the tree's at run time, which a build need not be.
std::string build_difference(const nlohmann::json& first, const nlohmann::ordered_json& now) {
  std::string out;
  for (const char* key : {"build", "sumlab_version", "compiler", "cxx_flags"}) {
    if (!first.contains(key) || !first[key].is_string() || !now.contains(key) || !now[key].is_string()) continue;
    const std::string a = first[key], b = now[key];
    if (a == b || a == "unknown" || b == "unknown") continue;
    out += fmt::format("{}{}: {} -> {}", out.empty() ? "" : "; ", key, a, b);
  }
  return out;
}

std::string plan_difference(const nlohmann::json& old_plan, const nlohmann::ordered_json& plan) {
  std::vector<std::string> diffs;
  std::set<std::string> keys;
  for (auto it = old_plan.begin(); it != old_plan.end(); ++it) keys.insert(it.key());
  for (auto it = plan.begin(); it != plan.end(); ++it) keys.insert(it.key());
  for (const auto& k : keys) {
    const std::string a = old_plan.contains(k) ? old_plan[k].dump() : "(absent)";
    const std::string b = plan.contains(k) ? nlohmann::json(plan[k]).dump() : "(absent)";
    if (a != b) diffs.push_back(fmt::format("{}: {} -> {}", k, a, b));
  }
  std::string out;
  for (const auto& d : diffs) out += (out.empty() ? "" : "; ") + d;
  return out;
}

}  // namespace

void check_plain_file(const fs::path& path) {
  std::error_code ec;
  const fs::file_type type = fs::symlink_status(path, ec).type();
  if (ec || type == fs::file_type::not_found || type == fs::file_type::regular) return;
  const char* what = type == fs::file_type::directory ? "a folder"
                     : type == fs::file_type::symlink ? "a symbolic link"
                                                      : "a device, FIFO or socket";
  throw UserError(fmt::format("'{}' is {}, not a regular file: sumlab writes only regular files (nothing was "
                              "written); choose a file path",
                              path.string(), what));
}

void atomic_write(const fs::path& path, const std::string& content) {
  check_plain_file(path);
  const fs::path tmp = path.parent_path() / (path.filename().string() + ".tmp." + std::to_string(::getpid()));
  const int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) write_failed(tmp, errno);
  try {
    write_all(fd, content, tmp);
    if (::fsync(fd) != 0) write_failed(tmp, errno);
  } catch (...) {
    ::close(fd);
    ::unlink(tmp.c_str());
    throw;
  }
  ::close(fd);
  if (::rename(tmp.c_str(), path.c_str()) != 0) {
    const int err = errno;
    ::unlink(tmp.c_str());
    write_failed(path, err);
  }
  fsync_dir(path.parent_path());
}


int CsvTable::column(const std::string& name) const {
  for (std::size_t i = 0; i < header.size(); ++i)
    if (header[i] == name) return static_cast<int>(i);
  return -1;
}

CsvTable read_csv(const fs::path& path, std::optional<std::uint64_t> limit) {
  std::ifstream file(path, std::ios::binary);
  if (!file) throw UserError("cannot read '" + path.string() + "'");
  std::string text((std::istreambuf_iterator<char>(file)), std::istreambuf_iterator<char>());
  if (limit && *limit < text.size()) text.resize(*limit);
  std::istringstream in(text);
  CsvTable t;
  std::string line;
  if (std::getline(in, line)) t.header = split_csv_line(line);
  while (std::getline(in, line)) {
    if (line.empty()) continue;
    auto fields = split_csv_line(line);
    if (fields.size() == t.header.size()) t.rows.push_back(std::move(fields));
    else ++t.torn;
  }
  return t;
}

std::map<std::string, std::uint64_t> finished_sizes(const fs::path& dir) {
  std::map<std::string, std::uint64_t> sizes;
  const std::string text = read_text(dir / journal_name);
  for (std::size_t pos = 0; pos < text.size();) {
    const auto nl = text.find('\n', pos);
    if (nl == std::string::npos) break;
    const auto j = nlohmann::json::parse(text.substr(pos, nl - pos), nullptr, false);
    if (j.is_discarded() || !j.is_object() || !j.contains("sizes") || !j["sizes"].is_object()) break;
    std::map<std::string, std::uint64_t> line;
    for (auto it = j["sizes"].begin(); it != j["sizes"].end(); ++it)
      if (it.value().is_number_unsigned()) line[it.key()] = it.value().get<std::uint64_t>();
    sizes = line;
    pos = nl + 1;
  }
  return sizes;
}

std::set<std::string> read_manifest(const fs::path& dir) {
  std::set<std::string> files;
  const fs::path p = dir / manifest_name;
  if (!fs::exists(p)) return files;
  const auto j = nlohmann::json::parse(read_text(p), nullptr, false);
  // Only a manifest sumlab wrote names files that sumlab may remove: another program's
  // manifest.json is a foreign file like any other.
  if (j.is_discarded() || !j.is_object() || !j.contains("written_by") || j["written_by"] != "sumlab" ||
      !j.contains("files") || !j["files"].is_array())
    throw UserError(fmt::format("'{}' is not a sumlab manifest (nothing was removed): move it away or choose "
                                "another folder",
                                p.string()));
  for (const auto& f : j["files"]) {
    if (!f.is_string()) throw UserError(fmt::format("'{}' is damaged: a file name that is not a string", p.string()));
    const std::string name = f.get<std::string>();
    // Only plain relative paths inside the folder: a tampered manifest must not reach outside it.
    const fs::path rel(name);
    if (rel.is_absolute() || name.find("..") != std::string::npos)
      throw UserError(fmt::format("'{}' lists '{}', outside its folder", p.string(), name));
    files.insert(name);
  }
  return files;
}

void write_manifest(const fs::path& dir, const std::set<std::string>& files) {
  nlohmann::ordered_json j;
  j["written_by"] = "sumlab";
  j["note"] = "the files sumlab wrote in this folder; --force removes these and nothing else";
  j["files"] = files;
  atomic_write(dir / manifest_name, j.dump(2) + "\n");
}

void append_csv(const fs::path& path, const std::vector<std::string>& columns,
                const std::vector<std::vector<std::string>>& rows) {
  const fs::path dir = path.parent_path().empty() ? fs::path(".") : path.parent_path();
  std::optional<FolderLock> lock;
  if (fs::exists(dir / manifest_name)) {
    lock.emplace(dir);
    std::set<std::string> files = read_manifest(dir);
    if (!files.count(path.filename().string())) {
      if (fs::exists(path))
        throw UserError(fmt::format("'{}' exists but sumlab did not write it: move it away or choose another file",
                                    path.string()));
      files.insert(path.filename().string());
      write_manifest(dir, files);
    }
  }
  check_plain_file(path);
  const std::string header = csv_line(columns) + "\n";
  if (fs::exists(path)) {
    std::ifstream in(path);
    std::string first;
    std::getline(in, first);
    if (first + "\n" != header)
      throw UserError(fmt::format("'{}' has other columns than these rows; choose another file", path.string()));
  } else {
    atomic_write(path, header);
  }
  std::string block;
  for (const auto& r : rows) block += csv_line(r) + "\n";
  if (!block.empty()) append_durably(path, block);
}

std::size_t remove_recorded_files(const fs::path& dir) {
  std::error_code ec;
  if (!fs::exists(dir / manifest_name, ec)) return 0;
  const std::set<std::string> files = read_manifest(dir);
  std::size_t removed = 0;
  std::set<fs::path, std::greater<>> parents;  // deepest first
  for (const auto& f : files) {
    if (fs::remove(dir / f, ec)) ++removed;
    for (fs::path p = fs::path(f).parent_path(); !p.empty(); p = p.parent_path()) parents.insert(dir / p);
  }
  fs::remove(dir / manifest_name, ec);
  for (const auto& p : parents)
    if (fs::is_directory(p, ec) && fs::is_empty(p, ec)) fs::remove(p, ec);
  return removed;
}

FolderLock::FolderLock(const fs::path& dir) {
  const fs::path lock = dir / lock_name;
  fd_ = ::open(lock.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
  if (fd_ < 0) {
    const int err = errno;
    const std::string what = fmt::format("folder '{}' is not writable: {}", dir.string(), std::strerror(err));
    if (err == ENOSPC || err == EDQUOT) throw ResourceError(what);
    throw UserError(what);
  }
  if (::flock(fd_, LOCK_EX | LOCK_NB) != 0) {
    std::string holder = read_text(lock);
    while (!holder.empty() && holder.back() == '\n') holder.pop_back();
    ::close(fd_);
    fd_ = -1;
    throw UserError(fmt::format("'{}' is being written by another sumlab process ({}); wait for it to finish "
                                "or choose another folder",
                                dir.string(), holder.empty() ? "unknown" : holder));
  }
  const std::string me = fmt::format("pid {} since {}\n", ::getpid(), utc_now());
  if (::ftruncate(fd_, 0) == 0) write_all(fd_, me, lock);
}

FolderLock::~FolderLock() {
  if (fd_ >= 0) ::close(fd_);  // closing drops the flock
}

namespace {

// A temporary file of atomic_write's (NAME.tmp.PID) for a NAME sumlab wrote here: what a kill
// between the write and the rename leaves. The folder's lock holder removes it.
bool is_debris(const std::string& file, const std::set<std::string>& manifest) {
  const auto at = file.rfind(".tmp.");
  if (at == std::string::npos || at + 5 == file.size()) return false;
  if (file.find_first_not_of("0123456789", at + 5) != std::string::npos) return false;
  const std::string base = file.substr(0, at);
  return base == manifest_name || manifest.count(base) > 0;
}

}  // namespace

RunFolder::RunFolder(const fs::path& dir, const std::string& study, RunMode mode, const nlohmann::ordered_json& plan,
                     const std::string& backend, const std::vector<std::string>& files)
    : dir_(dir) {
  try {
    open(study, mode, plan, backend, files);
  } catch (const nlohmann::json::exception& e) {
    throw UserError(fmt::format("'{}' is damaged ({}): use --force to start over, or another folder", dir.string(),
                                e.what()));
  }
}

void RunFolder::open(const std::string& study, RunMode mode, const nlohmann::ordered_json& plan,
                     const std::string& backend, const std::vector<std::string>& files) {
  const fs::path& dir = dir_;
  std::error_code ec;
  if (fs::exists(dir, ec) && !fs::is_directory(dir, ec))
    throw UserError(fmt::format("'{}' exists and is not a folder", dir.string()));
  if (mode == RunMode::resume && !fs::exists(dir / "provenance.json", ec))
    throw UserError(fmt::format("nothing to resume in '{}' (no provenance.json)", dir.string()));
  fs::create_directories(dir, ec);
  if (ec || !fs::is_directory(dir)) throw UserError(fmt::format("cannot create run folder '{}': {}", dir.string(), ec.message()));

  // What the provenance records of this invocation runs child processes (git, uname): they run
  // before the lock is taken, so that no child ever holds the lock's descriptor (between its fork and
  // its exec) after this process is killed, and a --resume right after a kill finds the folder free.
  nlohmann::ordered_json inv = invocation(this_command_line(), backend);

  // The lock first: everything below looks at the folder's state, which only the holder may change.
  lock_.emplace(dir);

  manifest_ = read_manifest(dir);
  bool has_run = fs::exists(dir / "provenance.json", ec);
  bool empty = true, only_manifest = true;  // only_manifest: nothing here but the manifest
  for (const auto& e : fs::directory_iterator(dir, ec)) {
    const std::string name = e.path().filename().string();
    if (name == lock_name) continue;
    if (e.is_regular_file() && is_debris(name, manifest_)) {
      fs::remove(e.path(), ec);
      continue;
    }
    empty = false;
    only_manifest = only_manifest && name == manifest_name;
  }
  // A run killed between its manifest and its provenance.json left the manifest alone (the
  // temporary provenance was debris): no run, nothing else of sumlab's, so it starts over. Any
  // other file (a report, a run's tables without their provenance) keeps the folder "not empty".
  if (mode == RunMode::fresh && !empty && !has_run && only_manifest) {
    remove_recorded_files(dir);
    manifest_.clear();
    empty = true;
  }

  switch (mode) {
    case RunMode::fresh:
      if (!empty)
        throw UserError(fmt::format("'{}' is not empty{}; use --resume to continue it, --force to replace what "
                                    "sumlab wrote there, or choose another folder",
                                    dir.string(), has_run ? " (it holds a run)" : ""));
      break;
    case RunMode::force: {
      // Every file this run will write must be sumlab's or absent before anything is removed or
      // written: a refusal leaves the folder as it was.
      std::vector<std::string> needed = files;
      needed.insert(needed.end(), {"provenance.json", journal_name, "summary.json"});
      for (const auto& f : needed)
        if (!manifest_.count(f) && fs::exists(dir / f, ec))
          throw UserError(fmt::format("'{}' exists but sumlab did not write it (it is not in {}): move it away or "
                                      "choose another folder (nothing was removed)",
                                      (dir / f).string(), manifest_name));
      remove_recorded_files(dir / "report");
      remove_recorded_files(dir);
      manifest_.clear();
      has_run = false;
      break;
    }
    case RunMode::resume:
      if (!has_run) throw UserError(fmt::format("nothing to resume in '{}' (no provenance.json)", dir.string()));
      if (manifest_.empty())
        throw UserError(fmt::format("'{}' was written by an older sumlab (no manifest.json): --resume needs a "
                                    "folder written by this version; start a new one",
                                    dir.string()));
      resumed_ = true;
      break;
  }
  open_provenance(study, mode, plan, std::move(inv));
  if (resumed_) recover_tables();
}

void RunFolder::record(const std::string& name) {
  if (manifest_.count(name)) return;
  if (fs::exists(dir_ / name))
    throw UserError(fmt::format("'{}' exists but sumlab did not write it (it is not in {}): move it away or "
                                "choose another folder",
                                (dir_ / name).string(), manifest_name));
  manifest_.insert(name);
  write_manifest(dir_, manifest_);
}

void RunFolder::open_provenance(const std::string& study, RunMode mode, const nlohmann::ordered_json& plan,
                                nlohmann::ordered_json inv) {
  inv["mode"] = mode == RunMode::fresh ? "fresh" : mode == RunMode::force ? "force" : "resume";
  nlohmann::ordered_json p;
  if (mode == RunMode::resume) {
    p = nlohmann::ordered_json::parse(read_text(dir_ / "provenance.json"), nullptr, false);
    if (p.is_discarded() || !p.is_object())
      throw UserError(fmt::format("'{}' has an unreadable provenance.json", dir_.string()));
    if (p.value("study", "") != study)
      throw UserError(fmt::format("'{}' holds another study ({}), not {}", dir_.string(), p.value("study", "?"), study));
    if (p.value("plan_hash", "") != plan_hash(plan))
      throw UserError(fmt::format("--resume with a different plan would mix two studies in '{}'; differences: {}. "
                                  "Rerun with the first plan's options, or use --force or another folder",
                                  dir_.string(), plan_difference(p.value("plan", nlohmann::json::object()), plan)));
    if (!p.contains("invocations") || !p["invocations"].is_array() || p["invocations"].empty() ||
        !p["invocations"][0].is_object())
      throw UserError(fmt::format("'{}' has a damaged provenance.json (no invocations)", dir_.string()));
    if (const std::string other = build_difference(p["invocations"][0], inv); !other.empty())
      throw UserError(fmt::format("--resume by another build would mix two builds' results in '{}': {}. Resume "
                                  "with the build that started it, or use --force or another folder",
                                  dir_.string(), other));
    p["invocations"].push_back(inv);
  } else {
    p["study"] = study;
    p["format"] = format_version;
    p["plan"] = plan;
    p["plan_hash"] = plan_hash(plan);
    for (auto it = inv.begin(); it != inv.end(); ++it) p[it.key()] = it.value();  // the first invocation, flat
    p["invocations"] = nlohmann::ordered_json::array({inv});
  }
  write_json("provenance.json", p);
}

void RunFolder::recover_tables() {
  const fs::path journal = dir_ / journal_name;
  if (!fs::exists(journal)) return;
  // A cell counts only if its line is whole and every table still holds, byte for byte, the rows
  // the line says it appended (from, size and their hash): a table cut short or edited from
  // outside makes that cell and every later one run again, after the table is cut back to the
  // cell before. A line of an older sumlab, without hashes, is checked by size and line end.
  const std::string text = read_text(journal);
  std::map<std::string, std::string> tables;  // name -> contents, read once
  auto contents = [&](const std::string& name) -> const std::string& {
    auto it = tables.find(name);
    if (it == tables.end()) it = tables.emplace(name, read_text(dir_ / name)).first;
    return it->second;
  };
  std::size_t kept = 0;
  for (std::size_t pos = 0; pos < text.size();) {
    const auto nl = text.find('\n', pos);
    if (nl == std::string::npos) break;
    const auto j = nlohmann::json::parse(text.substr(pos, nl - pos), nullptr, false);
    if (j.is_discarded() || !j.is_object() || !j.contains("cell") || !j["cell"].is_string() || !j.contains("sizes") ||
        !j["sizes"].is_object())
      break;
    const bool hashed = j.contains("blocks") && j["blocks"].is_object();
    bool intact = true;
    std::map<std::string, std::uint64_t> sizes;
    for (auto it = j["sizes"].begin(); it != j["sizes"].end() && intact; ++it) {
      if (!it.value().is_number_unsigned() || fs::path(it.key()).has_parent_path()) {
        intact = false;
        break;
      }
      const std::uint64_t size = it.value();
      const std::string& t = contents(it.key());
      intact = t.size() >= size && size > 0 && t[size - 1] == '\n';
      if (intact && hashed) {
        const auto b = j["blocks"].find(it.key());
        intact = b != j["blocks"].end() && b->is_object() && b->contains("from") && (*b)["from"].is_number_unsigned() &&
                 b->contains("fnv1a64") && (*b)["fnv1a64"].is_string();
        if (intact) {
          const std::uint64_t from = (*b)["from"];
          // The first cell's rows start after the header (the table's first line).
          const auto before = committed_sizes_.find(it.key());
          const std::uint64_t start = before != committed_sizes_.end() ? before->second : t.find('\n') + 1;
          intact = from <= size && from == start &&
                   Fnv1a64().add(t.data() + from, size - from).hex() == (*b)["fnv1a64"].get<std::string>();
        }
      }
      sizes[it.key()] = size;
    }
    if (!intact) break;
    done_.insert(j["cell"].get<std::string>());
    committed_sizes_ = sizes;
    kept = nl + 1;
    pos = nl + 1;
  }
  if (kept != text.size()) fs::resize_file(journal, kept);
}

void RunFolder::table(const std::string& name, const std::vector<std::string>& columns) {
  tables_[name] = columns;
  const fs::path path = dir_ / name;
  const std::string header = csv_line(columns) + "\n";
  if (manifest_.count(name) && fs::exists(path)) {
    const std::string text = read_text(path);
    if (text.compare(0, header.size(), header) != 0)
      throw UserError(fmt::format("'{}' has other columns than this study writes; use --force to start over",
                                  path.string()));
    // Cut back to the last finished cell: rows past it belong to a cell that did not finish.
    const auto it = committed_sizes_.find(name);
    const std::uint64_t keep = it == committed_sizes_.end() ? header.size() : it->second;
    if (text.size() != keep) fs::resize_file(path, keep);
    return;
  }
  record(name);
  atomic_write(path, header);
}

void RunFolder::commit_cell(const std::string& key,
                            const std::map<std::string, std::vector<std::vector<std::string>>>& rows) {
  std::map<std::string, std::string> blocks;
  for (const auto& [name, columns] : tables_) blocks[name];
  for (const auto& [name, rs] : rows) {
    const auto t = tables_.find(name);
    if (t == tables_.end()) throw std::logic_error("commit_cell: undeclared table " + name);
    for (const auto& r : rs) {
      if (r.size() != t->second.size()) throw std::logic_error("commit_cell: a row of " + name + " has the wrong width");
      blocks[name] += csv_line(r) + "\n";
    }
  }
  nlohmann::ordered_json line;
  line["cell"] = key;
  nlohmann::ordered_json sizes = nlohmann::ordered_json::object(), hashes = nlohmann::ordered_json::object();
  std::map<std::string, std::uint64_t> from;
  for (const auto& [name, block] : blocks) from[name] = fs::file_size(dir_ / name);
  try {
    for (const auto& [name, block] : blocks) {
      const std::uint64_t size = block.empty() ? from[name] : append_durably(dir_ / name, block);
      sizes[name] = size;
      hashes[name] = {{"from", from[name]}, {"fnv1a64", Fnv1a64().add(block.data(), block.size()).hex()}};
    }
    line["sizes"] = sizes;
    line["blocks"] = hashes;
    const fs::path journal = dir_ / journal_name;
    if (!fs::exists(journal)) {  // recorded but not yet created when a kill came between the two
      record(journal_name);
      atomic_write(journal, "");
    }
    append_durably(journal, line.dump() + "\n");
  } catch (...) {
    // The cell's rows go with it: no table keeps rows of a cell its journal does not have.
    std::error_code ec;
    for (const auto& [name, size] : from) fs::resize_file(dir_ / name, size, ec);
    throw;
  }
  committed_sizes_ = {};
  for (const auto& [name, size] : sizes.items()) committed_sizes_[name] = size.get<std::uint64_t>();
  done_.insert(key);
}

void RunFolder::write_file(const std::string& name, const std::string& content) {
  record(name);
  atomic_write(dir_ / name, content);
}

void RunFolder::write_json(const std::string& name, const nlohmann::ordered_json& j) {
  write_file(name, j.dump(2) + "\n");
}

void RunFolder::write_csv(const std::string& name, const std::vector<std::string>& columns,
                          const std::vector<std::vector<std::string>>& rows) {
  std::string text = csv_line(columns) + "\n";
  for (const auto& r : rows) text += csv_line(r) + "\n";
  write_file(name, text);
}

bool RunFolder::exists(const std::string& name) const {
  return manifest_.count(name) && fs::exists(dir_ / name);
}

nlohmann::ordered_json invocation(const std::string& command_line, const std::string& backend) {
  nlohmann::ordered_json p;
  const std::string src = SUMLAB_SOURCE_DIR;
  p["command_line"] = command_line;
  p["date_utc"] = utc_now();
  p["sumlab_version"] = SUMLAB_VERSION;
  // SUMLAB_GIT_COMMIT names the commit where the tree has no .git (a copy sent to a GPU machine).
  const char* given = std::getenv("SUMLAB_GIT_COMMIT");
  std::string commit = given ? given : run_command("git -C '" + src + "' rev-parse HEAD 2>/dev/null");
  if (!given && (commit.size() != 40 || commit.find_first_not_of("0123456789abcdef") != std::string::npos))
    commit = "unknown";
  p["git_commit"] = commit;
  // Whether the tracked files differ from that commit. A copy sent to a GPU machine says so in
  // SUMLAB_GIT_DIRTY (scripts/device-stamp.sh): its own .git, if any, may be another commit's, and
  // without the stamp nothing is claimed (null). File modes are not content: a copy that loses them
  // does not read as modified.
  if (given) {
    const char* dirty = std::getenv("SUMLAB_GIT_DIRTY");
    p["git_dirty"] = dirty && std::string(dirty) == "1"   ? nlohmann::ordered_json(true)
                     : dirty && std::string(dirty) == "0" ? nlohmann::ordered_json(false)
                                                          : nlohmann::ordered_json();
  } else {
    p["git_dirty"] = !run_command("git -C '" + src +
                                  "' -c core.fileMode=false status --porcelain --untracked-files=no 2>/dev/null")
                          .empty();
  }
  p["compiler"] = SUMLAB_CXX_COMPILER;
  p["cxx_flags"] = SUMLAB_CXX_FLAGS;
  p["build"] = build_identity();
  p["host"] = run_command("uname -srm");
  p["cpu"] = run_command("grep -m1 'model name' /proc/cpuinfo | cut -d: -f2- | sed 's/^ //'");
  p["backend"] = backend;
#if defined(SUMLAB_WITH_CUDA)
  p["cuda_compiled"] = true;
  std::string why;
  if (backend == "cuda" && gpu::gpu_available(&why)) {
    const auto info = gpu::device_info();
    p["gpu"] = info.name;
    p["driver"] = info.driver_version;
    p["cuda_runtime"] = info.runtime_version;
    p["device"] = fmt::format("{} ({} SMs, compute {}.{}, L2 {} MB, driver CUDA {}, runtime {})", info.name,
                              info.sm_count, info.cc_major, info.cc_minor, info.l2_bytes >> 20, info.driver_version,
                              info.runtime_version);
  } else {
    p["gpu"] = backend == "cuda" ? "unavailable: " + why : backend;
  }
#else
  p["cuda_compiled"] = false;
  p["gpu"] = backend;
#endif
  return p;
}

std::string join_command_line(int argc, const char* const* argv) {
  std::string s;
  for (int i = 0; i < argc; ++i) {
    const std::string a = argv[i];
    const bool plain = !a.empty() && a.find_first_of(" \t\"'$\\") == std::string::npos;
    if (i) s.push_back(' ');
    if (!plain) s.push_back('\'');
    s.append(a);
    if (!plain) s.push_back('\'');
  }
  return s;
}

std::string this_command_line() {
  std::ifstream in("/proc/self/cmdline", std::ios::binary);
  std::vector<std::string> args;
  std::string a;
  while (std::getline(in, a, '\0')) args.push_back(a);
  std::vector<const char*> argv;
  for (const auto& s : args) argv.push_back(s.c_str());
  return join_command_line(static_cast<int>(argv.size()), argv.data());
}

std::string csv_number(double v) { return fmt::format("{}", v); }

std::string csv_line(const std::vector<std::string>& fields) {
  std::string line;
  for (std::size_t i = 0; i < fields.size(); ++i) {
    if (i) line.push_back(',');
    line.append(csv_field(fields[i]));
  }
  return line;
}

}  // namespace sumlab
