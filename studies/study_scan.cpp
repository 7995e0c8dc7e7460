// `sumlab study scan`: the scans (core/scan/, gpu/scan.hpp) against exact references, six tables in
// one run folder (columns: data/README.md):
//   scan_error.csv        per (algorithm, shape, operator, dtype, distribution, n): the error of every
//                         inclusive prefix in ulps of T against the exact prefix (MPFR, each prefix
//                         correctly rounded once): max, mean, the fraction exactly rounded, max
//                         relative error, the last prefix's error; GPU == model on cuda;
//   scan_position.csv     the same errors by position bin [2^k, 2^(k+1)) terms (growth with the
//                         position), and the recurrence's relative error by position;
//   scan_determinism.csv  per (GPU algorithm, operator, dtype, distribution, n): distinct output bit
//                         patterns across runs of one shape and across shapes, declared vs measured;
//   scan_throughput.csv   cuda only: time of one scan against the memory-bound time (n values read
//                         and n written, over the device-to-device copy bandwidth measured in the run);
//   scan_recurrence.csv   h_t = a_t h_{t-1} + b_t for |a| < 1, = 1, > 1: the serial loop and the affine
//                         scans against an MPFR loop (reference/linear_recurrence.hpp), relative error;
//   scan_work.csv         Hillis-Steele vs Blelloch on the CPU: combines (work) and steps (depth),
//                         executed and by formula.
//   scan_verify.csv       cuda (unless --verify none): GPU bits == model bits (studies/verify_scan.hpp).
// Thin: options -> plan -> library calls -> CSV rows, each (dtype, distribution, n, operator) cell
// appended and flushed when it finishes.
#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <filesystem>
#include <limits>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <span>
#include <string>
#include <vector>

#include "core/counter_rng.hpp"
#include "core/determinism_classify.hpp"
#include "core/float_traits.hpp"
#include "core/generators.hpp"
#include "core/scan/scan_kernel.hpp"
#include "core/scan/scan_model.hpp"
#include "core/scan/scan_ops.hpp"
#include "core/scan/serial_scan.hpp"
#include "core/scan/tree_scans.hpp"
#include "reference/linear_recurrence.hpp"
#include "reference/prefix_sums.hpp"
#include "studies/commands.hpp"
#include "studies/input_options.hpp"
#include "studies/row_backend.hpp"
#include "studies/run_folder.hpp"
#include "studies/study_driver.hpp"
#include "studies/scan_backend.hpp"
#include "studies/size_text.hpp"
#include "studies/study_data.hpp"
#include "studies/verify_scan.hpp"

