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
#include <cstdint>
#include <string>
#include <vector>

namespace sumlab {

struct ScanVerifyOptions {
  bool quick = false;
  std::uint64_t seed = 1;
  std::string csv;          // non-empty: one line per case written here
  bool model_only = false;  // skip the GPU even if present
};

struct ScanVerifyLine {
  std::string algorithm, op, dtype;
  long cases = 0;
  long mismatches = 0;  // cases whose GPU and model bits differ (model only: max's shape-invariance breaks)
  long errors = 0;      // cases that could not run
  std::string first_failure;
  long compared = 0;  // cases whose bits were compared (without a GPU: shape_invariant kernels only)
};

struct ScanVerifySummary {
  using Line = ScanVerifyLine;
  bool gpu = false;
  std::string device;
  std::vector<ScanVerifyLine> lines;
  double seconds = 0;
  long cases() const;
  long mismatches() const;
  long errors() const;
  bool ok() const { return mismatches() == 0 && errors() == 0; }
  std::string table() const;
};

// Throws UserError for an unwritable CSV.
ScanVerifySummary verify_scan(const ScanVerifyOptions& opts);

}  // namespace sumlab
