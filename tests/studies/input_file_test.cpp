// Input files and sizes: every hostile input measured in issue 21 is refused with a one-line
// message naming the file (and, for CSV, the line and column) and exit code 2 (3 when a valid
// request does not fit in memory); the good files read exactly, in the order asked for.
// The parsers are tested on bytes in memory; the CLI cases check the exit code and that nothing
// crashed. The mutation fuzzer over the same parsers is tests/studies/input_fuzz_test.cpp.
#include <gtest/gtest.h>
#include <sys/stat.h>

#include <algorithm>
#include <bit>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <functional>
#include <limits>
#include <string>
#include <vector>
#include <nlohmann/json.hpp>

#include "studies/commands.hpp"
#include "studies/csv_format.hpp"
#include "studies/float16.hpp"
#include "studies/fnv1a.hpp"
#include "studies/input_file.hpp"
#include "studies/memory_check.hpp"
#include "studies/npy_format.hpp"
#include "studies/raw_format.hpp"
#include "studies/size_text.hpp"
#include "tests/studies/run_sumlab.hpp"

namespace sumlab {
namespace {

using test::Result;
using test::run;

std::span<const char> bytes_of(const std::string& s) { return {s.data(), s.size()}; }

// An .npy file: the dict as given, padded so that the data starts at a multiple of 64 as numpy
// writes it, then `data`.
std::string npy(const std::string& dict, const std::string& data, int major = 1) {
  const std::size_t preamble = major == 1 ? 10 : 12;
  std::string header = dict;
  while ((preamble + header.size() + 1) % 64) header += ' ';
  header += '\n';
  std::string out = "\x93NUMPY";
  out += static_cast<char>(major);
  out += '\0';
  for (std::size_t i = 0; i < preamble - 8; ++i) out += static_cast<char>((header.size() >> (8 * i)) & 0xff);
  return out + header + data;
}

std::string npy_dict(const std::string& descr, bool fortran, const std::string& shape) {
  return "{'descr': '" + descr + "', 'fortran_order': " + (fortran ? "True" : "False") + ", 'shape': " + shape + ", }";
}

template <class T> std::string bytes_of_values(const std::vector<T>& v, bool big_endian = false) {
  std::string out(v.size() * sizeof(T), '\0');
  std::memcpy(out.data(), v.data(), out.size());
  if (big_endian)
    for (std::size_t i = 0; i < v.size(); ++i) std::reverse(out.begin() + i * sizeof(T), out.begin() + (i + 1) * sizeof(T));
  return out;
}

ReadOptions options(Flatten f = Flatten::none, std::optional<Dtype> d = std::nullopt) {
  ReadOptions o;
  o.flatten = f;
  o.dtype = d;
  return o;
}

// The UserError message of `f`, which must throw one: a single line naming the input.
std::string refusal(const std::function<void()>& f, const std::string& name = "in") {
  try {
    f();
  } catch (const UserError& e) {
    const std::string m = e.what();
    EXPECT_EQ(m.find('\n'), std::string::npos) << m;
    EXPECT_NE(m.find("'" + name + "'"), std::string::npos) << "the message does not name the input: " << m;
    return m;
  }
  ADD_FAILURE() << "no UserError";
  return "";
}

std::string npy_refusal(const std::string& file, ReadOptions o = options()) {
  return refusal([&] { parse_npy(bytes_of(file), o, "in"); });
}
std::string csv_refusal(const std::string& text, ReadOptions o = options()) {
  return refusal([&] { parse_csv(text, o, "in"); });
}

template <class T> std::vector<T> values(const Array& a) {
  EXPECT_TRUE(std::holds_alternative<std::vector<T>>(a));
  return std::holds_alternative<std::vector<T>>(a) ? std::get<std::vector<T>>(a) : std::vector<T>{};
}

template <class T> std::vector<std::uint64_t> bits(const std::vector<T>& v) {
  std::vector<std::uint64_t> out;
  for (T x : v) {
    if constexpr (sizeof(T) == 4) out.push_back(std::bit_cast<std::uint32_t>(x));
    else out.push_back(std::bit_cast<std::uint64_t>(x));
  }
  return out;
}

#define EXPECT_CONTAINS(haystack, needle) \
  EXPECT_NE(std::string(haystack).find(needle), std::string::npos) << (haystack)

// Writes `bytes` to a fresh temporary file named `name` and returns its path.
std::string temp_file(const std::string& name, const std::string& bytes) {
  const auto path = std::filesystem::temp_directory_path() / ("sumlab_input_test_" + name);
  std::ofstream(path, std::ios::binary) << bytes;
  return path.string();
}

// ---- .npy: refused ----------------------------------------------------------------------------

TEST(Npy, CountTimesElementSizeThatWrapsIsRefused) {
  // 2305843009213693953 * 8 == 2^64 + 8 wraps to 8: before, this summed one element.
  const std::string f = npy(npy_dict("<f8", false, "(2305843009213693953,)"), std::string(8, '\0'));
  EXPECT_CONTAINS(npy_refusal(f), "shape (2305843009213693953,) of float64 needs more than 2^64 data bytes, the file has 8");
}

TEST(Npy, HugeDimensionAndHugeProductAreRefused) {
  EXPECT_CONTAINS(npy_refusal(npy(npy_dict("<f8", false, "(1234567890123456789012345,)"), "")),
                  "shape dimension '1234567890123456789012345' does not fit in 64 bits");
  EXPECT_CONTAINS(npy_refusal(npy(npy_dict("<f4", false, "(4294967296, 4294967297)"), "")),
                  "has more than 2^64 elements");
  // A zero dimension makes the count 0 whatever the others are (numpy agrees).
  EXPECT_TRUE(values<float>(parse_npy(bytes_of(npy(npy_dict("<f4", false, "(18446744073709551615, 0)"), "")),
                                      options(), "in"))
                  .empty());
}

TEST(Npy, DataSizeMustMatchExactly) {
  const std::string d = bytes_of_values<double>({1, 2, 3});
  EXPECT_CONTAINS(npy_refusal(npy(npy_dict("<f8", false, "(3,)"), d + "x")), "needs 24 data bytes, the file has 25");
  EXPECT_CONTAINS(npy_refusal(npy(npy_dict("<f8", false, "(3,)"), d.substr(0, 16))), "needs 24 data bytes, the file has 16");
}

TEST(Npy, MalformedPreamblesAreRefused) {
  const std::string good = npy(npy_dict("<f4", false, "(1,)"), std::string(4, '\0'));
  EXPECT_CONTAINS(npy_refusal("not an npy file at all"), "bad magic");
  EXPECT_CONTAINS(npy_refusal(good.substr(0, 9)), "truncated .npy header");
  std::string v = good;
  v[6] = 4;
  EXPECT_CONTAINS(npy_refusal(v), "unsupported .npy version 4.0");
  v = good;
  v[7] = 1;
  EXPECT_CONTAINS(npy_refusal(v), "unsupported .npy version 1.1");
  v = good;
  v[8] = '\xff';
  v[9] = '\x00';  // 255 header bytes, more than the file has
  EXPECT_CONTAINS(npy_refusal(v), "truncated .npy header: it says 255 bytes");
  const std::string v2 = npy(npy_dict("<f4", false, "(1,)"), std::string(4, '\0'), 2);
  std::string huge = v2;
  huge[11] = '\x7f';  // a header length near 2^31
  EXPECT_CONTAINS(npy_refusal(huge), "is over the 65536 bytes any float array needs");
}

TEST(Npy, MalformedDictsAreRefused) {
  const std::string d4(4, '\0');
  struct Case {
    std::string dict, needle;
  };
  const Case cases[] = {
      {"{'descr': '<f4', 'fortran_order': False}", "missing 'shape'"},
      {"{'descr': '<f4', 'fortran_order': False, 'shape': (1,), 'extra': 1}", "unexpected key 'extra'"},
      {"{'descr': '<f4', 'descr': '<f4', 'fortran_order': False, 'shape': (1,)}", "'descr' given twice"},
      {"{'descr': '<f4', 'fortran_order': False, 'shape': (1)}", "is not a tuple"},
      {"{'descr': '<f4', 'fortran_order': False, 'shape': (-1,)}", "not a non-negative integer"},
      {"{'descr': '<f4', 'fortran_order': False, 'shape': (01,)}", "leading zeros"},
      {"{'descr': '<f4', 'fortran_order': 0, 'shape': (1,)}", "not True or False"},
      {"{'descr': [('a', '<f4')], 'fortran_order': False, 'shape': (1,)}", "structured"},
      {"{'descr': '<i4', 'fortran_order': False, 'shape': (1,)}", "holds int32 values: sumlab sums float16"},
      {"{'descr': '<u4', 'fortran_order': False, 'shape': (1,)}", "unsupported .npy dtype '<u4'"},
      {"{'descr': '|f4', 'fortran_order': False, 'shape': (1,)}", "unsupported .npy dtype '|f4'"},
      {"{'descr': '<V2', 'fortran_order': False, 'shape': (1,)}", "save it as float32 (exact)"},  // bfloat16
      {"{'descr': '<f4', 'fortran_order': False, 'shape': (1,)} x", "after the header dict"},
      {"['descr', '<f4']", "does not start with '{'"},
  };
  for (const auto& c : cases) EXPECT_CONTAINS(npy_refusal(npy(c.dict, d4)), c.needle);
}

TEST(Npy, MultiDimensionalArraysNeedAnOrder) {
  const std::string f = npy(npy_dict("<f8", false, "(2, 3)"), bytes_of_values<double>({0, 1, 2, 3, 4, 5}));
  EXPECT_CONTAINS(npy_refusal(f), "holds a 2x3 array (C order); give --flatten C");
  const std::string g = npy(npy_dict("<f8", true, "(2, 1, 3)"), bytes_of_values<double>({0, 1, 2, 3, 4, 5}));
  EXPECT_CONTAINS(npy_refusal(g), "holds a 2x1x3 array (Fortran order)");
}

TEST(Npy, DtypeMustMatchTheHeader) {
  const std::string f = npy(npy_dict("<f8", false, "(1,)"), bytes_of_values<double>({1}));
  EXPECT_CONTAINS(npy_refusal(f, options(Flatten::none, Dtype::float32)), "holds float64 but --dtype float32 was given");
  const std::string h = npy(npy_dict("<f2", false, "(1,)"), std::string("\x00\x3c", 2));
  EXPECT_CONTAINS(npy_refusal(h, options(Flatten::none, Dtype::float64)), "holds float16 (read as float32)");
}

// ---- .npy: read -------------------------------------------------------------------------------

TEST(Npy, BothByteOrdersOfFloat32AndFloat64) {
  const std::vector<double> d = {1.5, -0.1, 1e300, 5e-324};
  const std::vector<float> s = {1.5f, -0.1f, 3e38f, 1e-45f};
  for (bool big : {false, true}) {
    const auto a = parse_npy(bytes_of(npy(npy_dict(big ? ">f8" : "<f8", false, "(4,)"), bytes_of_values(d, big))), options(), "in");
    EXPECT_EQ(bits(values<double>(a)), bits(d)) << big;
    const auto b = parse_npy(bytes_of(npy(npy_dict(big ? ">f4" : "<f4", false, "(4,)"), bytes_of_values(s, big))), options(), "in");
    EXPECT_EQ(bits(values<float>(b)), bits(s)) << big;
  }
}

TEST(Npy, VersionsTwoAndThreeAndOldLongSuffixes) {
  const std::string d = bytes_of_values<double>({1, 2});
  for (int major : {2, 3})
    EXPECT_EQ(values<double>(parse_npy(bytes_of(npy(npy_dict("<f8", false, "(2,)"), d, major)), options(), "in")),
              (std::vector<double>{1, 2}));
  // numpy strips Python 2's 'L' from version 1 and 2 headers, not from version 3 ones.
  EXPECT_EQ(values<double>(parse_npy(bytes_of(npy(npy_dict("<f8", false, "(2L,)"), d)), options(), "in")).size(), 2u);
  EXPECT_CONTAINS(npy_refusal(npy(npy_dict("<f8", false, "(2L,)"), d, 3)), "expected ',' or ')'");
  // Double quotes and no trailing comma in the dict are the same Python literal.
  EXPECT_EQ(values<double>(parse_npy(bytes_of(npy("{\"shape\": (2,), \"fortran_order\": False, \"descr\": \"<f8\"}", d)),
                                     options(), "in"))
                .size(),
            2u);
}

// Every float16 value widens exactly; the compiler's own _Float16 conversion is the oracle (NaNs
// keep their payload, as numpy's half-to-float conversion keeps it, where hardware would quiet a
// signaling one).
TEST(Npy, Float16WidensExactlyToFloat32) {
  for (std::uint32_t h = 0; h < 65536; ++h) {
    const float f = float16_to_float32(static_cast<std::uint16_t>(h));
    const bool nan = (h & 0x7c00u) == 0x7c00u && (h & 0x3ffu) != 0;
    if (nan) {
      ASSERT_EQ(std::bit_cast<std::uint32_t>(f), ((h & 0x8000u) << 16) | 0x7f800000u | ((h & 0x3ffu) << 13)) << h;
      continue;
    }
#if defined(__FLT16_MAX__)
    const float expected = static_cast<float>(std::bit_cast<_Float16>(static_cast<std::uint16_t>(h)));
#else
    const int e = static_cast<int>((h >> 10) & 0x1f), m = static_cast<int>(h & 0x3ff);
    const float mag = e == 31 ? INFINITY : e == 0 ? std::ldexp(float(m), -24) : std::ldexp(float(1024 + m), e - 25);
    const float expected = (h & 0x8000u) ? -mag : mag;
#endif
    ASSERT_EQ(std::bit_cast<std::uint32_t>(f), std::bit_cast<std::uint32_t>(expected)) << h;
  }
  const std::string le("\x00\x3c\x01\x00\x00\xfc", 6);  // 1.0, 2^-24, -inf
  const std::string be("\x3c\x00\x00\x01\xfc\x00", 6);
  for (const auto& [descr, data] : {std::pair{"<f2", le}, std::pair{">f2", be}}) {
    const auto v = values<float>(parse_npy(bytes_of(npy(npy_dict(descr, false, "(3,)"), data)), options(), "in"));
    ASSERT_EQ(v.size(), 3u);
    EXPECT_EQ(v[0], 1.0f);
    EXPECT_EQ(v[1], std::ldexp(1.0f, -24));
    EXPECT_EQ(v[2], -INFINITY);
  }
}

// A[i][j] = 10 i + j for a 2x3 array, stored in either order, read in both.
TEST(Npy, TwoDimensionalArraysInEitherStoredOrderFlattenBothWays) {
  const std::vector<double> c_stored = {0, 1, 2, 10, 11, 12}, f_stored = {0, 10, 1, 11, 2, 12};
  for (bool fortran : {false, true}) {
    const std::string file = npy(npy_dict("<f8", fortran, "(2, 3)"), bytes_of_values(fortran ? f_stored : c_stored));
    EXPECT_EQ(values<double>(parse_npy(bytes_of(file), options(Flatten::c), "in")), c_stored) << fortran;
    EXPECT_EQ(values<double>(parse_npy(bytes_of(file), options(Flatten::f), "in")), f_stored) << fortran;
  }
}

// The .npy files whose bytes are the values, in order, are mapped, not read: the same values as
// read_array gives, in both dtypes and for a 2-D file flattened in its stored order. Everything
// that needs decoding (the other byte order, float16, a reorder, a misaligned data offset) and any
// other format is left to read_array (nullptr); a file read_array refuses is refused the same way.
TEST(Npy, MappedWhereTheBytesAreTheValues) {
  const std::vector<double> d = {1.5, -2.25, 1e300, 5e-324, -0.0, 3.0};
  const std::vector<float> f = {1.5f, -2.25f, 3e38f, 1e-45f, -0.0f};
  const auto same = [](const std::string& path, ReadOptions o) {
    const auto m = map_npy(path, o);
    EXPECT_NE(m, nullptr) << path;
    if (!m) return;
    const Array a = read_array(path, o);
    std::visit([&](auto span) {
      using T = std::remove_const_t<typename decltype(span)::element_type>;
      EXPECT_EQ(bits(std::vector<T>(span.begin(), span.end())), bits(values<T>(a))) << path;
    }, m->values());
  };
  same(temp_file("d.npy", npy(npy_dict("<f8", false, "(6,)"), bytes_of_values(d))), options());
  same(temp_file("f.npy", npy(npy_dict("<f4", false, "(5,)"), bytes_of_values(f))), options());
  same(temp_file("c2.npy", npy(npy_dict("<f8", false, "(2, 3)"), bytes_of_values(d))), options(Flatten::c));
  same(temp_file("f2.npy", npy(npy_dict("<f8", true, "(2, 3)"), bytes_of_values(d))), options(Flatten::f));
  EXPECT_EQ(map_npy(temp_file("be.npy", npy(npy_dict(">f8", false, "(6,)"), bytes_of_values(d, true))), options()),
            nullptr);
  EXPECT_EQ(map_npy(temp_file("h.npy", npy(npy_dict("<f2", false, "(2,)"), std::string(4, '\0'))), options()), nullptr);
  EXPECT_EQ(map_npy(temp_file("r2.npy", npy(npy_dict("<f8", true, "(2, 3)"), bytes_of_values(d))), options(Flatten::c)),
            nullptr);
  EXPECT_EQ(map_npy(temp_file("x.csv", "1\n2\n"), options()), nullptr);
  // A data offset that is not a multiple of 8 (numpy pads to 64; a hand-made file need not).
  std::string odd = npy(npy_dict("<f8", false, "(6,)"), bytes_of_values(d));
  odd.insert(odd.find('\n'), " ");  // one more header byte: the data starts at 65
  odd[8] = static_cast<char>(odd[8] + 1);
  EXPECT_EQ(map_npy(temp_file("odd.npy", odd), options()), nullptr);
  EXPECT_EQ(values<double>(read_array(temp_file("odd.npy", odd), options())), d);
  const std::string wrong_dtype = refusal([&] { map_npy(temp_file("d.npy", npy(npy_dict("<f8", false, "(6,)"), bytes_of_values(d))), options(Flatten::none, Dtype::float32)); },
                                          temp_file("d.npy", npy(npy_dict("<f8", false, "(6,)"), bytes_of_values(d))));
  EXPECT_CONTAINS(wrong_dtype, "--dtype float32");
}

// A registered array (the Python package's data) is read in place by every InputData, not copied
// once more per reader: at a study's sizes each copy is another input's worth of host memory. It
// stays valid while a reader holds it, after it is unregistered; read_array still gives a copy.
TEST(MemoryArrays, InputDataReadsTheRegisteredArrayInPlace) {
  const std::vector<double> d = {1.5, -2.25, 1e300, 5e-324, -0.0, 3.0};
  register_array("input_file_test", Array(d));
  auto a = std::make_unique<InputData>("mem:input_file_test", options());
  const InputData b("mem:input_file_test", options());
  EXPECT_EQ(a->values<double>().data(), b.values<double>().data());
  EXPECT_NE(std::get<std::vector<double>>(read_array("mem:input_file_test", options())).data(), b.values<double>().data());
  unregister_array("input_file_test");
  EXPECT_EQ(bits(std::vector<double>(b.values<double>().begin(), b.values<double>().end())), bits(d));
  a.reset();
  EXPECT_EQ(bits(std::vector<double>(b.values<double>().begin(), b.values<double>().end())), bits(d));
  EXPECT_CONTAINS(refusal([] { InputData("mem:input_file_test", options()); }, "input_file_test"),
                  "no array 'input_file_test' in this process");
}

// The Python package's arrays are registered as views of the caller's memory: read in place (no
// copy of the user's data), kept alive by the owner until the registry and every reader let go,
// and checked at a study's end: a changed byte is named, not mixed silently into the rows.
TEST(MemoryArrays, AViewIsReadWhereItLiesAndAChangeIsCaught) {
  std::vector<float> x(13);  // 52 bytes: a block of the fingerprint's four lanes and a tail
  for (std::size_t i = 0; i < x.size(); ++i) x[i] = static_cast<float>(i) * 1.25f;
  auto released = std::make_shared<bool>(false);
  std::shared_ptr<const void> owner(new int(0), [released](const void* p) {
    *released = true;
    delete static_cast<const int*>(p);
  });
  register_array_view("view_test", std::span<const float>(x), std::move(owner));
  {
    const InputData d("mem:view_test", options());
    EXPECT_EQ(d.values<float>().data(), x.data());
    const std::uint64_t before = d.fingerprint();
    EXPECT_NO_THROW(d.check_unchanged(before, "an array from Python"));
    Fnv1a64 fnv;  // the plan's hash, over the same bytes
    fnv.add(x.data(), x.size() * sizeof(float));
    EXPECT_EQ(d.identity(), std::make_pair(fnv.hex(), before));
    unregister_array("view_test");
    EXPECT_FALSE(*released) << "released while a reader holds it";
    // Any one bit flipped, in the lanes' block or the tail, changes the fingerprint.
    auto* bytes = reinterpret_cast<unsigned char*>(x.data());
    for (std::size_t bit = 0; bit < x.size() * 32; ++bit) {
      bytes[bit / 8] ^= static_cast<unsigned char>(1u << (bit % 8));
      EXPECT_NE(d.fingerprint(), before) << "bit " << bit;
      bytes[bit / 8] ^= static_cast<unsigned char>(1u << (bit % 8));
    }
    EXPECT_EQ(d.fingerprint(), before);
    x[12] = -0.0f;
    try {
      d.check_unchanged(before, "an array from Python");
      ADD_FAILURE() << "a changed view passed the check";
    } catch (const UserError& e) {
      EXPECT_CONTAINS(std::string(e.what()), "the data (an array from Python) changed while the study read it");
    }
  }
  EXPECT_TRUE(*released);
  // An array registered by value is the registry's own: nothing else can change it.
  register_array("owned_test", Array(std::vector<float>{1.0f, 2.0f}));
  const InputData owned("mem:owned_test", options());
  unregister_array("owned_test");
  EXPECT_EQ(owned.fingerprint(), 0u);
  EXPECT_NO_THROW(owned.check_unchanged(0, "owned"));
}

// A mapped file is read where it lies too: rewritten in place while a study reads it, the study's
// check names the change; a file read whole is the study's own copy.
TEST(Npy, AMappedFileRewrittenMeanwhileIsCaught) {
  const std::vector<double> d(100, 0.5);
  const std::string path = temp_file("rewritten.npy", npy(npy_dict("<f8", false, "(100,)"), bytes_of_values(d)));
  const InputData mapped(path, options());
  ASSERT_TRUE(mapped.mapped());
  const std::uint64_t before = mapped.fingerprint();
  EXPECT_NO_THROW(mapped.check_unchanged(before, path));
  {
    std::fstream f(path, std::ios::in | std::ios::out | std::ios::binary);
    f.seekp(-8, std::ios::end);
    const double other = 0.75;
    f.write(reinterpret_cast<const char*>(&other), sizeof other);
  }
  EXPECT_EQ(mapped.values<double>().back(), 0.75);
  EXPECT_THROW(mapped.check_unchanged(before, path), UserError);
}

// `sum` maps such a file and says so; its results are the bits of the same values read whole.
TEST(Npy, SumOfAMappedFileIsTheSumOfTheFileRead) {
  std::vector<double> d(3001);
  for (std::size_t i = 0; i < d.size(); ++i) d[i] = std::ldexp(1.0 + 0.37 * double(i % 17), int(i % 41) - 20) * (i % 3 ? 1 : -1);
  const std::string le = temp_file("sum_le.npy", npy(npy_dict("<f8", false, "(3001,)"), bytes_of_values(d)));
  const std::string be = temp_file("sum_be.npy", npy(npy_dict(">f8", false, "(3001,)"), bytes_of_values(d, true)));
  const Result mapped = run("sum --input " + le + " --json"), read = run("sum --input " + be + " --json");
  ASSERT_EQ(mapped.code, 0) << mapped.out;
  ASSERT_EQ(read.code, 0) << read.out;
  const auto a = nlohmann::json::parse(mapped.out), b = nlohmann::json::parse(read.out);
  ASSERT_EQ(a.size(), b.size());
  for (std::size_t i = 0; i < a.size(); ++i) EXPECT_EQ(a[i]["hex"], b[i]["hex"]) << a[i]["algorithm"];
  EXPECT_CONTAINS(run("sum --input " + le + " -a serial").out, "memory-mapped");
  EXPECT_EQ(run("sum --input " + be + " -a serial").out.find("memory-mapped"), std::string::npos);
}

// A study reads a mappable --input where it lies: the same rows as the same values read whole.
TEST(Npy, StudyOnAMappedFileEqualsTheStudyOnTheFileRead) {
  std::vector<float> f(700);
  for (std::size_t i = 0; i < f.size(); ++i) f[i] = std::ldexp(1.0f + 0.25f * float(i % 5), int(i % 23) - 11) * (i % 4 ? 1.f : -1.f);
  const std::string le = temp_file("study_le.npy", npy(npy_dict("<f4", false, "(700,)"), bytes_of_values(f)));
  const std::string be = temp_file("study_be.npy", npy(npy_dict(">f4", false, "(700,)"), bytes_of_values(f, true)));
  std::string csv[2];
  for (int k = 0; k < 2; ++k) {
    const auto out = std::filesystem::temp_directory_path() / ("sumlab_input_test_study" + std::to_string(k));
    std::filesystem::remove_all(out);
    const Result r = run("study error-vs-n --quick --backend model --gpu-kernels gpu_two_pass,gpu_exact --input " +
                         (k ? be : le) + " --out " + out.string());
    ASSERT_EQ(r.code, 0) << r.out;
    std::ifstream in(out / "error_vs_n.csv");
    csv[k] = std::string(std::istreambuf_iterator<char>(in), {});
    std::filesystem::remove_all(out);
  }
  EXPECT_GT(csv[0].size(), 1000u);
  EXPECT_EQ(csv[0], csv[1]);
}

// A[i][j][k] = 100 i + 10 j + k, shape (2, 3, 4), with a length-1 axis in the middle of the file's
// shape (2, 1, 3, 4) for good measure: every stored order against every output order.
TEST(Npy, ThreeDimensionalReorderMatchesIndexArithmetic) {
  const std::uint64_t d0 = 2, d1 = 3, d2 = 4;
  auto value = [](std::uint64_t i, std::uint64_t j, std::uint64_t k) { return double(100 * i + 10 * j + k); };
  std::vector<double> c, f;
  for (std::uint64_t i = 0; i < d0; ++i)
    for (std::uint64_t j = 0; j < d1; ++j)
      for (std::uint64_t k = 0; k < d2; ++k) c.push_back(value(i, j, k));
  for (std::uint64_t k = 0; k < d2; ++k)
    for (std::uint64_t j = 0; j < d1; ++j)
      for (std::uint64_t i = 0; i < d0; ++i) f.push_back(value(i, j, k));
  for (bool fortran : {false, true}) {
    const std::string file = npy(npy_dict(">f4", fortran, "(2, 1, 3, 4)"),
                                 bytes_of_values(std::vector<float>(fortran ? f.begin() : c.begin(), fortran ? f.end() : c.end()), true));
    const auto vc = values<float>(parse_npy(bytes_of(file), options(Flatten::c), "in"));
    const auto vf = values<float>(parse_npy(bytes_of(file), options(Flatten::f), "in"));
    EXPECT_EQ(std::vector<double>(vc.begin(), vc.end()), c) << fortran;
    EXPECT_EQ(std::vector<double>(vf.begin(), vf.end()), f) << fortran;
  }
}

TEST(Npy, VectorsScalarsAndEmptyArraysNeedNoOrder) {
  const std::string d = bytes_of_values<double>({1, 2, 3});
  for (const char* shape : {"(3, 1)", "(1, 3)", "(1, 3, 1)"})
    for (bool fortran : {false, true})
      EXPECT_EQ(values<double>(parse_npy(bytes_of(npy(npy_dict("<f8", fortran, shape), d)), options(), "in")),
                (std::vector<double>{1, 2, 3}))
          << shape;
  EXPECT_EQ(values<double>(parse_npy(bytes_of(npy(npy_dict("<f8", false, "()"), d.substr(0, 8))), options(), "in")),
            (std::vector<double>{1}));
  EXPECT_TRUE(values<double>(parse_npy(bytes_of(npy(npy_dict("<f8", false, "(0,)"), "")), options(), "in")).empty());
}

// ---- CSV: refused -----------------------------------------------------------------------------

TEST(Csv, ThousandsSeparatorsAndDecimalCommasAreRefused) {
  EXPECT_CONTAINS(csv_refusal("1,000.5\n"), "line 1, column 2: '000.5' has superfluous leading zeros");
  EXPECT_CONTAINS(csv_refusal("1,5\n"), "line 1 has 2 fields, so the file is a table (or uses decimal commas");
  EXPECT_CONTAINS(csv_refusal("1.5\n2.5\n1,5\n"), "line 3 has 2 fields");
  EXPECT_CONTAINS(csv_refusal("05\n"), "line 1, column 1: '05' has superfluous leading zeros");
  EXPECT_CONTAINS(csv_refusal("-00.5\n"), "superfluous leading zeros");
  EXPECT_CONTAINS(csv_refusal("1.5\n2;5\n"), "line 2, column 1: ';' in '2;5'");
  EXPECT_CONTAINS(csv_refusal("1;2\n", options(Flatten::c)), "line 1, column 1: ';'");
  EXPECT_CONTAINS(csv_refusal("1,2\n3,4;\n", options(Flatten::c)), "line 2, column 2: ';'");
}

TEST(Csv, EmptyFieldsAreRefused) {
  EXPECT_CONTAINS(csv_refusal("1,,2\n", options(Flatten::c)), "line 1, column 2: empty field");
  EXPECT_CONTAINS(csv_refusal("1,2,\n", options(Flatten::c)), "line 1, column 3: empty field");
  EXPECT_CONTAINS(csv_refusal("1\n,\n", options(Flatten::c)), "line 2, column 1: empty field");
  EXPECT_CONTAINS(csv_refusal("1\n \t,2\n", options(Flatten::c)), "line 2, column 1: empty field");
}

TEST(Csv, FieldsThatAreNotExactlyOneNumberAreRefused) {
  struct Case {
    std::string text, needle;
  };
  const Case cases[] = {
      {"1 000\n", "line 1, column 1: '1 000' is not one number"},
      {"2\n1.5.2\n", "line 2, column 1: '1.5.2' is not one number"},
      {"abc\n", "'abc' is not one number"},
      {"1e\n", "'1e' is not one number"},
      {"+-1\n", "'+-1' is not one number"},
      {"0x\n", "'0x' is not one number"},
      {"0x-1p2\n", "'0x-1p2' is not one number"},
      {"0x1.8p+-3\n", "'0x1.8p+-3' is not one number"},  // libstdc++ 12's from_chars takes it as 0x1.8p-3
      {"1e+-3\n", "'1e+-3' is not one number"},
      {"0x1p\n", "'0x1p' is not one number"},
      {"nan(1)\n", "'nan(1)' is not one number"},
      {"infinit\n", "not one number"},
      {"1\v\n", "'1\\x0b' is not one number"},
      {"1\r\r\n", "'1\\x0d' is not one number"},
      {"1.5\n\x01\xff\n", "line 2, column 1: '\\x01\\xff' is not one number"},
  };
  for (const auto& c : cases) EXPECT_CONTAINS(csv_refusal(c.text), c.needle);
  // A long field is cut in the message.
  const std::string m = csv_refusal(std::string(100000, '7') + "x\n");
  EXPECT_LT(m.size(), 200u) << m;
}

TEST(Csv, RaggedTablesNameTheFirstLineThatDiffers) {
  EXPECT_CONTAINS(csv_refusal("1,2\n\n3,4\n5\n6,7\n", options(Flatten::c)), "line 4 has 1 fields but line 1 has 2");
  EXPECT_CONTAINS(csv_refusal("1\n2,3\n", options(Flatten::f)), "line 2 has 2 fields but line 1 has 1");
}

// ---- CSV: read --------------------------------------------------------------------------------

TEST(Csv, NumbersInEveryAcceptedSpelling) {
  const std::string text =
      "0x1.8p3\n-0x1p-2\n+1.5\n inf\t\n-Infinity\nNaN\n-nan\n1e-8\n.5\n5.\n0\n-0\n0e5\n0x0p0\n1E+05\n";
  const auto v = values<double>(parse_csv(text, options(Flatten::none, Dtype::float64), "in"));
  ASSERT_EQ(v.size(), 15u);
  const std::vector<double> expected = {12, -0.25, 1.5, INFINITY, -INFINITY, NAN, -NAN, 1e-8, 0.5, 5, 0, -0.0, 0, 0, 1e5};
  for (std::size_t i = 0; i < v.size(); ++i) {
    if (std::isnan(expected[i])) {
      EXPECT_TRUE(std::isnan(v[i])) << i;
      EXPECT_EQ(std::signbit(v[i]), std::signbit(expected[i])) << i;
    } else {
      EXPECT_EQ(std::bit_cast<std::uint64_t>(v[i]), std::bit_cast<std::uint64_t>(expected[i])) << i;
    }
  }
}

TEST(Csv, CrlfBlankLinesAndPaddingReadTheSame) {
  const auto a = values<float>(parse_csv("1.5\n2\n0.25\n", options(), "in"));
  const auto b = values<float>(parse_csv("\r\n  1.5 \r\n\t\n\n2\r\n\t0.25", options(), "in"));
  EXPECT_EQ(a, (std::vector<float>{1.5f, 2.0f, 0.25f}));
  EXPECT_EQ(a, b);
  EXPECT_TRUE(values<float>(parse_csv("", options(), "in")).empty());
  EXPECT_TRUE(values<float>(parse_csv("\n \n\r\n", options(), "in")).empty());
}

TEST(Csv, TablesFlattenByRowsOrByColumns) {
  const std::string t = "1, 2, 3\r\n4,5,6\n\n";
  EXPECT_EQ(values<double>(parse_csv(t, options(Flatten::c, Dtype::float64), "in")), (std::vector<double>{1, 2, 3, 4, 5, 6}));
  EXPECT_EQ(values<double>(parse_csv(t, options(Flatten::f, Dtype::float64), "in")), (std::vector<double>{1, 4, 2, 5, 3, 6}));
  // A column file with --flatten is still the column.
  EXPECT_EQ(values<double>(parse_csv("1\n2\n", options(Flatten::f, Dtype::float64), "in")), (std::vector<double>{1, 2}));
}

// Out of range values round as IEEE round-to-nearest says, straight to the target type (the
// cases from_chars leaves to its result_out_of_range path, and the subnormals it returns).
TEST(Csv, OverflowAndUnderflowRoundCorrectly) {
  const float fmax = std::numeric_limits<float>::max(), fmin = std::numeric_limits<float>::denorm_min();
  const auto f = values<float>(parse_csv(
      "1e39\n-1e39\n3.40282357e38\n3.40282356e38\n1e-50\n-1e-50\n7.006492321624085e-46\n7.006492321624086e-46\n"
      "1e-40\n0x1p-150\n0x1.000002p-150\n0x1p128\n",
      options(), "in"));
  const std::vector<float> fe = {INFINITY, -INFINITY, INFINITY, fmax, 0.0f, -0.0f, 0.0f, fmin, 1e-40f, 0.0f, fmin, INFINITY};
  EXPECT_EQ(bits(f), bits(fe));
  const double dmin = std::numeric_limits<double>::denorm_min();
  const auto d = values<double>(parse_csv(
      "1e400\n-1e400\n1e-400\n-1e-400\n2.4703282292062327e-324\n2.4703282292062328e-324\n0x1.8p-1075\n"
      "1.7976931348623159e308\n0.0000000000000000000001e-300\n",
      options(Flatten::none, Dtype::float64), "in"));
  const std::vector<double> de = {INFINITY, -INFINITY, 0.0, -0.0, 0.0, dmin, dmin, INFINITY, 1e-322};
  EXPECT_EQ(bits(d), bits(de));
}

// ---- raw --------------------------------------------------------------------------------------

TEST(Raw, SizeMustBeAWholeNumberOfElements) {
  EXPECT_CONTAINS(refusal([] { parse_raw(bytes_of("abcdef"), options(Flatten::none, Dtype::float32), "in"); }),
                  "6 bytes is not a whole number of 4-byte float32 elements");
  EXPECT_CONTAINS(refusal([] { parse_raw(bytes_of("abcd"), options(), "in"); }), "needs --dtype");
  const std::vector<double> v = {1.25, -3};
  EXPECT_EQ(values<double>(parse_raw(bytes_of(bytes_of_values(v)), options(Flatten::none, Dtype::float64), "in")), v);
}

// ---- sizes ------------------------------------------------------------------------------------

TEST(Sizes, AcceptedForms) {
  EXPECT_EQ(parse_size("0"), 0);
  EXPECT_EQ(parse_size("1000"), 1000);
  EXPECT_EQ(parse_size("2^20"), 1 << 20);
  EXPECT_EQ(parse_size("2^20+3"), (1 << 20) + 3);
  EXPECT_EQ(parse_size("2^24-1"), (1 << 24) - 1);
  EXPECT_EQ(parse_size("2^62"), std::int64_t{1} << 62);
  EXPECT_EQ(parse_size("2^62+4611686018427387903"), std::numeric_limits<std::int64_t>::max());
  EXPECT_EQ(parse_size("1e8"), 100000000);
  EXPECT_EQ(parse_size("1E8"), 100000000);
  EXPECT_EQ(parse_size("2.5e3"), 2500);
  EXPECT_EQ(parse_size("1500e-1"), 150);
  EXPECT_EQ(parse_size("1.00000000000000000000000000e3"), 1000);
  EXPECT_EQ(parse_size("9e18"), 9000000000000000000);
  EXPECT_EQ(parse_size("9223372036854775807"), std::numeric_limits<std::int64_t>::max());
}

TEST(Sizes, RefusedFormsNameTheOption) {
  struct Case {
    std::string text, needle;
  };
  const Case cases[] = {
      {"-5", "--n: '-5' is negative"},
      {"2^3-9", "is negative"},
      {"1.5", "--n: '1.5' is not a whole number"},
      {"1e-3", "is not a whole number"},
      {"2^63", "the exponent of 2^k must be 0..62"},
      {"2^62+4611686018427387904", "is too large"},
      {"9223372036854775808", "is too large"},
      {"1e19", "is too large"},
      {"1e999999999999", "is too large"},
      {"abc", "--n: 'abc' is not a number (N, 2^k, 2^k+c, 2^k-c or 1e8)"},
      {"", "is not a number"},
      {"+5", "is not a number"},
      {"2^", "is not a number"},
      {"2^10+", "is not a number"},
      {" 5", "is not a number"},
      {"0x10", "is not a number"},
  };
  for (const auto& c : cases) {
    try {
      parse_size(c.text, "--n");
      ADD_FAILURE() << c.text << " was accepted";
    } catch (const UserError& e) {
      EXPECT_CONTAINS(e.what(), c.needle);
    }
  }
}

TEST(Sizes, MemoryCheckIsOverflowSafe) {
  EXPECT_NO_THROW(check_fits_in_memory(0, ~std::uint64_t{0}, "nothing"));
  EXPECT_NO_THROW(check_fits_in_memory(1000, 8, "a little"));
  try {
    check_fits_in_memory(std::uint64_t{1} << 61, 8, "n = 2^61 float64 elements");  // 2^64 bytes: wraps to 0
    ADD_FAILURE() << "accepted";
  } catch (const ResourceError& e) {
    EXPECT_CONTAINS(e.what(), "n = 2^61 float64 elements needs more than 16 EiB");
  }
  try {
    check_fits_in_memory(std::uint64_t{1} << 60, 4, "n = 2^60 float32 elements");
    ADD_FAILURE() << "accepted";
  } catch (const ResourceError& e) {
    EXPECT_CONTAINS(e.what(), "needs 4.0 EiB but this machine has");
  }
}

// ---- through the CLI: exit codes, one line, no crash -------------------------------------------

struct CliCase {
  std::string args, needle;
  int code;
};

void expect_clean_failure(const CliCase& c) {
  const auto t0 = std::chrono::steady_clock::now();
  const Result r = run(c.args);
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  EXPECT_EQ(r.code, c.code) << c.args << " -> " << r.out;
  EXPECT_CONTAINS(r.out, c.needle);
  EXPECT_EQ(r.out.rfind("sumlab: ", 0), 0u) << r.out;
  EXPECT_EQ(std::count(r.out.begin(), r.out.end(), '\n'), 1) << "not one line: " << r.out;
  for (const char* bad : {"terminate", "internal error", "what()", "Traceback", "basic_filebuf", "stoull"})
    EXPECT_EQ(r.out.find(bad), std::string::npos) << c.args << " -> " << r.out;
  EXPECT_LT(seconds, 10.0) << c.args;
}

std::string write(const std::filesystem::path& dir, const std::string& name, const std::string& bytes) {
  std::ofstream(dir / name, std::ios::binary) << bytes;
  return (dir / name).string();
}

TEST(InputCli, EveryHostileFileExitsTwoWithOneLineNamingIt) {
  const auto d = test::fresh_dir("input_file_test_cli");
  const std::string sum = "sum --algorithm serial --input ";
  const std::vector<CliCase> cases = {
      {sum + write(d, "wrap.npy", npy(npy_dict("<f8", false, "(2305843009213693953,)"), std::string(8, '\0'))),
       "wrap.npy': shape (2305843009213693953,) of float64 needs more than 2^64 data bytes", 2},
      {sum + write(d, "digits.npy", npy(npy_dict("<f8", false, "(1234567890123456789012345,)"), "")),
       "digits.npy': malformed .npy header: shape dimension '1234567890123456789012345' does not fit in 64 bits", 2},
      {sum + write(d, "fortran.npy", npy(npy_dict("<f8", true, "(2, 3)"), bytes_of_values<double>({0, 1, 2, 3, 4, 5}))),
       "fortran.npy': holds a 2x3 array (Fortran order); give --flatten C", 2},
      {sum + write(d, "table.npy", npy(npy_dict("<f4", false, "(2, 2)"), std::string(16, '\0'))),
       "table.npy': holds a 2x2 array (C order)", 2},
      {sum + write(d, "thousands.csv", "1,000.5\n"), "thousands.csv': line 1, column 2: '000.5' has superfluous leading zeros", 2},
      {sum + write(d, "comma.csv", "1,5\n"), "comma.csv': line 1 has 2 fields", 2},
      {sum + write(d, "empty.csv", "1,,2\n") + " --flatten C", "empty.csv': line 1, column 2: empty field", 2},
      {sum + write(d, "semicolon.csv", "1;5\n"), "semicolon.csv': line 1, column 1: ';' in '1;5'", 2},
      {sum + write(d, "space.csv", "1 000\n"), "space.csv': line 1, column 1: '1 000' is not one number", 2},
      {sum + write(d, "odd.bin", "abcdef") + " --dtype float32", "odd.bin': 6 bytes is not a whole number", 2},
      {sum + d.string(), "': is a directory, not a regular file", 2},
      {sum + "/dev/zero --format raw --dtype float32", "'/dev/zero': is a character device, not a regular file", 2},
      {sum + "/nonexistent/x.npy", "cannot read '/nonexistent/x.npy'", 2},
      {"sum --algorithm serial --n -5", "--n: '-5' is negative", 2},
      {"sum --algorithm serial --n 1.5", "--n: '1.5' is not a whole number", 2},
      {"sum --algorithm serial --n 2^63", "--n: '2^63' is too large", 2},
      {"sum --algorithm serial --n 2^60", "n = 1152921504606846976 float32 elements needs 8.0 EiB", 3},
      {"sum --algorithm serial --n 2^62 --dtype float64", "needs more than 16 EiB", 3},
      {"sum --algorithm serial --n 2^61+7 --dtype float64", "needs more than 16 EiB", 3},
  };
  for (const auto& c : cases) expect_clean_failure(c);
  const std::string fifo = (d / "fifo.csv").string();
  ASSERT_EQ(mkfifo(fifo.c_str(), 0600), 0);
  expect_clean_failure({sum + fifo, "fifo.csv': is a FIFO, not a regular file", 2});
}

// The format comes from the extension whatever its case, and where no --format is given the NumPy
// magic decides the rest: an .npy file read as raw or text would sum its header's bytes as values.
TEST(InputCli, ExtensionsInAnyCaseAndTheNumpyMagic) {
  const auto d = test::fresh_dir("input_file_test_case");
  const std::string f32 = npy(npy_dict("<f4", false, "(4,)"), bytes_of_values<float>({1, 2, 3, 4}));
  const std::string sum = "sum --algorithm serial --json --input ";
  for (const std::string& args : std::vector<std::string>{sum + write(d, "GOOD.NPY", f32), sum + write(d, "mixed.Npy", f32),
                                  sum + write(d, "dtype.NPY", f32) + " --dtype float32",
                                  sum + write(d, "LIST.CSV", "1\n2\n3\n4\n"), sum + write(d, "list.Txt", "4\n3\n2\n1\n")}) {
    const Result r = run(args);
    ASSERT_EQ(r.code, 0) << args << " -> " << r.out;
    EXPECT_EQ(nlohmann::json::parse(r.out)[0]["value"].get<double>(), 10.0) << args << " -> " << r.out;
  }
  const std::string bin = write(d, "array.bin", f32);
  const std::string txt = write(d, "array.csv", f32);
  const std::vector<CliCase> cases = {
      {sum + bin + " --dtype float32", "array.bin': starts with the NumPy magic \\x93NUMPY but is read as raw", 2},
      {sum + txt, "array.csv': starts with the NumPy magic \\x93NUMPY but is read as csv", 2},
      // And the other way round, as before: an .npy name without the magic.
      {sum + write(d, "FAKE.NPY", "1,2,3,4"), "FAKE.NPY': not an .npy file (bad magic", 2},
  };
  for (const auto& c : cases) expect_clean_failure(c);
  // --format says what the bytes are: raw data may start with those six bytes (one double in 2^48).
  const Result as_raw = run(sum + bin + " --format raw --dtype float32");
  EXPECT_EQ(as_raw.code, 0) << as_raw.out;
  const Result as_npy = run(sum + bin + " --format npy");
  ASSERT_EQ(as_npy.code, 0) << as_npy.out;
  EXPECT_EQ(nlohmann::json::parse(as_npy.out)[0]["value"].get<double>(), 10.0);
}

// A file that reports size 0 but has content (procfs) is read by its content, not taken for empty.
TEST(InputCli, FilesWhoseSizeSaysNothingAreReadToTheirEnd) {
  const std::string proc = "/proc/sys/kernel/pid_max";
  struct stat st {};
  std::ifstream in(proc);
  double value = 0;
  if (::stat(proc.c_str(), &st) != 0 || st.st_size != 0 || !(in >> value)) GTEST_SKIP() << "no procfs " << proc;
  const Array a = read_array(proc, [] {
    ReadOptions o;
    o.format = "csv";
    return o;
  }());
  ASSERT_EQ(values<float>(a).size(), 1u);
  EXPECT_EQ(values<float>(a)[0], static_cast<float>(value));
  const Result r = run("sum --algorithm serial --json --format csv --dtype float64 --input " + proc);
  ASSERT_EQ(r.code, 0) << r.out;
  EXPECT_EQ(nlohmann::json::parse(r.out)[0]["value"].get<double>(), value) << r.out;
  EXPECT_EQ(nlohmann::json::parse(r.out)[0]["n"].get<double>(), 1) << r.out;
}

TEST(InputCli, GoodFilesAndSizesSum) {
  const auto d = test::fresh_dir("input_file_test_good");
  struct Case {
    std::string args;
    double sum;
  };
  const std::string sum = "sum --algorithm serial --json --input ";
  const Case cases[] = {
      {sum + write(d, "f.npy", npy(npy_dict("<f8", true, "(2, 3)"), bytes_of_values<double>({0, 1, 2, 3, 4, 5}))) + " --flatten C", 15},
      {sum + write(d, "g.npy", npy(npy_dict("<f8", true, "(2, 3)"), bytes_of_values<double>({0, 1, 2, 3, 4, 5}))) + " --flatten F", 15},
      {sum + write(d, "h.npy", npy(npy_dict(">f2", false, "(3,)"), std::string("\x3c\x00\x3e\x00\x34\x00", 6))), 2.75},
      {sum + write(d, "t.csv", "0x1.8p3, +1\r\n\r\n-0x1p-2,1e0\r\n") + " --flatten F", 13.75},
      {"sum --algorithm serial --json --dist constant --value 1 --n 2^10+3", 1027},
      {"sum --algorithm serial --json --dist constant --value 1 --n 1e3", 1000},
  };
  for (const auto& c : cases) {
    const Result r = run(c.args);
    ASSERT_EQ(r.code, 0) << c.args << " -> " << r.out;
    EXPECT_EQ(nlohmann::json::parse(r.out)[0]["value"].get<double>(), c.sum) << c.args << " -> " << r.out;
  }
}

}  // namespace
}  // namespace sumlab
