// `sumlab study segmented`: segmented sums (core/segmented/, gpu/segmented.hpp) over segment-size
// distributions. Per (dtype, size distribution, segments, mean size, seed) cell, every strategy
// and each of its launch shapes (columns: data/README.md):
//   segmented_errors.csv         per-segment error in ulps against the exact MPFR sums (max and
//                                quantiles), wrong empty segments, GPU bits == model bits, time
//                                and the fraction of the memory-bound time;
//   segmented_determinism.csv    distinct bit patterns across launch shapes and across repeated
//                                runs, the measured determinism class against the declared one;
//   segmented_ulp_histogram.csv  how many segments fall in each ulp-error bucket.
// The study is thin: options -> plan -> cells (inputs, exact reference, SegRunner calls) -> CSV.
// Exits non-zero when a modelled kernel's bits differ from its model, a strategy not kept as a
// pitfall returns something other than +0 for an empty segment, or a measured determinism class
// is weaker than the declared one; everything is written first.
#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <limits>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "core/determinism_classify.hpp"
#include "core/float_traits.hpp"
#include "core/generators.hpp"
#include "core/metrics.hpp"
#include "core/order_model/reduce_ops.hpp"
#include "core/segmented/segment_sizes.hpp"
#include "core/segmented/strategy.hpp"
#include "reference/segment_sums.hpp"
#include "studies/commands.hpp"
#include "studies/fnv1a.hpp"
#include "studies/input_options.hpp"
#include "studies/parallel_for.hpp"
#include "studies/row_backend.hpp"  // pick_row_backend, copy_bandwidth: the same backends and roof
#include "studies/run_folder.hpp"
#include "studies/study_driver.hpp"
#include "studies/segmented_backend.hpp"
#include "studies/study_data.hpp"

