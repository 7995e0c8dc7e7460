#include "studies/npy_format.hpp"

#include <fmt/format.h>

#include <bit>
#include <cstring>
#include <type_traits>

#include "studies/byte_order.hpp"
#include "studies/checked_math.hpp"
#include "studies/float16.hpp"
#include "studies/input_error.hpp"

namespace sumlab {

std::uint64_t element_size(NpyElement e) {
  return e == NpyElement::float16 ? 2 : e == NpyElement::float32 || e == NpyElement::int32 ? 4 : 8;
}

std::string shape_text(const std::vector<std::uint64_t>& shape) {
  std::string s = "(";
  for (std::size_t i = 0; i < shape.size(); ++i) {
    if (i) s += ", ";
    s += std::to_string(shape[i]);
  }
  return s + (shape.size() == 1 ? ",)" : ")");
}

namespace {

constexpr std::string_view kMagic = "\x93NUMPY";
// numpy itself refuses headers over 10000 bytes unless told otherwise; 64 KiB is far more than
// 64 dimensions of 20 digits need, and bounds what a hostile length field can make us read.
constexpr std::uint64_t kMaxHeaderLength = 65536;
constexpr std::size_t kMaxDimensions = 64;  // numpy 2's limit

const char* element_name(NpyElement e) {
  switch (e) {
    case NpyElement::float16: return "float16";
    case NpyElement::float32: return "float32";
    case NpyElement::float64: return "float64";
    case NpyElement::int32: return "int32";
    case NpyElement::int64: return "int64";
  }
  return "?";
}

bool is_integer(NpyElement e) { return e == NpyElement::int32 || e == NpyElement::int64; }

// The data size the header promises, which must be the file's.
void check_data_size(const NpyHeader& h, std::uint64_t data_bytes, std::string_view name) {
  const auto needed = checked_mul(h.count, element_size(h.element));
  if (!needed || *needed != data_bytes)
    input_error(name, fmt::format("shape {} of {} needs {} data bytes, the file has {}", shape_text(h.shape),
                                  element_name(h.element), needed ? std::to_string(*needed) : "more than 2^64",
                                  data_bytes));
}

// Dimensions longer than 1: with two or more, the order of the elements is a choice.
std::size_t long_dimensions(const std::vector<std::uint64_t>& shape) {
  std::size_t n = 0;
  for (auto d : shape) n += d > 1;
  return n;
}

// "3x4x5": the shape as the messages about order show it.
std::string dims_text(const std::vector<std::uint64_t>& shape) {
  std::string s;
  for (std::size_t i = 0; i < shape.size(); ++i) {
    if (i) s += 'x';
    s += std::to_string(shape[i]);
  }
  return s;
}

// The header dict, a Python literal: {'descr': '<f4', 'fortran_order': False, 'shape': (3,), }
// Strict recursive descent over exactly what numpy writes and ast.literal_eval would give the
// same meaning: strings in single or double quotes (no escapes), True/False, tuples of
// non-negative integers (a one-element tuple needs its comma; an 'L' suffix is allowed in
// versions 1 and 2, as numpy strips it there), whitespace between tokens.
class HeaderParser {
 public:
  HeaderParser(std::string_view text, int major, std::string_view name)
      : t_(text), major_(major), name_(name) {}

  NpyHeader parse() {
    NpyHeader h;
    bool have_descr = false, have_fortran = false, have_shape = false;
    skip_space();
    expect('{', "the header does not start with '{'");
    for (;;) {
      skip_space();
      if (peek() == '}') break;
      const std::string key = string_literal("a key");
      skip_space();
      expect(':', "expected ':' after " + excerpt(key));
      skip_space();
      if (key == "descr") {
        if (have_descr) fail("'descr' given twice");
        have_descr = true;
        if (peek() != '\'' && peek() != '"')
          fail("'descr' is not a string (structured and object arrays are not supported)");
        descr(h, string_literal("'descr'"));
      } else if (key == "fortran_order") {
        if (have_fortran) fail("'fortran_order' given twice");
        have_fortran = true;
        h.fortran_order = boolean();
      } else if (key == "shape") {
        if (have_shape) fail("'shape' given twice");
        have_shape = true;
        h.shape = tuple();
      } else {
        fail("unexpected key " + excerpt(key) + " (only 'descr', 'fortran_order' and 'shape')");
      }
      skip_space();
      if (peek() == ',') {
        ++i_;
        continue;
      }
      if (peek() != '}') fail("expected ',' or '}' after the value of " + excerpt(key));
    }
    ++i_;  // '}'
    skip_space();
    if (i_ != t_.size()) fail("unexpected " + excerpt(t_.substr(i_), 16) + " after the header dict");
    if (!have_descr || !have_fortran || !have_shape)
      fail(std::string("missing ") + (!have_descr ? "'descr'" : !have_fortran ? "'fortran_order'" : "'shape'"));
    // The element count: 0 when any dimension is 0 (however large the others), else the
    // product, which must fit in 64 bits.
    h.count = 1;
    bool zero = false;
    for (auto d : h.shape) zero = zero || d == 0;
    if (zero) {
      h.count = 0;
    } else {
      for (auto d : h.shape) {
        const auto c = checked_mul(h.count, d);
        if (!c) fail("shape " + shape_text(h.shape) + " has more than 2^64 elements");
        h.count = *c;
      }
    }
    return h;
  }

