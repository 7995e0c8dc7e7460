// GPU bits == model bits for the scans; see verify_scan.hpp.
#include "studies/verify_scan.hpp"

#include <fmt/format.h>

#include <chrono>
#include <memory>
#include <span>
#include <string>
#include <tuple>
#include <vector>

#include "core/counter_rng.hpp"
#include "core/generators.hpp"
#include "core/scan/scan_kernel.hpp"
#include "core/scan/scan_model.hpp"
#include "core/scan/scan_ops.hpp"
#include "studies/commands.hpp"
#include "studies/run_folder.hpp"
#include "studies/verify_table.hpp"
#include "studies/scan_backend.hpp"

namespace sumlab {

using scan::GpuScan;
using scan::ScanShape;

std::string ScanVerifySummary::table() const {
  std::vector<VerifyTableRow> rows;
  for (const auto& l : lines) rows.push_back({{l.algorithm, l.op, l.dtype}, l});
  return verify_table("scans", gpu, device, {"algorithm", "operator", "dtype"}, rows, seconds);
}

namespace {

// The inputs of each operator, pure functions of (seed, index).
template <class T> void make(std::vector<T>& x, std::size_t n, std::uint64_t seed) {
  x.resize(n);
  for (std::size_t i = 0; i < n; ++i) x[i] = T(2.0 * uniform_double(seed, i, 0) - 1.0);
}
template <class T> void make(std::vector<scan::Flagged<T>>& x, std::size_t n, std::uint64_t seed) {
  x.resize(n);
  for (std::size_t i = 0; i < n; ++i)
    x[i] = {i == 0 || random_bits(seed, i, 1) % 16 == 0, T(2.0 * uniform_double(seed, i, 0) - 1.0)};
}
template <class T> void make(std::vector<scan::Affine<T>>& x, std::size_t n, std::uint64_t seed) {
  x.resize(n);
  for (std::size_t i = 0; i < n; ++i) x[i] = {T(0.5 + uniform_double(seed, i, 2)), T(standard_normal(seed, i))};
}

template <class V> long count_mismatches(const std::vector<V>& a, const std::vector<V>& b, std::string* first) {
  if (a.size() != b.size()) {
    *first = fmt::format("{} outputs vs {}", a.size(), b.size());
    return 1;
  }
  long bad = 0;
  for (std::size_t i = 0; i < a.size(); ++i)
    if (!scan::same_bits(a[i], b[i])) {
      if (bad == 0) *first = fmt::format("first differing output at {}", i);
      ++bad;
    }
  return bad;
}

struct CaseRow : VerifyOutcome {
  std::string algorithm, op, dtype, shape, kind;
  std::int64_t n;
};

class Sweep {
 public:
  Sweep(const ScanVerifyOptions& o, bool gpu) : opts_(o), gpu_(gpu) {}

  template <class Op> void run(const std::string& dtype) {
    using V = typename Op::Value;
    const std::vector<std::int64_t> sizes = opts_.quick ? std::vector<std::int64_t>{0, 1, 33, 257, 4097, 100003}
                                                        : std::vector<std::int64_t>{0, 1, 31, 32, 33, 255, 257, 1023,
                                                                                    1025, 4097, 100003, 1048579};
    for (std::int64_t n : sizes) {
      std::vector<V> x;
      make(x, std::size_t(n), opts_.seed);
      const std::span<const V> xs(x);
      ScanKernelInput<Op> on_model(BackendKind::model, xs);
      std::unique_ptr<ScanKernelInput<Op>> gpu;
      std::string gpu_error;
      if (gpu_) {
        try {
          gpu = std::make_unique<ScanKernelInput<Op>>(BackendKind::cuda, xs);
        } catch (const UserError& e) {
          gpu_error = e.what();
        }
      }
      for (GpuScan alg : scan::kModelledGpuScans) {
        ScanVerifyLine& line = line_for(std::string(to_string(alg)), Op::name, dtype);
        for (bool inclusive : {true, false}) {
          std::vector<V> first_model;
          const auto shapes = scan::scan_shapes(alg, opts_.quick, sizeof(V));
          const ScanRunOptions ro{inclusive, true, 1};
          const auto model_runner = scan_runner<Op>(alg, BackendKind::model, shapes, ro);
          const auto gpu_runner = scan_runner<Op>(alg, BackendKind::cuda, shapes, ro);
          for (std::size_t si = 0; si < shapes.size(); ++si) {
            const ScanShape& s = shapes[si];
            CaseRow c{VerifyOutcome{}, line.algorithm, Op::name, dtype, to_string(s), inclusive ? "inclusive" : "exclusive", n};
            verify_shape(
                c, si, gpu_, scan::declared_determinism(alg, Op::name) == Determinism::shape_invariant, first_model,
                [&] { return model_runner->run(si, on_model).value; },
                [&] {
                  if (!gpu) throw UserError(gpu_error);
                  return gpu_runner->run(si, *gpu).value;
                },
                [](const std::vector<V>& got, const std::vector<V>& want, std::string* detail) {
                  return count_mismatches(got, want, detail);
                });
            line.count(c, [&] { return fmt::format("{} n={} {}", c.shape, c.n, c.kind); });
            cases_.push_back(std::move(c));
          }
        }
      }
    }
  }

  const std::vector<ScanVerifyLine>& lines() const { return lines_; }
  const std::vector<CaseRow>& cases() const { return cases_; }

 private:
  ScanVerifyLine& line_for(const std::string& alg, const std::string& op, const std::string& dtype) {
    for (auto& l : lines_)
      if (l.algorithm == alg && l.op == op && l.dtype == dtype) return l;
    lines_.push_back(ScanVerifyLine{VerifyCounts{}, alg, op, dtype});
    return lines_.back();
  }

  const ScanVerifyOptions& opts_;
  bool gpu_;
  std::vector<ScanVerifyLine> lines_;
  std::vector<CaseRow> cases_;
};

}  // namespace

ScanVerifySummary verify_scan(const ScanVerifyOptions& opts) {
  const auto t0 = std::chrono::steady_clock::now();
  ScanVerifySummary out;
  std::tie(out.gpu, out.device) = verify_device(opts.model_only);
  Sweep sweep(opts, out.gpu);
  sweep.run<scan::PlusOp<float>>("float32");
  sweep.run<scan::MaxOp<float>>("float32");
  sweep.run<scan::SegmentedOp<float>>("float32");
  sweep.run<scan::AffineOp<float>>("float32");
  sweep.run<scan::PlusOp<double>>("float64");
  sweep.run<scan::MaxOp<double>>("float64");
  sweep.run<scan::SegmentedOp<double>>("float64");
  sweep.run<scan::AffineOp<double>>("float64");
  out.lines = sweep.lines();
  if (!opts.csv.empty()) {
    std::vector<std::vector<std::string>> rows;
    for (const auto& c : sweep.cases())
      rows.push_back(verify_case_cells({c.algorithm, c.op, c.dtype, c.shape, std::to_string(c.n), c.kind}, c, out.gpu));
    append_csv(opts.csv, verify_case_columns({"algorithm", "operator", "dtype", "shape", "n", "kind"}), rows);
  }
  out.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  return out;
}

}  // namespace sumlab
