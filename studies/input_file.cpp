#include "studies/input_file.hpp"

#include <algorithm>
#include <map>
#include <mutex>

#include "core/counter_rng.hpp"

#include <fcntl.h>
#include <fmt/format.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <bit>
#include <cerrno>
#include <charconv>
#include <cstdint>
#include <cstring>
#include <span>

#include "studies/commands.hpp"
#include "studies/csv_format.hpp"
#include "studies/fnv1a.hpp"
#include "studies/input_error.hpp"
#include "studies/memory_check.hpp"
#include "studies/npy_format.hpp"
#include "studies/raw_format.hpp"

namespace sumlab {
namespace {

const char* kind_of(mode_t m) {
  if (S_ISDIR(m)) return "a directory";
  if (S_ISCHR(m)) return "a character device";
  if (S_ISBLK(m)) return "a block device";
  if (S_ISFIFO(m)) return "a FIFO";
  if (S_ISSOCK(m)) return "a socket";
  return "not a regular file";
}

// A regular file opened for reading, with the size it had when opened. Opening does not block
// on a FIFO (O_NONBLOCK), so one is refused instead of waiting for a writer. A file that reports
// size 0 yet holds bytes (those of /proc, some FUSE and network file systems) has no size to
// check before reading: it is read to its end at once, and its size is what that gave.
class InputFile {
 public:
  explicit InputFile(const std::string& path) : path_(path) {
    fd_ = ::open(path.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC);
    if (fd_ < 0) throw UserError("cannot read '" + path + "': " + std::strerror(errno));
    struct stat st {};
    if (::fstat(fd_, &st) != 0) {
      const int e = errno;
      ::close(fd_);
      throw UserError("cannot read '" + path + "': " + std::strerror(e));
    }
    if (!S_ISREG(st.st_mode)) {
      ::close(fd_);
      input_error(path, std::string("is ") + kind_of(st.st_mode) + ", not a regular file");
    }
    size_ = static_cast<std::uint64_t>(st.st_size);
    if (size_ == 0) {
      try {
        read_to_end();
      } catch (...) {
        ::close(fd_);  // the destructor of an object never constructed does not run
        throw;
      }
    }
  }
  InputFile(const InputFile&) = delete;
  InputFile& operator=(const InputFile&) = delete;
  ~InputFile() { ::close(fd_); }

  std::uint64_t size() const { return size_; }
  int fd() const { return fd_; }

  // Bytes [offset, offset + n) of the file, all of them or a UserError.
  std::string read(std::uint64_t offset, std::uint64_t n) const {
    if (by_content_) {
      if (offset > content_.size() || n > content_.size() - offset)
        input_error(path_, "the file shrank while it was being read");
      return content_.substr(static_cast<std::size_t>(offset), static_cast<std::size_t>(n));
    }
    std::string out(static_cast<std::size_t>(n), '\0');
    std::uint64_t done = 0;
    while (done < n) {
      const std::size_t chunk = static_cast<std::size_t>(std::min<std::uint64_t>(n - done, std::uint64_t{1} << 30));
      const ssize_t r = ::pread(fd_, out.data() + done, chunk, static_cast<off_t>(offset + done));
      if (r < 0 && errno == EINTR) continue;
      if (r < 0) input_error(path_, std::string("error while reading: ") + std::strerror(errno));
      if (r == 0) input_error(path_, "the file shrank while it was being read");
      done += static_cast<std::uint64_t>(r);
    }
    return out;
  }
  // True when the file's bytes were read to its end because its size said nothing (see above):
  // there is no file of size() bytes to map.
  bool read_by_content() const { return by_content_; }