 private:
  [[noreturn]] void fail(const std::string& what) const {
    input_error(name_, "malformed .npy header: " + what);
  }
  char peek() const { return i_ < t_.size() ? t_[i_] : '\0'; }
  void skip_space() {
    while (i_ < t_.size() && (t_[i_] == ' ' || t_[i_] == '\t' || t_[i_] == '\n' || t_[i_] == '\r')) ++i_;
  }
  void expect(char c, const std::string& why) {
    if (peek() != c) fail(why);
    ++i_;
  }
  std::string string_literal(const std::string& what) {
    const char q = peek();
    if (q != '\'' && q != '"') fail("expected a quoted string for " + what);
    const auto end = t_.find(q, i_ + 1);
    if (end == std::string_view::npos) fail("unterminated string");
    const std::string_view s = t_.substr(i_ + 1, end - i_ - 1);
    if (s.find('\\') != std::string_view::npos || s.find('\n') != std::string_view::npos)
      fail("unexpected escape or newline in string " + excerpt(s));
    i_ = end + 1;
    return std::string(s);
  }
  bool boolean() {
    if (t_.substr(i_, 4) == "True") {
      i_ += 4;
      return true;
    }
    if (t_.substr(i_, 5) == "False") {
      i_ += 5;
      return false;
    }
    fail("'fortran_order' is not True or False");
  }
  // One dimension: decimal digits, no sign, no leading zeros (Python 3 refuses "03"), at most
  // 2^64 - 1 (checked digit by digit).
  std::uint64_t dimension() {
    const std::size_t start = i_;
    while (i_ < t_.size() && t_[i_] >= '0' && t_[i_] <= '9') ++i_;
    const std::string_view digits = t_.substr(start, i_ - start);
    if (digits.empty()) fail("a shape dimension is not a non-negative integer: " + excerpt(t_.substr(start), 16));
    if (digits.size() > 1 && digits[0] == '0') fail("shape dimension " + excerpt(digits) + " has leading zeros");
    std::uint64_t v = 0;
    for (char c : digits) {
      const auto m = checked_mul(v, 10);
      const auto a = m ? checked_add(*m, static_cast<std::uint64_t>(c - '0')) : std::nullopt;
      if (!a) fail("shape dimension " + excerpt(digits) + " does not fit in 64 bits");
      v = *a;
    }
    if (major_ <= 2 && (peek() == 'L' || peek() == 'l')) ++i_;
    return v;
  }
  std::vector<std::uint64_t> tuple() {
    expect('(', "'shape' is not a tuple");
    std::vector<std::uint64_t> dims;
    bool trailing_comma = false;
    for (;;) {
      skip_space();
      if (peek() == ')') break;
      if (dims.size() == kMaxDimensions) fail("more than 64 dimensions");
      dims.push_back(dimension());
      skip_space();
      trailing_comma = peek() == ',';
      if (trailing_comma) {
        ++i_;
        continue;
      }
      if (peek() != ')') fail("expected ',' or ')' in 'shape'");
    }
    ++i_;
    if (dims.size() == 1 && !trailing_comma) fail("'shape' (" + std::to_string(dims[0]) + ") is not a tuple (a one-element tuple needs its comma)");
    return dims;
  }
  void descr(NpyHeader& h, const std::string& d) {
    const bool ok = d.size() == 3 && (d[0] == '<' || d[0] == '>') &&
                    ((d[1] == 'f' && (d[2] == '2' || d[2] == '4' || d[2] == '8')) ||
                     (d[1] == 'i' && (d[2] == '4' || d[2] == '8')));
    // NumPy saves ml_dtypes' bfloat16 as '<V2', which names any 2-byte record: never read as bfloat16.
    if (!ok)
      input_error(name_, "unsupported .npy dtype " + excerpt(d) +
                             " (float16, float32 or float64 of either byte order: '<f2', '<f4', '<f8', '>f4', ...)" +
                             (d == "<V2" || d == "|V2" ? "; a bfloat16 array is saved so: save it as float32 (exact), "
                                                          "which `study variance --dtypes bfloat16` studies as bfloat16"
                                                        : ""));
    h.big_endian = d[0] == '>';
    if (d[1] == 'i') h.element = d[2] == '4' ? NpyElement::int32 : NpyElement::int64;
    else h.element = d[2] == '2' ? NpyElement::float16 : d[2] == '4' ? NpyElement::float32 : NpyElement::float64;
  }

