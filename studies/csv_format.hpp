#pragma once
// Text/CSV input, parsed strictly and independently of the locale.
//
// Lines end at '\n' (one trailing '\r' is dropped, so CRLF files read the same); fields are
// separated by ','; spaces and tabs around a field are trimmed; lines that are blank after that
// are skipped. Each field is exactly one number: an optional sign ('+' or '-'), then a decimal
// ("0.5", "1e-8", ".5", "5."), a C99 hex float ("0x1.8p3", "-0x1p-2") or inf, infinity or nan in
// any case. Parsed with std::from_chars, correctly rounded to the target type directly (a float32
// value is never rounded twice through float64). Refused, naming the line and the column (the
// 1-based field number): an empty field ("1,,2", a trailing comma), anything that is not exactly
// one number ("1 000", "1.5.2", "abc"), superfluous leading zeros ("05", "000.5": the tail of a
// thousands separator) and any ';' (a decimal-comma locale's field separator).
//
// Out of range: a value whose correctly rounded result overflows becomes +-inf and one below
// half the smallest subnormal becomes +-0, as IEEE rounding to nearest gives. std::from_chars
// reports both as result_out_of_range without a value, so the same text is parsed again by
// strtod_l/strtof_l under a fixed "C" locale, which returns that correctly rounded value.
//
// Shape: lines of one field are a vector. A line of more than one field makes the file a 2-D
// table, refused unless ReadOptions::flatten names an order (C: row by row, F: column by column);
// every line of a table must then have the same number of fields.
#include <string_view>

#include "studies/input_array.hpp"

namespace sumlab {

// Every failure throws UserError naming `name`, and the line and column where there is one.
Array parse_csv(std::string_view text, const ReadOptions& opts, std::string_view name);

}  // namespace sumlab
