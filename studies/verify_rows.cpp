// GPU bits == model bits for the row kernels; see verify_rows.hpp.
#include "studies/verify_rows.hpp"

#include <fmt/format.h>

#include <chrono>
#include <cmath>
#include <cstdio>
#include <limits>
#include <map>
#include <span>
#include <string>
#include <tuple>
#include <vector>

#include "core/counter_rng.hpp"
#include "core/generators.hpp"
#include "core/row_reduce/row_input.hpp"
#include "core/row_reduce/row_kernel.hpp"
#include "core/row_reduce/row_model.hpp"
#include "studies/backend.hpp"
#include "studies/commands.hpp"
#include "studies/row_backend.hpp"
#include "studies/run_folder.hpp"
#include "studies/verify_table.hpp"

namespace sumlab {

using row_reduce::RowKernel;
using row_reduce::RowLayout;
using row_reduce::RowShape;

std::string RowVerifySummary::table() const {
  std::vector<VerifyTableRow> rows;
  for (const auto& l : lines) rows.push_back({{l.kernel, l.dtype}, l});
  return verify_table("row kernels", gpu, device, {"kernel", "dtype"}, rows, seconds);
}

namespace {

struct Matrix {
  std::int64_t rows, cols;
};

std::vector<RowShape> verify_shapes(bool quick) {
  std::vector<RowShape> s;
  if (quick) {
    s = {{RowLayout::warp_per_row, 256}, {RowLayout::block_per_row, 32}, {RowLayout::block_per_row, 96},
         {RowLayout::block_per_row, 256}};
  } else {
    // 128 and 256 threads a block: the staged instances whose thread count is fixed (gpu/rows.cu).
    s = {{RowLayout::warp_per_row, 32},   {RowLayout::warp_per_row, 256},  {RowLayout::block_per_row, 32},
         {RowLayout::block_per_row, 64},  {RowLayout::block_per_row, 96},  {RowLayout::block_per_row, 128},
         {RowLayout::block_per_row, 256}, {RowLayout::block_per_row, 1024}};
  }
  return s;
}

// Rows of 1024 and 4096: Welford's steps unrolled whole where every thread holds 32 or 16 elements
// (warp_per_row, and block_per_row at 32, 64, 128 and 256 threads), or from a stage 128 or 64
// (bfloat16 rows of 4096 at 32 and 64 threads): gpu/rows/moments_kernel.cuh.
const Matrix kMatrices[] = {{0, 33}, {1, 0},    {3, 0},    {5, 1},     {7, 31},  {7, 32},
                            {7, 33}, {4, 1024}, {2, 4096}, {3, 4097}, {130, 257}, {1, 1000}};
const char* const kInputs[] = {"normal", "offset", "specials"};

// The inputs, in double, then rounded to the dtype (bfloat16: through float).
std::vector<double> make_input(const std::string& kind, const Matrix& m, std::uint64_t seed) {
  const auto n = static_cast<std::size_t>(m.rows * m.cols);
  std::vector<double> x(n);
  const double inf = std::numeric_limits<double>::infinity();
  for (std::size_t i = 0; i < n; ++i) x[i] = standard_normal(seed, i);
  if (kind == "offset") {
    for (auto& v : x) v += 1e4;
  } else if (kind == "specials") {
    for (std::int64_t r = 0; r < m.rows; ++r) {
      double* row = x.data() + r * m.cols;
      const auto c = static_cast<std::size_t>(m.cols);
      if (c == 0) continue;
      auto at = [&](std::uint32_t stream) { return static_cast<std::size_t>(random_bits(seed, static_cast<std::uint64_t>(r), stream) % c); };
      switch (r % 6) {
        case 0:  // ties: multiples of 1/4, the max repeated
          for (std::size_t j = 0; j < c; ++j) row[j] = std::round(row[j] * 4.0) / 4.0;
          row[at(1)] = 9.0;
          row[at(2)] = 9.0;
          break;
        case 1: row[at(1)] = std::nan(""); row[at(2)] = std::nan(""); break;
        case 2: row[at(1)] = inf; break;
        case 3:  // -Inf runs, a few finite values left
          for (std::size_t j = 0; j < c; ++j)
            if (j % 4 != 3) row[j] = -inf;
          break;
        case 4:
          for (std::size_t j = 0; j < c; ++j) row[j] = -inf;
          break;
        case 5:  // signed zeros and subnormals
          for (std::size_t j = 0; j < c; ++j) row[j] = j % 3 == 0 ? (j % 2 ? -0.0 : 0.0) : row[j] * 1e-40;
          break;
      }
    }
  }
  return x;
}

template <class In> std::vector<In> convert(const std::vector<double>& x) {
  std::vector<In> out(x.size());
  for (std::size_t i = 0; i < x.size(); ++i) {
    if constexpr (std::is_same_v<In, row_reduce::bfloat16_bits>) {
      out[i] = row_reduce::to_bfloat16_bits(static_cast<float>(x[i]));
    } else {
      out[i] = static_cast<In>(x[i]);
    }
  }
  return out;
}

struct CaseRow : VerifyOutcome {
  std::string kernel, dtype, shape, input;
  std::int64_t rows, cols;
};

class Sweep {
 public:
  Sweep(const RowVerifyOptions& o, bool gpu) : opts_(o), gpu_(gpu) {
    if (o.kernels.empty()) {
      for (const auto& i : row_reduce::row_kernels()) kernels_.push_back(i.kernel);
    } else {
      for (const auto& name : o.kernels) {
        const auto k = row_reduce::find_row_kernel(name);
        if (!k) throw UserError("unknown row kernel '" + name + "' (valid: " + row_reduce::row_kernel_names() + ")");
        kernels_.push_back(*k);
      }
    }
  }

