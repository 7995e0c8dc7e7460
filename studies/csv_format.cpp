#include "studies/csv_format.hpp"

#include <fmt/format.h>
#include <locale.h>
#include <stdlib.h>

#include <charconv>
#include <cmath>
#include <limits>
#include <string>
#include <system_error>
#include <vector>

#include "studies/input_error.hpp"

namespace sumlab {
namespace {

bool is_digit(char c) { return c >= '0' && c <= '9'; }
bool is_hex_digit(char c) { return is_digit(c) || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F'); }
bool is_alpha(char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z'); }
char lower(char c) { return c >= 'A' && c <= 'Z' ? static_cast<char>(c - 'A' + 'a') : c; }

bool equals_ignoring_case(std::string_view a, std::string_view lower_b) {
  if (a.size() != lower_b.size()) return false;
  for (std::size_t i = 0; i < a.size(); ++i)
    if (lower(a[i]) != lower_b[i]) return false;
  return true;
}

std::string_view trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t')) s.remove_suffix(1);
  return s;
}

// The strtod grammar without sign or "0x", checked here rather than left to from_chars:
// libstdc++ 12's hex from_chars takes "1.8p+-3" as 1.8p-3 (found by the fuzzer), so every text
// that reaches from_chars is first known to be one number:
//   digits [. digits] [e|E [+|-] digits]   (hex: hex digits, p|P), at least one mantissa digit.
bool well_formed(std::string_view s, bool hex) {
  const auto digit = [hex](char c) { return hex ? is_hex_digit(c) : is_digit(c); };
  std::size_t i = 0, mantissa_digits = 0;
  while (i < s.size() && digit(s[i])) ++i, ++mantissa_digits;
  if (i < s.size() && s[i] == '.') {
    ++i;
    while (i < s.size() && digit(s[i])) ++i, ++mantissa_digits;
  }
  if (mantissa_digits == 0) return false;
  if (i == s.size()) return true;
  if (lower(s[i]) != (hex ? 'p' : 'e')) return false;
  ++i;
  if (i < s.size() && (s[i] == '+' || s[i] == '-')) ++i;
  const std::size_t exponent_start = i;
  while (i < s.size() && is_digit(s[i])) ++i;
  return i > exponent_start && i == s.size();
}

// The correctly rounded value of an unsigned decimal or 0x-hex text that from_chars found out of
// range (its result is +-0 or +-inf). glibc's strtod family rounds correctly, subnormals and
// overflow included; the "C" locale object fixes '.' as the decimal point whatever the process's
// locale is. Returns false if it does not take the whole text (never expected: from_chars
// already matched it).
template <class T> bool reparse_out_of_range(std::string_view magnitude, T& v) {
  static const locale_t c_locale = newlocale(LC_ALL_MASK, "C", static_cast<locale_t>(nullptr));
  if (c_locale == static_cast<locale_t>(nullptr)) return false;
  const std::string s(magnitude);
  char* end = nullptr;
  if constexpr (sizeof(T) == 4) v = strtof_l(s.c_str(), &end, c_locale);
  else v = strtod_l(s.c_str(), &end, c_locale);
  return end == s.c_str() + s.size();
}

// One field (already trimmed) as a T. Returns "" and sets `value`, or returns why not.
template <class T> std::string parse_number(std::string_view field, T& value) {
  if (field.empty()) return "empty field";
  if (field.find(';') != std::string_view::npos)
    return "';' in " + excerpt(field) +
           ": decimal commas and ';' separators are not supported (write 1.5, and ',' between fields)";
  const auto not_one_number = [&] { return excerpt(field) + " is not one number"; };
  std::string_view m = field;  // the magnitude, after an optional sign
  const bool negative = m[0] == '-';
  if (m[0] == '+' || m[0] == '-') m.remove_prefix(1);
  if (m.empty()) return not_one_number();
  if (is_alpha(m[0])) {
    if (equals_ignoring_case(m, "inf") || equals_ignoring_case(m, "infinity"))
      value = std::numeric_limits<T>::infinity();
    else if (equals_ignoring_case(m, "nan"))
      value = std::numeric_limits<T>::quiet_NaN();
    else
      return not_one_number();
    value = std::copysign(value, negative ? T(-1) : T(1));
    return "";
  }
  const bool hex = m.size() >= 2 && m[0] == '0' && (m[1] == 'x' || m[1] == 'X');
  const std::string_view body = hex ? m.substr(2) : m;
  if (!well_formed(body, hex)) return not_one_number();
  if (!hex && body.size() >= 2 && body[0] == '0' && is_digit(body[1]))
    return excerpt(field) + " has superfluous leading zeros (a thousands separator?)";
  T v{};
  const auto [ptr, ec] = std::from_chars(body.data(), body.data() + body.size(), v,
                                         hex ? std::chars_format::hex : std::chars_format::general);
  if (ptr != body.data() + body.size()) return not_one_number();
  if (ec == std::errc::result_out_of_range) {
    if (!reparse_out_of_range(m, v)) return not_one_number();
  } else if (ec != std::errc{}) {
    return not_one_number();
  }
  value = negative ? -v : v;
  return "";
}

template <class T> std::vector<T> parse_as(std::string_view text, Flatten flatten, std::string_view name) {
  std::vector<T> values;
  std::size_t width = 0, width_line = 0;  // fields per line, from the first non-blank line
  std::size_t rows = 0, line_no = 0, pos = 0;
  while (pos < text.size()) {
    const std::size_t eol = text.find('\n', pos);
    std::string_view line = text.substr(pos, eol == std::string_view::npos ? std::string_view::npos : eol - pos);
    pos = eol == std::string_view::npos ? text.size() : eol + 1;
    ++line_no;
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    if (trim(line).empty()) continue;
    std::size_t fields = 0;
    for (std::size_t start = 0;;) {
      const std::size_t comma = line.find(',', start);
      const std::string_view field =
          trim(line.substr(start, comma == std::string_view::npos ? std::string_view::npos : comma - start));
      ++fields;
      T v{};
      if (const std::string why = parse_number(field, v); !why.empty())
        input_error(name, fmt::format("line {}, column {}: {}", line_no, fields, why));
      values.push_back(v);
      if (comma == std::string_view::npos) break;
      start = comma + 1;
    }
    if (fields > 1 && flatten == Flatten::none)
      input_error(name, fmt::format("line {} has {} fields, so the file is a table (or uses decimal commas: "
                                    "write 1.5, not 1,5); give --flatten C (row by row) or --flatten F "
                                    "(column by column) to sum a table",
                                    line_no, fields));
    if (rows == 0) {
      width = fields;
      width_line = line_no;
    } else if (fields != width) {
      input_error(name, fmt::format("line {} has {} fields but line {} has {}: every line of a table needs the "
                                    "same number",
                                    line_no, fields, width_line, width));
    }
    ++rows;
  }
  if (flatten != Flatten::f || width < 2) return values;
  std::vector<T> by_column(values.size());
  for (std::size_t r = 0; r < rows; ++r)
    for (std::size_t c = 0; c < width; ++c) by_column[c * rows + r] = values[r * width + c];
  return by_column;
}

}  // namespace

Array parse_csv(std::string_view text, const ReadOptions& opts, std::string_view name) {
  if (opts.dtype.value_or(Dtype::float32) == Dtype::float32) return parse_as<float>(text, opts.flatten, name);
  return parse_as<double>(text, opts.flatten, name);
}

}  // namespace sumlab
