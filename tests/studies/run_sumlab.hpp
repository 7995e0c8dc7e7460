#pragma once
// Test helpers of the CLI tests: run the built `sumlab` binary (SUMLAB_BINARY) with arguments and
// collect its exit code and its stdout and stderr together; a fresh temporary folder; a run
// folder's CSV read back as rows of named fields, and two runs' compared; a whole file; an .npy of
// floats; the report tests' skip.
#include <gtest/gtest.h>
#include <sys/wait.h>

#include <algorithm>
#include <array>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>
#include <string>
#include <type_traits>
#include <vector>

namespace sumlab::test {

struct Result {
  int code;         // exit status; 128 + signal when the binary crashed
  std::string out;  // stdout and stderr together
};

inline Result run(const std::string& args) {
  const std::string cmd = std::string(SUMLAB_BINARY) + " " + args + " 2>&1";
  std::string out;
  FILE* p = popen(cmd.c_str(), "r");
  if (!p) return {-1, "popen failed"};
  std::array<char, 4096> buf{};
  while (std::fgets(buf.data(), buf.size(), p)) out += buf.data();
  const int status = pclose(p);
  return {WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status), out};
}

// <temp>/sumlab_<name>, removed first (so a test starts from nothing).
inline std::filesystem::path temp_dir(const std::string& name) {
  auto d = std::filesystem::temp_directory_path() / ("sumlab_" + name);
  std::filesystem::remove_all(d);
  return d;
}

// temp_dir(name), created (for a test that writes its own files there).
inline std::filesystem::path fresh_dir(const std::string& name) {
  auto d = temp_dir(name);
  std::filesystem::create_directories(d);
  return d;
}

// A whole file as a string ("" when it cannot be read).
inline std::string slurp(const std::filesystem::path& p) {
  std::ifstream in(p);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

// A float32 or float64 vector (float16 bit patterns as std::uint16_t; int32 or int64 offsets) as a
// .npy file (version 1.0, little-endian, header padded to 64 bytes): a study's --input.
template <class T> void write_npy(const std::filesystem::path& path, const std::vector<T>& x) {
  static_assert(sizeof(T) == 2 || sizeof(T) == 4 || sizeof(T) == 8);
  const char kind = std::is_integral_v<T> && std::is_signed_v<T> ? 'i' : 'f';
  std::string header = std::string("{'descr': '<") + kind + std::to_string(sizeof(T)) +
                       "', 'fortran_order': False, 'shape': (" + std::to_string(x.size()) + ",), }";
  header.append(64 - (10 + header.size() + 1) % 64, ' ').push_back('\n');
  std::ofstream f(path, std::ios::binary);
  f.write("\x93NUMPY\x01\x00", 8);
  const char len[2] = {static_cast<char>(header.size() & 0xff), static_cast<char>(header.size() >> 8)};
  f.write(len, 2);
  f << header;
  f.write(reinterpret_cast<const char*>(x.data()), static_cast<std::streamsize>(x.size() * sizeof(T)));
}

// Report tests: `sumlab report` needs a Python with matplotlib; without one the test skips, saying so.
#define SKIP_WITHOUT_MATPLOTLIB(r)                                    \
  if ((r).out.find("no Python with matplotlib") != std::string::npos) \
  GTEST_SKIP() << "no Python with matplotlib here (CI installs python3-matplotlib): " << (r).out

struct Csv {
  std::vector<std::string> header;
  std::vector<std::map<std::string, std::string>> rows;
};

// One CSV line's fields (double quotes group a field that holds commas; no embedded newlines).
inline std::vector<std::string> split_csv_line(const std::string& line) {
  std::vector<std::string> f;
  std::string cur;
  bool quoted = false;
  for (char c : line) {
    if (c == '"') {
      quoted = !quoted;
    } else if (c == ',' && !quoted) {
      f.push_back(cur);
      cur.clear();
    } else {
      cur += c;
    }
  }
  f.push_back(cur);
  return f;
}

inline Csv read_csv(const std::filesystem::path& p) {
  Csv c;
  std::ifstream in(p);
  std::string line;
  std::getline(in, line);
  c.header = split_csv_line(line);
  while (std::getline(in, line)) {
    const auto f = split_csv_line(line);
    std::map<std::string, std::string> row;
    for (std::size_t i = 0; i < c.header.size() && i < f.size(); ++i) row[c.header[i]] = f[i];
    c.rows.push_back(row);
  }
  return c;
}

// A study's table from a run on generated values and from a run on the same values given as data:
// row for row the same, but `column` reads `data` where the generated run names the generator
// (`generated`), and the times (`ms`, `fraction_of_roof`) and the `ignored` columns (a seed the data
// has none of) are the runs' own.
inline void expect_rows_of_the_same_values(const std::filesystem::path& generated_table,
                                           const std::filesystem::path& data_table, const std::string& column,
                                           const std::string& generated, const std::vector<std::string>& ignored = {}) {
  const Csv g = read_csv(generated_table), d = read_csv(data_table);
  ASSERT_EQ(g.rows.size(), d.rows.size()) << data_table;
  ASSERT_FALSE(g.rows.empty()) << data_table;
  for (std::size_t i = 0; i < g.rows.size(); ++i)
    for (const auto& [name, value] : g.rows[i]) {
      if (name == column && value == generated) {
        EXPECT_EQ(d.rows[i].at(name), "data") << data_table << " row " << i;
      } else if (name != "ms" && name != "fraction_of_roof" &&
                 std::find(ignored.begin(), ignored.end(), name) == ignored.end()) {
        EXPECT_EQ(d.rows[i].at(name), value) << data_table << " row " << i << " " << name;
      }
    }
}

// A command refused as bad input: exit `code`, one line "sumlab: ..." holding `needle`.
inline void expect_one_line_refusal(const std::string& args, const std::string& needle, int code = 2) {
  const Result r = run(args);
  EXPECT_EQ(r.code, code) << args << "\n" << r.out;
  EXPECT_NE(r.out.find(needle), std::string::npos) << args << "\n" << r.out;
  EXPECT_EQ(r.out.rfind("sumlab: ", 0), 0u) << args << "\n" << r.out;
  EXPECT_EQ(std::count(r.out.begin(), r.out.end(), '\n'), 1) << args << "\n" << r.out;
}

}  // namespace sumlab::test
