#pragma once
// Reading an array to sum from a file: NumPy .npy (studies/npy_format.hpp), text/CSV
// (studies/csv_format.hpp) or raw little-endian binary (studies/raw_format.hpp). This layer only
// checks the file and reads it; the formats are parsed from bytes by those three.
//
// The file must be a regular file (a directory, a device such as /dev/zero or a FIFO is refused
// before anything is read; one that reports size 0 but has bytes, as /proc's do, is read to its
// end), and every size is checked before it is allocated: an .npy header is
// read first and its count * element size must equal the rest of the file exactly; then the
// memory the values need is checked (ResourceError, exit 3, when the machine lacks it). The bytes
// are read whole, except where map_npy can sum them where they lie (InputData picks).
// Every failure throws UserError (exit 2) with a one-line message naming the file.
#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <utility>
#include <variant>
#include <vector>

#include "studies/input_array.hpp"

namespace sumlab {

// The format is opts.format, or from the extension in any case: .npy, .csv/.txt, anything else raw.
// A file that starts with the NumPy magic is read as .npy or refused: as raw or text its header's
// bytes would be summed as values.
// "mem:NAME" reads an array registered in this process (the Python package's arrays).
Array read_array(const std::string& path, const ReadOptions& opts);

// A segmented layout's offsets from a file: a 1-D int32 or int64 .npy, or text (integers separated
// by commas, spaces or newlines; anything else refused by its line). Not validated as a layout.
std::vector<std::int64_t> read_offsets(const std::string& path);

// A .npy file whose stored bytes already are the values, in the order they are summed: float32 or
// float64 in this machine's byte order, at an offset aligned for the type, with one dimension
// longer than 1 (or --flatten equal to the stored order). It is mapped read-only instead of read:
// nothing is copied or allocated for the values, so a file larger than this machine's memory is
// summed as its pages stream in (read ahead: MADV_SEQUENTIAL), by every algorithm that reads its
// input in place. The header is checked exactly as read_array checks it. The file must not shrink
// while it is mapped: a read past its new end stops the process with "changed while it was being
// read" (exit 2), never a crash.
class MappedArray {
 public:
  MappedArray(void* base, std::size_t length, std::variant<std::span<const float>, std::span<const double>> values);
  ~MappedArray();
  MappedArray(const MappedArray&) = delete;
  MappedArray& operator=(const MappedArray&) = delete;
  const std::variant<std::span<const float>, std::span<const double>>& values() const { return values_; }

 private:
  void* base_;
  std::size_t length_;
  std::variant<std::span<const float>, std::span<const double>> values_;
};
// nullptr when the input is not such a file (another format, float16, the other byte order, a
// reorder to make, a misaligned offset, "mem:" arrays): read_array reads it then. Throws UserError
// for a file read_array would refuse.
std::unique_ptr<MappedArray> map_npy(const std::string& path, const ReadOptions& opts);

using ArraySpans = std::variant<std::span<const float>, std::span<const double>>;

// An input file's values where they are read from: mapped (map_npy) when the file allows, else
// read whole (read_array); a "mem:" array where it is registered. `sum` and the studies hold their
// --input this way, so a mappable file or a registered array is never copied whole.
class InputData {
 public:
  // Throws as read_array.
  InputData(const std::string& path, const ReadOptions& opts);
  bool mapped() const { return mapped_ != nullptr; }
  // Values read where someone else holds them (a mapped file, an array registered as a view) could
  // change while a study reads them, and its rows would then mix two inputs. fingerprint(): a word
  // hash of such values' bytes (0 for values held here, which nothing else can change), several
  // times faster than FNV-1a; check_unchanged throws UserError, naming `source`, when the
  // fingerprint is no longer `before`.
  std::uint64_t fingerprint() const;
  void check_unchanged(std::uint64_t before, const std::string& source) const;
  // FNV-1a of the values' bytes (studies/fnv1a.hpp: the data's identity in a run's plan) and the
  // fingerprint, in one pass over the bytes (a mapped file read once).
  std::pair<std::string, std::uint64_t> identity() const;
  bool is_float32() const { return std::holds_alternative<std::span<const float>>(values_); }
  // The narrower type float32 values were widened from (exactly): "float16" for a float16 .npy file
  // or array, "bfloat16" for a bfloat16 array from Python; "" for values held as stored.
  const std::string& origin() const { return origin_; }
  std::size_t size() const {
    return std::visit([](auto v) { return v.size(); }, values_);
  }
  // The values as T, which must be their dtype (std::bad_variant_access otherwise).
  template <class T> std::span<const T> values() const { return std::get<std::span<const T>>(values_); }
  const ArraySpans& spans() const { return values_; }

 private:
  std::unique_ptr<MappedArray> mapped_;
  std::shared_ptr<const void> owner_;  // what holds the values when not mapped: read whole, or registered
  bool borrowed_ = false;              // mapped, or a registered view
  ArraySpans values_;
  std::string origin_;
};

// Arrays a process holds in memory under a name, for "mem:NAME" inputs. An InputData reads one in
// place and keeps it alive after unregister_array; read_array copies it. `origin`: InputData::origin
// of float32 values widened from float16 or bfloat16.
void register_array(const std::string& name, Array values, const std::string& origin = "");
// The caller's values where they lie, kept alive by `owner` until unregistered and no InputData
// reads them (the Python package's arrays: no copy of the user's data). They must not change
// meanwhile; a study on them checks that they did not (InputData::check_unchanged).
void register_array_view(const std::string& name, ArraySpans values, std::shared_ptr<const void> owner);
void unregister_array(const std::string& name);

// A study's input of n elements drawn from the user's data: seed 1 is the first n elements (the
// prefix, a view of `data`: nothing is copied), seed s >= 2 a uniformly random subset of n
// elements (a pure function of the seed) kept in the data's order, held in `storage`.
// n <= data.size().
template <class T>
std::span<const T> data_sample(std::span<const T> data, std::uint64_t n, std::uint64_t seed, std::vector<T>& storage);

}  // namespace sumlab
