#include "studies/input_file.hpp"

#include <algorithm>
#include <bit>
#include <cerrno>
#include <charconv>
#include <cstdint>
#include <cstring>
#include <fstream>
#include <iterator>
#include <sstream>

#include "studies/commands.hpp"

namespace sumlab {

Dtype parse_dtype(const std::string& name) {
  if (name == "float32" || name == "f4" || name == "float") return Dtype::float32;
  if (name == "float64" || name == "f8" || name == "double") return Dtype::float64;
  throw UserError("unsupported dtype '" + name + "' (use float32 or float64)");
}

const char* to_string(Dtype d) { return d == Dtype::float32 ? "float32" : "float64"; }

namespace {

std::string read_all(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw UserError("cannot read '" + path + "': " + std::strerror(errno));
  std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  if (in.bad()) throw UserError("error while reading '" + path + "'");
  return bytes;
}

template <class T> std::vector<T> decode(const std::string& path, const char* data,
                                         std::size_t bytes, bool big_endian) {
  if (bytes % sizeof(T) != 0)
    throw UserError("'" + path + "': " + std::to_string(bytes) + " bytes is not a whole number of " +
                    std::to_string(sizeof(T)) + "-byte elements");
  std::vector<T> out(bytes / sizeof(T));
  std::memcpy(out.data(), data, bytes);
  if (big_endian) {
    for (T& v : out) {
      auto* p = reinterpret_cast<unsigned char*>(&v);
      std::reverse(p, p + sizeof(T));
    }
  }
  return out;
}

// Extracts the value of 'key' from an .npy header dict such as
// {'descr': '<f4', 'fortran_order': False, 'shape': (10,), }
std::string npy_field(const std::string& header, const std::string& key, const std::string& path) {
  const auto k = header.find("'" + key + "'");
  if (k == std::string::npos) throw UserError("'" + path + "': malformed .npy header (no " + key + ")");
  auto v = header.find(':', k);
  if (v == std::string::npos) throw UserError("'" + path + "': malformed .npy header");
  ++v;
  while (v < header.size() && header[v] == ' ') ++v;
  if (v >= header.size()) throw UserError("'" + path + "': malformed .npy header");
  std::size_t end;
  if (header[v] == '\'') {
    end = header.find('\'', v + 1);
    if (end == std::string::npos) throw UserError("'" + path + "': malformed .npy header");
    return header.substr(v + 1, end - v - 1);
  }
  if (header[v] == '(') {
    end = header.find(')', v);
    if (end == std::string::npos) throw UserError("'" + path + "': malformed .npy header");
    return header.substr(v, end - v + 1);
  }
  end = header.find_first_of(",}", v);
  return header.substr(v, end == std::string::npos ? std::string::npos : end - v);
}

Array read_npy(const std::string& path, const std::string& dtype) {
  const std::string bytes = read_all(path);
  if (bytes.size() < 10 || bytes.compare(0, 6, "\x93NUMPY") != 0)
    throw UserError("'" + path + "': not an .npy file (bad magic)");
  const int major = static_cast<unsigned char>(bytes[6]);
  std::size_t header_len, offset;
  if (major == 1) {
    header_len = static_cast<unsigned char>(bytes[8]) | (static_cast<std::size_t>(static_cast<unsigned char>(bytes[9])) << 8);
    offset = 10;
  } else if (major == 2 || major == 3) {
    if (bytes.size() < 12) throw UserError("'" + path + "': truncated .npy header");
    header_len = 0;
    for (int i = 3; i >= 0; --i) header_len = (header_len << 8) | static_cast<unsigned char>(bytes[8 + i]);
    offset = 12;
  } else {
    throw UserError("'" + path + "': unsupported .npy version " + std::to_string(major));
  }
  if (offset + header_len > bytes.size()) throw UserError("'" + path + "': truncated .npy header");
  const std::string header = bytes.substr(offset, header_len);
  const std::string descr = npy_field(header, "descr", path);
  const std::string fortran = npy_field(header, "fortran_order", path);
  const std::string shape = npy_field(header, "shape", path);
  if (descr.size() != 3 || (descr[0] != '<' && descr[0] != '>' && descr[0] != '|' && descr[0] != '=') ||
      descr[1] != 'f' || (descr[2] != '4' && descr[2] != '8'))
    throw UserError("'" + path + "': unsupported .npy dtype '" + descr + "' (float32 or float64 only)");
  if (fortran.rfind("False", 0) != 0 && fortran.rfind("True", 0) != 0)
    throw UserError("'" + path + "': malformed .npy header (fortran_order)");
  // Element count from the shape tuple: the product of its integers ('()' is one scalar).
  std::size_t count = 1;
  {
    std::string digits;
    for (char c : shape) {
      if (c >= '0' && c <= '9') {
        digits += c;
      } else if (!digits.empty()) {
        count *= std::stoull(digits);
        digits.clear();
      } else if (c != '(' && c != ')' && c != ',' && c != ' ' && c != 'L') {
        throw UserError("'" + path + "': malformed .npy shape " + shape);
      }
    }
    if (!digits.empty()) count *= std::stoull(digits);
  }
  const bool big = descr[0] == '>';
  const std::size_t elem = descr[2] == '4' ? 4 : 8;
  const std::size_t data = offset + header_len;
  if (bytes.size() - data != count * elem)
    throw UserError("'" + path + "': shape " + shape + " needs " + std::to_string(count * elem) +
                    " data bytes, file has " + std::to_string(bytes.size() - data));
  if (!dtype.empty() && parse_dtype(dtype) != (elem == 4 ? Dtype::float32 : Dtype::float64))
    throw UserError("'" + path + "' holds " + (elem == 4 ? "float32" : "float64") +
                    " but --dtype " + dtype + " was given");
  if (elem == 4) return decode<float>(path, bytes.data() + data, count * 4, big);
  return decode<double>(path, bytes.data() + data, count * 8, big);
}

template <class T> std::vector<T> parse_text(const std::string& path) {
  const std::string text = read_all(path);
  std::vector<T> out;
  std::size_t i = 0, line = 1;
  while (i < text.size()) {
    const char c = text[i];
    if (c == '\n') { ++line; ++i; continue; }
    if (c == ',' || c == ' ' || c == '\t' || c == '\r' || c == ';') { ++i; continue; }
    std::size_t j = i;
    while (j < text.size() && text[j] != ',' && text[j] != ' ' && text[j] != '\t' &&
           text[j] != '\r' && text[j] != '\n' && text[j] != ';')
      ++j;
    const std::string token = text.substr(i, j - i);
    // strtod/strtof parse inf, nan and hex floats and round correctly to the target type.
    char* end = nullptr;
    errno = 0;
    T v;
    if constexpr (sizeof(T) == 4) v = std::strtof(token.c_str(), &end);
    else v = std::strtod(token.c_str(), &end);
    if (end != token.c_str() + token.size())
      throw UserError("'" + path + "' line " + std::to_string(line) + ": '" + token + "' is not a number");
    out.push_back(v);  // ERANGE overflow/underflow still gives the correctly rounded +-Inf/0/subnormal
    i = j;
  }
  return out;
}

}  // namespace

Array read_array(const std::string& path, const std::string& format, const std::string& dtype) {
  std::string fmt = format;
  if (fmt.empty() || fmt == "auto") {
    const auto dot = path.rfind('.');
    const std::string ext = dot == std::string::npos ? "" : path.substr(dot + 1);
    if (ext == "npy") fmt = "npy";
    else if (ext == "csv" || ext == "txt") fmt = "csv";
    else fmt = "raw";
  }
  if (fmt == "npy") return read_npy(path, dtype);
  if (fmt != "csv" && fmt != "raw")
    throw UserError("unknown input format '" + fmt + "' (npy, csv or raw)");
  if (dtype.empty()) {
    if (fmt == "raw") throw UserError("raw binary input '" + path + "' needs --dtype float32|float64");
  }
  const Dtype d = dtype.empty() ? Dtype::float32 : parse_dtype(dtype);
  if (fmt == "csv") {
    if (d == Dtype::float32) return parse_text<float>(path);
    return parse_text<double>(path);
  }
  const std::string bytes = read_all(path);
  if (d == Dtype::float32) return decode<float>(path, bytes.data(), bytes.size(), false);
  return decode<double>(path, bytes.data(), bytes.size(), false);
}

}  // namespace sumlab