  template <class In> void run_dtype() {
    const std::string dtype(row_reduce::RowInput<In>::dtype);
    const auto shapes = verify_shapes(opts_.quick);
    for (const Matrix& m : kMatrices)
      for (const char* input : kInputs) {
        const std::vector<In> x = convert<In>(make_input(input, m, opts_.seed));
        const std::span<const In> xs(x);
        RowKernelInput<In> on_model(BackendKind::model, xs, m.rows, m.cols);
        std::unique_ptr<RowKernelInput<In>> gpu;
        std::string gpu_error;
        if (gpu_) {
          try {
            gpu = std::make_unique<RowKernelInput<In>>(BackendKind::cuda, xs, m.rows, m.cols);
          } catch (const UserError& e) {
            gpu_error = e.what();
          }
        }
        for (RowKernel k : kernels_) {
          RowVerifyLine& line = line_for(k, dtype);
          const auto model_runner = row_runner<In>(k, BackendKind::model, shapes, true);
          const auto gpu_runner = row_runner<In>(k, BackendKind::cuda, shapes, true);
          row_reduce::RowOutputs<row_reduce::row_acc_t<In>> first_model;
          for (std::size_t si = 0; si < shapes.size(); ++si) {
            const RowShape& s = shapes[si];
            CaseRow c{VerifyOutcome{}, std::string(row_reduce::info(k).name), dtype, row_reduce::to_string(s), input, m.rows, m.cols};
            verify_shape(
                c, si, gpu_, row_reduce::info(k).determinism == Determinism::shape_invariant, first_model,
                [&] { return model_runner->run(si, on_model).value; },
                [&] {
                  if (!gpu) throw UserError(gpu_error);
                  return gpu_runner->run(si, *gpu).value;
                },
                [](const auto& got, const auto& want, std::string* detail) {
                  return row_reduce::count_mismatches(got, want, detail);
                });
            line.count(c, [&] { return fmt::format("{} {}x{} {}", c.shape, c.rows, c.cols, c.input); });
            cases_.push_back(std::move(c));
          }
        }
      }
  }

  std::vector<RowVerifyLine> lines() const { return lines_; }
  const std::vector<CaseRow>& cases() const { return cases_; }

 private:
  RowVerifyLine& line_for(RowKernel k, const std::string& dtype) {
    const std::string name(row_reduce::info(k).name);
    for (auto& l : lines_)
      if (l.kernel == name && l.dtype == dtype) return l;
    lines_.push_back(RowVerifyLine{VerifyCounts{}, name, dtype});
    return lines_.back();
  }

  const RowVerifyOptions& opts_;
  bool gpu_;
  std::vector<RowKernel> kernels_;
  std::vector<RowVerifyLine> lines_;
  std::vector<CaseRow> cases_;
};

}  // namespace

RowVerifySummary verify_rows(const RowVerifyOptions& opts) {
  const auto t0 = std::chrono::steady_clock::now();
  RowVerifySummary out;
  std::tie(out.gpu, out.device) = verify_device(opts.model_only);
  Sweep sweep(opts, out.gpu);
  sweep.run_dtype<float>();
  sweep.run_dtype<row_reduce::bfloat16_bits>();
  sweep.run_dtype<double>();
  out.lines = sweep.lines();
  if (!opts.csv.empty()) {
    std::vector<std::vector<std::string>> rows;
    for (const auto& c : sweep.cases())
      rows.push_back(verify_case_cells(
          {c.kernel, c.dtype, c.shape, std::to_string(c.rows), std::to_string(c.cols), c.input}, c, out.gpu));
    append_csv(opts.csv, verify_case_columns({"kernel", "dtype", "shape", "rows", "cols", "input"}), rows);
  }
  out.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  return out;
}

}  // namespace sumlab