 private:
  // Each growth is checked against memory, as a sized file is before it is read: a file that
  // never ends stops with ResourceError, not std::bad_alloc.
  void read_to_end() {
    std::array<char, 1 << 16> buf;
    for (;;) {
      const ssize_t r = ::read(fd_, buf.data(), buf.size());
      if (r < 0 && errno == EINTR) continue;
      if (r < 0) input_error(path_, std::string("error while reading: ") + std::strerror(errno));
      if (r == 0) break;
      // Such files are /proc's and the like, not data: past 1 GiB (/proc/self/pagemap never ends
      // before memory does) the file is refused, long before it could fill the machine.
      if (content_.size() + static_cast<std::size_t>(r) > kUnsizedLimit)
        input_error(path_, fmt::format("reports no size and holds more than {}: copy the data into a regular file",
                                       bytes_text(static_cast<double>(kUnsizedLimit))));
      if (content_.size() + static_cast<std::size_t>(r) > content_.capacity())
        check_fits_in_memory(2 * (content_.size() + static_cast<std::size_t>(r)), 1,
                             fmt::format("'{}' (its size unknown until read: {} so far)", path_,
                                         bytes_text(static_cast<double>(content_.size()))));
      content_.append(buf.data(), static_cast<std::size_t>(r));
    }
    by_content_ = !content_.empty();
    size_ = content_.size();
  }