namespace sumlab {
namespace {

using segmented::Offset;
using segmented::SegShape;
using segmented::SizeDistribution;
using segmented::Strategy;
using segmented::Where;

struct SegmentedOptions {
  RunOptions run;
  std::string backend, values;             // default uniform
  bool quick = false;
  std::vector<std::string> dtypes;         // default both
  std::string input, input_format, flatten;  // the user's values (--input) for the --offsets layout
  std::vector<std::string> distributions;  // default: all four
  std::vector<std::string> strategies{"all"};
  std::vector<std::int64_t> segments;      // default 65536 (quick 512)
  std::vector<double> means;               // default 16, 256 (quick 16)
  std::vector<int> blocks;                 // block/warp per segment (default 64,256,1024; warp 32,256)
  std::vector<std::string> scan_tiles;     // "256x4" (default 64x1,256x4,1024x3)
  int seeds = 1, reps = 0, runs = 0;
  std::vector<std::int64_t> offsets;       // a hand-made layout instead of the distributions
  std::string offsets_file;                 // or read from a file (read_offsets)
  std::optional<std::int64_t> n;           // its number of values (default: its last offset)
  std::vector<std::string> externals;      // the user's segment sums, registered by name (Python)
};

struct Plan {
  BackendKind backend;
  std::string backend_name;
  DistributionSpec values;
  std::vector<SizeDistribution> dists;
  std::vector<Strategy> strategies;
  std::vector<std::int64_t> segments;
  std::vector<double> means;
  std::vector<SegShape> block_shapes, warp_shapes, scan_shapes;
  int reps, runs;
  std::optional<std::vector<Offset>> custom;  // --offsets: one layout, distribution "custom"
  std::vector<std::shared_ptr<ExternalArray>> externals;  // the user's segment sums
  std::vector<std::string> dtypes;
  std::optional<StudyData> data;  // --input: the values of the --offsets layout, values "data"
};

// The values column: the generator's distribution, or "data".
std::string values_name(const Plan& p) { return p.data ? "data" : std::string(to_string(p.values.kind)); }

// The most --offsets boundaries a plan lists one by one.
constexpr std::size_t kOffsetsVerbatim = 1025;

const std::vector<std::string> kErrorColumns = {
    "study", "backend", "dtype", "values", "distribution", "segments", "mean_size", "n", "seed", "empty_segments",
    "max_segment", "strategy", "where", "known_wrong", "shape", "max_ulps", "p50_ulps", "p90_ulps", "p99_ulps",
    "inexact_segments", "max_rel_error", "wrong_empty", "gpu_equals_model", "ms", "bytes", "roof_ms",
    "fraction_of_roof", "copy_gbps", "note", "runs", "distinct_runs"};
const std::vector<std::string> kDeterminismColumns = {
    "study", "backend", "dtype", "values", "distribution", "segments", "mean_size", "n", "seed", "strategy", "shapes",
    "distinct_across_shapes", "runs", "distinct_across_runs", "declared", "measured", "consistent"};
const std::vector<std::string> kHistogramColumns = {"backend", "dtype", "values", "distribution", "segments",
                                                    "mean_size", "n", "seed", "strategy", "shape", "bucket",
                                                    "bucket_low", "segments_in_bucket"};
// Ulp-error buckets [low, next low); the last holds everything larger, Inf and NaN included.
const std::uint64_t kBucketLow[] = {0, 1, 2, 4, 16, 256, 65536};
const char* const kBucketName[] = {"0", "1", "2-3", "4-15", "16-255", "256-65535", ">=65536"};

std::string opt_num(const std::optional<double>& v) { return v ? csv_number(*v) : std::string(); }

std::vector<SegShape> shapes_of(const Plan& p, Strategy st) {
  switch (segmented::info(st).where) {
    case Where::cpu:
    case Where::gpu_peer: return {SegShape{}};
    case Where::gpu_modelled: break;
  }
  if (st == Strategy::block_per_segment) return p.block_shapes;
  if (st == Strategy::warp_per_segment) return p.warp_shapes;
  return p.scan_shapes;
}

double quantile(const std::vector<double>& sorted, double q) {
  if (sorted.empty()) return 0;
  const auto i = static_cast<std::size_t>(std::ceil(q * double(sorted.size()))) ;
  return sorted[std::min(sorted.size() - 1, i == 0 ? 0 : i - 1)];
}

template <class T> std::uint64_t bits_hash(const std::vector<T>& v) {
  std::uint64_t h = 1469598103934665603ull;  // FNV-1a over the bit patterns (every NaN alike)
  for (T x : v) {
    const std::uint64_t b = std::isnan(x) ? 0x7ff8ull : static_cast<std::uint64_t>(to_bits(x));
    h = (h ^ b) * 1099511628211ull;
  }
  return h;
}

// Exact sums, segments split over threads (each chunk's offsets rebased to its first value).
template <class T> std::vector<T> exact_sums(std::span<const T> x, const std::vector<Offset>& off) {
  const std::size_t segs = off.size() - 1;
  std::vector<T> out(segs);
  const std::size_t chunk = 4096, chunks = (segs + chunk - 1) / chunk;
  parallel_for(chunks, static_cast<int>(std::max(1u, std::thread::hardware_concurrency())), [&](std::size_t c) {
    const std::size_t a = c * chunk, b = std::min(segs, a + chunk);
    std::vector<Offset> o(off.begin() + static_cast<std::ptrdiff_t>(a), off.begin() + static_cast<std::ptrdiff_t>(b) + 1);
    const Offset base = o[0];
    for (auto& e : o) e -= base;
    const std::span<const T> part(x.data() + base, static_cast<std::size_t>(o.back()));
    const auto s = reference::exact_segment_sums<T, Offset>(part, o);
    std::copy(s.begin(), s.end(), out.begin() + static_cast<std::ptrdiff_t>(a));
  });
  return out;
}

struct SegmentedCell {
  std::vector<std::vector<std::string>> errors, determinism, histogram;
  std::vector<std::string> notes;
};

// One subject of a cell: a strategy (its timed runner, one that runs once per call for the repeated
// runs, and on cuda the model its GPU bits are checked against) or the user's segment sums.
template <class T> struct SegSubject {
  std::unique_ptr<SegRunner<T>> timed, rerun, model;
  std::string name, where;  // where: cpu, gpu, gpu_peer, external
  bool known_wrong = false;
  Determinism declared;
  bool rerun_every_config;  // the user's: every configuration's runs; a strategy's: its first shape's
  int runs;
};

// One configuration of one subject.
template <class T> struct SegJob {
  std::size_t subject, c;
  std::vector<T> sums;
  std::optional<double> ms;
  std::optional<bool> equals_model;
  std::vector<std::uint64_t> run_hashes;  // the repeated runs
  std::string note;                       // why a user's call gave no sums
};

template <class T>
std::vector<SegSubject<T>> cell_subjects(const Plan& p, const SegKernelInput<T>& input, bool finite) {
  std::vector<SegSubject<T>> subjects;
  for (Strategy st : p.strategies) {
    if (!input.can_run(st)) continue;
    const auto& inf = segmented::info(st);
    const std::vector<SegShape> shapes = shapes_of(p, st);
    SegSubject<T> s{segmented_runner<T>(st, p.backend, shapes, p.reps), segmented_runner<T>(st, p.backend, shapes),
                    nullptr, std::string(inf.name),
                    inf.where == Where::cpu ? "cpu" : inf.where == Where::gpu_peer ? "gpu_peer" : "gpu",
                    inf.known_wrong, inf.determinism, false, p.runs};
    if (p.backend == BackendKind::cuda && inf.where == Where::gpu_modelled)
      s.model = segmented_runner<T>(st, BackendKind::model, shapes);
    subjects.push_back(std::move(s));
  }
  for (const auto& e : p.externals) {
    auto r = external_segmented_runner<T>(e, finite);
    const Determinism declared = r->declared();
    subjects.push_back({std::move(r), nullptr, nullptr, e->name(), "external", false, declared, true,
                        std::max(p.runs, 2)});
  }
  return subjects;
}

// Runs every job: the lab's in parallel on the model backend, one at a time on cuda (they are
// timed), the user's one at a time after them (a Python subject holds the interpreter); then on
// cuda the GPU bits are checked against the model's on every CPU core.
template <class T>
void run_jobs(const Plan& p, std::vector<SegSubject<T>>& subjects, std::vector<SegJob<T>>& jobs,
              SegKernelInput<T>& input, SegKernelInput<T>* on_model) {
  auto execute = [&](std::size_t i) {
    SegJob<T>& j = jobs[i];
    SegSubject<T>& sub = subjects[j.subject];
    SegRunner<T>& again = sub.rerun ? *sub.rerun : *sub.timed;
    auto o = sub.timed->run(j.c, input);
    if (o.failed) {
      j.note = o.note;
      return;
    }
    j.ms = device_ms(*sub.timed, o);
    j.sums = std::move(o.value);
    if (j.c != 0 && !sub.rerun_every_config) return;
    j.run_hashes.push_back(bits_hash(j.sums));
    for (int r = 1; r < sub.runs; ++r) {
      auto next = again.run(j.c, input);
      if (next.failed) {
        j.note = fmt::format("call {}: {}", r + 1, next.note);
        return;
      }
      j.run_hashes.push_back(bits_hash(next.value));
    }
  };
  const int threads = static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  std::size_t ours = 0;
  while (ours < jobs.size() && subjects[jobs[ours].subject].where != "external") ++ours;
  if (p.backend == BackendKind::model) {
    parallel_for(ours, threads, execute);
  } else {
    for (std::size_t i = 0; i < ours; ++i) execute(i);
  }
  for (std::size_t i = ours; i < jobs.size(); ++i) execute(i);
  if (!on_model) return;
  parallel_for(jobs.size(), threads, [&](std::size_t i) {
    SegJob<T>& j = jobs[i];
    if (!subjects[j.subject].model) return;
    const std::vector<T> m = subjects[j.subject].model->run(j.c, *on_model).value;
    bool same = m.size() == j.sums.size();
    for (std::size_t k = 0; same && k < m.size(); ++k) same = same_bits(m[k], j.sums[k]);
    j.equals_model = same;
  });
}

// A job's error row and histogram rows against the exact sums (a failed call: its note, no error).
template <class T>
void error_rows(const std::vector<std::string>& key, const std::vector<std::string>& layout, const SegSubject<T>& sub,
                const SegJob<T>& j, const std::vector<Offset>& off, const std::vector<T>& exact, double bytes,
                const std::optional<double>& bandwidth, SegmentedCell& out) {
  const std::string shape = sub.timed->config_label(j.c);
  const std::string name = sub.where == "external" ? sub.timed->row_name(j.c) : sub.name;
  const bool ok = j.note.empty() || !j.sums.empty();
  std::vector<double> ulps;
  std::array<long, std::size(kBucketLow)> buckets{};
  long inexact = 0, wrong_empty = 0;
  double max_rel = 0;
  for (std::size_t k = 0; !j.sums.empty() && k + 1 < off.size(); ++k) {
    const T got = j.sums[k], want = exact[k];
    if (off[k] == off[k + 1]) {
      wrong_empty += !same_bits(got, T(0));
      continue;
    }
    const std::uint64_t d = ulp_distance(got, want);
    ulps.push_back(d == std::numeric_limits<std::uint64_t>::max() ? std::numeric_limits<double>::infinity()
                                                                   : static_cast<double>(d));
    inexact += d != 0;
    std::size_t b = 0;
    while (b + 1 < std::size(kBucketLow) && d >= kBucketLow[b + 1]) ++b;
    ++buckets[b];
    if (want != T(0)) {
      const double rel = std::fabs((static_cast<double>(got) - static_cast<double>(want)) / static_cast<double>(want));
      max_rel = std::max(max_rel, std::isnan(rel) ? std::numeric_limits<double>::infinity() : rel);
    }
  }
  std::sort(ulps.begin(), ulps.end());
  std::vector<std::string> row = {"segmented"};
  row.insert(row.end(), layout.begin(), layout.end());
  row.insert(row.end(), {name, sub.where, sub.known_wrong ? "1" : "0", shape});
  if (ok) {
    row.insert(row.end(), {csv_number(ulps.empty() ? 0 : ulps.back()), csv_number(quantile(ulps, 0.5)),
                           csv_number(quantile(ulps, 0.9)), csv_number(quantile(ulps, 0.99)), std::to_string(inexact),
                           csv_number(max_rel), std::to_string(wrong_empty)});
  } else {
    row.insert(row.end(), 7, "");
  }
  row.push_back(j.equals_model ? (*j.equals_model ? "1" : "0") : "");
  if (j.ms && bandwidth && *bandwidth > 0 && *j.ms > 0) {
    const double roof_ms = bytes / *bandwidth * 1e3;
    row.insert(row.end(), {csv_number(*j.ms), csv_number(bytes), csv_number(roof_ms), csv_number(roof_ms / *j.ms),
                           csv_number(*bandwidth / 1e9)});
  } else {
    row.insert(row.end(), {opt_num(j.ms), csv_number(bytes), "", "", ""});
  }
  row.push_back(j.note);
  // This configuration's own repeated runs (a strategy's first shape, each of the user's), so that a
  // user's configurations (deterministic mode on and off) are told apart.
  const std::set<std::uint64_t> distinct(j.run_hashes.begin(), j.run_hashes.end());
  row.push_back(j.run_hashes.empty() ? "" : std::to_string(j.run_hashes.size()));
  row.push_back(j.run_hashes.empty() ? "" : std::to_string(distinct.size()));
  out.errors.push_back(std::move(row));
  if (!ok) {
    out.notes.push_back(fmt::format("{} {} {}: {}", key[1], key[3], name, j.note));
    return;
  }
  for (std::size_t b = 0; b < std::size(kBucketLow); ++b) {
    std::vector<std::string> h = key;
    h.insert(h.end(), {name, shape, kBucketName[b], std::to_string(kBucketLow[b]), std::to_string(buckets[b])});
    out.histogram.push_back(std::move(h));
  }
  if (j.equals_model && !*j.equals_model)
    out.notes.push_back(fmt::format("{} {} {} {}: GPU bits differ from the model's", key[1], key[3], name, shape));
  if (wrong_empty && !sub.known_wrong)
    out.notes.push_back(fmt::format("{} {} {} {}: {} empty segment(s) not +0", key[1], key[3], name, shape, wrong_empty));
}

// Per subject: distinct bit patterns across its configurations and across repeated runs, and the
// class they measure against the declared one (none when a call failed), by
// core/determinism_classify.hpp's rule: one configuration shows no shape invariance.
template <class T>
void determinism_rows(const std::vector<std::string>& key, const std::vector<SegSubject<T>>& subjects,
                      const std::vector<SegJob<T>>& jobs, SegmentedCell& out) {
  for (std::size_t si = 0; si < subjects.size(); ++si) {
    const SegSubject<T>& sub = subjects[si];
    std::set<std::uint64_t> across_shapes;
    std::size_t configs = 0, runs = 0, distinct_runs = 0;
    bool failed = false;
    for (const SegJob<T>& j : jobs) {
      if (j.subject != si) continue;
      ++configs;
      failed |= !j.note.empty();
      if (!j.sums.empty()) across_shapes.insert(bits_hash(j.sums));
      const std::set<std::uint64_t> r(j.run_hashes.begin(), j.run_hashes.end());
      runs = std::max(runs, j.run_hashes.size());
      distinct_runs = std::max(distinct_runs, r.size());
    }
    const Determinism measured = measured_class(static_cast<int>(configs), static_cast<int>(distinct_runs),
                                                static_cast<int>(across_shapes.size()));
    const bool consistent =
        failed || compare(sub.declared, measured, static_cast<int>(configs)) != Agreement::violated;
    if (!consistent)
      out.notes.push_back(fmt::format("{} {} {}: measured {} but declared {}", key[1], key[3], sub.name,
                                      to_string(measured), to_string(sub.declared)));
    std::vector<std::string> row = {"segmented"};
    row.insert(row.end(), key.begin(), key.end());
    row.insert(row.end(), {sub.name, std::to_string(configs), std::to_string(across_shapes.size()),
                           std::to_string(runs), std::to_string(distinct_runs), std::string(to_string(sub.declared)),
                           failed ? "" : std::string(to_string(measured)), failed ? "" : consistent ? "1" : "0"});
    out.determinism.push_back(std::move(row));
  }
}

template <class T>
SegmentedCell run_cell(const Plan& p, const std::string& dist, const std::vector<Offset>& off, double mean,
                       std::uint64_t seed, const std::optional<double>& bandwidth) {
  const std::string dtype = sizeof(T) == 4 ? "float32" : "float64";
  const auto segments = static_cast<std::int64_t>(off.size()) - 1;
  const std::int64_t n = off.back();
  std::vector<T> generated;  // the user's values are read where they lie
  const std::span<const T> x =
      p.data ? p.data->values<T>() : (generated = generate<T>(p.values, seed, static_cast<std::size_t>(n)));
  const std::vector<T> exact = exact_sums(x, off);
  std::int64_t empty = 0, largest = 0;
  for (std::size_t j = 0; j + 1 < off.size(); ++j) {
    empty += off[j] == off[j + 1];
    largest = std::max<std::int64_t>(largest, off[j + 1] - off[j]);
  }
  SegKernelInput<T> input(p.backend, x, off);
  std::unique_ptr<SegKernelInput<T>> on_model;  // on cuda, the modelled strategies are checked against the model
  if (p.backend == BackendKind::cuda) on_model = std::make_unique<SegKernelInput<T>>(BackendKind::model, x, off);
  const bool finite = std::all_of(x.begin(), x.end(), [](T v) { return std::isfinite(v); });
  std::vector<SegSubject<T>> subjects = cell_subjects<T>(p, input, finite);
  std::vector<SegJob<T>> jobs;
  for (std::size_t si = 0; si < subjects.size(); ++si)
    for (std::size_t c = 0; c < subjects[si].timed->configs(); ++c) jobs.push_back({si, c, {}, {}, {}, {}, {}});
  run_jobs<T>(p, subjects, jobs, input, on_model.get());

  const std::vector<std::string> key = {p.backend_name, dtype, values_name(p),
                                        dist, std::to_string(segments), csv_number(mean),
                                        std::to_string(n), std::to_string(seed)};
  std::vector<std::string> layout = key;
  layout.insert(layout.end(), {std::to_string(empty), std::to_string(largest)});
  const double bytes = double(n) * sizeof(T) + double(segments + 1) * sizeof(Offset) + double(segments) * sizeof(T);
  SegmentedCell out;
  for (const SegJob<T>& j : jobs) error_rows(key, layout, subjects[j.subject], j, off, exact, bytes, bandwidth, out);
  determinism_rows(key, subjects, jobs, out);
  return out;
}

SegShape parse_tile(const std::string& t) {
  const auto x = t.find('x');
  try {
    if (x == std::string::npos) throw std::invalid_argument(t);
    std::size_t used = 0;
    const int b = std::stoi(t.substr(0, x), &used);
    if (used != x) throw std::invalid_argument(t);
    const int i = std::stoi(t.substr(x + 1), &used);
    if (used != t.size() - x - 1) throw std::invalid_argument(t);
    return SegShape{b, i};
  } catch (const std::exception&) {
    throw UserError("--scan-tiles: '" + t + "' is not BLOCKxITEMS (e.g. 256x4)");
  }
}

Plan make_plan(const SegmentedOptions& o) {
  Plan p;
  p.backend = pick_row_backend(o.backend);
  p.backend_name = std::string(to_string(p.backend));
  try {
    p.values.kind = parse_distribution(o.values.empty() ? "uniform" : o.values);
  } catch (const std::invalid_argument& e) {
    throw UserError(std::string("--values: ") + e.what());
  }
  if (p.values.kind == Distribution::ill_conditioned)
    throw UserError("--values ill_conditioned is not a pure function of the index; pick another distribution");
  if (o.distributions.empty()) {
    p.dists.assign(segmented::kAllSizeDistributions.begin(), segmented::kAllSizeDistributions.end());
  } else {
    for (const auto& d : o.distributions) {
      try {
        p.dists.push_back(segmented::parse_size_distribution(d));
      } catch (const std::invalid_argument& e) {
        throw UserError(std::string("--distributions: ") + e.what());
      }
    }
  }
  for (const auto& name : o.strategies) {
    if (name == "all") {
      for (const auto& i : segmented::strategies()) p.strategies.push_back(i.strategy);
    } else if (auto s = segmented::find_strategy(name)) {
      p.strategies.push_back(*s);
    } else {
      throw UserError("unknown strategy '" + name + "' (valid: all, " + segmented::strategy_names() + ")");
    }
  }
  for (const auto& d : o.dtypes)
    if (d != "float32" && d != "float64") throw UserError("unknown dtype '" + d + "' (valid: float32, float64)");
  p.dtypes = o.dtypes.empty() ? std::vector<std::string>{"float32", "float64"} : o.dtypes;
  if (o.n && *o.n < 0) throw UserError(fmt::format("--n must be >= 0 (got {})", *o.n));
  if (!o.offsets_file.empty() && !o.offsets.empty())
    throw UserError("--offsets and --offsets-file both give the layout; give one");
  // (a layout longer than a command line takes comes from a file: Linux passes 128 KiB an argument)
  const std::vector<std::int64_t> offsets = o.offsets_file.empty() ? o.offsets : read_offsets(o.offsets_file);
  if (!o.offsets_file.empty() && offsets.empty())
    throw UserError(fmt::format("--offsets-file '{}' holds no offsets", o.offsets_file));
  if (!o.input.empty()) {
    if (offsets.empty())
      throw UserError("--input gives the values of an --offsets layout (the segments' boundaries 0 .. n); it needs --offsets");
    if (!o.values.empty()) throw UserError("--values has no effect with --input (the data are the values); drop it");
    if (o.seeds != 1) throw UserError("--seeds has no effect with --input (the data are the values); drop it");
    p.data = open_study_data(o.input, o.input_format, o.flatten);
    p.dtypes = p.data->dtypes(o.dtypes);
    if (o.n && static_cast<std::uint64_t>(*o.n) != p.data->size())
      throw UserError(fmt::format("--n {} but --input '{}' holds {} values; leave --n out", *o.n, p.data->source,
                                  p.data->size()));
  }
  if (!offsets.empty()) {
    const std::int64_t n = p.data ? static_cast<std::int64_t>(p.data->size())
                                  : o.n ? *o.n : std::max<std::int64_t>(offsets.back(), 0);
    try {
      segmented::validate_offsets<Offset>(offsets, static_cast<std::size_t>(n));
    } catch (const std::invalid_argument& e) {
      throw UserError(std::string("--offsets: ") + e.what());
    }
    // Its cells hold n values and a sum per segment, as a generated layout's do (the check on
    // the largest cell below): refused here, before the run folder is opened, not when the first
    // cell allocates.
    const auto segments = static_cast<std::uint64_t>(offsets.size() - 1);
    check_fits_in_memory(static_cast<std::uint64_t>(n) + segments, 64,
                         fmt::format("the --offsets layout ({} values in {} segments)", n, segments));
    p.custom = offsets;
  } else if (o.n) {
    throw UserError("--n gives the number of values of an --offsets layout; it needs --offsets");
  }
  p.segments = o.segments.empty() ? std::vector<std::int64_t>{o.quick ? 512 : 65536} : o.segments;
  p.means = o.means.empty() ? (o.quick ? std::vector<double>{16} : std::vector<double>{16, 256}) : o.means;
  for (auto s : p.segments)
    if (s < 0 || s > (std::int64_t{1} << 31) - 1)
      throw UserError(fmt::format("--segments must be in 0 .. 2^31 - 1 (got {})", s));
  for (double m : p.means)
    if (!std::isfinite(m) || m < 0 || m > 1e9) throw UserError(fmt::format("--mean-sizes must be in 0 .. 1e9 (got {})", m));
  if (o.seeds < 1) throw UserError("--seeds must be >= 1");
  p.reps = o.reps ? o.reps : (o.quick ? 3 : 20);
  p.runs = o.runs ? o.runs : (o.quick ? 2 : 5);
  if (p.reps < 1 || p.runs < 1) throw UserError("--reps and --runs must be >= 1");
  const std::vector<int> blocks = o.blocks.empty() ? (o.quick ? std::vector<int>{64, 256} : std::vector<int>{64, 256, 1024})
                                                   : o.blocks;
  for (int b : blocks) p.block_shapes.push_back({b, 1});
  for (int b : o.blocks.empty() ? std::vector<int>{32, 256} : o.blocks) p.warp_shapes.push_back({b, 1});
  const std::vector<std::string> tiles =
      o.scan_tiles.empty() ? (o.quick ? std::vector<std::string>{"64x1", "256x4"}
                                      : std::vector<std::string>{"64x1", "256x4", "1024x3"})
                           : o.scan_tiles;
  for (const auto& t : tiles) p.scan_shapes.push_back(parse_tile(t));
  p.externals = external_arrays(o.externals, {ArrayKind::segment_sums}, "segmented");
  // Every shape is checked before the run folder is touched.
  for (const auto& [st, list] : {std::pair{Strategy::block_per_segment, &p.block_shapes},
                                 std::pair{Strategy::warp_per_segment, &p.warp_shapes},
                                 std::pair{Strategy::segmented_scan, &p.scan_shapes}})
    for (const SegShape& s : *list)
      if (const std::string why = segmented::validate_shape(st, s); !why.empty())
        throw UserError(std::string(segmented::info(st).name) + ": " + why);
  // The largest cell: values, exact sums, a few result vectors and the scan model's per-tile state.
  double biggest = 0;
  for (auto s : p.segments)
    for (double m : p.means) biggest = std::max(biggest, double(s) * m + double(s));
  check_fits_in_memory(biggest < 0x1p64 ? static_cast<std::uint64_t>(biggest) : ~std::uint64_t{0}, 64,
                       fmt::format("a cell of ~{:.0f} values", biggest));
  return p;
}

nlohmann::ordered_json plan_json(const Plan& p, const SegmentedOptions& o) {
  nlohmann::ordered_json plan;
  plan["backend"] = p.backend_name;
  plan["values"] = values_name(p);
  if (p.data) plan["input"] = p.data->plan();
  plan["dtypes"] = p.dtypes;
  nlohmann::ordered_json dists = nlohmann::ordered_json::array();
  for (auto d : p.dists) dists.push_back(std::string(segmented::to_string(d)));
  plan["distributions"] = dists;
  plan["segments"] = p.segments;
  plan["mean_sizes"] = p.means;
  plan["seeds"] = o.seeds;
  plan["reps"] = p.reps;
  plan["runs"] = p.runs;
  nlohmann::ordered_json strategies = nlohmann::ordered_json::array();
  for (Strategy st : p.strategies) strategies.push_back(std::string(segmented::info(st).name));
  plan["strategies"] = strategies;
  nlohmann::ordered_json shapes = nlohmann::ordered_json::array();
  for (const auto& [st, list] : {std::pair{Strategy::block_per_segment, &p.block_shapes},
                                 std::pair{Strategy::warp_per_segment, &p.warp_shapes},
                                 std::pair{Strategy::segmented_scan, &p.scan_shapes}})
    for (const SegShape& sh : *list) shapes.push_back(segmented::to_string(sh, st));
  plan["shapes"] = shapes;
  // A hand-made layout verbatim while a reader can take it in; a longer one (a Python caller's
  // segments: millions of boundaries, tens of MB of JSON in the plan and again in the summary) by
  // its length, last boundary and hash, which --resume compares as surely.
  if (p.custom && p.custom->size() <= kOffsetsVerbatim) {
    plan["offsets"] = *p.custom;
  } else if (p.custom) {
    Fnv1a64 h;
    h.add(p.custom->data(), p.custom->size() * sizeof(Offset));
    plan["offsets"] = {{"count", p.custom->size()}, {"last", p.custom->back()}, {"fnv1a64", h.hex()}};
  }
  if (!p.externals.empty()) {  // absent otherwise, so earlier runs' plans (and --resume) still match
    nlohmann::ordered_json ext;
    for (const auto& e : p.externals) ext[e->name()] = e->configs();
    plan["external"] = ext;
  }
  return plan;
}

// A cell's layout: (size distribution, segments, mean), or the one --offsets layout.
struct Layout {
  std::string dist;
  std::int64_t segments;
  double mean;
};

std::vector<Layout> layouts_of(const Plan& p) {
  std::vector<Layout> layouts;
  if (p.custom) {
    const auto segs = static_cast<std::int64_t>(p.custom->size()) - 1;
    layouts.push_back({"custom", segs, segs ? double(p.custom->back()) / double(segs) : 0.0});
    return layouts;
  }
  for (SizeDistribution d : p.dists)
    for (auto segs : p.segments)
      for (double mean : p.means) layouts.push_back({std::string(segmented::to_string(d)), segs, mean});
  return layouts;
}

// The cells: dtype x layout x seed. `notes` collects what this invocation's cells say (a resumed
// cell's notes are in its rows).
std::vector<Cell> segmented_cells(const Plan& p, const SegmentedOptions& o, std::optional<double> bandwidth,
                                  std::vector<std::string>& notes) {
  std::vector<Cell> cells;
  for (const auto& dtype : p.dtypes)
    for (const Layout& l : layouts_of(p))
      for (int seed = 1; seed <= o.seeds; ++seed)
        cells.push_back({fmt::format("{}|{}|{}|{}|{}", dtype, l.dist, l.segments, csv_number(l.mean), seed),
                         fmt::format("{} {} segments={} mean={} seed={}", dtype, l.dist, l.segments, csv_number(l.mean), seed),
                         [&p, &notes, bandwidth, dtype, l, seed]() -> CellRows {
                           const std::vector<Offset> off =
                               p.custom ? *p.custom
                                        : segmented::make_offsets({segmented::parse_size_distribution(l.dist), l.segments, l.mean},
                                                                  std::uint64_t(seed));
                           SegmentedCell c = dtype == "float32"
                                                 ? run_cell<float>(p, l.dist, off, l.mean, std::uint64_t(seed), bandwidth)
                                                 : run_cell<double>(p, l.dist, off, l.mean, std::uint64_t(seed), bandwidth);
                           notes.insert(notes.end(), c.notes.begin(), c.notes.end());
                           return {{"segmented_errors.csv", c.errors},
                                   {"segmented_determinism.csv", c.determinism},
                                   {"segmented_ulp_histogram.csv", c.histogram}};
                         }});
  return cells;
}

// The end of the study: the table of worst error and wrong empty segments per strategy over every
// cell (resumed ones too: read back from the folder), the summary and the alarms.
// The user's subjects (`theirs`) are measured, not checked: what they return for an empty segment
// and whether they keep the class they declared are findings, shown as warnings.
void finish_segmented(Study& study, nlohmann::ordered_json summary, std::optional<double> bandwidth,
                      const std::vector<std::string>& notes, const std::set<std::string>& theirs) {
  const CsvTable t = read_csv(study.folder().file("segmented_errors.csv"));
  long mismatches = 0, wrong_ours = 0, wrong_peers = 0, inconsistent = 0, theirs_inconsistent = 0;
  auto at = [](const CsvTable& tab, const std::vector<std::string>& r, const char* c) {
    return r[static_cast<std::size_t>(tab.column(c))];
  };
  std::map<std::string, std::pair<double, long>> worst;
  std::vector<std::string> order;
  for (const auto& r : t.rows) {
    mismatches += at(t, r, "gpu_equals_model") == "0";
    if (at(t, r, "max_ulps").empty()) continue;  // a user's call that failed: its note
    const long wrong = std::stol(at(t, r, "wrong_empty"));
    const std::string& s = at(t, r, "strategy");
    if (!worst.count(s)) order.push_back(s);
    worst[s].first = std::max(worst[s].first, std::stod(at(t, r, "max_ulps")));
    worst[s].second += wrong;
    if (at(t, r, "known_wrong") == "1") continue;  // the pitfalls are wrong on purpose
    (at(t, r, "where") == "gpu_peer" || at(t, r, "where") == "external" ? wrong_peers : wrong_ours) += wrong;
  }
  const CsvTable det = read_csv(study.folder().file("segmented_determinism.csv"));
  for (const auto& r : det.rows)
    (theirs.count(at(det, r, "strategy")) ? theirs_inconsistent : inconsistent) += at(det, r, "consistent") == "0";
  fmt::print("{:<22} {:>14} {:>12}\n", "strategy", "max ulps", "wrong empty");
  for (const auto& s : order) fmt::print("{:<22} {:>14.4g} {:>12}\n", s, worst[s].first, worst[s].second);
  for (const auto& n : notes) fmt::print("  {}\n", n);

  summary["copy_bandwidth_gbps"] = bandwidth ? nlohmann::ordered_json(*bandwidth / 1e9) : nlohmann::ordered_json();
  const GpuModelCheck gpu = gpu_model_check(summary.value("backend", std::string()) == "cuda", mismatches);
  summary["gpu_model_mismatches"] = gpu.count;
  summary["wrong_empty_segments_ours"] = wrong_ours;
  summary["wrong_empty_segments_peers"] = wrong_peers;
  summary["determinism_inconsistent"] = inconsistent;
  summary["csv"] = {"segmented_errors.csv", "segmented_determinism.csv", "segmented_ulp_histogram.csv"};
  std::vector<std::string> headline{fmt::format("{}, {} wrong empty segments (ours), {} determinism classes weaker "
                                                "than declared",
                                                gpu.words, wrong_ours, inconsistent)};
  if (wrong_peers) headline.push_back(fmt::format("WARNING: a CUB peer or a user's subject returned something other "
                                                  "than +0 for {} empty segment(s)", wrong_peers));
  if (theirs_inconsistent)
    headline.push_back(fmt::format("WARNING: {} of the user's subjects measured weaker than declared", theirs_inconsistent));
  study.finish(summary, headline);
  if (mismatches || wrong_ours || inconsistent)
    throw CheckFailed(fmt::format("segmented: {} GPU-vs-model mismatches, {} wrong empty segments, {} determinism "
                                  "classes weaker than declared (see above and {})",
                                  mismatches, wrong_ours, inconsistent, study.folder().dir().string()));
}

void run_segmented_study(const SegmentedOptions& o) {
  const Plan p = make_plan(o);
  const nlohmann::ordered_json plan = plan_json(p, o);
  Study study("segmented", o.run, plan, p.backend_name,
              {{"segmented_errors.csv", kErrorColumns},
               {"segmented_determinism.csv", kDeterminismColumns},
               {"segmented_ulp_histogram.csv", kHistogramColumns}});
  fmt::print("segmented study on {}\n", p.backend_name);
  for (Strategy st : p.strategies)
    if (p.backend != BackendKind::cuda && segmented::info(st).where == Where::gpu_peer)
      fmt::print("  {}: skipped (a CUB peer needs the cuda backend)\n", segmented::info(st).name);

  // The roof: a device-to-device copy of as many bytes as the largest cell's values.
  double largest_bytes = 1 << 20;
  for (auto s : p.segments)
    for (double m : p.means) largest_bytes = std::max(largest_bytes, double(s) * m * 8.0);
  const std::optional<double> bandwidth = copy_bandwidth(p.backend, static_cast<std::size_t>(largest_bytes));
  if (bandwidth) fmt::print("device-to-device copy: {:.1f} GB/s (read + write)\n", *bandwidth / 1e9);

  std::vector<std::string> notes;
  study.run(segmented_cells(p, o, bandwidth, notes));
  if (p.data) p.data->check_unchanged();
  std::set<std::string> theirs;
  for (const auto& e : p.externals) theirs.insert(e->name());
  finish_segmented(study, plan, bandwidth, notes, theirs);
}

}  // namespace

void register_study_segmented(CLI::App& study) {
  auto o = std::make_shared<SegmentedOptions>();
  auto* cmd = study.add_subcommand(
      "segmented",
      "Segmented sums (CSR offsets) per strategy and segment-size distribution: per-segment ulp error vs MPFR, "
      "empty segments, determinism across shapes and runs, time vs the memory-bound time; cuda or model backend");
  add_run_options(*cmd, o->run);
  cmd->add_flag("--quick", o->quick, "A small version: 512 segments of mean 16, two shapes each, 3 timed runs");
  cmd->add_option("--backend", o->backend, "cuda or model (default: cuda when a GPU is present, else model)");
  cmd->add_option("--dtypes", o->dtypes, "float32, float64 (comma list; default both; with --input, the data's own)")
      ->delimiter(',');
  cmd->add_option("--distributions", o->distributions,
                  "Segment sizes: uniform, power_law, many_empty, one_giant (comma list; default all)")
      ->delimiter(',');
  cmd->add_option("--strategies", o->strategies,
                  "Comma list of strategies or 'all' (default): " + segmented::strategy_names())
      ->delimiter(',');
  cmd->add_option("--segments", o->segments, "Segment counts (comma list; default 65536, quick 512)")->delimiter(',');
  cmd->add_option("--mean-sizes", o->means, "Mean elements per segment (comma list; default 16,256, quick 16)")
      ->delimiter(',');
  cmd->add_option("--values", o->values, "Value distribution (core/generators.hpp; default uniform [0,1))")
      ->capture_default_str();
  cmd->add_option("--seeds", o->seeds, "Seeds 1..N per cell")->capture_default_str();
  cmd->add_option("--blocks", o->blocks,
                  "Block sizes of block_per_segment and warp_per_segment (default 64,256,1024 and 32,256)")
      ->delimiter(',');
  cmd->add_option("--scan-tiles", o->scan_tiles, "segmented_scan shapes BLOCKxITEMS (default 64x1,256x4,1024x3)")
      ->delimiter(',');
  cmd->add_option("--offsets", o->offsets,
                  "A hand-made layout instead of the distributions: CSR offsets 0,...,n (comma list; validated)")
      ->delimiter(',');
  add_text_option(*cmd, "--offsets-file", o->offsets_file,
                  "--offsets from a file: a 1-D int32/int64 .npy, or integers separated by commas, spaces or newlines");
  cmd->add_option("--n", o->n, "The number of values of the --offsets layout (default: its last offset)");
  add_text_option(*cmd, "--input", o->input,
                  "The user's values for the --offsets layout (.npy, .csv/.txt, raw with --format), in place of "
                  "--values: their segments summed as index_add_ or segment_sum would, in the data's own dtype");
  add_text_option(*cmd, "--format", o->input_format, "--input's format: npy, csv or raw (default: from the extension)");
  add_text_option(*cmd, "--flatten", o->flatten, "How a 2-D --input becomes one sequence: C or F");
  cmd->add_option("--reps", o->reps, "Timed runs per shape on cuda, median kept (default 20, quick 3)");
  cmd->add_option("--runs", o->runs, "Repeated runs of the first shape for run-to-run determinism (default 5, quick 2)");
  cmd->add_option("--external", o->externals,
                  "The user's segment sums (torch.index_add_, scatter_add_, ...), registered by name from Python "
                  "(sumlab.study.segmented(subjects=...)); each configuration run max(--runs, 2) times")
      ->delimiter(',');
  cmd->callback([o] { run_segmented_study(*o); });
}

}  // namespace sumlab
