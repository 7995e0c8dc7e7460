// GPU bits == model bits for the modelled segmented strategies; see verify_segmented.hpp.
#include "studies/verify_segmented.hpp"

#include <fmt/format.h>

#include <chrono>
#include <cmath>
#include <memory>
#include <span>
#include <string>
#include <tuple>
#include <vector>

#include "core/float_traits.hpp"
#include "core/generators.hpp"
#include "core/order_model/reduce_ops.hpp"
#include "core/segmented/segment_sizes.hpp"
#include "core/segmented/segmented_model.hpp"
#include "core/segmented/strategy.hpp"
#include "studies/backend.hpp"
#include "studies/commands.hpp"
#include "studies/row_backend.hpp"
#include "studies/run_folder.hpp"
#include "studies/verify_table.hpp"
#include "studies/segmented_backend.hpp"

namespace sumlab {

using segmented::Offset;
using segmented::SegShape;
using segmented::Strategy;

std::string SegVerifySummary::table() const {
  std::vector<VerifyTableRow> rows;
  for (const auto& l : lines) rows.push_back({{l.strategy, l.dtype}, l});
  return verify_table("segmented strategies", gpu, device, {"strategy", "dtype"}, rows, seconds);
}

namespace {

struct Layout {
  std::string name;
  std::vector<Offset> offsets;
};

std::vector<Layout> layouts(std::uint64_t seed) {
  std::vector<Layout> l;
  l.push_back({"no segments", {0}});
  l.push_back({"all empty", {0, 0, 0, 0, 0}});
  for (Offset n : {1, 31, 32, 33, 1023, 1025, 4099}) l.push_back({"one segment of " + std::to_string(n), {0, n}});
  Layout awkward{"awkward lengths", {0}};
  for (Offset len : {0, 1, 31, 32, 33, 0, 0, 63, 64, 65, 95, 96, 97, 255, 256, 257, 1023, 1024, 1025, 0})
    awkward.offsets.push_back(awkward.offsets.back() + len);
  l.push_back(awkward);
  for (auto d : segmented::kAllSizeDistributions)
    for (std::int64_t segs : {50, 700})
      l.push_back({std::string(segmented::to_string(d)) + " x" + std::to_string(segs),
                   segmented::make_offsets({d, segs, 24}, seed)});
  return l;
}

struct CaseRow : VerifyOutcome {
  std::string strategy, dtype, shape, layout, values;
  std::int64_t n, segments;
};

template <class T> long count_mismatches(const std::vector<T>& a, const std::vector<T>& b, std::string* detail) {
  if (a.size() != b.size()) {
    *detail = fmt::format("{} sums vs {}", a.size(), b.size());
    return 1;
  }
  long bad = 0;
  for (std::size_t j = 0; j < a.size(); ++j)
    if (!same_bits(a[j], b[j])) {
      if (!bad) *detail = fmt::format("segment {}: {} vs {}", j, hex_bits(a[j]), hex_bits(b[j]));
      ++bad;
    }
  return bad;
}

class Sweep {
 public:
  Sweep(const SegVerifyOptions& o, bool gpu) : opts_(o), gpu_(gpu) {}

