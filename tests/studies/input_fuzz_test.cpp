// A seeded mutation fuzzer over the input parsers' byte-buffer APIs (parse_npy, parse_csv,
// parse_raw): valid seed files, mutated by bit flips, byte overwrites, insertions, deletions,
// splices and overwrites with interesting values (shape digits, header-length bytes, versions,
// dtypes, separators). Every execution must either throw UserError/ResourceError with a one-line
// message naming the input, or return values that an independent oracle agrees with bit for bit:
//   npy: the count is the product of the header's shape and each value is the stored bytes,
//        decoded here independently, at the index the requested order gives;
//   csv: a simple tokenizer (split lines and commas, trim, strtod/strtof under the "C" locale);
//   raw: the bytes themselves.
// No call may crash, run long, or allocate more than its input implies (every allocation made
// during a call is counted through the replaced global operator new).
//
// It runs for SUMLAB_FUZZ_SECONDS (default 20) split over the three parsers, and at least 10^5
// executions in all whatever the budget; the seed is fixed (SUMLAB_FUZZ_SEED overrides it), so a
// failure can be replayed.
#include <gtest/gtest.h>
#include <locale.h>
#include <stdlib.h>

#include <atomic>
#include <bit>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <new>
#include <optional>
#include <random>
#include <regex>
#include <string>
#include <vector>

#include "studies/commands.hpp"
#include "studies/csv_format.hpp"
#include "studies/npy_format.hpp"
#include "studies/raw_format.hpp"

// ---- allocation accounting -------------------------------------------------------------------
// Replaced for the whole test binary; counting only while a parser runs.
namespace {
std::atomic<bool> g_counting{false};
std::atomic<std::uint64_t> g_allocated{0};
}  // namespace

// malloc underneath, so free is the matching release; GCC, inlining the replacement, pairs the
// free with operator new and warns (-Wmismatched-new-delete) about what is in fact a match.
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wmismatched-new-delete"
void* operator new(std::size_t n) {
  if (g_counting.load(std::memory_order_relaxed)) g_allocated.fetch_add(n, std::memory_order_relaxed);
  if (void* p = std::malloc(n ? n : 1)) return p;
  throw std::bad_alloc();
}
void* operator new[](std::size_t n) { return ::operator new(n); }
void operator delete(void* p) noexcept { std::free(p); }
void operator delete[](void* p) noexcept { std::free(p); }
void operator delete(void* p, std::size_t) noexcept { std::free(p); }
void operator delete[](void* p, std::size_t) noexcept { std::free(p); }
#pragma GCC diagnostic pop

