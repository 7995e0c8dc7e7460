// `sumlab study variance`: the row kernels (core/row_reduce/, gpu/rows.hpp) on LLM-shaped inputs,
// three tables in one run folder (columns: data/README.md):
//   row_variance.csv  per (dtype, offset, method, layout): the variance of rows offset + N(0, 1)
//                     against the exact MPFR variance (median and max relative error), rows with a
//                     negative variance, rows whose normalised output holds a NaN, and on the cuda
//                     backend the time per row against the memory-bound time (bytes over the
//                     device-to-device copy bandwidth measured in the same run);
//   row_softmax.csv   per (dtype, scale, method, layout): softmax of rows scale * N(0, 1) against a
//                     long-double reference: max absolute and relative error of the probabilities,
//                     max |sum p - 1|, NaN rows, time;
//   row_argmax.csv    per (dtype, case, layout): ties, signed zeros, NaN and Inf rows against a
//                     serial torch.argmax scan: rows whose index or value differs;
//   row_verify.csv    cuda backend (unless --verify none): GPU bits == model bits for every row
//                     kernel (studies/verify_rows.hpp), one line per (kernel, dtype).
// With --input (sumlab.study.variance(data=...)) the user's rows, read as rows of --cols values,
// take the generated ones' place in all three tables: the offset, scale and case columns say
// "data". They are studied in their own dtype (a bfloat16 array's as bfloat16), or in those of
// --dtypes that hold them exactly (StudyData::row_dtypes): a float32 file of bfloat16 values with
// --dtypes bfloat16 is a bfloat16 model's activations, since .npy has no bfloat16.
// The study is thin: options -> config -> library calls (row_backend.hpp) -> CSV rows. Each
// (dtype, offset) / (dtype, scale) / (dtype, argmax case) is a cell: appended and flushed when it
// finishes; --resume skips the cells already in the folder.
#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstdint>
#include <filesystem>
#include <iterator>
#include <limits>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "core/counter_rng.hpp"
#include "core/generators.hpp"
#include "core/row_reduce/row_input.hpp"
#include "core/row_reduce/row_kernel.hpp"
#include "reference/exact_moments.hpp"
#include "studies/checked_math.hpp"
#include "studies/external.hpp"
#include "studies/fnv1a.hpp"
#include "studies/commands.hpp"
#include "studies/input_options.hpp"
#include "studies/parallel_for.hpp"
#include "studies/row_backend.hpp"
#include "studies/run_folder.hpp"
#include "studies/study_data.hpp"
#include "studies/study_driver.hpp"
#include "studies/verify_rows.hpp"

