// gpu/bench.hpp's time_families: the scans, segmented sums and row kernels timed by their own APIs
// on copy 0 of a bench input, downloaded once and uploaded into each family's input in as many
// copies as rotated_copies says, which their runs of launches read in turn.
#include <algorithm>
#include <cmath>
#include <span>
#include <type_traits>
#include <string>
#include <vector>

#include "core/row_reduce/row_kernel.hpp"
#include "core/scan/scan_kernel.hpp"
#include "core/scan/scan_ops.hpp"
#include "core/segmented/strategy.hpp"
#include "gpu/bench.hpp"
#include "gpu/gpu_sum.hpp"
#include "gpu/rows.hpp"
#include "gpu/scan.hpp"
#include "gpu/segmented.hpp"

namespace sumlab::gpu {

namespace {

// How many copies of a family's input its runs of launches read in turn, as the sums' bench rotates
// its inputs (gpu/bench.cu): together at least 4x the L2 (at most 64 copies: 2.5x the L2 for 2^20
// bfloat16 values), so that a launch finds little of its input there.
int rotated_copies(double bytes, double l2) {
  return bytes <= 0 ? 1 : static_cast<int>(std::clamp(std::ceil(4 * l2 / bytes), 1.0, 64.0));
}

// The "rows" family: every row kernel, statistics only (no output pass), over rows of each of
// family_row_cols at block_per_row, cols / e threads for each e of `elements` (cols / 2e for
// bfloat16, so that a thread has the same bytes of its row in flight; gpu/rows/row_loads.cuh),
// where that is a block of 32..1024 threads. `what` names the input type when it is not T's
// (bfloat16).
template <class In>
void time_rows(std::vector<FamilyTiming>& out, std::span<const In> x, int samples, double l2, const std::string& what,
               const std::vector<int>& elements) {
  using Acc = row_reduce::row_acc_t<In>;
  const auto n = static_cast<std::int64_t>(x.size());
  for (const std::int64_t cols : family_row_cols) {
    if (n % cols != 0) continue;
    for (const int e : elements) {
      const std::int64_t per_thread = sizeof(In) == 2 ? 2 * std::int64_t(e) : e;
      const std::int64_t threads = cols / per_thread;
      if (threads < 32 || threads > 1024 || threads % 32 != 0 || threads * per_thread != cols) continue;
      const std::string where = what + "rows of " + std::to_string(cols);
      try {
        const int copies = rotated_copies(static_cast<double>(n) * sizeof(In), l2);
        const RowMatrix<In> m{x, n / cols, cols, copies};
        RowRunOptions ro;
        ro.want_out = false;
        ro.reps = samples;
        const row_reduce::RowShape shape{row_reduce::RowLayout::block_per_row, static_cast<int>(threads)};
        for (const auto& k : row_reduce::row_kernels()) {
          const double outputs =
              k.family == row_reduce::RowFamily::argmax ? sizeof(Acc) + sizeof(std::int64_t) : 2.0 * sizeof(Acc);
          const auto r = gpu_rows<In>(k.kernel, shape, m, ro);
          FamilyTiming t{"rows", std::string(k.name), where + ", " + row_reduce::to_string(shape), "",
                         sizeof(In) + outputs / static_cast<double>(cols), 0, r.error, int(sizeof(In))};
          t.ms = r.ok() ? r.ms : 0;
          out.push_back(std::move(t));
        }
      } catch (const std::exception& e) {
        out.push_back(FamilyTiming{"rows", "", where + ", block_per_row/" + std::to_string(threads), "", 0, 0,
                                   e.what()});
      }
    }
  }
}

}  // namespace

template <class T>
std::vector<FamilyTiming> time_families(const BenchInput<T>& in, int samples, const FamilyShapes& shapes) {
  const std::int64_t n = in.n();
  const auto un = static_cast<std::size_t>(n);
  std::vector<FamilyTiming> rows;
  auto add = [&rows](FamilyTiming t, double ms, const std::string& error) {
    t.ms = error.empty() ? ms : 0;
    t.error = error;
    rows.push_back(std::move(t));
  };
  double l2 = 0;
  std::vector<T> x;
  try {
    if (n % family_cols != 0) throw GpuError("n = " + std::to_string(n) + " is not a multiple of " + std::to_string(family_cols));
    l2 = device_info().l2_bytes;
    x.resize(un);
    std::vector<T> all = in.buffer().download();
    std::copy(all.begin(), all.begin() + n, x.begin());
  } catch (const std::exception& e) {
    add(FamilyTiming{"all", "", "", "", 0, 0, ""}, 0, e.what());
    return rows;
  }
  const double bytes = static_cast<double>(n) * sizeof(T);
  // Scans, inclusive, n in and n out: + by every algorithm, then max and affine (x -> a x + b, the
  // pairs the scan study times) by the chained scan and CUB, each against CUB's call for the same
  // operator.
  auto time_scans = [&]<class Op>(const std::vector<typename Op::Value>& values, const char* op, bool all) {
    using V = typename Op::Value;
    const std::string problem = std::string(op) + " inclusive";
    try {
      const ScanInput<V> si{std::span<const V>(values), rotated_copies(static_cast<double>(n) * sizeof(V), l2)};
      ScanRunOptions so;
      so.want_out = false;
      so.reps = samples;
      for (scan::GpuScan a : scan::kAllGpuScans) {
        if (!all && a != scan::GpuScan::warp_hs_chained && a != scan::GpuScan::cub) continue;
        const scan::ScanShape shape = shapes.scan.value_or(scan::default_scan_shape(a, sizeof(V), Op::name));
        const auto r = gpu_scan<Op>(a, shape, si, true, so);
        const std::string detail = a == scan::GpuScan::cub ? problem : problem + ", " + scan::to_string(shape);
        add({"scan", std::string(scan::to_string(a)), detail, "cub", 2.0 * sizeof(V), 0, ""}, r.ms, r.error);
      }
    } catch (const std::exception& e) {
      add({"scan", "", problem, "", 0, 0, ""}, 0, e.what());
    }
  };
  time_scans.template operator()<scan::PlusOp<T>>(x, "+", true);
  time_scans.template operator()<scan::MaxOp<T>>(x, "max", false);
  {
    std::vector<scan::Affine<T>> af(un);
    for (std::size_t i = 0; i < un; ++i) af[i] = {T(0.5 + 0.49 * x[i]), x[i]};
    time_scans.template operator()<scan::AffineOp<T>>(af, "affine", false);
  }
  // Segmented sums: n / family_segment segments of family_segment elements; the offsets and the
  // sums are read and written once each.
  try {
    std::vector<segmented::Offset> offsets(un / family_segment + 1);
    for (std::size_t s = 0; s < offsets.size(); ++s) offsets[s] = static_cast<segmented::Offset>(s) * family_segment;
    const SegmentedInput<T> sg{std::span<const T>(x), std::span<const segmented::Offset>(offsets),
                               rotated_copies(bytes, l2)};
    const double per = sizeof(T) + static_cast<double>(sizeof(segmented::Offset) + sizeof(T)) / family_segment;
    for (const auto& st : segmented::strategies()) {
      if (st.where == segmented::Where::cpu) continue;
      const bool tiled = st.strategy == segmented::Strategy::segmented_scan;
      const segmented::SegShape shape =
          tiled && shapes.segmented_tile ? *shapes.segmented_tile : segmented::default_shape(st.strategy);
      const auto r = gpu_segmented<T>(st.strategy, shape, sg, samples);
      std::string detail = "segments of " + std::to_string(family_segment);
      if (tiled) detail += ", " + segmented::to_string(shape, st.strategy);
      // The segmented scan against CUB's scan-by-key (a segmented scan too), the others against
      // CUB's segmented reduce.
      const char* peer = tiled ? "cub_scan_by_key" : "cub_segmented_reduce";
      add({"segmented", std::string(st.name), detail, peer, per, 0, ""}, r.ms, r.error);
    }
  } catch (const std::exception& e) {
    add({"segmented", "", "", "", 0, 0, ""}, 0, e.what());
  }
  // Variance: the moments row kernels over rows of family_cols, mean and variance out (no output
  // pass); every layout.
  try {
    const RowMatrix<T> m{std::span<const T>(x), n / family_cols, family_cols, rotated_copies(bytes, l2)};
    RowRunOptions ro;
    ro.want_out = false;
    ro.reps = samples;
    const double per = sizeof(T) + 2.0 * sizeof(T) / family_cols;
    for (const auto& k : row_reduce::row_kernels()) {
      if (k.family != row_reduce::RowFamily::moments) continue;
      for (row_reduce::RowLayout layout : {row_reduce::RowLayout::warp_per_row, row_reduce::RowLayout::block_per_row}) {
        row_reduce::RowShape shape;
        shape.layout = layout;
        const auto r = gpu_rows<T>(k.kernel, shape, m, ro);
        add({"variance", std::string(k.name),
             "rows of " + std::to_string(family_cols) + ", " + std::string(row_reduce::to_string(layout)), "", per, 0,
             ""},
            r.ms, r.error);
      }
    }
  } catch (const std::exception& e) {
    add({"variance", "", "", "", 0, 0, ""}, 0, e.what());
  }
  time_rows<T>(rows, std::span<const T>(x), samples, l2, "", shapes.row_elements);
  if constexpr (std::is_same_v<T, float>) {
    std::vector<row_reduce::bfloat16_bits> b(un);
    for (std::size_t i = 0; i < un; ++i) b[i] = row_reduce::to_bfloat16_bits(x[i]);
    time_rows<row_reduce::bfloat16_bits>(rows, std::span<const row_reduce::bfloat16_bits>(b), samples, l2, "bfloat16 ",
                                         shapes.row_elements);
  }
  return rows;
}

template std::vector<FamilyTiming> time_families<float>(const BenchInput<float>&, int, const FamilyShapes&);
template std::vector<FamilyTiming> time_families<double>(const BenchInput<double>&, int, const FamilyShapes&);

}  // namespace sumlab::gpu