  static constexpr std::size_t kUnsizedLimit = std::size_t{1} << 30;
  std::string path_;
  int fd_ = -1;
  std::uint64_t size_ = 0;
  bool by_content_ = false;
  std::string content_;
};

std::string format_of(const std::string& path, const std::string& format) {
  if (!format.empty() && format != "auto") {
    if (format != "npy" && format != "csv" && format != "raw")
      throw UserError("unknown input format '" + format + "' (npy, csv or raw)");
    return format;
  }
  const auto slash = path.rfind('/');
  const auto dot = path.rfind('.');
  std::string ext = dot == std::string::npos || (slash != std::string::npos && dot < slash) ? "" : path.substr(dot + 1);
  // An extension in capitals (X.NPY, written on a case-insensitive file system) names the same format.
  std::transform(ext.begin(), ext.end(), ext.begin(), [](char c) { return c >= 'A' && c <= 'Z' ? char(c - 'A' + 'a') : c; });
  if (ext == "npy") return "npy";
  if (ext == "csv" || ext == "txt") return "csv";
  return "raw";
}

std::span<const char> as_span(const std::string& s) { return {s.data(), s.size()}; }

// An .npy file read as raw or text by its extension would sum its header's bytes as values: one
// that starts with the NumPy magic is read as .npy unless --format says otherwise.
void refuse_npy_bytes(const InputFile& f, const std::string& path, const std::string& format) {
  static constexpr std::string_view magic = "\x93NUMPY";
  if (f.size() < magic.size() || f.read(0, magic.size()) != magic) return;
  input_error(path, fmt::format("starts with the NumPy magic \\x93NUMPY but is read as {}; name it .npy, or give "
                                "--format npy (or --format raw for data that happens to start so)",
                                format));
}

// An .npy file's header and the offset of its data.
std::pair<NpyHeader, std::uint64_t> npy_header(const InputFile& f, const std::string& path) {
  const std::string preamble = f.read(0, std::min<std::uint64_t>(f.size(), 12));
  const std::uint64_t offset = npy_data_offset(as_span(preamble), f.size(), path);
  return {parse_npy_header(as_span(f.read(0, offset)), path), offset};
}

Array read_npy(const InputFile& f, const std::string& path, const ReadOptions& opts) {
  const auto [h, offset] = npy_header(f, path);
  const Dtype target = check_npy(h, f.size() - offset, opts, path);
  // The data as read and the values decoded from it are alive together.
  check_fits_in_memory(h.count, element_size(h.element) + (target == Dtype::float32 ? 4 : 8),
                       fmt::format("'{}' ({} elements)", path, h.count));
  return decode_npy(h, as_span(f.read(offset, f.size() - offset)), opts, path);
}

}  // namespace

namespace {
// A registered array: its values and what keeps them alive (shared, not copied out: an InputData
// read from one holds it while the study runs).
struct Registered {
  ArraySpans values;
  std::shared_ptr<const void> owner;
  bool view = false;  // the caller's memory, which could change
  std::string origin;  // InputData::origin
};
std::mutex arrays_mutex;
std::map<std::string, Registered>& arrays() {
  static std::map<std::string, Registered> a;
  return a;
}

Registered registered(const std::string& path) {
  const std::lock_guard<std::mutex> lock(arrays_mutex);
  const auto it = arrays().find(path.substr(4));
  if (it == arrays().end()) throw UserError(fmt::format("no array '{}' in this process", path.substr(4)));
  return it->second;
}

ArraySpans spans_of(const Array& a) {
  if (const auto* f = std::get_if<std::vector<float>>(&a)) return std::span<const float>(*f);
  return std::span<const double>(std::get<std::vector<double>>(a));
}

void hold(const std::string& name, Registered r) {
  {
    const std::lock_guard<std::mutex> lock(arrays_mutex);
    std::swap(arrays()[name], r);
  }
  // r, the entry replaced, goes here, outside the lock: its owner may need the caller's runtime
  // (a Python array's reference is given back under the GIL).
}
}  // namespace

void register_array(const std::string& name, Array values, const std::string& origin) {
  auto held = std::make_shared<const Array>(std::move(values));
  const ArraySpans spans = spans_of(*held);
  hold(name, {spans, std::move(held), false, origin});
}

void register_array_view(const std::string& name, ArraySpans values, std::shared_ptr<const void> owner) {
  hold(name, {values, std::move(owner), true, ""});
}

void unregister_array(const std::string& name) {
  Registered gone;
  {
    const std::lock_guard<std::mutex> lock(arrays_mutex);
    const auto it = arrays().find(name);
    if (it == arrays().end()) return;
    gone = std::move(it->second);
    arrays().erase(it);
  }
  // gone's owner is released here, outside the lock (as hold's replaced entry).
}

template <class T>
std::span<const T> data_sample(std::span<const T> data, std::uint64_t n, std::uint64_t seed, std::vector<T>& storage) {
  if (n > data.size()) throw UserError(fmt::format("a sample of {} from {} values", n, data.size()));
  if (seed <= 1) return data.first(static_cast<std::size_t>(n));
  // Floyd's algorithm: n distinct indices, each draw a pure function of (seed, step).
  const std::uint64_t N = data.size();
  std::vector<bool> chosen(N);
  for (std::uint64_t j = N - n; j < N; ++j) {
    const std::uint64_t t = random_bits(seed, j, 900) % (j + 1);
    chosen[chosen[t] ? j : t] = true;
  }
  storage.clear();
  storage.reserve(n);
  for (std::uint64_t i = 0; i < N; ++i)
    if (chosen[i]) storage.push_back(data[i]);
  return storage;
}
template std::span<const float> data_sample<float>(std::span<const float>, std::uint64_t, std::uint64_t,
                                                   std::vector<float>&);
template std::span<const double> data_sample<double>(std::span<const double>, std::uint64_t, std::uint64_t,
                                                     std::vector<double>&);

namespace {

// A read of a mapped page past the end of a file that shrank raises SIGBUS: said plainly, exit 2.
// Async-signal-safe: write(2) and _exit(2) only.
void on_sigbus(int) {
  static const char msg[] = "sumlab: the input file changed (shrank) while it was being read\n";
  [[maybe_unused]] const auto r = ::write(2, msg, sizeof msg - 1);
  ::_exit(2);
}

}  // namespace

MappedArray::MappedArray(void* base, std::size_t length,
                         std::variant<std::span<const float>, std::span<const double>> values)
    : base_(base), length_(length), values_(values) {
  struct sigaction sa {};
  sa.sa_handler = on_sigbus;
  sigemptyset(&sa.sa_mask);
  ::sigaction(SIGBUS, &sa, nullptr);
}

MappedArray::~MappedArray() {
  if (base_) ::munmap(base_, length_);
  struct sigaction sa {};
  sa.sa_handler = SIG_DFL;
  sigemptyset(&sa.sa_mask);
  ::sigaction(SIGBUS, &sa, nullptr);
}

std::unique_ptr<MappedArray> map_npy(const std::string& path, const ReadOptions& opts) {
  if (path.rfind("mem:", 0) == 0 || format_of(path, opts.format) != "npy") return nullptr;
  const InputFile f(path);
  if (f.read_by_content()) return nullptr;
  const auto [h, offset] = npy_header(f, path);
  const Dtype dtype = check_npy(h, f.size() - offset, opts, path);
  const std::uint64_t size = element_size(h.element);
  std::size_t long_dims = 0;
  for (auto d : h.shape) long_dims += d > 1;
  const bool in_order = long_dims < 2 || (opts.flatten == Flatten::f) == h.fortran_order;
  const bool native = h.big_endian == (std::endian::native == std::endian::big);
  if (h.element == NpyElement::float16 || !native || !in_order || offset % size != 0 || h.count == 0) return nullptr;
  const auto length = static_cast<std::size_t>(f.size());
  void* base = ::mmap(nullptr, length, PROT_READ, MAP_SHARED, f.fd(), 0);
  if (base == MAP_FAILED) return nullptr;  // a file system that cannot map: read it instead
  ::madvise(base, length, MADV_SEQUENTIAL);
  const char* data = static_cast<const char*>(base) + offset;
  const auto n = static_cast<std::size_t>(h.count);
  if (dtype == Dtype::float32)
    return std::make_unique<MappedArray>(base, length, std::span<const float>(reinterpret_cast<const float*>(data), n));
  return std::make_unique<MappedArray>(base, length, std::span<const double>(reinterpret_cast<const double*>(data), n));
}

InputData::InputData(const std::string& path, const ReadOptions& opts) : mapped_(map_npy(path, opts)) {
  if (mapped_) {
    values_ = mapped_->values();
    borrowed_ = true;
    return;
  }
  if (path.rfind("mem:", 0) == 0) {
    Registered r = registered(path);
    values_ = r.values;
    owner_ = std::move(r.owner);
    borrowed_ = r.view;
    origin_ = std::move(r.origin);
    return;
  }
  auto read = std::make_shared<const Array>(read_array(path, opts));
  values_ = spans_of(*read);
  owner_ = std::move(read);
  // (a mapped file is float32 or float64 as stored; one read whole may have been float16)
  if (is_float32() && format_of(path, opts.format) == "npy" &&
      npy_header(InputFile(path), path).first.element == NpyElement::float16)
    origin_ = "float16";
}

namespace {
// The fingerprint: four lanes of 64-bit words, each step h = (h ^ w) * an odd constant, a bijection
// of h and of w, so one changed word always changes its lane, and the lanes' combination, whatever
// the others hold; several changed words go unseen with a chance near 2^-64. The lanes keep four
// multiplies in flight (5.4 GB/s on one core, where FNV-1a's byte loop reads 0.9).
class Fingerprint {
 public:
  // Whole 32-byte blocks, then (once, last) the tail.
  void add(const unsigned char* p, std::size_t bytes) {
    std::size_t i = 0;
    for (; i + 32 <= bytes; i += 32)
      for (int j = 0; j < 4; ++j) step(lane_[j], p + i + 8 * j, 8);
    for (; i < bytes; i += 8) step(lane_[0], p + i, std::min<std::size_t>(8, bytes - i));
  }
  std::uint64_t value() const {
    return lane_[0] ^ std::rotl(lane_[1], 16) ^ std::rotl(lane_[2], 32) ^ std::rotl(lane_[3], 48);
  }

