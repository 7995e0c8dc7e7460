// core/determinism_classify: the three classes, the counts and the ulp figures on synthetic
// measurements whose answers are known by construction.
#include "core/determinism_classify.hpp"

#include <gtest/gtest.h>

#include <bit>
#include <cmath>
#include <limits>
#include <vector>

namespace sumlab {
namespace {

// n ulps above (n > 0) or below x.
float step(float x, int n) {
  for (; n > 0; --n) x = std::nextafter(x, std::numeric_limits<float>::infinity());
  for (; n < 0; ++n) x = std::nextafter(x, -std::numeric_limits<float>::infinity());
  return x;
}

ShapeOutcome<float> shape(const char* label, std::vector<float> runs) {
  return {label, tally<float>(std::span<const float>(runs))};
}

std::optional<Classification> run(const std::vector<ShapeOutcome<float>>& s, float ref) {
  return classify<float>(std::span<const ShapeOutcome<float>>(s), ref);
}

TEST(DeterminismClassify, TallyCountsBitPatternsInFirstAppearanceOrder) {
  const std::vector<float> r{1.0f, 2.0f, 1.0f, 0.0f, -0.0f, 1.0f};
  const auto t = tally<float>(std::span<const float>(r));
  ASSERT_EQ(t.size(), 4u);  // +0 and -0 are two patterns
  EXPECT_EQ(t[0].value, 1.0f);
  EXPECT_EQ(t[0].count, 3);
  EXPECT_EQ(t[1].count, 1);
  EXPECT_TRUE(std::signbit(t[3].value));
  const ShapeOutcome<float> all{"s", t};
  EXPECT_EQ(all.runs(), 6);
}

TEST(DeterminismClassify, OnePatternEverywhereIsShapeInvariant) {
  const float ref = 1.5f;
  const auto c = run({shape("a", {ref, ref, ref}), shape("b", {ref, ref}), shape("c", {ref})}, ref);
  ASSERT_TRUE(c);
  EXPECT_EQ(c->measured, Determinism::shape_invariant);
  EXPECT_EQ(c->shapes, 3);
  EXPECT_EQ(c->runs, 6);
  EXPECT_EQ(c->distinct_within_shape_max, 1);
  EXPECT_EQ(c->shapes_with_variation, 0);
  EXPECT_EQ(c->distinct_across_shapes, 1);
  EXPECT_TRUE(c->has_ulps);
  EXPECT_EQ(c->spread_ulps, 0u);
  EXPECT_EQ(c->max_abs_ulps, 0u);
}

TEST(DeterminismClassify, OnePatternPerShapeButShapesDifferIsRunToRun) {
  const float ref = 1000.0f;
  const auto c = run({shape("a", {step(ref, -2), step(ref, -2)}), shape("b", {ref, ref}),
                      shape("c", {step(ref, 3), step(ref, 3), step(ref, 3)})},
                     ref);
  ASSERT_TRUE(c);
  EXPECT_EQ(c->measured, Determinism::run_to_run);
  EXPECT_EQ(c->distinct_within_shape_max, 1);
  EXPECT_EQ(c->distinct_across_shapes, 3);
  EXPECT_EQ(c->min_ulps, -2);
  EXPECT_EQ(c->max_ulps, 3);
  EXPECT_EQ(c->spread_ulps, 5u);
  EXPECT_EQ(c->max_abs_ulps, 3u);
}

TEST(DeterminismClassify, TwoPatternsInOneShapeIsNotDeterministic) {
  const float ref = 3.0f;
  const auto c = run({shape("a", {ref, ref}), shape("b", {ref, step(ref, 1), ref, step(ref, 4)})}, ref);
  ASSERT_TRUE(c);
  EXPECT_EQ(c->measured, Determinism::not_deterministic);
  EXPECT_EQ(c->distinct_within_shape_max, 3);
  EXPECT_EQ(c->shapes_with_variation, 1);
  EXPECT_EQ(c->distinct_across_shapes, 3);
  EXPECT_EQ(c->spread_ulps, 4u);
  // Run-to-run variation decides even when every shape's patterns are shared with the others.
  const auto d = run({shape("a", {ref, step(ref, 1)}), shape("b", {step(ref, 1), ref})}, ref);
  ASSERT_TRUE(d);
  EXPECT_EQ(d->measured, Determinism::not_deterministic);
  EXPECT_EQ(d->distinct_across_shapes, 2);
}

TEST(DeterminismClassify, EdgeCases) {
  // Nothing measured: no class.
  EXPECT_FALSE(run({}, 1.0f));
  EXPECT_FALSE(run({ShapeOutcome<float>{"empty", {}}}, 1.0f));
  // A shape with no runs is ignored; one shape cannot show shape invariance: run_to_run at best,
  // which a declaration of shape invariance meets as one_shape, not as a violation.
  const auto one = run({ShapeOutcome<float>{"empty", {}}, shape("a", {2.0f, 2.0f})}, 2.0f);
  ASSERT_TRUE(one);
  EXPECT_EQ(one->shapes, 1);
  EXPECT_EQ(one->measured, Determinism::run_to_run);
  EXPECT_EQ(compare(Determinism::shape_invariant, one->measured, one->shapes), Agreement::one_shape);
  EXPECT_EQ(compare(Determinism::shape_invariant, one->measured, 2), Agreement::violated);
  EXPECT_EQ(compare(Determinism::not_deterministic, one->measured, one->shapes), Agreement::stronger);
  // Signed zeros are different bits: a run that returns +0 then -0 is not deterministic, 0 ulps apart.
  const auto z = run({shape("a", {0.0f, -0.0f})}, 0.0f);
  ASSERT_TRUE(z);
  EXPECT_EQ(z->measured, Determinism::not_deterministic);
  EXPECT_EQ(z->spread_ulps, 0u);
  // NaN patterns count as patterns but stay out of the ulp figures.
  const float nan = std::numeric_limits<float>::quiet_NaN();
  const auto n = run({shape("a", {nan, nan}), shape("b", {1.0f})}, 1.0f);
  ASSERT_TRUE(n);
  EXPECT_EQ(n->measured, Determinism::run_to_run);
  EXPECT_EQ(n->nan_patterns, 1);
  EXPECT_TRUE(n->has_ulps);
  EXPECT_EQ(n->spread_ulps, 0u);
  // A NaN reference: classes still, no ulps.
  const auto r = run({shape("a", {nan})}, nan);
  ASSERT_TRUE(r);
  EXPECT_FALSE(r->has_ulps);
  // Values across zero: ulps are counted through the subnormals, -min_subnormal to +min_subnormal is 2.
  const float tiny = std::numeric_limits<float>::denorm_min();
  const auto s = run({shape("a", {-tiny}), shape("b", {tiny})}, 0.0f);
  ASSERT_TRUE(s);
  EXPECT_EQ(s->min_ulps, -1);
  EXPECT_EQ(s->max_ulps, 1);
  EXPECT_EQ(s->spread_ulps, 2u);
}

TEST(DeterminismClassify, DoubleWorksTheSame) {
  const double ref = 0.1;
  std::vector<double> a{ref, ref}, b{std::nextafter(ref, 1.0)};
  const std::vector<ShapeOutcome<double>> s{{"a", tally<double>(std::span<const double>(a))},
                                            {"b", tally<double>(std::span<const double>(b))}};
  const auto c = classify<double>(std::span<const ShapeOutcome<double>>(s), ref);
  ASSERT_TRUE(c);
  EXPECT_EQ(c->measured, Determinism::run_to_run);
  EXPECT_EQ(c->spread_ulps, 1u);
}

TEST(DeterminismClassify, CompareWithDeclared) {
  using D = Determinism;
  EXPECT_EQ(compare(D::run_to_run, D::run_to_run), Agreement::matches);
  EXPECT_EQ(compare(D::not_deterministic, D::shape_invariant), Agreement::stronger);
  EXPECT_EQ(compare(D::shape_invariant, D::run_to_run), Agreement::violated);
  EXPECT_EQ(compare(D::run_to_run, D::not_deterministic), Agreement::violated);
  EXPECT_EQ(to_string(Agreement::violated), "violated");
  for (D d : {D::not_deterministic, D::run_to_run, D::shape_invariant}) EXPECT_EQ(parse_determinism(to_string(d)), d);
  EXPECT_FALSE(parse_determinism("sometimes"));
}

TEST(DeterminismClassify, SummaryTakesTheLeastDeterministicInput) {
  Classification inv, r2r, nd;
  inv.measured = Determinism::shape_invariant;
  inv.distinct_across_shapes = 1;
  r2r.measured = Determinism::run_to_run;
  r2r.distinct_across_shapes = 7;
  r2r.has_ulps = true;
  r2r.spread_ulps = 9;
  nd.measured = Determinism::not_deterministic;
  nd.distinct_within_shape_max = 3;
  nd.has_ulps = true;
  nd.max_abs_ulps = 4;
  const std::vector<Classification> v{inv, r2r, r2r, nd, r2r};
  const ClassSummary s = summarize(std::span<const Classification>(v));
  EXPECT_EQ(s.measured, Determinism::not_deterministic);
  EXPECT_EQ(s.witness, 3);
  EXPECT_EQ(s.inputs, 5);
  EXPECT_EQ(s.inputs_at_measured, 1);
  EXPECT_EQ(s.distinct_within_shape_max, 3);
  EXPECT_EQ(s.distinct_across_shapes_max, 7);
  EXPECT_EQ(s.spread_ulps_max, 9u);
  EXPECT_EQ(s.max_abs_ulps, 4u);
  const std::vector<Classification> w{inv, r2r, inv, r2r};
  const ClassSummary t = summarize(std::span<const Classification>(w));
  EXPECT_EQ(t.measured, Determinism::run_to_run);
  EXPECT_EQ(t.witness, 1);
  EXPECT_EQ(t.inputs_at_measured, 2);
  EXPECT_EQ(summarize(std::span<const Classification>()).witness, -1);
}

// The rule on counts alone (vectors of results hashed: segmented sums, scans, dots use it): one
// shape is never shape_invariant, whatever the runs showed.
TEST(DeterminismClassify, TheRuleOnCountsNeverCallsOneShapeInvariant) {
  using D = Determinism;
  EXPECT_EQ(measured_class(1, 1, 1), D::run_to_run);
  EXPECT_EQ(measured_class(2, 1, 1), D::shape_invariant);
  EXPECT_EQ(measured_class(5, 1, 3), D::run_to_run);
  EXPECT_EQ(measured_class(1, 2, 2), D::not_deterministic);
  EXPECT_EQ(measured_class(0, 0, 0), D::run_to_run);
  // classify agrees with it.
  const auto one = run({shape("a", {1.0f, 1.0f, 1.0f})}, 1.0f);
  ASSERT_TRUE(one);
  EXPECT_EQ(one->measured, measured_class(one->shapes, one->distinct_within_shape_max, one->distinct_across_shapes));
}

// What ran, not what was asked: the fewest runs of one shape, per input and over the inputs.
TEST(DeterminismClassify, RunsMinIsTheFewestRunsOfOneShape) {
  const auto c = run({shape("a", {1.0f, 1.0f, 1.0f, 1.0f, 1.0f}), shape("b", {1.0f, 1.0f}), shape("c", {1.0f, 1.0f, 1.0f})},
                     1.0f);
  ASSERT_TRUE(c);
  EXPECT_EQ(c->runs, 10);
  EXPECT_EQ(c->runs_min, 2);
  Classification a = *c, b = *c;
  b.runs_min = 7;
  b.shapes = 9;
  const std::vector<Classification> v{b, a};
  const ClassSummary s = summarize(std::span<const Classification>(v));
  EXPECT_EQ(s.runs_min, 2);
  EXPECT_EQ(s.shapes_max, 9);
}

// An input whose every pattern is NaN has no ulp figures: the summary says so (has_ulps false)
// instead of showing 0 ulps, and keeps the NaN patterns.
TEST(DeterminismClassify, SummaryCarriesNanInsteadOfZeroUlps) {
  const float nan = std::numeric_limits<float>::quiet_NaN();
  const float other_nan = std::bit_cast<float>(0x7fc00001u);
  const auto c = run({shape("a", {nan, nan}), shape("b", {other_nan})}, nan);
  ASSERT_TRUE(c);
  EXPECT_EQ(c->nan_patterns, 2);
  EXPECT_FALSE(c->has_ulps);
  const std::vector<Classification> only_nan{*c};
  const ClassSummary s = summarize(std::span<const Classification>(only_nan));
  EXPECT_FALSE(s.has_ulps);
  EXPECT_EQ(s.nan_patterns_max, 2);
  // Beside an input with figures: those figures, and the NaN patterns still counted.
  Classification finite;
  finite.measured = Determinism::run_to_run;
  finite.has_ulps = true;
  finite.spread_ulps = 3;
  finite.max_abs_ulps = 5;
  const std::vector<Classification> mixed{*c, finite};
  const ClassSummary m = summarize(std::span<const Classification>(mixed));
  EXPECT_TRUE(m.has_ulps);
  EXPECT_EQ(m.spread_ulps_max, 3u);
  EXPECT_EQ(m.max_abs_ulps, 5u);
  EXPECT_EQ(m.nan_patterns_max, 2);
}

}  // namespace
}  // namespace sumlab
