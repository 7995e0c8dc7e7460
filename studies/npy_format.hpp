#pragma once
// NumPy .npy files (format versions 1.0, 2.0 and 3.0), parsed strictly from bytes.
//
// Layout: the magic "\x93NUMPY", major and minor version, the header length (2 bytes little-endian
// in 1.0, 4 bytes in 2.0 and 3.0), a Python dict literal with exactly the keys 'descr',
// 'fortran_order' and 'shape', then count * element-size bytes of data, nothing more or less.
// Element types: float16 ('<f2', '>f2', widened exactly to float32), float32 ('<f4', '>f4') and
// float64 ('<f8', '>f8'); int32 and int64 ('<i4', '<i8', ...) only as a segmented layout's offsets
// (decode_npy_integers; check_npy refuses them as values). Every size is overflow-checked: a
// dimension, the product of the dimensions, and count * element size, which must equal the data's
// size exactly.
//
// Order: a 1-D array, a scalar '()' or a shape with at most one dimension longer than 1 is read
// as stored. An array with two or more such dimensions is refused unless ReadOptions::flatten
// names an order (C: last index fastest, F: first index fastest); its elements then come in
// that order whatever the file's own fortran_order, transposed where the two differ.
//
// The steps are separate so that a file reader can check the header against the file's size
// before reading the data: npy_data_offset (first 12 bytes) -> parse_npy_header -> check_npy
// -> decode_npy. parse_npy runs them all on bytes in memory. Every failure throws UserError
// naming `name`.
#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "studies/input_array.hpp"

namespace sumlab {

enum class NpyElement { float16, float32, float64, int32, int64 };

struct NpyHeader {
  NpyElement element = NpyElement::float32;
  bool big_endian = false;
  bool fortran_order = false;
  std::vector<std::uint64_t> shape;  // empty for a scalar
  std::uint64_t count = 1;           // the product of shape (checked)
  std::uint64_t data_offset = 0;     // preamble + header dict: where the data starts
};

std::uint64_t element_size(NpyElement e);
std::string shape_text(const std::vector<std::uint64_t>& shape);  // "(3, 4)", "(5,)", "()"

// The data offset from the preamble (at least the file's first 12 bytes, or all of a shorter
// file), checked to lie within a file of `file_size` bytes.
std::uint64_t npy_data_offset(std::span<const char> preamble, std::uint64_t file_size, std::string_view name);

// Parses the file's first data_offset bytes (preamble and dict).
NpyHeader parse_npy_header(std::span<const char> header, std::string_view name);

// Checks the header against `data_bytes` (the file's size after the header) and the options:
// the exact data size, --dtype, --flatten. Returns the type the values will have.
Dtype check_npy(const NpyHeader& h, std::uint64_t data_bytes, const ReadOptions& opts, std::string_view name);

// The values in the order check_npy accepted; `data` is everything after the header.
Array decode_npy(const NpyHeader& h, std::span<const char> data, const ReadOptions& opts, std::string_view name);

// A 1-D (or scalar) int32 or int64 array, checked as check_npy checks values (exact data size), as
// int64: a segmented study's offsets. Anything else is refused.
std::vector<std::int64_t> decode_npy_integers(const NpyHeader& h, std::span<const char> data, std::string_view name);

// A whole .npy file in memory.
Array parse_npy(std::span<const char> bytes, const ReadOptions& opts, std::string_view name);

}  // namespace sumlab
