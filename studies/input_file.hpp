#pragma once
// Reading an array to sum from a file: NumPy .npy (studies/npy_format.hpp), text/CSV
// (studies/csv_format.hpp) or raw little-endian binary (studies/raw_format.hpp). This layer only
// checks the file and reads it; the formats are parsed from bytes by those three.
//
// The file must be a regular file (a directory, a device such as /dev/zero or a FIFO is refused
// before anything is read), and every size is checked before it is allocated: an .npy header is
// read first and its count * element size must equal the rest of the file exactly; then the
// memory the values need is checked (ResourceError, exit 3, when the machine lacks it). The bytes
// are read whole today; a later change may map big files instead.
// Every failure throws UserError (exit 2) with a one-line message naming the file.
#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "studies/input_array.hpp"

namespace sumlab {

// The format is opts.format, or from the extension: .npy, .csv/.txt, anything else raw.
// "mem:NAME" reads an array registered in this process (the Python package's arrays).
Array read_array(const std::string& path, const ReadOptions& opts);

// Arrays a process holds in memory under a name, for "mem:NAME" inputs.
void register_array(const std::string& name, Array values);
void unregister_array(const std::string& name);

// A study's input of n elements drawn from the user's data: seed 1 is the first n elements (the
// prefix), seed s >= 2 a uniformly random subset of n elements (a pure function of the seed) kept
// in the data's order. n <= data.size().
template <class T> std::vector<T> data_sample(std::span<const T> data, std::uint64_t n, std::uint64_t seed);

}  // namespace sumlab
