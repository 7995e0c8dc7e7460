#include "core/determinism_classify.hpp"

#include <algorithm>
#include <cmath>
#include <set>

#include "core/metrics.hpp"

namespace sumlab {

template <class T> int ShapeOutcome<T>::runs() const {
  int r = 0;
  for (const auto& v : values) r += v.count;
  return r;
}

template <class T> std::vector<ValueCount<T>> tally(std::span<const T> runs) {
  std::vector<ValueCount<T>> out;
  for (const T v : runs) {
    auto it = std::find_if(out.begin(), out.end(), [&](const ValueCount<T>& c) { return to_bits(c.value) == to_bits(v); });
    if (it == out.end()) out.push_back({v, 1});
    else ++it->count;
  }
  return out;
}

Determinism measured_class(int shapes, int distinct_within_shape_max, int distinct_across_shapes) {
  if (distinct_within_shape_max > 1) return Determinism::not_deterministic;
  return distinct_across_shapes > 1 || shapes < 2 ? Determinism::run_to_run : Determinism::shape_invariant;
}

template <class T>
std::optional<Classification> classify(std::span<const ShapeOutcome<T>> shapes, T reference) {
  using Bits = typename FloatTraits<T>::Bits;
  Classification c;
  std::set<Bits> all;
  for (const auto& s : shapes) {
    std::set<Bits> here;
    int runs = 0;
    for (const auto& v : s.values) {
      if (v.count <= 0) continue;
      here.insert(to_bits(v.value));
      runs += v.count;
    }
    if (runs == 0) continue;
    ++c.shapes;
    c.runs += runs;
    c.runs_min = c.shapes == 1 ? runs : std::min(c.runs_min, runs);
    const int distinct = static_cast<int>(here.size());
    c.distinct_within_shape_max = std::max(c.distinct_within_shape_max, distinct);
    if (distinct > 1) ++c.shapes_with_variation;
    all.insert(here.begin(), here.end());
  }
  if (c.shapes == 0) return std::nullopt;
  c.distinct_across_shapes = static_cast<int>(all.size());
  c.measured = measured_class(c.shapes, c.distinct_within_shape_max, c.distinct_across_shapes);
  for (const Bits b : all) {
    const T v = from_bits<T>(b);
    if (std::isnan(v)) {
      ++c.nan_patterns;
      continue;
    }
    if (std::isnan(reference)) continue;
    const std::int64_t u = signed_ulp_distance(v, reference);
    if (!c.has_ulps) {
      c.min_ulps = c.max_ulps = u;
      c.has_ulps = true;
    } else {
      c.min_ulps = std::min(c.min_ulps, u);
      c.max_ulps = std::max(c.max_ulps, u);
    }
    c.max_abs_ulps = std::max(c.max_abs_ulps, ulp_distance(v, reference));
  }
  if (c.has_ulps) {
    // max - min without overflow: both are signed distances from one reference.
    c.spread_ulps = c.max_ulps >= 0 && c.min_ulps < 0
                        ? static_cast<std::uint64_t>(c.max_ulps) + (~static_cast<std::uint64_t>(c.min_ulps) + 1)
                        : static_cast<std::uint64_t>(c.max_ulps - c.min_ulps);
  }
  return c;
}

std::string_view to_string(Agreement a) {
  switch (a) {
    case Agreement::matches: return "matches";
    case Agreement::stronger: return "stronger";
    case Agreement::violated: return "violated";
    case Agreement::one_shape: return "one_shape";
  }
  return "?";
}

int rank(Determinism d) {
  switch (d) {
    case Determinism::not_deterministic: return 0;
    case Determinism::run_to_run: return 1;
    case Determinism::shape_invariant: return 2;
  }
  return 0;
}

Agreement compare(Determinism declared, Determinism measured, int shapes) {
  const int d = rank(declared), m = rank(measured);
  if (shapes < 2 && declared == Determinism::shape_invariant && measured == Determinism::run_to_run)
    return Agreement::one_shape;
  return m == d ? Agreement::matches : m > d ? Agreement::stronger : Agreement::violated;
}

std::optional<Determinism> parse_determinism(std::string_view s) {
  for (Determinism d : {Determinism::not_deterministic, Determinism::run_to_run, Determinism::shape_invariant})
    if (to_string(d) == s) return d;
  return std::nullopt;
}

ClassSummary summarize(std::span<const Classification> per_input) {
  ClassSummary s;
  for (std::size_t i = 0; i < per_input.size(); ++i) {
    const Classification& c = per_input[i];
    ++s.inputs;
    if (s.witness < 0 || rank(c.measured) < rank(s.measured)) {
      s.measured = c.measured;
      s.witness = static_cast<int>(i);
      s.inputs_at_measured = 0;
    }
    if (c.measured == s.measured) ++s.inputs_at_measured;
    s.shapes_max = std::max(s.shapes_max, c.shapes);
    s.runs_min = i == 0 ? c.runs_min : std::min(s.runs_min, c.runs_min);
    s.distinct_within_shape_max = std::max(s.distinct_within_shape_max, c.distinct_within_shape_max);
    s.distinct_across_shapes_max = std::max(s.distinct_across_shapes_max, c.distinct_across_shapes);
    s.nan_patterns_max = std::max(s.nan_patterns_max, c.nan_patterns);
    if (!c.has_ulps) continue;  // every pattern NaN (or a NaN reference): no ulps, not 0 ulps
    s.has_ulps = true;
    s.spread_ulps_max = std::max(s.spread_ulps_max, c.spread_ulps);
    s.max_abs_ulps = std::max(s.max_abs_ulps, c.max_abs_ulps);
  }
  return s;
}

template struct ShapeOutcome<float>;
template struct ShapeOutcome<double>;
template std::vector<ValueCount<float>> tally<float>(std::span<const float>);
template std::vector<ValueCount<double>> tally<double>(std::span<const double>);
template std::optional<Classification> classify<float>(std::span<const ShapeOutcome<float>>, float);
template std::optional<Classification> classify<double>(std::span<const ShapeOutcome<double>>, double);

}  // namespace sumlab