 private:
  static void step(std::uint64_t& h, const unsigned char* p, std::size_t bytes) {
    std::uint64_t w = 0;
    std::memcpy(&w, p, bytes);
    h = (h ^ w) * 0x9e3779b97f4a7c15ull;
  }
  std::uint64_t lane_[4] = {1, 2, 3, 4};
};

// The values' bytes a chunk at a time (a multiple of 32: the fingerprint's blocks), so that a pass
// for both identities reads a file larger than memory once.
template <class F> void for_chunks(const ArraySpans& values, F&& f) {
  std::visit([&](auto v) {
    const auto* p = reinterpret_cast<const unsigned char*>(v.data());
    constexpr std::size_t chunk = std::size_t{1} << 20;
    for (std::size_t i = 0; i < v.size_bytes(); i += chunk) f(p + i, std::min(chunk, v.size_bytes() - i));
  }, values);
}
}  // namespace

std::uint64_t InputData::fingerprint() const {
  if (!borrowed_) return 0;
  Fingerprint f;
  for_chunks(values_, [&](const unsigned char* p, std::size_t bytes) { f.add(p, bytes); });
  return f.value();
}

std::pair<std::string, std::uint64_t> InputData::identity() const {
  Fnv1a64 h;
  Fingerprint f;
  for_chunks(values_, [&](const unsigned char* p, std::size_t bytes) {
    h.add(p, bytes);
    if (borrowed_) f.add(p, bytes);
  });
  return {h.hex(), borrowed_ ? f.value() : 0};
}

void InputData::check_unchanged(std::uint64_t before, const std::string& source) const {
  if (borrowed_ && fingerprint() != before)
    throw UserError(fmt::format("the data ({}) changed while the study read it: the rows written mix two inputs; "
                                "run the study again, with --force, on data nothing changes meanwhile", source));
}

std::vector<std::int64_t> read_offsets(const std::string& path) {
  const InputFile f(path);
  if (format_of(path, "") == "npy") {
    const auto [h, offset] = npy_header(f, path);
    check_fits_in_memory(h.count, element_size(h.element) + 8, fmt::format("'{}' ({} offsets)", path, h.count));
    return decode_npy_integers(h, as_span(f.read(offset, f.size() - offset)), path);
  }
  refuse_npy_bytes(f, path, "text");
  // At most one offset per two bytes ("0\n"), 8 bytes each, beside the text.
  check_fits_in_memory(f.size(), 5, fmt::format("'{}' ({} of text)", path, bytes_text(static_cast<double>(f.size()))));
  const std::string text = f.read(0, f.size());
  std::vector<std::int64_t> out;
  std::size_t line = 1;
  for (std::size_t i = 0; i < text.size();) {
    const char c = text[i];
    if (c == '\n') ++line;
    if (c == ',' || c == ' ' || c == '\t' || c == '\n' || c == '\r') {
      ++i;
      continue;
    }
    std::size_t end = i;
    while (end < text.size() && !std::strchr(", \t\n\r", text[end])) ++end;
    std::int64_t v = 0;
    const auto [ptr, ec] = std::from_chars(text.data() + i, text.data() + end, v);
    if (ec != std::errc() || ptr != text.data() + end)
      input_error(path, fmt::format("line {}: {} is not an integer offset (offsets are integers separated by commas, "
                                    "spaces or newlines: np.savetxt(f, offsets, fmt='%d'))",
                                    line, excerpt(std::string_view(text).substr(i, end - i))));
    out.push_back(v);
    i = end;
  }
  return out;
}

Array read_array(const std::string& path, const ReadOptions& opts) {
  if (path.rfind("mem:", 0) == 0) {
    const Registered r = registered(path);
    return std::visit([](auto v) { return Array(std::vector(v.begin(), v.end())); }, r.values);
  }
  const std::string format = format_of(path, opts.format);
  const InputFile f(path);
  if (format == "npy") return read_npy(f, path, opts);
  if (opts.format.empty()) refuse_npy_bytes(f, path, format);  // --format given: the caller knows
  if (format == "raw") {
    check_raw(f.size(), opts, path);
    check_fits_in_memory(f.size(), 2, fmt::format("'{}' ({})", path, bytes_text(static_cast<double>(f.size()))));
    return parse_raw(as_span(f.read(0, f.size())), opts, path);
  }
  // Text: the bytes and, at most, one value per two bytes ("1\n") of 4 or 8 bytes each.
  const std::uint64_t value_bytes = opts.dtype.value_or(Dtype::float32) == Dtype::float32 ? 4 : 8;
  check_fits_in_memory(f.size(), 1 + value_bytes / 2,
                       fmt::format("'{}' ({} of text)", path, bytes_text(static_cast<double>(f.size()))));
  return parse_csv(f.read(0, f.size()), opts, path);
}

}  // namespace sumlab
