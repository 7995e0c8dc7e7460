#pragma once
// Classifying a sum's determinism from measurements (pure: no I/O, no clock).
//
// Input, per (kernel or algorithm, input array): for each launch shape (or thread count) tried,
// the bit patterns its R runs returned, with multiplicities. Output: the measured class
//   not_deterministic  some shape gave more than one bit pattern over its runs;
//   run_to_run         every shape gave one pattern, but not every shape the same one;
//   shape_invariant    one bit pattern over every shape and every run, with at least two shapes
//                      run (one shape shows nothing across shapes: its best class is run_to_run);
// plus the counts behind it and how far apart the values are, in ulps of T from the correctly
// rounded sum (core/metrics.hpp: signed_ulp_distance counts representable values between them).
//
// Values are compared by their bits, as a user comparing outputs would: +0 and -0 are two
// patterns, and so are two NaNs with different payloads. NaNs are left out of the ulp figures
// (nan_patterns counts them).
//
// The class follows from three counts alone (measured_class), so results that are not one float (a
// vector of segment sums, a scan's prefixes, compared by a hash of their bits) are classified by
// the same rule. One run per shape (an order model evaluated once) shows nothing run to run: its
// run_to_run is the model's fixed order, not a measurement, and callers say so.
//
// A measured class is evidence, not proof: R runs that agree do not exclude an R+1-th that
// differs, and one shape says nothing about the others. compare() therefore distinguishes a
// measurement weaker than the declaration (a broken promise) from one stronger (variation the
// declaration allows was not seen).
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "core/determinism.hpp"
#include "core/float_traits.hpp"

namespace sumlab {

// One distinct bit pattern and how many runs returned it.
template <class T> struct ValueCount {
  T value{};
  int count = 0;
};

// The runs of one shape.
template <class T> struct ShapeOutcome {
  std::string shape;                   // label: "528x256 v4 grid_stride ...", "threads=8"
  std::vector<ValueCount<T>> values;   // distinct bit patterns, each with count >= 1
  int runs() const;
};

// Runs -> distinct bit patterns in order of first appearance, with their counts.
template <class T> std::vector<ValueCount<T>> tally(std::span<const T> runs);

struct Classification {
  Determinism measured = Determinism::shape_invariant;
  int shapes = 0;                   // shapes with at least one run
  int runs = 0;                     // runs over every shape
  int runs_min = 0;                 // fewest runs of one shape (0: no shape)
  int distinct_within_shape_max = 0;  // most patterns one shape gave
  int shapes_with_variation = 0;    // shapes that gave more than one pattern
  int distinct_across_shapes = 0;   // patterns over the union of every shape's runs
  int nan_patterns = 0;             // of those, NaN patterns (left out of the ulp figures)
  // Over the non-NaN patterns, signed ulps from the reference (positive: above it). When the
  // reference is NaN, or every pattern is, these stay 0 and has_ulps is false.
  bool has_ulps = false;
  std::int64_t min_ulps = 0, max_ulps = 0;
  std::uint64_t spread_ulps = 0;    // ulps between the smallest and largest value (max - min)
  std::uint64_t max_abs_ulps = 0;   // the value farthest from the reference
};

// The rule: not_deterministic when some shape gave more than one pattern; else shape_invariant when
// at least two shapes ran and gave one pattern between them; else run_to_run (one shape cannot
// show invariance).
Determinism measured_class(int shapes, int distinct_within_shape_max, int distinct_across_shapes);

// nullopt when there is nothing to classify (no shape with a run). `reference` is the correctly
// rounded sum of the input.
template <class T>
std::optional<Classification> classify(std::span<const ShapeOutcome<T>> shapes, T reference);

// Measured against declared.
enum class Agreement {
  matches,   // the same class
  stronger,  // measured more deterministic than declared: the allowed variation was not seen
  violated,  // measured less deterministic than declared: the declaration is wrong
  one_shape, // shape invariance declared, one pattern over the runs, but only one shape was run:
             // as far as the measurement reaches, the declaration holds
};
std::string_view to_string(Agreement a);
// 0 not_deterministic < 1 run_to_run < 2 shape_invariant.
int rank(Determinism d);
// `shapes`: how many shapes were run (Classification::shapes; fewer than 2 cannot show shape
// invariance, so run_to_run is then the declaration's one_shape, not its violation).
Agreement compare(Determinism declared, Determinism measured, int shapes = 2);
// Parses to_string(Determinism); nullopt otherwise.
std::optional<Determinism> parse_determinism(std::string_view s);

// One kernel's classification over several inputs: the least deterministic input decides the
// class (one input that shows shape dependence is enough), the counts are the largest seen (runs:
// the fewest), the ulp figures the largest over the inputs that have them (has_ulps).
struct ClassSummary {
  Determinism measured = Determinism::shape_invariant;
  int inputs = 0;                     // inputs classified
  int inputs_at_measured = 0;         // inputs whose own class equals `measured`
  int witness = -1;                   // index of the first input at `measured` (-1: no input)
  int shapes_max = 0;
  int runs_min = 0;                   // fewest runs of one shape over every input (0: no input)
  int distinct_within_shape_max = 0;
  int distinct_across_shapes_max = 0;
  int nan_patterns_max = 0;
  bool has_ulps = false;              // some input had ulp figures (not every pattern NaN)
  std::uint64_t spread_ulps_max = 0;
  std::uint64_t max_abs_ulps = 0;
};
ClassSummary summarize(std::span<const Classification> per_input);

}  // namespace sumlab
