#pragma once
// The scans' part of `sumlab verify`: GPU bits == CPU model bits (core/scan/scan_model.hpp) for
// the modelled scans (warp_hillis_steele, block_blelloch, warp_hs_chained), over
//   operators  plus, max, segmented (heads ~1 in 16, and at 0), affine (a in [0.5, 1.5), b N(0,1))
//   dtypes     float32, float64
//   shapes     scan_shapes(alg, quick, value bytes) (core/scan/scan_kernel.hpp: 1 to 16 items, 32 to 1024 threads,
//              non-powers of two for the warp scans)
//   sizes      0, 1, 31, 32, 33, 255, 257, 1023, 1025, 4097, 100003, 2^20 + 3 (quick: 0, 1, 33, 257,
//              4097, 100003): partial tiles, partial warps, three levels of scan-then-propagate for
//              small tiles, and chained look-backs across many windows of 32 tiles
//   kinds      inclusive and exclusive
// comparing every output value bitwise (any NaN equal to any NaN). Without a GPU (or a CUDA build)
// only the model runs: every case must evaluate, and max, declared shape_invariant, must give the
// same bits under every shape.
#include <string>

#include "studies/verify_table.hpp"

namespace sumlab {

using ScanVerifyOptions = VerifySectionOptions;

struct ScanVerifyLine : VerifyCounts {
  std::string algorithm, op, dtype;
};

struct ScanVerifySummary : VerifySummary<ScanVerifyLine> {
  std::string table() const;
};

// Throws UserError for an unwritable CSV.
ScanVerifySummary verify_scan(const ScanVerifyOptions& opts);

}  // namespace sumlab