  std::string_view t_;
  int major_;
  std::string_view name_;
  std::size_t i_ = 0;
};

// Calls emit(i) with each stored element index i in the order `out_fortran` asks for, on an
// array stored in `stored_fortran` order. Dimensions of length 1 do not change any order, so
// only the others are walked: an odometer over them, fastest first, keeping the stored offset
// up to date by strides (O(1) amortized per element).
template <class Emit>
void for_each_in_order(const std::vector<std::uint64_t>& shape, bool stored_fortran, bool out_fortran, Emit emit) {
  std::vector<std::uint64_t> dims;
  for (auto d : shape)
    if (d != 1) dims.push_back(d);
  std::uint64_t count = 1;
  for (auto d : dims) count *= d;  // cannot wrap: the header's count was checked
  if (dims.size() < 2 || stored_fortran == out_fortran) {
    for (std::uint64_t i = 0; i < count; ++i) emit(i);
    return;
  }
  const std::size_t k = dims.size();
  std::vector<std::uint64_t> stride(k), index(k, 0);
  if (stored_fortran) {  // first index fastest in memory
    stride[0] = 1;
    for (std::size_t j = 1; j < k; ++j) stride[j] = stride[j - 1] * dims[j - 1];
  } else {  // last index fastest in memory
    stride[k - 1] = 1;
    for (std::size_t j = k - 1; j-- > 0;) stride[j] = stride[j + 1] * dims[j + 1];
  }
  std::uint64_t at = 0;
  for (std::uint64_t n = 0; n < count; ++n) {
    emit(at);
    // Advance the output's fastest index: the first for F, the last for C.
    for (std::size_t step = 0; step < k; ++step) {
      const std::size_t j = out_fortran ? step : k - 1 - step;
      at += stride[j];
      if (++index[j] < dims[j]) break;
      at -= stride[j] * dims[j];
      index[j] = 0;
    }
  }
}

template <class T> std::vector<T> decode_as(const NpyHeader& h, std::span<const char> data, Flatten flatten) {
  const std::uint64_t size = element_size(h.element);
  const bool out_fortran = flatten == Flatten::none ? h.fortran_order : flatten == Flatten::f;
  std::vector<T> out;
  if ((long_dimensions(h.shape) < 2 || out_fortran == h.fortran_order) && size == sizeof(T) &&
      h.big_endian == (std::endian::native == std::endian::big)) {
    out.resize(static_cast<std::size_t>(h.count));  // the stored bytes are the values, in order
    if (!out.empty()) std::memcpy(out.data(), data.data(), data.size());
    return out;
  }
  out.reserve(static_cast<std::size_t>(h.count));  // == data.size() / size, checked by check_npy
  for_each_in_order(h.shape, h.fortran_order, out_fortran, [&](std::uint64_t i) {
    const char* p = data.data() + i * size;
    if constexpr (std::is_same_v<T, float>) {
      if (h.element == NpyElement::float16) out.push_back(float16_to_float32(load_element<std::uint16_t>(p, h.big_endian)));
      else out.push_back(load_element<float>(p, h.big_endian));
    } else {
      out.push_back(load_element<double>(p, h.big_endian));
    }
  });
  return out;
}

}  // namespace

std::uint64_t npy_data_offset(std::span<const char> preamble, std::uint64_t file_size, std::string_view name) {
  const std::string_view b(preamble.data(), preamble.size());
  if (b.size() < kMagic.size() || b.substr(0, kMagic.size()) != kMagic)
    input_error(name, "not an .npy file (bad magic; expected \\x93NUMPY)");
  if (b.size() < 10) input_error(name, "truncated .npy header (" + std::to_string(file_size) + " bytes)");
  const auto major = static_cast<unsigned char>(b[6]), minor = static_cast<unsigned char>(b[7]);
  if ((major != 1 && major != 2 && major != 3) || minor != 0)
    input_error(name, fmt::format("unsupported .npy version {}.{} (1.0, 2.0 or 3.0)", major, minor));
  const std::uint64_t preamble_size = major == 1 ? 10 : 12;
  if (b.size() < preamble_size) input_error(name, "truncated .npy header (" + std::to_string(file_size) + " bytes)");
  std::uint64_t length = 0;
  for (std::uint64_t i = preamble_size; i-- > 8;) length = (length << 8) | static_cast<unsigned char>(b[i]);
  if (length > kMaxHeaderLength)
    input_error(name, fmt::format(".npy header length {} is over the {} bytes any float array needs", length, kMaxHeaderLength));
  if (preamble_size + length > file_size)
    input_error(name, fmt::format("truncated .npy header: it says {} bytes, the file has {} after the preamble",
                                  length, file_size - preamble_size));
  return preamble_size + length;
}

NpyHeader parse_npy_header(std::span<const char> header, std::string_view name) {
  const std::uint64_t offset = npy_data_offset(header, header.size(), name);
  const std::size_t start = static_cast<unsigned char>(header[6]) == 1 ? 10 : 12;
  NpyHeader h = HeaderParser(std::string_view(header.data() + start, offset - start),
                             static_cast<unsigned char>(header[6]), name).parse();
  h.data_offset = offset;
  return h;
}

Dtype check_npy(const NpyHeader& h, std::uint64_t data_bytes, const ReadOptions& opts, std::string_view name) {
  if (is_integer(h.element))
    input_error(name, fmt::format("holds {} values: sumlab sums float16, float32 and float64 arrays (an integer "
                                  "array is read only as a segmented study's --offsets-file)",
                                  element_name(h.element)));
  check_data_size(h, data_bytes, name);
  const Dtype stored = h.element == NpyElement::float64 ? Dtype::float64 : Dtype::float32;
  if (opts.dtype && *opts.dtype != stored)
    input_error(name, fmt::format("holds {}{} but --dtype {} was given", element_name(h.element),
                                  h.element == NpyElement::float16 ? " (read as float32)" : "", to_string(*opts.dtype)));
  if (long_dimensions(h.shape) >= 2 && opts.flatten == Flatten::none)
    input_error(name, fmt::format("holds a {} array ({} order); give --flatten C (row-major, last index fastest) or "
                                  "--flatten F (column-major, first index fastest) to sum it as one sequence",
                                  dims_text(h.shape), h.fortran_order ? "Fortran" : "C"));
  return stored;
}

Array decode_npy(const NpyHeader& h, std::span<const char> data, const ReadOptions& opts, std::string_view name) {
  if (check_npy(h, data.size(), opts, name) == Dtype::float32) return decode_as<float>(h, data, opts.flatten);
  return decode_as<double>(h, data, opts.flatten);
}

std::vector<std::int64_t> decode_npy_integers(const NpyHeader& h, std::span<const char> data, std::string_view name) {
  if (!is_integer(h.element))
    input_error(name, fmt::format("holds {} values, not the int32 or int64 offsets of a segmented layout",
                                  element_name(h.element)));
  check_data_size(h, data.size(), name);
  if (long_dimensions(h.shape) >= 2)
    input_error(name, fmt::format("holds a {} array: offsets are one dimension", dims_text(h.shape)));
  std::vector<std::int64_t> out;
  out.reserve(static_cast<std::size_t>(h.count));
  const std::uint64_t size = element_size(h.element);
  for (std::uint64_t i = 0; i < h.count; ++i) {
    const char* p = data.data() + i * size;
    out.push_back(h.element == NpyElement::int32 ? load_element<std::int32_t>(p, h.big_endian)
                                                 : load_element<std::int64_t>(p, h.big_endian));
  }
  return out;
}

Array parse_npy(std::span<const char> bytes, const ReadOptions& opts, std::string_view name) {
  const std::uint64_t offset = npy_data_offset(bytes.first(std::min<std::size_t>(bytes.size(), 12)), bytes.size(), name);
  const NpyHeader h = parse_npy_header(bytes.first(static_cast<std::size_t>(offset)), name);
  return decode_npy(h, bytes.subspan(static_cast<std::size_t>(offset)), opts, name);
}

}  // namespace sumlab