namespace sumlab {
namespace {

constexpr std::size_t kMaxInput = 4096;

double budget_seconds() {
  const char* s = std::getenv("SUMLAB_FUZZ_SECONDS");
  return s ? std::atof(s) : 20.0;
}

std::uint64_t seed() {
  const char* s = std::getenv("SUMLAB_FUZZ_SEED");
  return s ? std::strtoull(s, nullptr, 10) : 20261130;
}

std::string printable(const std::string& s) {
  std::string out;
  for (unsigned char c : s) {
    char buf[8];
    if (c >= 0x20 && c < 0x7f && c != '\\') out += static_cast<char>(c);
    else std::snprintf(buf, sizeof buf, "\\x%02x", c), out += buf;
  }
  return out;
}

struct Rng {
  std::mt19937_64 g;
  std::uint64_t below(std::uint64_t n) { return n ? g() % n : 0; }
  bool one_in(std::uint64_t n) { return below(n) == 0; }
  template <class T> const T& pick(const std::vector<T>& v) { return v[below(v.size())]; }
};

// ---- mutations ------------------------------------------------------------------------------

const std::vector<std::string> kNumbers = {"0", "1", "2", "3", "9", "10", "255", "65535", "65536",
                                           "4294967295", "4294967296", "2305843009213693953",
                                           "9223372036854775807", "18446744073709551615",
                                           "18446744073709551616", "99999999999999999999999", "-1", "01", ""};

std::string mutate_once(std::string s, Rng& r, const std::vector<std::string>& corpus,
                        const std::vector<std::string>& tokens) {
  const std::size_t pos = r.below(s.size() + 1);
  switch (r.below(7)) {
    case 0:  // bit flip
      if (!s.empty()) s[r.below(s.size())] ^= static_cast<char>(1u << r.below(8));
      break;
    case 1:  // byte overwrite
      if (!s.empty()) s[r.below(s.size())] = static_cast<char>(r.below(256));
      break;
    case 2: {  // insert random bytes
      std::string ins(1 + r.below(8), '\0');
      for (char& c : ins) c = static_cast<char>(r.below(256));
      s.insert(pos, ins);
      break;
    }
    case 3:  // delete a range
      if (!s.empty()) s.erase(r.below(s.size()), 1 + r.below(16));
      break;
    case 4: {  // splice: our head, another input's tail
      const std::string& o = r.pick(corpus);
      s = s.substr(0, pos) + o.substr(r.below(o.size() + 1));
      break;
    }
    case 5: {  // insert an interesting token
      s.insert(pos, r.pick(tokens));
      break;
    }
    default: {  // overwrite with an interesting token
      const std::string& t = r.pick(tokens);
      if (pos < s.size()) s.replace(pos, std::min(t.size(), s.size() - pos), t);
      break;
    }
  }
  return s;
}

// ---- one execution --------------------------------------------------------------------------

struct Stats {
  std::uint64_t executions = 0, accepted = 0, refused = 0;
  double max_call_seconds = 0;
};

// Runs `parse` on `input`; returns the array, or nothing when it was refused as it should be.
// Fails the test (returns nothing too) on any other outcome.
template <class Parse>
std::optional<Array> execute(const std::string& input, const char* what, Parse parse, Stats& stats, bool& failed) {
  ++stats.executions;
  std::optional<Array> out;
  std::string error;
  g_allocated = 0;
  const auto t0 = std::chrono::steady_clock::now();
  g_counting = true;
  try {
    out = parse();
  } catch (const UserError& e) {
    error = e.what();
  } catch (const ResourceError& e) {
    error = e.what();
  } catch (const std::exception& e) {
    g_counting = false;
    ADD_FAILURE() << what << ": unexpected " << typeid(e).name() << ": " << e.what() << "\ninput: " << printable(input);
    failed = true;
    return std::nullopt;
  }
  g_counting = false;
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  stats.max_call_seconds = std::max(stats.max_call_seconds, seconds);
  // Values (at most 2 per input byte for float16 -> float32), one reordered copy, and small
  // change (strings for keys and messages, the shape) bound everything a call may allocate.
  const std::uint64_t allowed = 16 * input.size() + 65536;
  if (g_allocated > allowed) {
    ADD_FAILURE() << what << ": allocated " << g_allocated.load() << " bytes for " << input.size()
                  << " input bytes\ninput: " << printable(input);
    failed = true;
  }
  if (seconds > 1.0) {
    ADD_FAILURE() << what << ": one call took " << seconds << " s\ninput: " << printable(input);
    failed = true;
  }
  if (!out) {
    ++stats.refused;
    if (error.find('\n') != std::string::npos || error.find("'fuzz'") == std::string::npos) {
      ADD_FAILURE() << what << ": message not one line naming the input: " << error;
      failed = true;
    }
    return std::nullopt;
  }
  ++stats.accepted;
  return out;
}

template <class T> bool same_bits(const std::vector<T>& a, const std::vector<T>& b) {
  return a.size() == b.size() && (a.empty() || std::memcmp(a.data(), b.data(), a.size() * sizeof(T)) == 0);
}

ReadOptions random_options(Rng& r) {
  ReadOptions o;
  const auto f = r.below(3);
  o.flatten = f == 0 ? Flatten::none : f == 1 ? Flatten::c : Flatten::f;
  const auto d = r.below(3);
  if (d == 1) o.dtype = Dtype::float32;
  if (d == 2) o.dtype = Dtype::float64;
  return o;
}

const char* flatten_name(Flatten f) { return f == Flatten::none ? "none" : f == Flatten::c ? "C" : "F"; }

// Seeds run until the clock or the minimum count (whichever is later) says stop.
template <class Step> Stats fuzz(const char* what, double seconds, std::uint64_t min_executions, Step step) {
  Stats stats;
  bool failed = false;
  const auto t0 = std::chrono::steady_clock::now();
  auto elapsed = [&] { return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count(); };
  while (!failed && (stats.executions < min_executions || elapsed() < seconds)) step(stats, failed);
  std::printf("fuzz %s: %llu executions in %.1f s (%llu accepted, %llu refused; slowest call %.2g s)\n", what,
              static_cast<unsigned long long>(stats.executions), elapsed(),
              static_cast<unsigned long long>(stats.accepted), static_cast<unsigned long long>(stats.refused),
              stats.max_call_seconds);
  return stats;
}

// ---- npy ------------------------------------------------------------------------------------

// A valid file: random element type, byte order, stored order, version, shape (up to 3
// dimensions of 0..5) and random data bytes (NaNs, infinities and subnormals included).
std::string valid_npy(Rng& r) {
  static const char* descrs[] = {"<f2", ">f2", "<f4", ">f4", "<f8", ">f8"};
  const std::string descr = descrs[r.below(6)];
  const std::size_t size = descr[2] == '2' ? 2 : descr[2] == '4' ? 4 : 8;
  const std::size_t ndim = r.below(4);
  std::string shape = "(";
  std::size_t count = 1;
  for (std::size_t i = 0; i < ndim; ++i) {
    const std::size_t d = r.below(6);
    count *= d;
    shape += std::to_string(d) + (ndim == 1 || i + 1 < ndim ? ", " : "");
  }
  shape += ")";
  const int major = 1 + static_cast<int>(r.below(3));
  std::string dict = "{'descr': '" + descr + "', 'fortran_order': " + (r.one_in(2) ? "True" : "False") +
                     ", 'shape': " + shape + ", }";
  const std::size_t preamble = major == 1 ? 10 : 12;
  while ((preamble + dict.size() + 1) % 64) dict += ' ';
  dict += '\n';
  std::string out = "\x93NUMPY";
  out += static_cast<char>(major);
  out += '\0';
  for (std::size_t i = 0; i < preamble - 8; ++i) out += static_cast<char>((dict.size() >> (8 * i)) & 0xff);
  out += dict;
  for (std::size_t i = 0; i < count * size; ++i) out += static_cast<char>(r.below(256));
  return out;
}

// Targeted: the header-length bytes, the version, the shape's numbers, the dtype, the order.
std::string mutate_npy_header(std::string s, Rng& r) {
  if (s.size() < 12) return s;
  switch (r.below(5)) {
    case 0: {
      static const std::uint64_t lengths[] = {0, 1, 2, 54, 55, 63, 64, 65, 117, 118, 0xffff, 0x10000, 0x10001, 0xffffffff};
      std::uint64_t v = r.one_in(3) ? r.below(s.size() + 2) : lengths[r.below(std::size(lengths))];
      const std::size_t n = s[6] == 1 ? 2 : 4;
      for (std::size_t i = 0; i < n; ++i) s[8 + i] = static_cast<char>((v >> (8 * i)) & 0xff);
      break;
    }
    case 1:
      s[6 + r.below(2)] = static_cast<char>(r.below(5));
      break;
    case 2: {
      const auto open = s.find('(');
      const auto close = s.find(')', open == std::string::npos ? 0 : open);
      if (open == std::string::npos || close == std::string::npos) break;
      std::string dims;
      const std::size_t n = r.below(4);
      for (std::size_t i = 0; i < n; ++i) dims += (i ? ", " : "") + r.pick(kNumbers);
      if (n == 1 || r.one_in(4)) dims += ",";
      s.replace(open + 1, close - open - 1, dims);
      break;
    }
    case 3: {
      static const std::vector<std::string> descrs = {"<f2", ">f2", "<f4", ">f4", "<f8", ">f8", "|f4", "=f8", "<i4", "<f16", "<c8", "f4", ""};
      const auto at = s.find("'descr': '");
      const auto end = at == std::string::npos ? at : s.find('\'', at + 10);
      if (end != std::string::npos) s.replace(at + 10, end - at - 10, r.pick(descrs));
      break;
    }
    default: {
      const auto t = s.find("True"), f = s.find("False");
      if (t != std::string::npos) s.replace(t, 4, r.one_in(2) ? "False" : "true");
      else if (f != std::string::npos) s.replace(f, 5, r.one_in(2) ? "True" : "0");
      break;
    }
  }
  return s;
}

// The oracle's own reading of an accepted file: offsets from the preamble, fields by regex.
struct OracleHeader {
  std::size_t data = 0, size = 0;
  char descr = 'f', order = '<';
  bool fortran = false;
  std::vector<std::uint64_t> shape;
};

bool oracle_header(const std::string& s, OracleHeader& h) {
  const std::size_t preamble = s[6] == 1 ? 10 : 12;
  std::size_t len = 0;
  for (std::size_t i = preamble; i-- > 8;) len = len * 256 + static_cast<unsigned char>(s[i]);
  h.data = preamble + len;
  const std::string dict = s.substr(preamble, len);
  static const std::regex descr(R"(['"]descr['"]\s*:\s*['"]([<>])f([248])['"])");
  static const std::regex fortran(R"(['"]fortran_order['"]\s*:\s*(True|False))");
  static const std::regex shape(R"(['"]shape['"]\s*:\s*\(([^)]*)\))");
  std::smatch m;
  if (!std::regex_search(dict, m, descr)) return false;
  h.order = m[1].str()[0];
  h.size = static_cast<std::size_t>(m[2].str()[0] - '0');
  if (!std::regex_search(dict, m, fortran)) return false;
  h.fortran = m[1] == "True";
  if (!std::regex_search(dict, m, shape)) return false;
  const std::string dims = m[1];
  std::size_t at = 0;
  while (at < dims.size()) {
    const std::size_t comma = std::min(dims.find(',', at), dims.size());
    std::string item = dims.substr(at, comma - at);
    item.erase(0, item.find_first_not_of(" \t\n\r"));
    item.erase(item.find_last_not_of(" \t\n\rL") + 1);
    if (!item.empty()) h.shape.push_back(std::strtoull(item.c_str(), nullptr, 10));
    at = comma + 1;
  }
  return true;
}

// The stored element at flat index i, as the target type, decoded without the library.
double decode16(std::uint16_t b) {
  const int e = (b >> 10) & 0x1f, m = b & 0x3ff;
  const double mag = e == 0 ? std::ldexp(double(m), -24) : std::ldexp(double(1024 + m), e - 25);
  return (b & 0x8000) ? -mag : mag;
}
std::uint64_t stored_bits(const std::string& s, const OracleHeader& h, std::uint64_t i) {
  std::uint64_t v = 0;
  for (std::size_t k = 0; k < h.size; ++k) {
    const auto byte = static_cast<unsigned char>(s[h.data + i * h.size + (h.order == '<' ? h.size - 1 - k : k)]);
    v = v << 8 | byte;
  }
  return v;
}
std::uint32_t float32_bits_of16(std::uint16_t b) {
  if ((b & 0x7c00) == 0x7c00)  // inf and nan: sign, all-ones exponent, payload kept
    return (std::uint32_t(b & 0x8000) << 16) | 0x7f800000u | (std::uint32_t(b & 0x3ff) << 13);
  return std::bit_cast<std::uint32_t>(static_cast<float>(decode16(b)));
}

void check_npy_oracle(const std::string& s, const ReadOptions& o, const Array& a, bool& failed) {
  OracleHeader h;
  if (!oracle_header(s, h)) {
    ADD_FAILURE() << "npy accepted a header the oracle cannot read: " << printable(s);
    failed = true;
    return;
  }
  std::uint64_t count = 1;
  for (auto d : h.shape) count *= d;
  const bool is_float = std::holds_alternative<std::vector<float>>(a);
  const std::size_t n = is_float ? std::get<0>(a).size() : std::get<1>(a).size();
  if (n != count || is_float != (h.size != 8) || s.size() - h.data != count * h.size) {
    ADD_FAILURE() << "npy: " << n << " values, shape product " << count << ": " << printable(s);
    failed = true;
    return;
  }
  // Output position p -> multi-index (in the requested order) -> stored flat index.
  const bool out_f = o.flatten == Flatten::none ? h.fortran : o.flatten == Flatten::f;
  const std::size_t k = h.shape.size();
  for (std::uint64_t p = 0; p < count; ++p) {
    std::vector<std::uint64_t> idx(k);
    std::uint64_t rest = p;
    for (std::size_t step = 0; step < k; ++step) {
      const std::size_t j = out_f ? step : k - 1 - step;
      idx[j] = rest % h.shape[j];
      rest /= h.shape[j];
    }
    std::uint64_t at = 0;
    if (h.fortran)
      for (std::size_t j = k; j-- > 0;) at = at * h.shape[j] + idx[j];
    else
      for (std::size_t j = 0; j < k; ++j) at = at * h.shape[j] + idx[j];
    const std::uint64_t raw = stored_bits(s, h, at);
    const std::uint64_t expected = h.size == 2 ? float32_bits_of16(static_cast<std::uint16_t>(raw)) : raw;
    const std::uint64_t got = is_float ? std::bit_cast<std::uint32_t>(std::get<0>(a)[p]) : std::bit_cast<std::uint64_t>(std::get<1>(a)[p]);
    if (got != expected) {
      ADD_FAILURE() << "npy value " << p << " (flatten " << flatten_name(o.flatten) << "): got " << std::hex << got
                    << ", expected " << expected << std::dec << "\ninput: " << printable(s);
      failed = true;
      return;
    }
  }
}

TEST(Fuzz, Npy) {
  Rng r{std::mt19937_64(seed())};
  std::vector<std::string> corpus;
  for (int i = 0; i < 64; ++i) corpus.push_back(valid_npy(r));
  const std::vector<std::string> tokens = {"(", ")", ",", ", ", "'", "\"", ":", "{", "}", "True", "False", "L",
                                           "'shape'", "'descr'", "'fortran_order'", "<f8", ">f2", "\n", " ",
                                           std::string("\0", 1), "\x93NUMPY", "18446744073709551615",
                                           "2305843009213693953", "99999999999999999999999", "0", "-1"};
  const Stats st = fuzz("npy", 0.45 * budget_seconds(), 45000, [&](Stats& stats, bool& failed) {
    const ReadOptions o = random_options(r);
    std::string input;
    const bool fresh = r.one_in(4);
    if (fresh) {
      input = valid_npy(r);
    } else {
      input = r.pick(corpus);
      const std::size_t n = 1 + r.below(4);
      for (std::size_t i = 0; i < n; ++i)
        input = r.one_in(3) ? mutate_npy_header(input, r) : mutate_once(input, r, corpus, tokens);
      if (input.size() > kMaxInput) input.resize(kMaxInput);
    }
    const auto a = execute(input, "npy", [&] { return parse_npy({input.data(), input.size()}, o, "fuzz"); }, stats, failed);
    if (a) {
      check_npy_oracle(input, o, *a, failed);
      if (corpus.size() < 512 && !fresh) corpus.push_back(input);
    } else if (fresh && o.flatten != Flatten::none && !o.dtype) {
      ADD_FAILURE() << "npy refused a valid file: " << printable(input);
      failed = true;
    }
  });
  EXPECT_GE(st.executions, 45000u);
  EXPECT_GT(st.accepted, 1000u);  // the oracle saw real work
}

// ---- csv ------------------------------------------------------------------------------------

std::string random_number(Rng& r) {
  static const std::vector<std::string> specials = {
      "inf", "-inf", "+Infinity", "NaN", "-nan", "1e400", "-1e-400", "2.4703282292062327e-324",
      "2.4703282292062328e-324", "7.006492321624085e-46", "7.006492321624086e-46", "3.40282357e38",
      "0x1p-1075", "0x1.8p-1075", "0x1p-150", "0x1.fffffffffffff8p1023", "0", "-0", ".5", "5.", "+1", "0e0"};
  char buf[64];
  const double x = std::bit_cast<double>(r.g());
  switch (r.below(6)) {
    case 0: return r.pick(specials);
    case 1: std::snprintf(buf, sizeof buf, "%.17g", x); break;
    case 2: std::snprintf(buf, sizeof buf, "%a", x); break;
    case 3: std::snprintf(buf, sizeof buf, "%.9e", static_cast<double>(std::bit_cast<float>(static_cast<std::uint32_t>(r.g())))); break;
    case 4: std::snprintf(buf, sizeof buf, "%llu", static_cast<unsigned long long>(r.below(100000))); break;
    default: std::snprintf(buf, sizeof buf, "%.*f", static_cast<int>(r.below(8)), static_cast<double>(r.below(1000000)) / 997); break;
  }
  return buf;
}

std::string valid_csv(Rng& r) {
  const std::size_t rows = 1 + r.below(6), cols = r.one_in(2) ? 1 : 1 + r.below(4);
  static const std::vector<std::string> pads = {"", "", " ", "\t", "  "};
  const bool crlf = r.one_in(3);
  std::string out;
  for (std::size_t i = 0; i < rows; ++i) {
    if (r.one_in(5)) out += r.pick(pads) + (crlf ? "\r\n" : "\n");  // a blank line
    for (std::size_t j = 0; j < cols; ++j) out += (j ? "," : "") + r.pick(pads) + random_number(r) + r.pick(pads);
    if (i + 1 < rows || r.one_in(2)) out += crlf ? "\r\n" : "\n";
  }
  return out;
}

// The oracle: lines, '\r', blank lines, commas and trimming done the simple way; numbers by the
// C library under the "C" locale. Returns false if it cannot read a field.
template <class T> bool oracle_csv(const std::string& s, Flatten flatten, std::vector<T>& out) {
  static const locale_t c = newlocale(LC_ALL_MASK, "C", static_cast<locale_t>(nullptr));
  std::vector<std::vector<T>> rows;
  std::size_t start = 0;
  while (start < s.size()) {
    std::size_t end = s.find('\n', start);
    if (end == std::string::npos) end = s.size();
    std::string line = s.substr(start, end - start);
    start = end + 1;
    if (!line.empty() && line.back() == '\r') line.pop_back();
    if (line.find_first_not_of(" \t") == std::string::npos) continue;
    rows.emplace_back();
    std::size_t f = 0;
    for (;;) {
      const std::size_t comma = std::min(line.find(',', f), line.size());
      std::string field = line.substr(f, comma - f);
      field.erase(0, field.find_first_not_of(" \t"));
      field.erase(field.find_last_not_of(" \t") + 1);
      char* e = nullptr;
      T v;
      if constexpr (sizeof(T) == 4) v = strtof_l(field.c_str(), &e, c);
      else v = strtod_l(field.c_str(), &e, c);
      if (field.empty() || e != field.c_str() + field.size()) return false;
      rows.back().push_back(v);
      if (comma == line.size()) break;
      f = comma + 1;
    }
  }
  out.clear();
  if (flatten == Flatten::f && !rows.empty()) {
    for (std::size_t j = 0; j < rows[0].size(); ++j)
      for (const auto& row : rows) out.push_back(row[j]);
  } else {
    for (const auto& row : rows) out.insert(out.end(), row.begin(), row.end());
  }
  return true;
}

TEST(Fuzz, Csv) {
  Rng r{std::mt19937_64(seed() + 1)};
  std::vector<std::string> corpus;
  for (int i = 0; i < 64; ++i) corpus.push_back(valid_csv(r));
  const std::vector<std::string> tokens = {",", ";", "\r", "\n", "\r\n", " ", "\t", ".", "e", "E", "e-", "+", "-",
                                           "0x", "p", "p-", "inf", "nan", "Infinity", "000", "0", "1e400",
                                           "1e-400", "0x1p-1075", ",,", "1 000", std::string("\0", 1), "\xff",
                                           "\v", "1,5", "1,000.5"};
  const Stats st = fuzz("csv", 0.40 * budget_seconds(), 40000, [&](Stats& stats, bool& failed) {
    const ReadOptions o = random_options(r);
    std::string input;
    const bool fresh = r.one_in(4);
    if (fresh) {
      input = valid_csv(r);
    } else {
      input = r.pick(corpus);
      const std::size_t n = 1 + r.below(4);
      for (std::size_t i = 0; i < n; ++i) input = mutate_once(input, r, corpus, tokens);
      if (input.size() > kMaxInput) input.resize(kMaxInput);
    }
    const auto a = execute(input, "csv", [&] { return parse_csv(input, o, "fuzz"); }, stats, failed);
    if (!a) {
      if (fresh && o.flatten != Flatten::none) {
        ADD_FAILURE() << "csv refused a valid file: " << printable(input);
        failed = true;
      }
      return;
    }
    bool agree;
    if (o.dtype == Dtype::float64) {
      std::vector<double> expected;
      agree = oracle_csv(input, o.flatten, expected) && same_bits(std::get<1>(*a), expected);
    } else {
      std::vector<float> expected;
      agree = oracle_csv(input, o.flatten, expected) && same_bits(std::get<0>(*a), expected);
    }
    if (!agree) {
      ADD_FAILURE() << "csv disagrees with the oracle (flatten " << flatten_name(o.flatten) << "): " << printable(input);
      failed = true;
    }
    if (corpus.size() < 512 && !fresh) corpus.push_back(input);
  });
  EXPECT_GE(st.executions, 40000u);
  EXPECT_GT(st.accepted, 1000u);
}

// ---- raw ------------------------------------------------------------------------------------

TEST(Fuzz, Raw) {
  Rng r{std::mt19937_64(seed() + 2)};
  std::vector<std::string> corpus;
  for (int i = 0; i < 16; ++i) {
    std::string s(8 * r.below(32), '\0');
    for (char& c : s) c = static_cast<char>(r.below(256));
    corpus.push_back(s);
  }
  const std::vector<std::string> tokens = {std::string(4, '\0'), std::string(8, '\xff'), "\x7f\x80", "\x00\x00\xc0\x7f"};
  const Stats st = fuzz("raw", 0.15 * budget_seconds(), 15000, [&](Stats& stats, bool& failed) {
    const ReadOptions o = random_options(r);
    std::string input = mutate_once(r.pick(corpus), r, corpus, tokens);
    if (input.size() > kMaxInput) input.resize(kMaxInput);
    const auto a = execute(input, "raw", [&] { return parse_raw({input.data(), input.size()}, o, "fuzz"); }, stats, failed);
    const std::size_t size = o.dtype == Dtype::float64 ? 8 : 4;
    if (!a) {
      if (o.dtype && input.size() % size == 0) {
        ADD_FAILURE() << "raw refused a whole number of elements";
        failed = true;
      }
      return;
    }
    const bool ok = o.dtype && input.size() % size == 0 &&
                    (o.dtype == Dtype::float64 ? std::get<1>(*a).size() * 8 == input.size() &&
                                                     (input.empty() || std::memcmp(std::get<1>(*a).data(), input.data(), input.size()) == 0)
                                               : std::get<0>(*a).size() * 4 == input.size() &&
                                                     (input.empty() || std::memcmp(std::get<0>(*a).data(), input.data(), input.size()) == 0));
    if (!ok) {
      ADD_FAILURE() << "raw misread " << printable(input);
      failed = true;
    }
  });
  EXPECT_GE(st.executions, 15000u);
}

}  // namespace
}  // namespace sumlab
