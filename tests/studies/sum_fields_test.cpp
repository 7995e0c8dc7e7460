// `sumlab sum`'s measurement fields (text, --json, --out's sum.csv) are measurements or theorems,
// never placeholders: the sign of ulps_from_rounded, null where a field has no number to report
// (no value, NaN, no bound that applies, ulps of an exact zero sum), correct_bits below p for an
// inexact result (studies/sum_api.hpp, row_measures).
#include "tests/studies/run_sumlab.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

namespace {

using sumlab::test::Result;
using sumlab::test::run;

// A float32 CSV input of these lines, in a fresh folder named after the test.
std::string csv_input(const std::string& name, const std::vector<std::string>& lines) {
  const auto d = sumlab::test::fresh_dir("sum_fields_" + name);
  std::ofstream f(d / "x.csv");
  for (const auto& l : lines) f << l << "\n";
  return (d / "x.csv").string();
}

nlohmann::json sum_json(const std::string& args) {
  const Result r = run("sum " + args + " --json");
  EXPECT_EQ(r.code, 0) << r.out;
  return nlohmann::json::parse(r.out);
}

// 1 + 2^-24 + 2^-60 in float32: serial ties 1 + 2^-24 to even (1) and absorbs 2^-60, so it gives
// 1 (0x3f800000), one value below the correctly rounded sum 1 + 2^-23 (0x3f800001), with a
// relative error just under 2^-24.
const std::vector<std::string> kBelow = {"1", "5.9604644775390625e-08", "8.673617379884035e-19"};

TEST(SumFields, UlpsFromRoundedIsNegativeBelowTheReference) {
  const auto j = sum_json("--input " + csv_input("below", kBelow) + " --algorithm serial,exact");
  ASSERT_EQ(j.size(), 2u);
  EXPECT_EQ(j[0]["hex"], "0x3f800000");
  EXPECT_EQ(j[0]["reference_hex"], "0x3f800001");
  EXPECT_EQ(j[0]["ulps_from_rounded"].get<std::int64_t>(), -1);  // below: negative, as the determinism CSV
  EXPECT_EQ(j[1]["ulps_from_rounded"].get<std::int64_t>(), 0);
}

TEST(SumFields, UlpsFromRoundedHasTheSignOfValueMinusReference) {
  const auto j = sum_json("--dist uniform --n 1000 --algorithm all");
  int nonzero = 0;
  for (const auto& r : j) {
    const double v = r["value"].get<double>(), ref = r["reference"].get<double>();
    const auto u = r["ulps_from_rounded"].get<std::int64_t>();
    EXPECT_EQ(u > 0, v > ref) << r["algorithm"];
    EXPECT_EQ(u < 0, v < ref) << r["algorithm"];
    nonzero += u != 0;
  }
  EXPECT_GT(nonzero, 0);  // the input exercises the sign (serial is off on 1000 uniforms)
}

TEST(SumFields, NaNResultHasNoUlpsFromRounded) {
  const auto j = sum_json("--input " + csv_input("nan", {"1", "nan", "2"}) + " --algorithm serial,kahan,exact");
  for (const auto& r : j) {
    EXPECT_EQ(r["value"], "nan");
    EXPECT_EQ(r["value_decimal"], "nan");
    EXPECT_TRUE(r["ulps_from_rounded"].is_null()) << r.dump();  // not 0: 0 would read as exact
    EXPECT_EQ(r["verdict"], "special_input");
    EXPECT_TRUE(r["bound"].is_null()) << r.dump();
  }
}

TEST(SumFields, RowWithoutValueHasNoMeasurements) {
  const auto j = sum_json("--n 100 --algorithm gpu_cub --backend model");
  ASSERT_EQ(j.size(), 1u);
  const auto& r = j[0];
  EXPECT_FALSE(r["has_value"].get<bool>());
  EXPECT_EQ(r["verdict"], "no_bound");
  for (const char* k : {"value", "value_decimal", "hex", "abs_error", "rel_error", "ulps", "ulps_from_rounded",
                        "correct_bits", "bound", "special", "within_bound"})
    EXPECT_TRUE(r[k].is_null()) << k << ": " << r[k].dump();
  EXPECT_FALSE(r["reference_hex"].is_null());  // the input's facts remain
}

TEST(SumFields, NoBoundForOverflowOrSpecialInput) {
  // 3e38 + 3e38 overflows float32 (exact_overflow); 3e38 + 3e38 - 3e38 overflows serially though
  // the exact sum is finite (intermediate_overflow).
  const std::string exact_over = csv_input("ovf2", {"3e38", "3e38"});
  const std::string inter_over = csv_input("ovf", {"3e38", "3e38", "-3e38"});
  auto j = sum_json("--input " + exact_over + " --algorithm serial,pairwise,kahan");
  for (const auto& r : j) {
    EXPECT_EQ(r["verdict"], "exact_overflow");
    EXPECT_TRUE(r["bound"].is_null()) << r.dump();
  }
  j = sum_json("--input " + inter_over + " --algorithm serial");
  EXPECT_EQ(j[0]["verdict"], "intermediate_overflow");
  EXPECT_TRUE(j[0]["bound"].is_null()) << j[0].dump();

  // The table says "no error bound applies" and shows none.
  for (const auto& in : {exact_over, inter_over}) {
    const Result r = run("sum --input " + in + " --algorithm serial");
    ASSERT_EQ(r.code, 0) << r.out;
    const auto line = r.out.substr(r.out.find("\nserial"));
    const auto row = line.substr(0, line.find('\n', 1));
    EXPECT_NE(row.find(" none "), std::string::npos) << row;
  }
}

TEST(SumFields, CorrectBitsArePOnlyWhenExact) {
  const auto j = sum_json("--input " + csv_input("bits", kBelow) + " --algorithm serial,exact");
  const double serial = j[0]["correct_bits"].get<double>(), exact = j[1]["correct_bits"].get<double>();
  EXPECT_LT(serial, 24.0);  // inexact (1 ulp below the reference): not p
  EXPECT_GT(serial, 23.99);
  EXPECT_LT(exact, 24.0);  // correctly rounded but not exact: the exact sum needs more than 24 bits
  const auto k = sum_json("--input " + csv_input("bits_exact", {"1", "2"}) + " --algorithm serial");
  EXPECT_EQ(k[0]["correct_bits"].get<double>(), 24.0);  // exact
}

TEST(SumFields, UlpsOfAnExactZeroSumAreNotApplicable) {
  // 1 + 1e8 absorbs the 1 in float32, so serial gives -1 where the exact sum is 0; ulp(0) is the
  // smallest subnormal, and the count (about 7e44) would measure the format, not the error.
  const std::string in = csv_input("zero", {"1", "1e8", "-1e8", "-1"});
  const auto j = sum_json("--input " + in + " --algorithm serial,exact");
  EXPECT_EQ(j[0]["value"].get<double>(), -1.0);
  EXPECT_TRUE(j[0]["ulps"].is_null()) << j[0].dump();
  EXPECT_EQ(j[0]["abs_error"].get<double>(), 1.0);
  EXPECT_EQ(j[1]["ulps"].get<double>(), 0.0);  // an exact 0: no error, 0 ulps of anything

  const Result t = run("sum --input " + in + " --algorithm serial");
  ASSERT_EQ(t.code, 0) << t.out;
  const auto line = t.out.substr(t.out.find("\nserial"));
  EXPECT_NE(line.substr(0, line.find('\n', 1)).find(" n/a "), std::string::npos) << t.out;

  const auto out = sumlab::test::temp_dir("sum_fields_zero_run");
  const Result w = run("sum --input " + in + " --algorithm serial --out " + out.string());
  ASSERT_EQ(w.code, 0) << w.out;
  const auto csv = sumlab::test::read_csv(out / "sum.csv");
  ASSERT_EQ(csv.rows.size(), 1u);
  EXPECT_EQ(csv.rows[0].at("ulps"), "");
  EXPECT_EQ(csv.rows[0].at("abs_error"), "1");
}

}  // namespace
