#pragma once
// The segmented strategies' part of `sumlab verify`: GPU bits == CPU model bits
// (core/segmented/segmented_model.hpp) for block_per_segment, warp_per_segment and
// segmented_scan, over
//   dtypes    float32, float64
//   shapes    block/warp per segment: blocks 32, 64, 96, 256, 1024; scan: 32x1, 64x3, 96x2, 256x4,
//             1024x16 (quick: blocks 32, 96, 256; scan 32x1, 96x2, 256x4)
//   layouts   the four size distributions (uniform, power_law, many_empty, one_giant) at 50 and 700
//             segments, plus hand-made awkward ones: no segments, all empty, one segment of n for
//             n = 1, 31, 32, 33, 1023, 1025, 4099, and segments of 0, 1, 31, 32, 33, block +- 1
//             laid end to end with empty first, middle and last segments
//   values    normal(0, 1) and cancellation (random signs, magnitudes over 2^+-20)
// comparing every segment's sum bitwise (any NaN equal), and checking every empty segment is +0.
// A case is one (strategy, dtype, shape, layout, values). The grid is also capped at 1 block for
// one shape per case, so the per-segment order is shown not to depend on the grid.
// Without a GPU only the model side runs: every case must evaluate, empty segments must be +0,
// and warp_per_segment must give the same bits under every shape (declared shape_invariant).
#include <string>

#include "studies/verify_table.hpp"

namespace sumlab {

using SegVerifyOptions = VerifySectionOptions;

struct SegVerifyLine : VerifyCounts {
  std::string strategy, dtype;
};

struct SegVerifySummary : VerifySummary<SegVerifyLine> {
  std::string table() const;
};

// Throws UserError for an unwritable CSV.
SegVerifySummary verify_segmented(const SegVerifyOptions& opts);

}  // namespace sumlab