namespace sumlab {
namespace {

using scan::GpuScan;
using scan::ScanShape;

struct ScanStudyOptions {
  RunOptions run;
  std::string backend;
  bool quick = false;
  std::vector<std::string> sizes, dtypes, dists, ops, algorithms, recurrence_sizes;
  std::string input, input_format, flatten;  // the user's data (--input) in place of the distributions
  std::uint64_t seed = 1;
  int runs = 0;           // determinism: runs per shape on cuda (default 5, quick 2)
  int det_runs = 0;       // determinism at --time-n on cuda (default 10, quick 3)
  std::string time_n;     // throughput size on cuda (default 2^26)
  int reps = 0;           // timed launches (default 10, quick 3)
  int work_log2_max = 0;  // scan_work.csv: n up to 2^k (default 20, quick 10)
  std::string verify;     // full | quick | none (default quick on cuda, none on model)
  std::vector<std::string> externals;  // the user's scans, registered by name (Python)
};

const char* const kOps[] = {"plus", "segmented", "max"};
// The largest accuracy cell: its exact prefixes, scales and every algorithm's output are held at once.
constexpr std::int64_t kMaxScanSize = std::int64_t(1) << 28;
const char* const kACases[] = {"contracting", "unit", "growing"};

struct Plan {
  BackendKind backend;
  std::string backend_name;
  std::vector<std::int64_t> sizes, recurrence_sizes;
  std::vector<std::string> dtypes, ops, cpu_algorithms;
  std::vector<Distribution> dists;
  std::vector<GpuScan> gpu_algorithms;
  bool quick;
  int runs, reps, work_log2_max, det_runs;
  std::int64_t time_n;
  std::string verify;
  std::uint64_t seed;
  std::vector<std::shared_ptr<ExternalArray>> externals;
  std::optional<StudyData> data;  // --input: the accuracy cells over the data's prefixes, not dists
};

// The accuracy cells' distribution column: the generators', or "data".
std::vector<std::string> distribution_names(const Plan& p) {
  if (p.data) return {"data"};
  std::vector<std::string> names;
  for (Distribution d : p.dists) names.emplace_back(to_string(d));
  return names;
}

// An accuracy cell's input: n values of the named distribution at the plan's seed, or the data's
// first n.
template <class T> std::vector<T> cell_input(const Plan& p, const std::string& dist, std::int64_t n) {
  if (p.data) {
    const std::span<const T> x = p.data->values<T>().first(static_cast<std::size_t>(n));
    return std::vector<T>(x.begin(), x.end());
  }
  DistributionSpec spec;
  spec.kind = parse_distribution(dist);
  return generate<T>(spec, p.seed, static_cast<std::size_t>(n));
}

const std::vector<std::string> kErrorColumns = {
    "study", "backend", "algorithm", "shape", "operator", "kind", "dtype", "distribution", "n", "seed",
    "max_ulps", "mean_ulps", "exact_fraction", "max_rel_error", "max_scaled_error", "last_ulps", "special_prefixes",
    "declared_determinism", "gpu_equals_model", "ms", "note", "runs", "distinct_runs"};
const std::vector<std::string> kPositionColumns = {"algorithm", "shape", "operator", "dtype", "distribution", "n",
                                                   "bin_lo", "bin_hi", "metric", "max", "mean"};
const std::vector<std::string> kDeterminismColumns = {
    "algorithm", "operator", "dtype", "distribution", "n", "shapes", "runs_per_shape", "distinct_across_runs",
    "distinct_across_shapes", "declared", "measured"};
const std::vector<std::string> kThroughputColumns = {"algorithm", "shape", "operator", "dtype", "n", "bytes_moved",
                                                     "ms", "memory_bound_ms", "fraction_of_bound", "copy_gbps"};
const std::vector<std::string> kRecurrenceColumns = {
    "dtype", "a_case", "n", "algorithm", "shape", "max_rel_error", "median_rel_error", "final_rel_error",
    "max_scaled_error", "max_abs_h", "gpu_equals_model"};
const std::vector<std::string> kWorkColumns = {"algorithm", "n", "work", "depth", "formula_work", "formula_depth",
                                               "work_per_element"};
const std::vector<std::string> kVerifyColumns = {"algorithm", "operator", "dtype", "cases", "mismatches", "errors",
                                                 "first_failure"};

std::string num(double v) {
  if (std::isnan(v)) return "nan";
  if (std::isinf(v)) return v > 0 ? "inf" : "-inf";
  return fmt::format("{:.6g}", v);
}

// Ordinal distance between two values of T (0: same value; +0 and -0 are 0 apart): the error in
// ulps of T, exact. NaN when either is not finite.
template <class T> double ulp_distance(T a, T b) {
  if (!std::isfinite(a) || !std::isfinite(b)) return std::numeric_limits<double>::quiet_NaN();
  using Bits = typename FloatTraits<T>::Bits;
  auto ord = [](T x) {
    const Bits u = to_bits(x);
    const Bits mag = u & ~FloatTraits<T>::sign_bit;
    return (u & FloatTraits<T>::sign_bit) ? -static_cast<long double>(mag) : static_cast<long double>(mag);
  };
  return double(std::fabs(ord(a) - ord(b)));
}

struct Bin {
  double max = 0, sum = 0;
  std::int64_t count = 0;
};
// Bin k holds the prefixes of 2^k .. 2^(k+1) - 1 terms (position i has i + 1 terms).
int bin_of(std::int64_t i) { return int(std::bit_width(std::uint64_t(i + 1))) - 1; }

struct Errors {
  double max_ulps = 0, mean_ulps = 0, exact_fraction = 0, max_rel = 0, last_ulps = 0, max_scaled = 0;
  std::int64_t special = 0;
  std::vector<Bin> bins, scaled_bins;
};

// scale[i]: the running sum of |x_j| over the prefix (restarted at segment heads), computed in
// double: only a yardstick (Higham's bound for any summation order is a multiple of it).
template <class T> Errors measure(std::span<const T> c, std::span<const T> ref, std::span<const double> scale) {
  Errors e;
  double sum = 0;
  std::int64_t finite = 0, exact = 0;
  for (std::size_t i = 0; i < c.size(); ++i) {
    const double u = ulp_distance(c[i], ref[i]);
    if (std::isnan(u)) {
      ++e.special;
      continue;
    }
    const int b = bin_of(std::int64_t(i));
    if (int(e.bins.size()) <= b) e.bins.resize(std::size_t(b) + 1);
    Bin& bin = e.bins[std::size_t(b)];
    bin.max = std::max(bin.max, u);
    bin.sum += u;
    ++bin.count;
    e.max_ulps = std::max(e.max_ulps, u);
    if (scale[i] > 0) {
      const double sc = double(std::fabs((long double)c[i] - ref[i]) / scale[i]);
      e.max_scaled = std::max(e.max_scaled, sc);
      if (e.scaled_bins.size() <= std::size_t(b)) e.scaled_bins.resize(std::size_t(b) + 1);
      Bin& sb = e.scaled_bins[std::size_t(b)];
      sb.max = std::max(sb.max, sc);
      sb.sum += sc;
      ++sb.count;
    }
    sum += u;
    ++finite;
    exact += u == 0;
    if (ref[i] != 0) e.max_rel = std::max(e.max_rel, double(std::fabs((long double)c[i] - ref[i]) / std::fabs((long double)ref[i])));
    else if (c[i] != 0) e.max_rel = std::numeric_limits<double>::infinity();
  }
  e.mean_ulps = finite ? sum / double(finite) : 0;
  e.exact_fraction = finite ? double(exact) / double(finite) : 0;
  e.last_ulps = c.empty() ? 0 : ulp_distance(c.back(), ref.back());
  return e;
}

// Field-wise hashes of scan outputs (a Flagged's padding bytes never enter), one 64-bit word per
// field mixed by multiply and xor-shift: fast enough for 2^26 outputs per run.
struct Hasher {
  std::uint64_t h = 1469598103934665603ull;
  void word(std::uint64_t w) {
    h = (h ^ w) * 0x9e3779b97f4a7c15ull;
    h ^= h >> 29;
  }
  void add(float v) { word(to_bits(v)); }
  void add(double v) { word(to_bits(v)); }
  template <class T> void add(const scan::Flagged<T>& v) { word(v.head ? 1 : 0); add(v.value); }
  template <class T> void add(const scan::Affine<T>& v) { add(v.a); add(v.b); }
};
template <class V> std::uint64_t hash_of(const std::vector<V>& v) {
  Hasher h;
  for (const auto& x : v) h.add(x);
  return h.h;
}
template <class V> bool all_same_bits(const std::vector<V>& a, const std::vector<V>& b) {
  if (a.size() != b.size()) return false;
  for (std::size_t i = 0; i < a.size(); ++i)
    if (!scan::same_bits(a[i], b[i])) return false;
  return true;
}


template <class T, class V> std::vector<T> scalars(const std::vector<V>& v) {
  std::vector<T> s(v.size());
  for (std::size_t i = 0; i < v.size(); ++i) s[i] = scan::scalar_of(v[i]);
  return s;
}

// One cell's rows of the four per-cell tables.
struct Tables {
  Rows error, position, determinism, recurrence;
  CellRows cell() && {
    return {{"scan_error.csv", std::move(error)},
            {"scan_position.csv", std::move(position)},
            {"scan_determinism.csv", std::move(determinism)},
            {"scan_recurrence.csv", std::move(recurrence)}};
  }
};

// The rows one (dtype, distribution, n, operator) cell writes into the accuracy, position and
// determinism tables.
template <class T> struct CellRowsWriter {
  const Plan& p;
  std::string op, dtype, dname;
  std::int64_t n;
  const std::vector<T>& ref;
  const std::vector<double>& scale;
  Rows err, pos, det;

  template <class V>
  void add(const std::string& alg, const std::string& shape, const std::vector<V>& out, const std::string& declared,
           const std::string& gpu_eq, const std::optional<double>& ms) {
    const std::vector<T> c = scalars<T>(out);
    const Errors e = measure<T>(c, ref, scale);
    err.push_back({"scan", p.backend_name, alg, shape, op, "inclusive", dtype, dname, std::to_string(n),
                   std::to_string(p.seed), num(e.max_ulps), num(e.mean_ulps), num(e.exact_fraction), num(e.max_rel),
                   num(e.max_scaled), num(e.last_ulps), std::to_string(e.special), declared, gpu_eq, ms ? num(*ms) : "",
                   "", "", ""});
    for (const auto* bins : {&e.bins, &e.scaled_bins})
      for (std::size_t b = 0; b < bins->size(); ++b) {
        if ((*bins)[b].count == 0) continue;
        const std::int64_t lo = std::int64_t(1) << b, hi = std::min<std::int64_t>((std::int64_t(2) << b) - 1, n);
        pos.push_back({alg, shape, op, dtype, dname, std::to_string(n), std::to_string(lo), std::to_string(hi),
                       bins == &e.bins ? "ulps" : "scaled_error", num((*bins)[b].max),
                       num((*bins)[b].sum / double((*bins)[b].count))});
      }
  }
  // A call that gave no output (a user's scan that failed): the row says why.
  void failed(const std::string& alg, const std::string& shape, const std::string& declared, const std::string& why) {
    err.push_back({"scan", p.backend_name, alg, shape, op, "inclusive", dtype, dname, std::to_string(n),
                   std::to_string(p.seed), "", "", "", "", "", "", "", declared, "", "", why, "", ""});
  }
  // The last row's configuration was run `runs` times and gave `distinct` different outputs.
  void runs(int runs, std::size_t distinct) {
    auto& r = err.back();
    r[r.size() - 2] = std::to_string(runs);
    r[r.size() - 1] = std::to_string(distinct);
  }
  // One subject's class over its configurations: distinct outputs across runs of one configuration
  // (the most over them) and across configurations, by core/determinism_classify.hpp's rule (one
  // configuration cannot show invariance). On the model backend a GPU scan's shapes are evaluated
  // once each (runs 1): the class is the model's, across shapes only.
  void classify(const std::string& alg, int shapes, int runs, std::size_t distinct_runs, std::size_t distinct_shapes,
                const std::string& declared, bool any_failed) {
    const std::string measured =
        any_failed ? std::string("failed")
                   : std::string(to_string(measured_class(shapes, static_cast<int>(distinct_runs),
                                                          static_cast<int>(distinct_shapes))));
    det.push_back({alg, op, dtype, dname, std::to_string(n), std::to_string(shapes), std::to_string(runs),
                   std::to_string(distinct_runs), std::to_string(distinct_shapes), declared, measured});
  }
};

// The lab's GPU scans: every shape timed, checked against the model on cuda, rerun for the count.
template <class Op>
void gpu_scan_rows(const Plan& p, std::span<const typename Op::Value> xs, CellRowsWriter<typename Op::Scalar>& w,
                   long& model_mismatch) {
  const bool on_gpu = p.backend == BackendKind::cuda;
  ScanKernelInput<Op> input(p.backend, xs);
  std::unique_ptr<ScanKernelInput<Op>> on_model;  // on cuda, every output is checked against the model's
  if (on_gpu) on_model = std::make_unique<ScanKernelInput<Op>>(BackendKind::model, xs);
  for (GpuScan alg : p.gpu_algorithms) {
    const auto shapes = scan::scan_shapes(alg, p.quick, sizeof(typename Op::Value));
    const auto timed = scan_runner<Op>(alg, p.backend, shapes, {true, true, on_gpu ? 3 : 1});
    const auto rerun = scan_runner<Op>(alg, p.backend, shapes);
    const auto model = scan_runner<Op>(alg, BackendKind::model, shapes);
    const std::string declared(to_string(timed->declared()));
    std::set<std::uint64_t> across_shapes;
    std::size_t distinct_runs = 0;
    int runs = 0, ran_shapes = 0;
    for (std::size_t c = 0; c < shapes.size(); ++c) {
      const auto r = timed->run(c, input);
      if (!r.has_value) break;  // cub on the model backend
      ++ran_shapes;
      std::string gpu_eq;
      if (on_gpu && scan::is_modelled(alg)) {
        const bool same = all_same_bits(r.value, model->run(c, *on_model).value);
        gpu_eq = same ? "1" : "0";
        model_mismatch += !same;
      }
      w.add(timed->name(), timed->config_label(c), r.value, declared, gpu_eq, device_ms(*timed, r));
      std::set<std::uint64_t> across_runs{hash_of(r.value)};
      across_shapes.insert(hash_of(r.value));
      runs = on_gpu ? p.runs : 1;
      for (int k = 1; k < runs; ++k) across_runs.insert(hash_of(rerun->run(c, input).value));
      distinct_runs = std::max(distinct_runs, across_runs.size());
      if (runs > 1) w.runs(runs, across_runs.size());  // the model's bits are not rerun: no runs
    }
    if (ran_shapes == 0) continue;
    // One shape (cub) cannot show shape invariance: its library picks its own tiling.
    w.classify(std::string(to_string(alg)), ran_shapes, runs, distinct_runs, across_shapes.size(), declared, false);
  }
}

// The user's scans (+ only): each configuration run max(runs, 2) times on the host's values (a
// user's scan has no order the lab can model, so repeated runs are the only evidence), the first
// run's output measured; a failed call is an error row with its message, and the study goes on.
template <class T>
void external_scan_rows(const Plan& p, std::span<const T> xs, CellRowsWriter<T>& w) {
  ScanKernelInput<scan::PlusOp<T>> input(BackendKind::model, xs);
  const bool finite = std::all_of(xs.begin(), xs.end(), [](T v) { return std::isfinite(v); });
  const int runs = std::max(p.runs, 2);
  for (const auto& s : p.externals) {
    const auto r = external_scan_runner<T>(s, finite);
    const std::string declared(to_string(r->declared()));
    std::set<std::uint64_t> across_shapes;
    std::size_t distinct_runs = 0;
    bool any_failed = false;
    for (std::size_t c = 0; c < r->configs(); ++c) {
      const auto first = r->run(c, input);
      if (first.failed) {
        w.failed(r->row_name(c), r->config_label(c), declared, first.note);
        any_failed = true;
        continue;
      }
      w.add(r->row_name(c), r->config_label(c), first.value, declared, "", first.ms);
      std::set<std::uint64_t> across_runs{hash_of(first.value)};
      int k = 1;
      for (; k < runs; ++k) {
        const auto again = r->run(c, input);
        if (again.failed) {
          w.failed(r->row_name(c), r->config_label(c), declared, again.note);
          any_failed = true;
          break;
        }
        across_runs.insert(hash_of(again.value));
      }
      if (k == runs) w.runs(runs, across_runs.size());
      across_shapes.insert(hash_of(first.value));
      distinct_runs = std::max(distinct_runs, across_runs.size());
    }
    w.classify(s->name(), static_cast<int>(r->configs()), runs, distinct_runs, across_shapes.size(), declared,
               any_failed);
  }
}

// One (dtype, distribution, n, operator) cell of the accuracy and determinism tables.
template <class Op>
void error_cell(const Plan& p, const std::string& dname, std::int64_t n, const std::vector<typename Op::Value>& x,
                const std::vector<typename Op::Scalar>& ref, const std::vector<double>& scale, const std::string& dtype,
                Tables& t, long& model_mismatch) {
  using V = typename Op::Value;
  using T = typename Op::Scalar;
  CellRowsWriter<T> w{p, Op::name, dtype, dname, n, ref, scale, {}, {}, {}};
  const std::span<const V> xs(x);
  for (const auto& alg : p.cpu_algorithms) {
    std::vector<V> out;
    if (alg == "cpu_serial") out = scan::serial_scan<Op>(xs, true);
    else if (alg == "cpu_hillis_steele") out = scan::hillis_steele_scan<Op>(xs, true).out;
    else out = scan::blelloch_scan<Op>(xs, true).out;
    w.add(alg, "-", out, alg == "cpu_serial" || w.op == "max" ? "shape_invariant" : "run_to_run", "", std::nullopt);
  }
  gpu_scan_rows<Op>(p, xs, w, model_mismatch);
  if constexpr (std::is_same_v<Op, scan::PlusOp<T>>) external_scan_rows<T>(p, xs, w);
  t.error.insert(t.error.end(), w.err.begin(), w.err.end());
  t.position.insert(t.position.end(), w.pos.begin(), w.pos.end());
  t.determinism.insert(t.determinism.end(), w.det.begin(), w.det.end());
}

// x: a generated input, or a prefix of the user's data; dname its distribution column ("data").
template <class T>
void accuracy_cells(const Plan& p, const std::vector<T>& x, const std::string& dname, const std::string& dtype,
                    Tables& t, long& model_mismatch) {
  const auto n = static_cast<std::int64_t>(x.size());
  std::vector<std::uint8_t> heads(x.size());
  for (std::size_t i = 0; i < x.size(); ++i) heads[i] = i == 0 || random_bits(p.seed, i, 700) % 64 == 0;  // ~64 long
  auto running_abs = [&](bool segmented) {
    std::vector<double> s(x.size());
    double acc = 0;
    for (std::size_t i = 0; i < x.size(); ++i) s[i] = acc = (segmented && heads[i] ? 0.0 : acc) + std::fabs(double(x[i]));
    return s;
  };
  for (const auto& op : p.ops) {
    if (op == "plus") {
      const auto ref = reference::exact_prefix_sums<T>(std::span<const T>(x));
      error_cell<scan::PlusOp<T>>(p, dname, n, x, ref, running_abs(false), dtype, t, model_mismatch);
    } else if (op == "max") {
      const auto ref = scan::serial_scan<scan::MaxOp<T>>(std::span<const T>(x), true);  // max is exact
      error_cell<scan::MaxOp<T>>(p, dname, n, x, ref, running_abs(false), dtype, t, model_mismatch);
    } else {
      std::vector<scan::Flagged<T>> f(x.size());
      for (std::size_t i = 0; i < x.size(); ++i) f[i] = {heads[i] != 0, x[i]};
      const auto ref = reference::exact_segmented_prefix_sums<T>(std::span<const T>(x),
                                                                 std::span<const std::uint8_t>(heads));
      error_cell<scan::SegmentedOp<T>>(p, dname, n, f, ref, running_abs(true), dtype, t, model_mismatch);
    }
  }
}

// a_t for the three cases, pure functions of (seed, t): contracting a in [0.5, 0.99); unit a = 1 (the
// recurrence is the prefix sum of b); growing a in [1, 1 + 60/n), so the product grows by about
// e^30 ~ 1e13 over n steps whatever n: finite in float and double. b_t ~ N(0, 1) in every case.
double a_value(const std::string& c, std::uint64_t seed, std::uint64_t t, std::int64_t n) {
  const double u = uniform_double(seed, t, 800);
  if (c == "contracting") return 0.5 + 0.49 * u;
  if (c == "unit") return 1.0;
  return 1.0 + 60.0 * u / double(n);
}

// h_t = a_t h_{t-1} + b_t, h_0 = b_0: the serial loop exactly as a programmer writes it (no FMA:
// -ffp-contract=off).
template <class T> std::vector<T> serial_recurrence(const std::vector<T>& a, const std::vector<T>& b) {
  std::vector<T> h(a.size());
  T state = 0;
  for (std::size_t i = 0; i < h.size(); ++i) {
    const T ah = a[i] * state;
    state = ah + b[i];
    h[i] = state;
  }
  return h;
}

template <class T>
void recurrence_cell(const Plan& p, const std::string& a_case, std::int64_t n, const std::string& dtype, Tables& t,
                     long& model_mismatch) {
  using Op = scan::AffineOp<T>;
  using V = scan::Affine<T>;
  std::vector<T> a(static_cast<std::size_t>(n)), b(static_cast<std::size_t>(n));
  std::vector<V> x(static_cast<std::size_t>(n));
  for (std::size_t i = 0; i < a.size(); ++i) {
    a[i] = T(a_value(a_case, p.seed, i, n));
    b[i] = T(standard_normal(p.seed, i));
    x[i] = {a[i], b[i]};
  }
  const auto ref = reference::exact_linear_recurrence<T>(std::span<const T>(a), std::span<const T>(b));
  // The recurrence's own scale s_t = |a_t| s_{t-1} + |b_t| (what |h_t| would be without
  // cancellation; the analogue of sum |x_i| for a sum): errors against it stay meaningful where
  // h_t passes near 0 and the relative error does not. Computed in double: only a scale.
  std::vector<double> scale(a.size());
  double sc = 0;
  for (std::size_t i = 0; i < a.size(); ++i) scale[i] = sc = std::fabs(double(a[i])) * sc + std::fabs(double(b[i]));
  std::vector<std::vector<std::string>> rows, pos_rows;
  auto add = [&](const std::string& alg, const std::string& shape, const std::vector<T>& h, const std::string& gpu_eq) {
    std::vector<double> rel(h.size());
    double max_h = 0, max_scaled = 0;
    std::vector<Bin> bins;
    for (std::size_t i = 0; i < h.size(); ++i) {
      rel[i] = reference::recurrence_relative_error(double(h[i]), ref.hi[i], ref.lo[i]);
      const double abs_err = std::fabs((double(h[i]) - ref.hi[i]) - ref.lo[i]);
      if (scale[i] > 0 && std::isfinite(abs_err)) max_scaled = std::max(max_scaled, abs_err / scale[i]);
      max_h = std::max(max_h, std::fabs(ref.hi[i]));
      const int k = bin_of(std::int64_t(i));
      if (int(bins.size()) <= k) bins.resize(std::size_t(k) + 1);
      if (!std::isnan(rel[i])) {
        bins[std::size_t(k)].max = std::max(bins[std::size_t(k)].max, rel[i]);
        bins[std::size_t(k)].sum += rel[i];
        ++bins[std::size_t(k)].count;
      }
    }
    std::vector<double> sorted = rel;
    std::sort(sorted.begin(), sorted.end(), [](double u, double v) { return u < v || (!std::isnan(u) && std::isnan(v)); });
    const double mx = sorted.empty() ? 0 : *std::max_element(rel.begin(), rel.end(), [](double u, double v) {
      return std::isnan(u) ? false : (std::isnan(v) ? true : u < v);
    });
    rows.push_back({dtype, a_case, std::to_string(n), alg, shape, num(mx), num(sorted.empty() ? 0 : sorted[sorted.size() / 2]),
                    num(rel.empty() ? 0 : rel.back()), num(max_scaled), num(max_h), gpu_eq});
    for (std::size_t k = 0; k < bins.size(); ++k)
      if (bins[k].count)
        pos_rows.push_back({alg, shape, "affine", dtype, a_case, std::to_string(n), std::to_string(std::int64_t(1) << k),
                            std::to_string(std::min<std::int64_t>((std::int64_t(2) << k) - 1, n)), "rel_error",
                            num(bins[k].max), num(bins[k].sum / double(bins[k].count))});
  };
  add("serial_loop", "-", serial_recurrence(a, b), "");
  const std::span<const V> xs(x);
  add("cpu_hillis_steele", "-", scalars<T>(scan::hillis_steele_scan<Op>(xs, true).out), "");
  add("cpu_blelloch", "-", scalars<T>(scan::blelloch_scan<Op>(xs, true).out), "");
  const bool on_gpu = p.backend == BackendKind::cuda;
  ScanKernelInput<Op> input(p.backend, xs);
  std::unique_ptr<ScanKernelInput<Op>> on_model;  // on cuda, every output is checked against the model's
  if (on_gpu) on_model = std::make_unique<ScanKernelInput<Op>>(BackendKind::model, xs);
  for (GpuScan alg : p.gpu_algorithms) {
    const auto shapes = scan::scan_shapes(alg, true, sizeof(typename Op::Value));
    const auto runner = scan_runner<Op>(alg, p.backend, shapes);
    const auto model = scan_runner<Op>(alg, BackendKind::model, shapes);
    for (std::size_t c = 0; c < shapes.size(); ++c) {
      const auto r = runner->run(c, input);
      if (!r.has_value) break;
      std::string gpu_eq;
      if (on_gpu && scan::is_modelled(alg)) {
        const bool same = all_same_bits(r.value, model->run(c, *on_model).value);
        gpu_eq = same ? "1" : "0";
        model_mismatch += !same;
      }
      add(runner->name(), runner->config_label(c), scalars<T>(r.value), gpu_eq);
    }
  }
  t.recurrence.insert(t.recurrence.end(), rows.begin(), rows.end());
  t.position.insert(t.position.end(), pos_rows.begin(), pos_rows.end());
}

// Times every (algorithm, shape) at the large n; with `det`, also runs each algorithm's first shape
// det_runs times at that n and counts distinct outputs (CUB's look-back has more tiles to race here
// than in the accuracy cells).
template <class Op>
void throughput_rows(const Plan& p, double copy_bps, const std::string& dtype, const std::vector<typename Op::Value>& x,
                     Rows& csv, Rows* det) {
  using V = typename Op::Value;
  ScanKernelInput<Op> input(BackendKind::cuda, std::span<const V>(x));
  std::vector<std::vector<std::string>> rows, det_rows;
  const double bytes = 2.0 * double(x.size()) * sizeof(V);
  const double bound_ms = bytes / copy_bps * 1e3;
  for (GpuScan alg : p.gpu_algorithms) {
    const auto runner = scan_runner<Op>(alg, BackendKind::cuda, scan::scan_shapes(alg, p.quick, sizeof(typename Op::Value)), {true, false, p.reps});
    for (std::size_t c = 0; c < runner->configs(); ++c) {
      const double ms = runner->run(c, input).ms;
      rows.push_back({runner->name(), runner->config_label(c), Op::name, dtype, std::to_string(x.size()), num(bytes),
                      num(ms), num(bound_ms), num(bound_ms / ms), num(copy_bps / 1e9)});
    }
  }
  csv.insert(csv.end(), rows.begin(), rows.end());
  if (!det) return;
  // At most 2^24 values: every run is downloaded and hashed, and 10 runs x 3 algorithms of 2^26
  // affine doubles would cost more host time than the whole rest of the study.
  const std::span<const V> dx(x.data(), std::min<std::size_t>(x.size(), std::size_t(1) << 24));
  ScanKernelInput<Op> det_input(BackendKind::cuda, dx);
  for (GpuScan alg : p.gpu_algorithms) {
    const auto runner = scan_runner<Op>(alg, BackendKind::cuda, {scan::scan_shapes(alg, p.quick, sizeof(typename Op::Value)).front()});
    std::set<std::uint64_t> seen;
    for (int k = 0; k < p.det_runs; ++k) seen.insert(hash_of(runner->run(0, det_input).value));
    const std::string declared(to_string(runner->declared()));
    det_rows.push_back({runner->name(), Op::name, dtype, "uniform", std::to_string(dx.size()), "1",
                        std::to_string(p.det_runs), std::to_string(seen.size()), "1", declared,
                        std::string(to_string(measured_class(1, static_cast<int>(seen.size()), 1)))});
  }
  det->insert(det->end(), det_rows.begin(), det_rows.end());
}

// The throughput table's rows (and, at that n, more determinism rows) of one dtype.
template <class T> CellRows throughput_dtype(const Plan& p, const std::string& dtype) {
  Rows csv, det;
  const std::size_t n = std::size_t(p.time_n);
  std::vector<T> x(n);
  for (std::size_t i = 0; i < n; ++i) x[i] = T(uniform_double(p.seed, i, 0));
  const auto bw = copy_bandwidth(BackendKind::cuda, n * sizeof(T));
  throughput_rows<scan::PlusOp<T>>(p, *bw, dtype, x, csv, &det);
  throughput_rows<scan::MaxOp<T>>(p, *bw, dtype, x, csv, nullptr);
  {
    std::vector<scan::Flagged<T>> f(n);
    for (std::size_t i = 0; i < n; ++i) f[i] = {random_bits(p.seed, i, 700) % 64 == 0, x[i]};
    const auto bw2 = copy_bandwidth(BackendKind::cuda, n * sizeof(scan::Flagged<T>));
    throughput_rows<scan::SegmentedOp<T>>(p, *bw2, dtype, f, csv, nullptr);
  }
  std::vector<scan::Affine<T>> af(n);
  for (std::size_t i = 0; i < n; ++i) af[i] = {T(0.5 + 0.49 * x[i]), x[i]};
  const auto bw3 = copy_bandwidth(BackendKind::cuda, n * sizeof(scan::Affine<T>));
  throughput_rows<scan::AffineOp<T>>(p, *bw3, dtype, af, csv, &det);
  return {{"scan_throughput.csv", csv}, {"scan_determinism.csv", det}};
}

Rows work_table(const Plan& p) {
  std::vector<std::vector<std::string>> rows;
  for (int k = 0; k <= p.work_log2_max; ++k)
    for (std::int64_t extra : {0, 1}) {
      const std::int64_t n = (std::int64_t(1) << k) + extra;
      if (k == 0 && extra == 1) continue;
      const std::vector<float> x(std::size_t(n), 1.0f);
      using Op = scan::PlusOp<float>;
      const auto hs = scan::hillis_steele_scan<Op>(std::span<const float>(x), true);
      const auto be = scan::blelloch_scan<Op>(std::span<const float>(x), false);
      const auto bi = scan::blelloch_scan<Op>(std::span<const float>(x), true);
      auto row = [&](const char* alg, scan::ScanCost c, scan::ScanCost f) {
        rows.push_back({alg, std::to_string(n), std::to_string(c.work), std::to_string(c.depth), std::to_string(f.work),
                        std::to_string(f.depth), num(double(c.work) / double(n))});
      };
      const scan::ScanCost serial{std::uint64_t(n - 1), int(n - 1)};
      row("serial", serial, serial);
      row("hillis_steele", hs.cost, scan::hillis_steele_cost(std::size_t(n)));
      row("blelloch_exclusive", be.cost, scan::blelloch_cost(std::size_t(n), false));
      row("blelloch_inclusive", bi.cost, scan::blelloch_cost(std::size_t(n), true));
    }
  return rows;
}

Plan make_plan(const ScanStudyOptions& o) {
  Plan p;
  p.backend = pick_row_backend(o.backend);
  p.backend_name = std::string(to_string(p.backend));
  p.quick = o.quick;
  p.seed = o.seed;
  const bool cuda = p.backend == BackendKind::cuda;
  auto sizes = [](const std::vector<std::string>& v, const char* opt) {
    std::vector<std::int64_t> out;
    for (const auto& s : v) {
      const std::int64_t n = parse_size(s, opt);
      if (n < 1) throw UserError(fmt::format("{} must be >= 1 (got {})", opt, s));
      if (n > kMaxScanSize) throw UserError(fmt::format("{} must be <= 2^28 (got {})", opt, s));
      out.push_back(n);
    }
    return out;
  };
  p.sizes = o.sizes.empty()
                ? (o.quick ? std::vector<std::int64_t>{1000, 4097}
                           : (cuda ? std::vector<std::int64_t>{1000, 65537, std::int64_t(1) << 21}
                                   : std::vector<std::int64_t>{1000, 65537, std::int64_t(1) << 20}))
                : sizes(o.sizes, "--sizes");
  p.recurrence_sizes = o.recurrence_sizes.empty()
                           ? (o.quick ? std::vector<std::int64_t>{1000}
                                      : std::vector<std::int64_t>{4096, std::int64_t(1) << 16, std::int64_t(1) << 20})
                           : sizes(o.recurrence_sizes, "--recurrence-sizes");
  p.dtypes = o.dtypes.empty() ? (o.quick ? std::vector<std::string>{"float32"}
                                         : std::vector<std::string>{"float32", "float64"})
                              : o.dtypes;
  for (const auto& d : p.dtypes)
    if (d != "float32" && d != "float64") throw UserError("unknown dtype '" + d + "' (valid: float32, float64)");
  if (!o.input.empty()) {
    if (!o.dists.empty()) throw UserError("--dists has no effect with --input (the data's prefixes are measured); drop it");
    p.data = open_study_data(o.input, o.input_format, o.flatten);
    if (p.data->size() > kMaxScanSize)
      throw UserError(fmt::format("--input '{}' holds {} values: the scan study measures at most 2^28 (pass a prefix)",
                                  p.data->source, p.data->size()));
    p.dtypes = p.data->dtypes(o.dtypes);
    p.sizes = data_sizes<std::int64_t>(p.sizes, static_cast<std::int64_t>(p.data->size()));
  } else {
    const std::vector<std::string> dn = o.dists.empty() ? (o.quick ? std::vector<std::string>{"uniform"}
                                                                   : std::vector<std::string>{"uniform", "normal"})
                                                        : o.dists;
    for (const auto& d : dn) {
      try {
        p.dists.push_back(parse_distribution(d));
      } catch (const std::invalid_argument& e) {
        throw UserError(e.what());
      }
    }
  }
  p.ops = o.ops.empty() ? std::vector<std::string>(std::begin(kOps), std::end(kOps)) : o.ops;
  for (const auto& op : p.ops)
    if (op != "plus" && op != "segmented" && op != "max")
      throw UserError("unknown operator '" + op + "' (valid: plus, segmented, max; affine is the recurrence table)");
  p.externals = external_arrays(o.externals, {ArrayKind::scan}, "scan");
  if (!p.externals.empty() && std::find(p.ops.begin(), p.ops.end(), "plus") == p.ops.end())
    throw UserError("--external: the user's scans are measured on the + operator; add plus to --ops");
  if (o.algorithms.empty()) {
    p.cpu_algorithms.assign(std::begin(kCpuScans), std::end(kCpuScans));
    p.gpu_algorithms.assign(std::begin(scan::kAllGpuScans), std::end(scan::kAllGpuScans));
  } else {
    for (const auto& a : o.algorithms) {
      if (std::find(std::begin(kCpuScans), std::end(kCpuScans), a) != std::end(kCpuScans)) {
        p.cpu_algorithms.push_back(a);
      } else if (const auto g = scan::parse_gpu_scan(a)) {
        p.gpu_algorithms.push_back(*g);
      } else {
        throw UserError("unknown algorithm '" + a +
                        "' (valid: cpu_serial, cpu_hillis_steele, cpu_blelloch, warp_hillis_steele, block_blelloch, warp_hs_chained, cub)");
      }
    }
  }
  p.runs = o.runs ? o.runs : (o.quick ? 2 : 5);
  p.reps = o.reps ? o.reps : (o.quick ? 3 : 10);
  p.det_runs = o.det_runs ? o.det_runs : (o.quick ? 3 : 10);
  if (p.runs < 1 || p.reps < 1 || p.det_runs < 1) throw UserError("--runs, --det-runs and --reps must be >= 1");
  p.work_log2_max = o.work_log2_max ? o.work_log2_max : (o.quick ? 10 : 20);
  if (p.work_log2_max < 1 || p.work_log2_max > 24) throw UserError("--work-log2-max must be in 1..24");
  p.time_n = o.time_n.empty() ? (o.quick ? std::int64_t(1) << 20 : std::int64_t(1) << 26) : parse_size(o.time_n, "--time-n");
  if (p.time_n < 1 || p.time_n > (std::int64_t(1) << 28)) throw UserError("--time-n must be in 1..2^28");
  p.verify = o.verify.empty() ? (cuda ? "quick" : "none") : o.verify;
  if (p.verify != "full" && p.verify != "quick" && p.verify != "none")
    throw UserError("--verify must be full, quick or none");
  if (p.verify != "none" && !cuda)
    throw UserError("--verify " + p.verify + " compares GPU and model bits: it needs --backend cuda");
  return p;
}

nlohmann::ordered_json plan_json(const Plan& p) {
  nlohmann::ordered_json j;
  j["backend"] = p.backend_name;
  j["sizes"] = p.sizes;
  j["recurrence_sizes"] = p.recurrence_sizes;
  j["dtypes"] = p.dtypes;
  j["distributions"] = distribution_names(p);
  if (p.data) j["input"] = p.data->plan();
  j["operators"] = p.ops;
  std::vector<std::string> algs;
  for (GpuScan a : p.gpu_algorithms) algs.emplace_back(to_string(a));
  j["cpu_algorithms"] = p.cpu_algorithms;  // both lists: --resume with other algorithms would mix two plans
  j["gpu_algorithms"] = algs;
  j["quick"] = p.quick;
  j["seed"] = p.seed;
  j["runs"] = p.runs;
  j["reps"] = p.reps;
  j["det_runs"] = p.det_runs;
  j["work_log2_max"] = p.work_log2_max;
  j["time_n"] = p.time_n;
  j["verify"] = p.verify;
  if (!p.externals.empty()) {  // absent otherwise, so earlier runs' plans (and --resume) still match
    nlohmann::ordered_json ext = nlohmann::ordered_json::object();
    for (const auto& e : p.externals) ext[e->name()] = e->configs();
    j["external"] = ext;
  }
  return j;
}

// Cells of a count column that say "0" (a GPU result that differed from the model's).
long zeros_in(const CsvTable& t, const char* column) {
  const int c = t.column(column);
  long n = 0;
  for (const auto& r : t.rows) n += c >= 0 && r[std::size_t(c)] == "0";
  return n;
}

// GPU bits == model bits first (when asked), then per dtype the accuracy and recurrence cells, the
// work table and (cuda) the throughput. The mismatches are counted from the tables at the end, so
// that resumed cells count too. `verify_json` receives the verification's summary when that cell
// runs in this invocation.
std::vector<Cell> scan_cells(const Plan& p, const ScanStudyOptions& o, nlohmann::ordered_json& verify_json) {
  std::vector<Cell> cells;
  if (p.verify != "none")
    cells.push_back({"verify", "GPU bits vs model bits", [&p, &o, &verify_json]() -> CellRows {
                       ScanVerifyOptions vo;
                       vo.quick = p.verify == "quick";
                       vo.seed = o.seed;
                       const ScanVerifySummary v = verify_scan(vo);
                       fmt::print("{}", v.table());
                       Rows rows;
                       for (const auto& l : v.lines)
                         rows.push_back({l.algorithm, l.op, l.dtype, std::to_string(l.cases), std::to_string(l.mismatches),
                                         std::to_string(l.errors), l.first_failure});
                       verify_json = {{"sweep", p.verify}, {"gpu", v.gpu}, {"cases", v.cases()},
                                      {"mismatches", v.mismatches()}, {"errors", v.errors()}, {"seconds", v.seconds}};
                       return {{"scan_verify.csv", rows}};
                     }});
  for (const auto& dtype : p.dtypes) {
    for (const std::string& d : distribution_names(p))
      for (std::int64_t n : p.sizes)
        cells.push_back({fmt::format("accuracy|{}|{}|{}", dtype, d, n), fmt::format("{} {} n={}", dtype, d, size_text(n)),
                         [&p, dtype, d, n] {
                           Tables t;
                           long unused = 0;
                           if (dtype == "float32") accuracy_cells<float>(p, cell_input<float>(p, d, n), d, dtype, t, unused);
                           else accuracy_cells<double>(p, cell_input<double>(p, d, n), d, dtype, t, unused);
                           return std::move(t).cell();
                         }});
    for (const char* c : kACases)
      for (std::int64_t n : p.recurrence_sizes)
        cells.push_back({fmt::format("recurrence|{}|{}|{}", dtype, c, n),
                         fmt::format("{} recurrence {} n={}", dtype, c, size_text(n)), [&p, dtype, c, n] {
                           Tables t;
                           long unused = 0;
                           if (dtype == "float32") recurrence_cell<float>(p, c, n, dtype, t, unused);
                           else recurrence_cell<double>(p, c, n, dtype, t, unused);
                           return std::move(t).cell();
                         }});
  }
  cells.push_back({"work", "work and depth of the scans",
                   [&p]() -> CellRows { return {{"scan_work.csv", work_table(p)}}; }});
  if (p.backend == BackendKind::cuda)
    for (const auto& dtype : p.dtypes)
      cells.push_back({"throughput|" + dtype, dtype + " throughput", [&p, dtype] {
                         return dtype == "float32" ? throughput_dtype<float>(p, dtype) : throughput_dtype<double>(p, dtype);
                       }});
  return cells;
}

// The end of the study, over every cell (resumed ones too: read back from the folder): the worst
// prefix error per algorithm and operator, the summary and the alarms.
void finish_scan(Study& study, const Plan& p, const std::string& description, const nlohmann::ordered_json& verify_json) {
  if (p.data) p.data->check_unchanged();
  const CsvTable err = read_csv(study.folder().file("scan_error.csv"));
  std::map<std::string, double> worst;
  const int ca = err.column("algorithm"), co = err.column("operator"), cd = err.column("dtype"), cm = err.column("max_ulps");
  for (const auto& r : err.rows) {
    const std::string key = fmt::format("{:<20} {:<10} {:<8}", r[std::size_t(ca)], r[std::size_t(co)], r[std::size_t(cd)]);
    const std::string& f = r[std::size_t(cm)];
    const double v = f == "nan" || f.empty() ? 0 : std::stod(f);  // empty: a user's scan that failed
    worst[key] = std::max(worst[key], v);
  }
  fmt::print("{:<20} {:<10} {:<8} {:>12}\n", "algorithm", "operator", "dtype", "max ulps");
  for (const auto& [k, v] : worst) fmt::print("{} {:>12}\n", k, num(v));

  const long model_mismatch = zeros_in(err, "gpu_equals_model") +
                              zeros_in(read_csv(study.folder().file("scan_recurrence.csv")), "gpu_equals_model");
  long verify_failures = 0;
  nlohmann::ordered_json verify = verify_json;
  if (p.verify != "none") {
    verify = verify_entry(verify_json, p.verify, read_csv(study.folder().file("scan_verify.csv")));
    verify_failures = verify["mismatches"].get<long>() + verify["errors"].get<long>();
  }
  const bool cuda = p.backend == BackendKind::cuda;
  nlohmann::ordered_json summary = plan_json(p);
  summary["device"] = description;
  summary["runs_per_shape"] = cuda ? p.runs : 1;
  summary["det_runs_at_throughput_n"] = cuda ? p.det_runs : 0;
  summary["throughput_n"] = cuda ? nlohmann::ordered_json(p.time_n) : nlohmann::ordered_json();
  summary["recurrence_reference_bits"] = reference::kRecurrenceBits;
  summary["verify"] = verify;
  summary["verify_failures"] = verify_failures;
  summary["gpu_model_mismatches"] = gpu_model_check(cuda, model_mismatch).count;
  summary["csv"] = {"scan_error.csv", "scan_position.csv", "scan_determinism.csv", "scan_throughput.csv",
                    "scan_recurrence.csv", "scan_work.csv"};
  std::vector<std::string> headline;
  if (cuda)
    headline.push_back(fmt::format("GPU vs model: {} verify case(s) and {} study run(s) differ", verify_failures, model_mismatch));
  study.finish(summary, headline);
  if (verify_failures || model_mismatch)
    throw CheckFailed(fmt::format("{} verify case(s) and {} study run(s) where the GPU's bits differ from the model's: "
                                  "see {}", verify_failures, model_mismatch, study.folder().dir().string()));
}

void run_scan_study(const ScanStudyOptions& o) {
  const Plan p = make_plan(o);
  const std::string description = scan_backend_description(p.backend);
  fmt::print("scan study on {}: {}\n", p.backend_name, description);
  std::vector<Table> tables{{"scan_error.csv", kErrorColumns},
                            {"scan_position.csv", kPositionColumns},
                            {"scan_determinism.csv", kDeterminismColumns},
                            {"scan_recurrence.csv", kRecurrenceColumns},
                            {"scan_work.csv", kWorkColumns},
                            {"scan_throughput.csv", kThroughputColumns}};
  if (p.verify != "none") tables.push_back({"scan_verify.csv", kVerifyColumns});
  Study study("scan", o.run, plan_json(p), p.backend_name, tables);
  nlohmann::ordered_json verify_json;
  study.run(scan_cells(p, o, verify_json));
  finish_scan(study, p, description, verify_json);
}

}  // namespace

void register_study_scan(CLI::App& study) {
  auto o = std::make_shared<ScanStudyOptions>();
  auto* cmd = study.add_subcommand(
      "scan",
      "Scans (prefix sums): serial, Hillis-Steele, Blelloch, warp/block GPU scans and CUB against exact prefixes; "
      "segmented and max operators; the linear recurrence as an affine scan; determinism and throughput");
  add_run_options(*cmd, o->run);
  cmd->add_flag("--quick", o->quick, "A small version: n 1000 and 4097, float32, uniform, 3 shapes per algorithm");
  cmd->add_option("--backend", o->backend, "cuda or model (default: cuda when a GPU is present, else model)");
  cmd->add_option("--sizes", o->sizes, "Sizes of the accuracy cells: numbers, 2^k or 2^k+c (default 1000,65537,2^21 "
                                       "on cuda, 1000,65537,2^20 on model)")
      ->delimiter(',');
  cmd->add_option("--dtypes", o->dtypes, "float32, float64 (comma list; default both)")->delimiter(',');
  cmd->add_option("--dists", o->dists, "Distributions (comma list; default uniform,normal)")->delimiter(',');
  add_text_option(*cmd, "--input", o->input,
                  "The user's data (.npy, .csv/.txt, raw with --format) in place of --dists: the accuracy cells over "
                  "its prefixes of --sizes below its length and the whole of it, in its own dtype");
  add_text_option(*cmd, "--format", o->input_format, "--input's format: npy, csv or raw (default: from the extension)");
  add_text_option(*cmd, "--flatten", o->flatten, "How a 2-D --input becomes one sequence: C or F");
  cmd->add_option("--ops", o->ops, "Operators: plus, segmented, max (comma list; default all)")->delimiter(',');
  cmd->add_option("--algorithms", o->algorithms,
                  "cpu_serial, cpu_hillis_steele, cpu_blelloch, warp_hillis_steele, block_blelloch, warp_hs_chained, cub (default all)")
      ->delimiter(',');
  cmd->add_option("--recurrence-sizes", o->recurrence_sizes, "Sizes of the recurrence cells (default 4096,2^16,2^20)")
      ->delimiter(',');
  add_seed_option(*cmd, "--seed", o->seed, "Generator seed");
  cmd->add_option("--runs", o->runs, "Runs per shape for the determinism count on cuda (default 5, quick 2)");
  cmd->add_option("--det-runs", o->det_runs,
                  "Runs of each algorithm at --time-n for the determinism count on cuda (default 10, quick 3)");
  cmd->add_option("--reps", o->reps, "Timed launches per throughput point, median kept (default 10, quick 3)");
  cmd->add_option("--time-n", o->time_n, "n of the throughput table on cuda (default 2^26: input + output >> L2)");
  cmd->add_option("--work-log2-max", o->work_log2_max, "scan_work.csv: n = 2^k and 2^k+1 up to this k (default 20)");
  cmd->add_option("--external", o->externals,
                  "The user's scans, by name (registered from Python: sumlab.study.scan(subjects=...)), measured "
                  "beside the lab's on the + operator")
      ->delimiter(',');
  cmd->add_option("--verify", o->verify,
                  "GPU bits vs model bits before the study: full, quick or none (default quick on cuda, none on model)");
  cmd->callback([o] { run_scan_study(*o); });
}

}  // namespace sumlab