namespace sumlab {
namespace {

using row_reduce::bfloat16_bits;
using row_reduce::RowKernel;
using row_reduce::RowLayout;
using row_reduce::RowShape;

struct VarianceOptions {
  RunOptions run;
  std::string backend;
  bool quick = false;
  // Not given: default 1024 x 4096, quick 64 x 1024; softmax 256, argmax 64 rows, quick 16, 8.
  std::optional<std::int64_t> rows, cols, softmax_rows, argmax_rows;
  std::vector<double> offsets;                     // default 0, 1, 10, .., 1e6
  std::vector<double> scales;                      // default 1, 10, 100, 1e3, 1e4
  std::vector<std::string> dtypes;                 // default float32 (with --input: the data's)
  std::string input, input_format, flatten;        // the user's rows (--input) in place of the generated ones
  std::vector<int> blocks{256};                    // block_per_row block sizes
  int warp_block = 256;                            // warp_per_row: block/32 rows per block
  std::uint64_t seed = 1;
  int reps = 0;                                    // timed launches per cell (default 20, quick 3)
  std::string verify;                              // full | quick | none (default: quick on cuda)
  std::vector<std::string> externals;              // the user's row subjects, registered by name (Python)
  int runs = 2;                                    // calls per configuration of a user's subject (>= 2)
};

struct Plan {
  BackendKind backend;
  std::string backend_name;
  std::int64_t rows, cols, softmax_rows, argmax_rows;
  std::vector<double> offsets, scales;
  std::vector<std::string> dtypes;
  std::optional<StudyData> data;  // --input: its rows are every table's only cell
  std::vector<bfloat16_bits> data_bf16;  // the data's float32 values as bfloat16 (exactly), for --dtypes bfloat16
  std::vector<RowShape> shapes;
  int reps, runs;
  std::string verify;
  std::vector<std::shared_ptr<ExternalArray>> moment_subjects, softmax_subjects;  // the user's
};

const std::vector<std::string> kVarianceColumns = {
    "study", "backend", "dtype", "rows", "cols", "offset", "seed", "method", "layout", "block",
    "median_rel_error", "max_rel_error", "negative_variance_rows", "nan_variance_rows", "nan_output_rows",
    "ms", "us_per_row", "bound_us_per_row", "time_over_bound", "copy_gbps", "bytes", "max_out_abs_error", "runs",
    "distinct_outputs", "note"};
const std::vector<std::string> kSoftmaxColumns = {
    "study", "backend", "dtype", "rows", "cols", "scale", "seed", "method", "layout", "block", "max_abs_error",
    "max_rel_error", "median_row_max_rel_error", "max_sum_error", "nan_rows", "ms", "us_per_row",
    "bound_us_per_row", "time_over_bound", "copy_gbps", "bytes", "runs", "distinct_outputs", "note"};
const std::vector<std::string> kArgmaxColumns = {
    "study", "backend", "dtype", "rows", "cols", "case", "seed", "method", "layout", "block", "index_mismatches",
    "value_mismatches", "expected_index_row0", "index_row0", "description"};
const std::vector<std::string> kVerifyColumns = {"kernel", "dtype", "cases", "mismatches", "errors",
                                                 "first_failure"};

constexpr RowKernel kMomentKernels[] = {RowKernel::textbook, RowKernel::two_pass, RowKernel::welford,
                                        RowKernel::welford_equal};
constexpr RowKernel kSoftmaxKernels[] = {RowKernel::softmax_online, RowKernel::softmax_three_pass};

std::string opt_num(const std::optional<double>& v) { return v ? csv_number(*v) : std::string(); }

int cpu_threads() { return static_cast<int>(std::max(1u, std::thread::hardware_concurrency())); }

// --- inputs ------------------------------------------------------------------------------------

// x = (In) (offset + scale * z), z = standard_normal(seed, i) in double, rounded once to the dtype
// (bfloat16: to float, then to bfloat16). Element i is generate_element(normal(offset, scale)).
template <class In> std::vector<In> normal_rows(std::int64_t rows, std::int64_t cols, double offset, double scale,
                                                std::uint64_t seed) {
  std::vector<In> x(static_cast<std::size_t>(rows * cols));
  for (std::size_t i = 0; i < x.size(); ++i) {
    const double v = offset + scale * standard_normal(seed, i);
    if constexpr (std::is_same_v<In, bfloat16_bits>) {
      x[i] = row_reduce::to_bfloat16_bits(static_cast<float>(v));
    } else {
      x[i] = static_cast<In>(v);
    }
  }
  return x;
}

template <class In> std::vector<row_reduce::row_acc_t<In>> widened(std::span<const In> x) {
  std::vector<row_reduce::row_acc_t<In>> w(x.size());
  for (std::size_t i = 0; i < x.size(); ++i) w[i] = row_reduce::RowInput<In>::widen(x[i]);
  return w;
}

// Exact mean and population variance of each row, correctly rounded to double (MPFR), rows split
// over threads.
struct ExactRows {
  std::vector<double> mean, variance;
};
template <class Acc> ExactRows exact_rows(const std::vector<Acc>& x, std::int64_t rows, std::int64_t cols) {
  ExactRows e{std::vector<double>(static_cast<std::size_t>(rows)), std::vector<double>(static_cast<std::size_t>(rows))};
  const std::int64_t chunk = 16;
  const auto chunks = static_cast<std::size_t>((rows + chunk - 1) / chunk);
  parallel_for(chunks, cpu_threads(), [&](std::size_t c) {
    const std::int64_t r0 = static_cast<std::int64_t>(c) * chunk, r1 = std::min(rows, r0 + chunk);
    const std::span<const Acc> part(x.data() + r0 * cols, static_cast<std::size_t>((r1 - r0) * cols));
    const auto m = reference::exact_row_moments<Acc>(part, r1 - r0, cols);
    for (std::int64_t r = r0; r < r1; ++r) {
      e.mean[static_cast<std::size_t>(r)] = m[static_cast<std::size_t>(r - r0)].mean_d;
      e.variance[static_cast<std::size_t>(r)] = m[static_cast<std::size_t>(r - r0)].variance_d;
    }
  });
  return e;
}

// The largest |out - (x - mean) / sqrt(variance + eps)| over a rows x cols output, the reference in
// long double from the exact mean and variance rounded to double. Its own error is below
// 2^-52 (|x - mean| + |mean|) rstd (the mean's rounding to double, 2^-53 |mean|, dominates; the
// variance's moves rstd by 2^-54 relative; long double adds 2^-64 per operation), so it resolves
// float32 and bfloat16 outputs and float64 ones only where they exceed that; a NaN output counts
// as infinite.
template <class Acc>
double max_layer_norm_error(const std::vector<Acc>& x, const std::vector<Acc>& out, const ExactRows& e,
                            std::int64_t rows, std::int64_t cols) {
  double worst = 0;
  for (std::int64_t r = 0; r < rows; ++r) {
    const auto ri = static_cast<std::size_t>(r);
    const long double rstd = 1.0L / std::sqrt(static_cast<long double>(e.variance[ri]) + row_reduce::layer_norm_eps);
    for (std::int64_t j = 0; j < cols; ++j) {
      const auto i = static_cast<std::size_t>(r * cols + j);
      const long double want = (static_cast<long double>(x[i]) - e.mean[ri]) * rstd;
      const double d = static_cast<double>(std::fabs(static_cast<long double>(out[i]) - want));
      worst = std::isnan(d) ? std::numeric_limits<double>::infinity() : std::max(worst, d);
    }
  }
  return worst;
}

// What one configuration of a runner gave: its first outcome and, for a user's subject (called
// `runs` times), how many distinct outputs the calls gave; a failed call ends the repetition.
template <class In> struct RowResult {
  Outcome<row_reduce::RowOutputs<row_reduce::row_acc_t<In>>> first;
  int runs = 0;  // 0: the lab's kernel, run once (its bits are verified against its model)
  std::size_t distinct = 0;
};

template <class Acc> std::string output_hash(const row_reduce::RowOutputs<Acc>& o) {
  Fnv1a64 h;
  h.add(o.variance.data(), o.variance.size() * sizeof(Acc)).add(o.out.data(), o.out.size() * sizeof(Acc));
  return h.hex();
}

template <class In>
RowResult<In> run_config(RowRunner<In>& r, std::size_t c, RowKernelInput<In>& x, int runs) {
  RowResult<In> res{r.run(c, x)};
  if (r.kind() != RunnerKind::external) return res;
  std::set<std::string> seen;
  res.runs = 1;
  if (res.first.failed) return res;
  seen.insert(output_hash(res.first.value));
  for (; res.runs < runs; ++res.runs) {
    auto again = r.run(c, x);
    if (again.failed) {
      res.first.note = "call " + std::to_string(res.runs + 1) + ": " + again.note;
      break;
    }
    seen.insert(output_hash(again.value));
  }
  res.distinct = seen.size();
  return res;
}

// The order of a cell's rows: per launch shape every kernel of the lab, then each of the user's
// subjects (they follow the kernels) at each of its configurations. Pairs (runner, configuration).
template <class R>
std::vector<std::pair<std::size_t, std::size_t>> row_jobs(const Plan& p, const std::vector<std::unique_ptr<R>>& runners) {
  std::vector<std::pair<std::size_t, std::size_t>> jobs;
  std::size_t ours = 0;
  while (ours < runners.size() && runners[ours]->kind() != RunnerKind::external) ++ours;
  for (std::size_t s = 0; s < p.shapes.size(); ++s)
    for (std::size_t k = 0; k < ours; ++k) jobs.emplace_back(k, s);
  for (std::size_t k = ours; k < runners.size(); ++k)
    for (std::size_t c = 0; c < runners[k]->configs(); ++c) jobs.emplace_back(k, c);
  return jobs;
}

// method, layout, block: the kernel's launch shape, or the user's configuration.
template <class In>
std::vector<std::string> config_columns(const Plan& p, const RowRunner<In>& r, std::size_t c) {
  if (r.kind() == RunnerKind::external) return {r.row_name(c), "external", ""};
  return {r.name(), std::string(row_reduce::to_string(p.shapes[c].layout)), std::to_string(p.shapes[c].block)};
}

template <class In> std::vector<std::string> repeat_columns(const RowResult<In>& r) {
  if (r.runs == 0) return {"", "", r.first.note};
  return {std::to_string(r.runs), r.distinct ? std::to_string(r.distinct) : "", r.first.note};
}

double median_of(std::vector<double> v) {
  if (v.empty()) return std::nan("");
  std::sort(v.begin(), v.end());
  const std::size_t h = v.size() / 2;
  return v.size() % 2 ? v[h] : 0.5 * (v[h - 1] + v[h]);
}

// The memory-bound cost of a row kernel: the input read once, the output written once, two
// per-row statistics written.
template <class In> double kernel_bytes(std::int64_t rows, std::int64_t cols, bool writes_out) {
  using Acc = row_reduce::row_acc_t<In>;
  return double(rows) * double(cols) * double(sizeof(In) + (writes_out ? sizeof(Acc) : 0)) +
         double(rows) * 2.0 * double(sizeof(Acc));
}

// ms, us/row, bound us/row, time/bound, copy GB/s, bytes.
std::vector<std::string> timing_fields(const std::optional<double>& ms, double bytes, std::int64_t rows,
                                       const std::optional<double>& bandwidth) {
  if (!ms || !bandwidth || *bandwidth <= 0) return {opt_num(ms), "", "", "", "", csv_number(bytes)};
  const double bound_ms = bytes / *bandwidth * 1e3;
  return {csv_number(*ms), csv_number(*ms * 1e3 / double(rows)), csv_number(bound_ms * 1e3 / double(rows)), csv_number(*ms / bound_ms),
          csv_number(*bandwidth / 1e9), csv_number(bytes)};
}

// --- the cells ---------------------------------------------------------------------------------

// A cell's matrix of rows x p.cols values: generated (rows offset + scale * N(0, 1), or an argmax
// case) or the user's. label fills the offset, scale or case column, seed the seed column (empty
// for the user's rows).
template <class In> struct CellMatrix {
  std::span<const In> x;
  std::int64_t rows;
  std::string label, seed;
};

// The lab's moment kernels at every shape and the user's variance and layer_norm subjects at each of
// their configurations, on rows offset + N(0, 1) or the user's.
template <class In>
std::vector<std::vector<std::string>> variance_cell(const Plan& p, const CellMatrix<In>& m,
                                                    const std::optional<double>& bandwidth) {
  using Acc = row_reduce::row_acc_t<In>;
  const std::string dtype(row_reduce::RowInput<In>::dtype);
  const std::vector<Acc> w = widened(m.x);
  const ExactRows exact = exact_rows(w, m.rows, p.cols);
  RowKernelInput<In> input(p.backend, m.x, m.rows, p.cols);
  std::vector<std::unique_ptr<RowRunner<In>>> runners;
  for (RowKernel k : kMomentKernels) runners.push_back(row_runner<In>(k, p.backend, p.shapes, true, p.reps));
  const bool finite = std::all_of(w.begin(), w.end(), [](Acc v) { return std::isfinite(v); });
  for (const auto& e : p.moment_subjects) runners.push_back(external_row_runner<In>(e, finite));

  struct Job {
    std::size_t runner, c;
    std::vector<std::string> row;
  };
  std::vector<Job> jobs;
  for (const auto& [k, c] : row_jobs(p, runners)) jobs.push_back({k, c, {}});
  auto run = [&](std::size_t i) {
    Job& j = jobs[i];
    RowRunner<In>& runner = *runners[j.runner];
    const RowResult<In> r = run_config(runner, j.c, input, p.runs);
    const auto& out = r.first.value;
    std::vector<double> err;
    long negative = 0, nan_var = 0, nan_out = 0;
    for (std::size_t row = 0; row < out.variance.size(); ++row) {
      const double v = static_cast<double>(out.variance[row]), want = exact.variance[row];
      // A constant row (bfloat16 rounds offset + N(0, 1) to one value from offset 1e4 on) has an
      // exact variance of 0: then 0 is exact and anything else infinitely wrong.
      const double e = want == 0 ? (v == 0 ? 0.0 : std::numeric_limits<double>::infinity()) : std::fabs(v - want) / want;
      err.push_back(std::isnan(e) ? std::numeric_limits<double>::infinity() : e);
      negative += v < 0;
      nan_var += std::isnan(v);
    }
    for (std::size_t row = 0; !out.out.empty() && row < static_cast<std::size_t>(m.rows); ++row) {
      const Acc* y = out.out.data() + row * static_cast<std::size_t>(p.cols);
      nan_out += std::any_of(y, y + p.cols, [](Acc a) { return std::isnan(a); });
    }
    const bool has_var = !out.variance.empty(), has_out = !out.out.empty();
    const double max_err = err.empty() ? std::nan("") : *std::max_element(err.begin(), err.end());
    j.row = {"variance", p.backend_name, dtype, std::to_string(m.rows), std::to_string(p.cols), m.label, m.seed};
    for (auto& f : config_columns(p, runner, j.c)) j.row.push_back(std::move(f));
    for (auto& f : {has_var ? csv_number(median_of(err)) : "", has_var ? csv_number(max_err) : "",
                    has_var ? std::to_string(negative) : "", has_var ? std::to_string(nan_var) : "",
                    has_out ? std::to_string(nan_out) : ""})
      j.row.push_back(f);
    for (auto& f : timing_fields(device_ms(runner, r.first), kernel_bytes<In>(m.rows, p.cols, true), m.rows, bandwidth))
      j.row.push_back(std::move(f));
    j.row.push_back(has_out ? csv_number(max_layer_norm_error(w, out.out, exact, m.rows, p.cols)) : "");
    for (auto& f : repeat_columns(r)) j.row.push_back(std::move(f));
  };
  // The model's CPU work runs in parallel; GPU launches one after another (they are timed), and so
  // do the user's calls (a Python subject holds the interpreter; its wall time is its time).
  std::size_t ours = 0;
  while (ours < jobs.size() && runners[jobs[ours].runner]->kind() != RunnerKind::external) ++ours;
  if (p.backend == BackendKind::model) {
    parallel_for(ours, cpu_threads(), run);
  } else {
    for (std::size_t i = 0; i < ours; ++i) run(i);
  }
  for (std::size_t i = ours; i < jobs.size(); ++i) run(i);
  std::vector<std::vector<std::string>> rows;
  for (auto& j : jobs) rows.push_back(std::move(j.row));
  return rows;
}

template <class In>
std::vector<std::vector<std::string>> softmax_cell(const Plan& p, const CellMatrix<In>& matrix,
                                                   const std::optional<double>& bandwidth) {
  using Acc = row_reduce::row_acc_t<In>;
  const std::string dtype(row_reduce::RowInput<In>::dtype);
  const std::int64_t rows = matrix.rows, cols = p.cols;
  const std::vector<Acc> w = widened(matrix.x);
  // Reference in long double (64-bit significand): the max, exp(x - max) (x - max exact: both are
  // Acc values, and long double holds their difference), the sum, the quotient. Its relative
  // error is ~ a few 2^-64, far below float32's 2^-24 and float64's 2^-53.
  std::vector<long double> ref(w.size());
  for (std::int64_t r = 0; r < rows; ++r) {
    const Acc* xr = w.data() + r * cols;
    long double m = -std::numeric_limits<long double>::infinity(), s = 0;
    for (std::int64_t j = 0; j < cols; ++j) m = std::max(m, static_cast<long double>(xr[j]));
    for (std::int64_t j = 0; j < cols; ++j) s += std::exp(static_cast<long double>(xr[j]) - m);
    for (std::int64_t j = 0; j < cols; ++j)
      ref[static_cast<std::size_t>(r * cols + j)] = std::exp(static_cast<long double>(xr[j]) - m) / s;
  }
  RowKernelInput<In> input(p.backend, matrix.x, rows, cols);
  std::vector<std::unique_ptr<RowRunner<In>>> runners;
  for (RowKernel k : kSoftmaxKernels) runners.push_back(row_runner<In>(k, p.backend, p.shapes, true, p.reps));
  const bool finite = std::all_of(w.begin(), w.end(), [](Acc v) { return std::isfinite(v); });
  for (const auto& e : p.softmax_subjects) runners.push_back(external_row_runner<In>(e, finite));
  std::vector<std::vector<std::string>> out_rows;
  for (const auto& [k, c] : row_jobs(p, runners)) {
    const auto& runner = runners[k];
    const RowResult<In> r = run_config(*runner, c, input, p.runs);
    double max_abs = 0, max_rel = 0, max_sum = 0;
    std::vector<double> row_rel;
    long nan_rows = 0;
    for (std::int64_t row = 0; row < rows && !r.first.failed; ++row) {
      bool has_nan = false;
      long double sum = 0;
      double worst = 0;
      for (std::int64_t j = 0; j < cols; ++j) {
        const auto i = static_cast<std::size_t>(row * cols + j);
        const double pv = static_cast<double>(r.first.value.out[i]);
        has_nan |= std::isnan(pv);
        sum += pv;
        const long double d = std::fabs(static_cast<long double>(pv) - ref[i]);
        max_abs = std::max(max_abs, static_cast<double>(d));
        if (ref[i] >= static_cast<long double>(std::numeric_limits<Acc>::min()))
          worst = std::max(worst, static_cast<double>(d / ref[i]));
      }
      nan_rows += has_nan;
      row_rel.push_back(worst);
      max_rel = std::max(max_rel, worst);
      max_sum = std::max(max_sum, static_cast<double>(std::fabs(sum - 1.0L)));
    }
    std::vector<std::string> row = {"softmax", p.backend_name, dtype, std::to_string(rows), std::to_string(cols),
                                    matrix.label, matrix.seed};
    for (auto& f : config_columns(p, *runner, c)) row.push_back(std::move(f));
    if (r.first.failed) {
      row.insert(row.end(), {"", "", "", "", ""});
    } else {
      row.insert(row.end(), {csv_number(max_abs), csv_number(max_rel), csv_number(median_of(row_rel)),
                             csv_number(max_sum), std::to_string(nan_rows)});
    }
    for (auto& f : timing_fields(device_ms(*runner, r.first), kernel_bytes<In>(rows, cols, true), rows, bandwidth))
      row.push_back(std::move(f));
    for (auto& f : repeat_columns(r)) row.push_back(std::move(f));
    out_rows.push_back(std::move(row));
  }
  return out_rows;
}

// --- argmax -------------------------------------------------------------------------------------

struct ArgmaxCase {
  const char* name;
  const char* description;
};
constexpr ArgmaxCase kArgmaxCases[] = {
    {"distinct", "N(0,1) values: one maximum"},
    {"ties_constant", "every element 1: index 0"},
    {"ties_quantized", "N(0,1) rounded to integers: the maximum repeats; the first wins"},
    {"ties_planted", "the maximum (+8) planted at two random columns: the lower one wins"},
    {"signed_zero", "+0 and -0 only (equal): index 0"},
    {"nan_single", "one NaN at a random column: NaN is the maximum"},
    {"nan_several", "NaN at three random columns: the first NaN wins"},
    {"nan_and_inf", "+Inf at one column, NaN at a later one: NaN beats +Inf"},
    {"pos_inf_ties", "+Inf at two random columns: the lower one wins"},
    {"all_neg_inf", "every element -Inf: index 0"},
};

double argmax_case_value(const std::string& c, std::uint64_t seed, std::int64_t r, std::int64_t j, std::int64_t cols) {
  const double inf = std::numeric_limits<double>::infinity();
  const auto i = static_cast<std::uint64_t>(r * cols + j);
  const double z = standard_normal(seed, i);
  auto col = [&](std::uint32_t stream) {
    return static_cast<std::int64_t>(random_bits(seed, static_cast<std::uint64_t>(r), 500 + stream) %
                                     static_cast<std::uint64_t>(cols));
  };
  if (c == "distinct") return z;
  if (c == "ties_constant") return 1.0;
  if (c == "ties_quantized") return std::round(z);
  if (c == "ties_planted") return (j == col(1) || j == col(2)) ? 8.0 : z;
  if (c == "signed_zero") return (random_bits(seed, i, 510) & 1) ? -0.0 : 0.0;
  if (c == "nan_single") return j == col(1) ? std::nan("") : z;
  if (c == "nan_several") return (j == col(1) || j == col(2) || j == col(3)) ? std::nan("") : z;
  if (c == "nan_and_inf") {
    const std::int64_t a = col(1), b = col(2);
    if (j == std::min(a, b)) return inf;
    if (j == std::max(a, b) && a != b) return std::nan("");
    return z;
  }
  if (c == "pos_inf_ties") return (j == col(1) || j == col(2)) ? inf : z;
  return -inf;  // all_neg_inf
}

// A serial scan with torch.argmax's rules, written independently of core/row_reduce/argmax.hpp:
// the first NaN if any, else the first occurrence of the largest value.
template <class Acc> std::int64_t serial_argmax(const Acc* x, std::int64_t cols) {
  std::int64_t best = -1;
  for (std::int64_t j = 0; j < cols; ++j) {
    if (best < 0) {
      best = j;
    } else if (std::isnan(x[best])) {
      break;
    } else if (std::isnan(x[j]) || x[j] > x[best]) {
      best = j;
    }
  }
  return best;
}

template <class In> std::vector<In> argmax_case_rows(const Plan& p, const VarianceOptions& o, const ArgmaxCase& c) {
  const std::int64_t rows = p.argmax_rows, cols = p.cols;
  std::vector<In> x(static_cast<std::size_t>(rows * cols));
  for (std::int64_t r = 0; r < rows; ++r)
    for (std::int64_t j = 0; j < cols; ++j) {
      const double v = argmax_case_value(c.name, o.seed, r, j, cols);
      auto& e = x[static_cast<std::size_t>(r * cols + j)];
      if constexpr (std::is_same_v<In, bfloat16_bits>) {
        e = row_reduce::to_bfloat16_bits(static_cast<float>(v));
      } else {
        e = static_cast<In>(v);
      }
    }
  return x;
}

// The argmax kernel at every shape against the serial scan; description fills its column.
template <class In>
std::vector<std::vector<std::string>> argmax_cell(const Plan& p, const CellMatrix<In>& m, const std::string& description) {
  using Acc = row_reduce::row_acc_t<In>;
  const std::string dtype(row_reduce::RowInput<In>::dtype);
  const std::int64_t rows = m.rows, cols = p.cols;
  const std::vector<Acc> w = widened(m.x);
  std::vector<std::int64_t> expected(static_cast<std::size_t>(rows));
  for (std::int64_t r = 0; r < rows; ++r) expected[static_cast<std::size_t>(r)] = serial_argmax(w.data() + r * cols, cols);
  RowKernelInput<In> input(p.backend, m.x, rows, cols);
  const auto runner = row_runner<In>(RowKernel::argmax, p.backend, p.shapes, false);
  std::vector<std::vector<std::string>> out;
  for (std::size_t si = 0; si < p.shapes.size(); ++si) {
    const RowShape& s = p.shapes[si];
    const auto r = runner->run(si, input);
    long bad_index = 0, bad_value = 0;
    for (std::int64_t row = 0; row < rows; ++row) {
      const auto ri = static_cast<std::size_t>(row);
      const std::int64_t got = r.value.max_index[ri];
      bad_index += got != expected[ri];
      const Acc want = w[static_cast<std::size_t>(row * cols + expected[ri])];
      const Acc v = r.value.max_value[ri];
      bad_value += !(std::isnan(want) ? std::isnan(v) : (v == want && std::signbit(v) == std::signbit(want)));
    }
    out.push_back({"argmax", p.backend_name, dtype, std::to_string(rows), std::to_string(cols), m.label, m.seed,
                   "argmax", std::string(row_reduce::to_string(s.layout)), std::to_string(s.block),
                   std::to_string(bad_index), std::to_string(bad_value), std::to_string(expected.empty() ? -1 : expected[0]),
                   std::to_string(r.value.max_index.empty() ? -1 : r.value.max_index[0]), description});
  }
  return out;
}

// --- driver ------------------------------------------------------------------------------------

// The data's float32 values as bfloat16 bits: a bfloat16 value is a float32 whose low 16 bits are
// zero, so the narrowing is exact or the data is refused, naming a value bfloat16 does not hold.
std::vector<bfloat16_bits> narrow_to_bfloat16(const StudyData& data) {
  const auto x = data.values<float>();
  std::vector<bfloat16_bits> out(x.size());
  for (std::size_t i = 0; i < x.size(); ++i) {
    const auto bits = std::bit_cast<std::uint32_t>(x[i]);
    if ((bits & 0xffffu) != 0)
      throw UserError(fmt::format("--input '{}': value {} ({}) is not a bfloat16 value, so --dtypes bfloat16 would "
                                  "study other data; round it first, or leave --dtypes out",
                                  data.source, i, x[i]));
    out[i] = static_cast<bfloat16_bits>(bits >> 16);
  }
  return out;
}

Plan make_plan(const VarianceOptions& o) {
  Plan p;
  p.backend = pick_row_backend(o.backend);
  p.backend_name = std::string(to_string(p.backend));
  p.rows = o.rows.value_or(o.quick ? 64 : 1024);
  p.cols = o.cols.value_or(o.quick ? 1024 : 4096);
  p.softmax_rows = o.softmax_rows.value_or(o.quick ? 16 : 256);
  p.argmax_rows = o.argmax_rows.value_or(o.quick ? 8 : 64);
  p.offsets = o.offsets.empty() ? std::vector<double>{0, 1, 10, 100, 1e3, 1e4, 1e5, 1e6} : o.offsets;
  p.scales = o.scales.empty() ? std::vector<double>{1, 10, 100, 1e3, 1e4} : o.scales;
  p.dtypes = o.dtypes.empty() ? std::vector<std::string>{"float32"} : o.dtypes;
  if (!o.input.empty()) {  // the user's rows in place of every generated matrix
    if (!o.offsets.empty() || !o.scales.empty())
      throw UserError("--offsets and --scales have no effect with --input (the data's rows are measured); drop them");
    if (o.rows || o.softmax_rows || o.argmax_rows)
      throw UserError("--rows, --softmax-rows and --argmax-rows have no effect with --input (its rows are the data's "
                      "values in rows of --cols); drop them");
    if (!o.cols)
      throw UserError("--input needs --cols, the length of a row: the data is read as rows of --cols values in its "
                      "stored order (a 2-D .npy row by row unless --flatten F)");
    p.data = open_study_data(o.input, o.input_format, o.flatten.empty() ? "C" : o.flatten);
    p.dtypes = p.data->row_dtypes(o.dtypes);
    if (std::ranges::find(p.dtypes, "bfloat16") != p.dtypes.end()) p.data_bf16 = narrow_to_bfloat16(*p.data);
    const auto n = static_cast<std::int64_t>(p.data->size());
    if (p.cols < 1 || n % p.cols != 0)
      throw UserError(fmt::format("--input '{}' holds {} values: not a whole number of rows of --cols {}", p.data->source,
                                  n, p.cols));
    p.rows = p.softmax_rows = p.argmax_rows = n / p.cols;
    p.offsets.clear();
    p.scales.clear();
  }
  p.reps = o.reps ? o.reps : (o.quick ? 3 : 20);
  p.verify = o.verify.empty() ? (p.backend == BackendKind::cuda ? "quick" : "none") : o.verify;
  if (p.rows < 1 || p.softmax_rows < 1 || p.argmax_rows < 1)
    throw UserError(fmt::format("--rows, --softmax-rows and --argmax-rows must be >= 1 (got {}, {}, {})", p.rows,
                                p.softmax_rows, p.argmax_rows));
  if (p.cols < 1) throw UserError(fmt::format("--cols must be >= 1 (got {})", p.cols));
  for (double v : p.offsets)
    if (!std::isfinite(v)) throw UserError("--offsets must be finite");
  for (double v : p.scales)
    if (!std::isfinite(v) || v <= 0) throw UserError("--scales must be finite and > 0");
  if (o.runs < 2) throw UserError(fmt::format("--runs must be >= 2 (got {})", o.runs));
  p.runs = o.runs;
  for (const auto& e : external_arrays(o.externals, {ArrayKind::variance, ArrayKind::layer_norm, ArrayKind::softmax},
                                       "variance"))
    (e->kind() == ArrayKind::softmax ? p.softmax_subjects : p.moment_subjects).push_back(e);
  p.shapes.push_back(RowShape{RowLayout::warp_per_row, o.warp_block});
  for (int b : o.blocks) p.shapes.push_back(RowShape{RowLayout::block_per_row, b});
  // Every shape, dtype and size is checked before the run folder is touched.
  for (const auto& d : p.dtypes) {
    if (d != "float32" && d != "bfloat16" && d != "float64")
      throw UserError("unknown dtype '" + d + "' (valid: float32, bfloat16, float64)");
    for (const auto& s : p.shapes)
      for (const auto& i : row_reduce::row_kernels())
        for (std::int64_t r : {p.rows, p.softmax_rows, p.argmax_rows}) {
          const std::string why = row_reduce::validate_row_shape(i.kernel, s, d, r, p.cols);
          if (!why.empty()) throw UserError(why);
        }
  }
  const std::int64_t biggest = std::max({p.rows, p.softmax_rows, p.argmax_rows});
  // Input, widened copy, reference and a few outputs alive at once (8 model jobs in parallel).
  check_fits_in_memory(saturating_mul(static_cast<std::uint64_t>(biggest), static_cast<std::uint64_t>(p.cols)), 8u * 16u,
                       fmt::format("{} x {} rows", biggest, p.cols));
  return p;
}

template <class F> void for_dtype(const std::string& d, F f) {
  if (d == "float32") {
    f(static_cast<float*>(nullptr));
  } else if (d == "bfloat16") {
    f(static_cast<bfloat16_bits*>(nullptr));
  } else {
    f(static_cast<double*>(nullptr));
  }
}

void print_variance_table(const CsvTable& t) {
  const int off = t.column("offset"), m = t.column("method"), lay = t.column("layout"), med = t.column("median_rel_error"),
            mx = t.column("max_rel_error"), neg = t.column("negative_variance_rows"), nan = t.column("nan_output_rows"),
            tob = t.column("time_over_bound"), dt = t.column("dtype");
  fmt::print("{:<9} {:>8} {:<14} {:<14} {:>11} {:>11} {:>9} {:>8} {:>10}\n", "dtype", "offset", "method", "layout",
             "median_rel", "max_rel", "negative", "nan_out", "t/bound");
  for (const auto& r : t.rows) {
    auto g = [&](int c) { return c >= 0 ? r[static_cast<std::size_t>(c)] : std::string(); };
    auto e = [&](int c) {
      const std::string s = g(c);
      return s.empty() ? s : fmt::format("{:.3g}", std::stod(s));
    };
    fmt::print("{:<9} {:>8} {:<14} {:<14} {:>11} {:>11} {:>9} {:>8} {:>10}\n", g(dt), g(off), g(m), g(lay), e(med), e(mx),
               g(neg), g(nan), e(tob));
  }
}

nlohmann::ordered_json plan_json(const Plan& p, const VarianceOptions& o) {
  nlohmann::ordered_json plan;
  plan["backend"] = p.backend_name;
  plan["rows"] = p.rows;
  plan["cols"] = p.cols;
  plan["softmax_rows"] = p.softmax_rows;
  plan["argmax_rows"] = p.argmax_rows;
  plan["offsets"] = p.offsets;
  plan["scales"] = p.scales;
  plan["dtypes"] = p.dtypes;
  if (p.data) plan["input"] = p.data->plan();
  nlohmann::ordered_json shapes = nlohmann::ordered_json::array();
  for (const auto& s : p.shapes) shapes.push_back(row_reduce::to_string(s));
  plan["shapes"] = shapes;
  plan["seed"] = o.seed;
  plan["reps"] = p.reps;
  plan["verify"] = p.verify;
  if (!o.externals.empty()) {  // absent otherwise, so earlier runs' plans (and --resume) still match
    nlohmann::ordered_json ext;
    for (const auto& list : {&p.moment_subjects, &p.softmax_subjects})
      for (const auto& e : *list) ext[e->name()] = {{"kind", to_string(e->kind())}, {"configs", e->configs()}};
    plan["external"] = ext;
    plan["runs"] = p.runs;
  }
  return plan;
}

// GPU bits == model bits first (the study reports only what this chain verified), then per dtype
// the variance offsets, the softmax scales and the argmax cases. `verify_json` receives the
// verification's summary when that cell runs in this invocation.
std::vector<Cell> variance_cells(const Plan& p, const VarianceOptions& o, std::optional<double> bandwidth,
                                 nlohmann::ordered_json& verify_json) {
  std::vector<Cell> cells;
  if (p.verify != "none")
    cells.push_back({"verify", "row kernels: GPU bits vs model bits", [&p, &o, &verify_json]() -> CellRows {
                       RowVerifyOptions vo;
                       vo.quick = p.verify == "quick";
                       vo.seed = o.seed;
                       const RowVerifySummary v = verify_rows(vo);
                       fmt::print("{}", v.table());
                       Rows rows;
                       for (const auto& l : v.lines)
                         rows.push_back({l.kernel, l.dtype, std::to_string(l.cases), std::to_string(l.mismatches),
                                         std::to_string(l.errors), l.first_failure});
                       verify_json = {{"sweep", p.verify}, {"gpu", v.gpu}, {"cases", v.cases()},
                                      {"mismatches", v.mismatches()}, {"errors", v.errors()}, {"seconds", v.seconds}};
                       return {{"row_verify.csv", rows}};
                     }});
  for (const auto& dtype : p.dtypes) {
    if (p.data) {  // the user's rows, in every table
      const std::string key = fmt::format("{}|data", dtype);
      auto on_data = [&p, dtype](auto cell) {
        return [&p, dtype, cell]() -> CellRows {
          CellRows rows;
          for_dtype(dtype, [&](auto* tag) {
            using In = std::remove_pointer_t<decltype(tag)>;
            if constexpr (std::is_same_v<In, bfloat16_bits>)
              rows = cell(CellMatrix<In>{std::span<const In>(p.data_bf16), p.rows, "data", ""});
            else
              rows = cell(CellMatrix<In>{p.data->values<In>(), p.rows, "data", ""});
          });
          return rows;
        };
      };
      cells.push_back({"variance|" + key, dtype + " variance of your rows", on_data([&p, bandwidth](const auto& m) {
                         return CellRows{{"row_variance.csv", variance_cell(p, m, bandwidth)}};
                       })});
      cells.push_back({"softmax|" + key, dtype + " softmax of your rows", on_data([&p, bandwidth](const auto& m) {
                         return CellRows{{"row_softmax.csv", softmax_cell(p, m, bandwidth)}};
                       })});
      cells.push_back({"argmax|" + key, dtype + " argmax of your rows", on_data([&p](const auto& m) {
                         return CellRows{{"row_argmax.csv", argmax_cell(p, m, "your rows")}};
                       })});
      continue;
    }
    const std::string seed = std::to_string(o.seed);
    for (double offset : p.offsets)
      cells.push_back({fmt::format("variance|{}|{}", dtype, csv_number(offset)),
                       fmt::format("{} offset {}", dtype, csv_number(offset)),
                       [&p, &o, bandwidth, dtype, offset, seed]() -> CellRows {
                         Rows rows;
                         for_dtype(dtype, [&](auto* tag) {
                           using In = std::remove_pointer_t<decltype(tag)>;
                           const std::vector<In> x = normal_rows<In>(p.rows, p.cols, offset, 1.0, o.seed);
                           rows = variance_cell(p, CellMatrix<In>{x, p.rows, csv_number(offset), seed}, bandwidth);
                         });
                         return {{"row_variance.csv", rows}};
                       }});
    for (double scale : p.scales)
      cells.push_back({fmt::format("softmax|{}|{}", dtype, csv_number(scale)),
                       fmt::format("{} softmax scale {}", dtype, csv_number(scale)),
                       [&p, &o, bandwidth, dtype, scale, seed]() -> CellRows {
                         Rows rows;
                         for_dtype(dtype, [&](auto* tag) {
                           using In = std::remove_pointer_t<decltype(tag)>;
                           const std::vector<In> x = normal_rows<In>(p.softmax_rows, p.cols, 0.0, scale, o.seed);
                           rows = softmax_cell(p, CellMatrix<In>{x, p.softmax_rows, csv_number(scale), seed}, bandwidth);
                         });
                         return {{"row_softmax.csv", rows}};
                       }});
    for (const ArgmaxCase& c : kArgmaxCases)
      cells.push_back({fmt::format("argmax|{}|{}", dtype, c.name), fmt::format("{} argmax {}", dtype, c.name),
                       [&p, &o, dtype, c, seed]() -> CellRows {
                         Rows rows;
                         for_dtype(dtype, [&](auto* tag) {
                           using In = std::remove_pointer_t<decltype(tag)>;
                           const std::vector<In> x = argmax_case_rows<In>(p, o, c);
                           rows = argmax_cell(p, CellMatrix<In>{x, p.argmax_rows, c.name, seed}, c.description);
                         });
                         return {{"row_argmax.csv", rows}};
                       }});
  }
  return cells;
}

// The end of the study, over every cell (resumed ones too: read back from the folder): the
// variance table, the summary and the alarms (argmax mismatches, GPU-vs-model failures).
void finish_variance(Study& study, const Plan& p, nlohmann::ordered_json summary, const std::string& description,
                     std::optional<double> bandwidth, const nlohmann::ordered_json& verify_json) {
  RunFolder& folder = study.folder();
  print_variance_table(read_csv(folder.file("row_variance.csv")));
  const CsvTable arg = read_csv(folder.file("row_argmax.csv"));
  const long argmax_bad = column_total(arg, {"index_mismatches", "value_mismatches"});
  nlohmann::ordered_json verify = verify_json;
  long verify_failures = 0;
  if (p.verify != "none") {
    verify = verify_entry(verify_json, p.verify, read_csv(folder.file("row_verify.csv")));
    verify_failures = verify["mismatches"].get<long>() + verify["errors"].get<long>();
  }
  summary["device"] = description;
  summary["copy_bandwidth_gbps"] = bandwidth ? nlohmann::ordered_json(*bandwidth / 1e9) : nlohmann::ordered_json();
  summary["layer_norm_eps"] = row_reduce::layer_norm_eps;
  summary["verify"] = verify;
  summary["verify_failures"] = verify_failures;
  summary["argmax_mismatching_rows"] = argmax_bad;
  summary["csv"] = {"row_variance.csv", "row_softmax.csv", "row_argmax.csv"};
  std::vector<std::string> headline{
      fmt::format("argmax: {} mismatching rows over {} (case, layout) runs", argmax_bad, arg.rows.size())};
  if (p.verify != "none")
    headline.push_back(fmt::format("row kernels: {} case(s) where GPU and model bits differ or failed", verify_failures));
  study.finish(summary, headline);
  if (verify_failures)
    throw CheckFailed(fmt::format("{} row-kernel case(s) where the GPU's bits differ from the model's or failed to run: "
                                  "see {}", verify_failures, folder.file("row_verify.csv").string()));
  if (argmax_bad) throw CheckFailed(fmt::format("argmax disagreed with torch.argmax semantics on {} row(s)", argmax_bad));
}

void run_variance_study(const VarianceOptions& o) {
  if (!o.verify.empty() && o.verify != "full" && o.verify != "quick" && o.verify != "none")
    throw UserError("--verify must be full, quick or none");
  const Plan p = make_plan(o);
  if (p.verify != "none" && p.backend != BackendKind::cuda)
    throw UserError("--verify " + p.verify + " compares GPU and model bits: it needs --backend cuda");
  const nlohmann::ordered_json plan = plan_json(p, o);
  std::vector<Table> tables{{"row_variance.csv", kVarianceColumns},
                            {"row_softmax.csv", kSoftmaxColumns},
                            {"row_argmax.csv", kArgmaxColumns}};
  if (p.verify != "none") tables.push_back({"row_verify.csv", kVerifyColumns});
  Study study("variance", o.run, plan, p.backend_name, tables);
  const std::string description = row_backend_description(p.backend);
  fmt::print("variance study on {}: {}\n", p.backend_name, description);

  const std::size_t bytes = static_cast<std::size_t>(kernel_bytes<float>(p.rows, p.cols, true));
  const std::optional<double> bandwidth = copy_bandwidth(p.backend, bytes);
  if (bandwidth) fmt::print("device-to-device copy of {:.1f} MB: {:.1f} GB/s (read + write)\n", double(bytes) / 1e6, *bandwidth / 1e9);

  nlohmann::ordered_json verify_json;
  study.run(variance_cells(p, o, bandwidth, verify_json));
  if (p.data) p.data->check_unchanged();
  finish_variance(study, p, plan, description, bandwidth, verify_json);
}

}  // namespace

void register_study_variance(CLI::App& study) {
  auto o = std::make_shared<VarianceOptions>();
  auto* cmd = study.add_subcommand(
      "variance",
      "Row kernels on LLM-shaped rows: variance (textbook, two-pass, Welford/Chan) vs MPFR by row offset, "
      "softmax (online vs three-pass) by logit scale, argmax ties and NaN; cuda or model backend");
  add_run_options(*cmd, o->run);
  cmd->add_flag("--quick", o->quick, "A small version: 64 x 1024 rows, 3 timed launches");
  cmd->add_option("--backend", o->backend, "cuda or model (default: cuda when a GPU is present, else model)");
  cmd->add_option("--rows", o->rows, "Rows of the variance matrix (default 1024, quick 64)");
  cmd->add_option("--cols", o->cols, "Columns of every matrix (default 4096, quick 1024)");
  cmd->add_option("--softmax-rows", o->softmax_rows, "Rows of each softmax matrix (default 256, quick 16)");
  cmd->add_option("--argmax-rows", o->argmax_rows, "Rows of each argmax case (default 64, quick 8)");
  cmd->add_option("--offsets", o->offsets, "Row offsets, rows = offset + N(0,1) (default 0,1,10,...,1e6)")
      ->delimiter(',');
  cmd->add_option("--scales", o->scales, "Softmax logit scales, rows = scale * N(0,1) (default 1,10,...,1e4)")
      ->delimiter(',');
  cmd->add_option("--dtypes", o->dtypes,
                  "float32, bfloat16, float64 (comma list; default float32; with --input, the data's own)")
      ->delimiter(',');
  add_text_option(*cmd, "--input", o->input,
                  "The user's rows (.npy, .csv/.txt, raw with --format), read as rows of --cols values, in place of "
                  "the generated matrices in every table (offset, scale and case 'data')");
  add_text_option(*cmd, "--format", o->input_format, "--input's format: npy, csv or raw (default: from the extension)");
  add_text_option(*cmd, "--flatten", o->flatten, "How a 2-D --input is read into rows: C (row by row, default) or F");
  cmd->add_option("--blocks", o->blocks, "block_per_row block sizes (comma list; default 256)")->delimiter(',');
  cmd->add_option("--warp-block", o->warp_block, "warp_per_row block size (block/32 rows per block)")
      ->capture_default_str();
  add_seed_option(*cmd, "--seed", o->seed, "Generator seed");
  cmd->add_option("--reps", o->reps, "Timed launches per kernel on cuda, median kept (default 20, quick 3)");
  cmd->add_option("--verify", o->verify,
                  "GPU bits vs model bits before the study: full, quick or none (default quick on cuda, none on "
                  "model)");
  cmd->add_option("--external", o->externals,
                  "The user's row subjects (variance, layer_norm, softmax), registered by name from Python "
                  "(sumlab.study.variance(subjects=...))")
      ->delimiter(',');
  cmd->add_option("--runs", o->runs, "Calls per configuration of a user's subject (>= 2): distinct outputs")
      ->capture_default_str();
  cmd->callback([o] { run_variance_study(*o); });
}

}  // namespace sumlab
