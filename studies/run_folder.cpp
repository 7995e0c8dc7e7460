#include "studies/run_folder.hpp"

#include <fmt/format.h>

#include <array>
#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <fstream>
#include <iterator>
#include <sstream>

#include "studies/commands.hpp"
#if defined(SUMLAB_WITH_CUDA)
#include "gpu/gpu_sum.hpp"
#endif

namespace fs = std::filesystem;

namespace sumlab {
namespace {

std::string csv_field(const std::string& f) {
  if (f.find_first_of(",\"\n") == std::string::npos) return f;
  std::string q = "\"";
  for (char c : f) q += (c == '"') ? std::string("\"\"") : std::string(1, c);
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

}  // namespace

CsvAppender::CsvAppender(const fs::path& path, const std::vector<std::string>& columns)
    : columns_(columns.size()) {
  const bool existing = fs::exists(path) && fs::file_size(path) > 0;
  if (existing) {
    // A run interrupted in the middle of a write leaves a last line without its newline: cut it off,
    // so that resumed rows start on a line of their own (read_csv already ignores such a line).
    std::string content;
    {
      std::ifstream in(path, std::ios::binary);
      content.assign(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
    }
    if (!content.empty() && content.back() != '\n') {
      const auto last = content.rfind('\n');
      fs::resize_file(path, last == std::string::npos ? 0 : last + 1);
    }
  }
  if (existing && fs::file_size(path) > 0) {
    const CsvTable t = read_csv(path);
    if (t.header != columns)
      throw UserError("'" + path.string() + "' has other columns than this study writes; use --force to start over");
  }
  file_ = std::fopen(path.c_str(), "a");
  if (!file_) throw UserError("cannot write '" + path.string() + "': " + std::strerror(errno));
  if (!existing || fs::file_size(path) == 0) {
    write_line(columns);
    std::fflush(file_);
  }
}

CsvAppender::CsvAppender(CsvAppender&& o) noexcept : file_(o.file_), columns_(o.columns_) { o.file_ = nullptr; }
CsvAppender& CsvAppender::operator=(CsvAppender&& o) noexcept {
  if (this != &o) {
    if (file_) std::fclose(file_);
    file_ = o.file_;
    columns_ = o.columns_;
    o.file_ = nullptr;
  }
  return *this;
}
CsvAppender::~CsvAppender() {
  if (file_) std::fclose(file_);
}

void CsvAppender::write_line(const std::vector<std::string>& fields) {
  std::string line;
  for (std::size_t i = 0; i < fields.size(); ++i) {
    if (i) line.push_back(',');
    line.append(csv_field(fields[i]));
  }
  line.push_back('\n');
  if (std::fwrite(line.data(), 1, line.size(), file_) != line.size())
    throw UserError(std::string("write failed: ") + std::strerror(errno));
}

void CsvAppender::row(const std::vector<std::string>& fields) { rows({fields}); }

void CsvAppender::rows(const std::vector<std::vector<std::string>>& rs) {
  for (const auto& r : rs) {
    if (r.size() != columns_) throw std::logic_error("CSV row has the wrong number of fields");
    write_line(r);
  }
  if (std::fflush(file_) != 0) throw UserError(std::string("write failed: ") + std::strerror(errno));
}

int CsvTable::column(const std::string& name) const {
  for (std::size_t i = 0; i < header.size(); ++i)
    if (header[i] == name) return static_cast<int>(i);
  return -1;
}

CsvTable read_csv(const fs::path& path) {
  std::ifstream in(path);
  if (!in) throw UserError("cannot read '" + path.string() + "'");
  CsvTable t;
  std::string line;
  if (std::getline(in, line)) t.header = split_csv_line(line);
  while (std::getline(in, line)) {
    if (line.empty()) continue;
    auto fields = split_csv_line(line);
    // A row cut short by an interruption mid-write is not a measurement: drop it.
    if (fields.size() == t.header.size()) t.rows.push_back(std::move(fields));
  }
  return t;
}

RunFolder::RunFolder(const fs::path& dir, const std::string& study, RunMode mode,
                     const std::string& command_line)
    : dir_(dir) {
  std::error_code ec;
  const fs::path prov = dir / "provenance.json";
  if (fs::exists(prov)) {
    if (mode == RunMode::fresh)
      throw UserError("'" + dir.string() + "' already holds a run; use --resume to continue it or --force to replace it");
    if (mode == RunMode::resume) {
      std::ifstream in(prov);
      nlohmann::json p = nlohmann::json::parse(in, nullptr, false);
      if (p.is_discarded() || p.value("study", "") != study)
        throw UserError("'" + dir.string() + "' holds another study (" +
                        (p.is_discarded() ? std::string("unreadable provenance") : p.value("study", "?")) + ")");
    }
    if (mode == RunMode::force) {
      for (const auto& entry : fs::directory_iterator(dir, ec))
        if (entry.is_regular_file()) fs::remove(entry.path(), ec);
    }
  } else if (fs::exists(dir) && !fs::is_directory(dir)) {
    throw UserError("'" + dir.string() + "' exists and is not a folder");
  } else if (fs::exists(dir) && !fs::is_empty(dir) && mode == RunMode::fresh) {
    throw UserError("'" + dir.string() + "' is not empty; choose a new folder or pass --force");
  }
  fs::create_directories(dir, ec);
  if (ec || !fs::is_directory(dir))
    throw UserError("cannot create run folder '" + dir.string() + "': " + ec.message());
  // Probe writability now rather than failing after the first expensive cell.
  const fs::path probe = dir / ".write-test";
  {
    std::ofstream p(probe);
    if (!p) throw UserError("run folder '" + dir.string() + "' is not writable");
  }
  fs::remove(probe, ec);
  (void)command_line;
}

std::set<std::string> RunFolder::done_keys(const std::string& csv_name,
                                           const std::vector<std::string>& key_columns,
                                           bool redo_last_cell) const {
  std::set<std::string> keys;
  const fs::path path = file(csv_name);
  if (!fs::exists(path)) return keys;
  const CsvTable t = read_csv(path);
  std::vector<int> idx;
  for (const auto& c : key_columns) idx.push_back(t.column(c));
  auto key_of = [&](const std::vector<std::string>& r) {
    std::string k;
    for (int i : idx) k += (i >= 0 ? r[static_cast<std::size_t>(i)] : std::string()) + "|";
    return k;
  };
  // Cells are appended one after another, so only the last one can have been cut short by an
  // interruption: its rows are removed and it is run again.
  if (!redo_last_cell) {
    for (const auto& r : t.rows) keys.insert(key_of(r));
    return keys;
  }
  const std::string last = t.rows.empty() ? std::string() : key_of(t.rows.back());
  std::string kept;
  for (std::size_t i = 0; i < t.header.size(); ++i) kept += (i ? "," : "") + csv_field(t.header[i]);
  kept += "\n";
  for (const auto& r : t.rows) {
    const std::string k = key_of(r);
    if (k == last) continue;
    keys.insert(k);
    for (std::size_t i = 0; i < r.size(); ++i) {
      if (i) kept.push_back(',');
      kept.append(csv_field(r[i]));
    }
    kept.push_back('\n');
  }
  const fs::path tmp = file(csv_name + ".tmp");
  {
    std::ofstream out(tmp, std::ios::binary);
    out << kept;
    if (!out) throw UserError("cannot rewrite '" + path.string() + "'");
  }
  fs::rename(tmp, path);
  return keys;
}

void RunFolder::write_json(const std::string& name, const nlohmann::ordered_json& j) const {
  const fs::path tmp = file(name + ".tmp");
  {
    std::ofstream out(tmp);
    if (!out) throw UserError("cannot write '" + tmp.string() + "'");
    out << j.dump(2) << "\n";
    if (!out) throw UserError("write failed: '" + tmp.string() + "'");
  }
  std::error_code ec;
  fs::rename(tmp, file(name), ec);
  if (ec) throw UserError("cannot write '" + file(name).string() + "': " + ec.message());
}

nlohmann::ordered_json provenance(const std::string& study, const std::string& command_line,
                                  const std::string& backend) {
  nlohmann::ordered_json p;
  const std::string src = SUMLAB_SOURCE_DIR;
  p["study"] = study;
  p["command_line"] = command_line;
  p["date_utc"] = utc_now();
  // SUMLAB_GIT_COMMIT names the commit where the tree has no .git (a copy sent to a GPU machine).
  const char* given = std::getenv("SUMLAB_GIT_COMMIT");
  std::string commit = given ? given : run_command("git -C '" + src + "' rev-parse HEAD 2>/dev/null");
  if (!given && (commit.size() != 40 || commit.find_first_not_of("0123456789abcdef") != std::string::npos))
    commit = "unknown";
  p["git_commit"] = commit;
  p["git_dirty"] = !run_command("git -C '" + src + "' status --porcelain --untracked-files=no 2>/dev/null").empty();
  p["compiler"] = SUMLAB_CXX_COMPILER;
  p["cxx_flags"] = SUMLAB_CXX_FLAGS;
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

}  // namespace sumlab