  template <class T> void run_dtype() {
    const std::string dtype = sizeof(T) == 4 ? "float32" : "float64";
    std::vector<int> blocks = opts_.quick ? std::vector<int>{32, 96, 256} : std::vector<int>{32, 64, 96, 256, 1024};
    std::vector<SegShape> tiles = opts_.quick ? std::vector<SegShape>{{32, 1}, {96, 2}, {256, 4}}
                                              : std::vector<SegShape>{{32, 1}, {64, 3}, {96, 2}, {256, 4}, {1024, 16}};
    for (const Layout& lay : layouts(opts_.seed))
      for (const char* values : {"normal", "cancellation"}) {
        DistributionSpec spec;
        spec.kind = parse_distribution(values);
        const std::vector<T> x = generate<T>(spec, opts_.seed, static_cast<std::size_t>(lay.offsets.back()));
        const std::span<const T> xs(x);
        SegKernelInput<T> on_model(BackendKind::model, xs, lay.offsets);
        std::unique_ptr<SegKernelInput<T>> gpu;
        std::string gpu_error;
        if (gpu_) {
          try {
            gpu = std::make_unique<SegKernelInput<T>>(BackendKind::cuda, xs, lay.offsets);
          } catch (const UserError& e) {
            gpu_error = e.what();
          }
        }
        for (const auto& inf : segmented::strategies()) {
          if (inf.where != segmented::Where::gpu_modelled) continue;
          std::vector<SegShape> shapes;
          if (inf.strategy == Strategy::segmented_scan) {
            shapes = tiles;
          } else {
            for (int b : blocks) shapes.push_back({b, 1});
          }
          SegVerifyLine& line = line_for(std::string(inf.name), dtype);
          const auto model_runner = segmented_runner<T>(inf.strategy, BackendKind::model, shapes);
          const auto gpu_runner = segmented_runner<T>(inf.strategy, BackendKind::cuda, shapes);
          // The last shape also runs on a single block: the per-segment order must not see the grid.
          const auto one_block = segmented_runner<T>(inf.strategy, BackendKind::cuda, {shapes.back()}, 1, 1);
          std::vector<T> first_model;
          for (std::size_t si = 0; si < shapes.size(); ++si) {
            const SegShape& s = shapes[si];
            CaseRow c{VerifyOutcome{}, std::string(inf.name), dtype, segmented::to_string(s, inf.strategy), lay.name, values,
                      lay.offsets.back(), static_cast<std::int64_t>(lay.offsets.size()) - 1};
            verify_shape(
                c, si, gpu_, inf.determinism == Determinism::shape_invariant, first_model,
                [&] {
                  std::vector<T> model = model_runner->run(si, on_model).value;
                  for (std::size_t j = 0; j + 1 < lay.offsets.size(); ++j)
                    if (lay.offsets[j] == lay.offsets[j + 1] && !same_bits(model[j], T(0)))
                      throw UserError(fmt::format("model: empty segment {} is not +0", j));
                  return model;
                },
                [&] {
                  if (!gpu) throw UserError(gpu_error);
                  if (si + 1 < shapes.size()) return gpu_runner->run(si, *gpu).value;
                  c.shape += " grid1";
                  return one_block->run(0, *gpu).value;
                },
                [](const std::vector<T>& got, const std::vector<T>& want, std::string* detail) {
                  return count_mismatches(got, want, detail);
                });
            line.count(c, [&] { return fmt::format("{} {} {}", c.shape, c.layout, c.values); });
            cases_.push_back(std::move(c));
          }
        }
      }
  }

  const std::vector<SegVerifyLine>& lines() const { return lines_; }
  const std::vector<CaseRow>& cases() const { return cases_; }

 private:
  SegVerifyLine& line_for(const std::string& name, const std::string& dtype) {
    for (auto& l : lines_)
      if (l.strategy == name && l.dtype == dtype) return l;
    lines_.push_back(SegVerifyLine{VerifyCounts{}, name, dtype});
    return lines_.back();
  }

  const SegVerifyOptions& opts_;
  bool gpu_;
  std::vector<SegVerifyLine> lines_;
  std::vector<CaseRow> cases_;
};

}  // namespace

SegVerifySummary verify_segmented(const SegVerifyOptions& opts) {
  const auto t0 = std::chrono::steady_clock::now();
  SegVerifySummary out;
  std::tie(out.gpu, out.device) = verify_device(opts.model_only);
  Sweep sweep(opts, out.gpu);
  sweep.run_dtype<float>();
  sweep.run_dtype<double>();
  out.lines = sweep.lines();
  if (!opts.csv.empty()) {
    std::vector<std::vector<std::string>> rows;
    for (const auto& c : sweep.cases())
      rows.push_back(verify_case_cells(
          {c.strategy, c.dtype, c.shape, c.layout, std::to_string(c.n), std::to_string(c.segments), c.values}, c, out.gpu));
    append_csv(opts.csv, verify_case_columns({"strategy", "dtype", "shape", "layout", "n", "segments", "values"}), rows);
  }
  out.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  return out;
}

}  // namespace sumlab
