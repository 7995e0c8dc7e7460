#pragma once
// The GPU scans (gpu/scan.hpp runs them; scan_model.hpp is the CPU executing their exact order).
// The modelled scans work on tiles of block * items elements. Two are device-wide
// "scan-then-propagate":
//   1. one block per tile scans it (the block algorithm below) and writes the tile's local scan
//      and its total (the inclusive value at the tile's last element);
//   2. the tile totals get an exclusive scan by the same algorithm and shape (recursively, while
//      there is more than one tile): carry[t] = combination of totals 0 .. t-1;
//   3. every element of tile t >= 1 becomes combine(carry[t], local) (exclusive scans: the
//      tile's first element is carry[t] itself). Tile 0 is left as it is.
// Block algorithms:
//   warp_hillis_steele  each thread scans its `items` consecutive elements serially; the thread
//                       totals get an inclusive Hillis-Steele scan within each warp by
//                       __shfl_up_sync (offsets 1, 2, 4, 8, 16: lane l >= off takes
//                       combine(lane l-off, lane l)); warp 0 scans the warp totals the same way;
//                       a thread's prefix is combine(warp prefix, lane prefix) (either alone where
//                       the other is absent: no combine with the identity), and its outputs are
//                       combine(prefix, own serial prefix).
//   block_blelloch      the tile (block * items, a power of two) in shared memory, element i at
//                       index i + i/32 (one pad word per 32 banks: the tree's accesses at strides
//                       2^k no longer all fall in one bank for 4-byte elements; 8-byte elements
//                       span two banks and keep some conflicts), Blelloch's up-sweep and down-sweep
//                       (core/scan/tree_scans.hpp, padding elements = identity); inclusive
//                       outputs combine(exclusive, x).
// One algorithm chains its tiles in a single pass instead (gpu/block/chained_lookback.cuh):
//   warp_hs_chained     warp_hillis_steele's tile scan (items a template parameter: 1, 2, 3, 4, 7,
//                       8, 15, 16 or 23); the tile's aggregate A_t is the last warp's value in the
//                       Hillis-Steele scan of the warp totals; its carry is the left fold
//                       P_{t-1} = combine(...combine(A_0, A_1)..., A_{t-1}) (a decoupled look-back
//                       that folds forward from whichever P_j it finds: the same bits whatever the
//                       timing); a thread's prefix is combine(carry, in-tile prefix) and its outputs
//                       combine(prefix, own serial prefix). One read and one write of the data, as
//                       CUB's scan, where scan-then-propagate reads and writes it twice.
//   cub                 cub::DeviceScan (decoupled look-back, one pass): the library peer,
//                       measured, not modelled (its look-back reduces what it finds as a tree
//                       whose shape depends on timing).
// Determinism (declared): the modelled scans run a fixed order for a fixed shape (run_to_run; the
// shape moves the tree); max is exact (shape_invariant) whatever the algorithm; cub is declared
// not_deterministic and measured by the scan study.
#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "core/determinism.hpp"

namespace sumlab::scan {

enum class GpuScan { warp_hillis_steele, block_blelloch, warp_hs_chained, cub };

inline constexpr GpuScan kAllGpuScans[] = {GpuScan::warp_hillis_steele, GpuScan::block_blelloch,
                                           GpuScan::warp_hs_chained, GpuScan::cub};
inline constexpr GpuScan kModelledGpuScans[] = {GpuScan::warp_hillis_steele, GpuScan::block_blelloch,
                                                GpuScan::warp_hs_chained};

constexpr std::string_view to_string(GpuScan a) {
  switch (a) {
    case GpuScan::warp_hillis_steele: return "warp_hillis_steele";
    case GpuScan::block_blelloch: return "block_blelloch";
    case GpuScan::warp_hs_chained: return "warp_hs_chained";
    case GpuScan::cub: return "cub";
  }
  return "?";
}
std::optional<GpuScan> parse_gpu_scan(std::string_view name);
bool is_modelled(GpuScan a);
Determinism declared_determinism(GpuScan a, std::string_view op);

struct ScanShape {
  int block = 256;  // threads per block, a multiple of 32 in 32..1024 (block_blelloch: a power of two)
  int items = 4;    // elements per thread: 1..16 (block_blelloch: a power of two 2..16;
                    // warp_hs_chained: 1, 2, 3, 4, 7, 8, 15, 16 or 23)
  std::int64_t tile() const { return std::int64_t(block) * items; }
};
// "b256x4"
std::string to_string(const ScanShape& s);
// Parses "b256x4"; nullopt when malformed.
std::optional<ScanShape> parse_scan_shape(std::string_view text);

// The largest n a modelled scan accepts (tile indices and element indices stay in int64 and the
// grid of tiles within 2^31 - 1 blocks).
inline constexpr std::int64_t kMaxScanItems = std::int64_t(1) << 34;
// Shared memory the block kernel asks for (bytes) and the limit it must stay within: 48 KiB (no
// opt-in needed on any GPU since sm_70), and for warp_hs_chained, whose larger tiles opt in past
// that, 99 KiB (the most a block may opt in to on sm_86, sm_89 and sm_120, the least since sm_80;
// the launch checks the GPU it runs on).
inline constexpr std::size_t kScanSharedLimit = 48 * 1024;
inline constexpr std::size_t kChainedSharedLimit = 99 * 1024;
std::size_t scan_shared_bytes(GpuScan a, const ScanShape& s, std::size_t value_bytes);
// warp_hs_chained's shared memory starts with the tile index and the look-back's 8 ballots (64
// bytes), the 32 warp totals and the carry (rounded up to 16 bytes), and the look-back's stash of
// values (8 windows of 32, gpu/block/chained_lookback.cuh); each warp's staging of 33 * items
// values follows.
inline constexpr std::size_t kChainedStashValues = 256;
constexpr std::size_t chained_stash_offset(std::size_t value_bytes) { return 64 + (33 * value_bytes + 15) / 16 * 16; }
constexpr std::size_t chained_header_bytes(std::size_t value_bytes) {
  return chained_stash_offset(value_bytes) + kChainedStashValues * value_bytes;
}
// The items per thread warp_hs_chained is compiled for.
inline constexpr int kChainedItems[] = {1, 2, 3, 4, 7, 8, 15, 16, 23};
// The shape a caller gets without naming one (bench), for values of value_bytes each under the
// operator named `op` (an Op::name): the chained scan's measured best for +, the segmented pair
// and affine (b512x23 for 4-byte values, b192x23 for 8-byte ones, b256x15 for 16-byte ones), and
// for max over doubles b256x15 (on the H200 1.26 and 1.31 of CUB's max at 2^24 and 2^26 where
// b192x23 gave 1.00 and 1.07; max's bits are the same at every shape); the scan-then-propagate
// algorithms' historical b256x4.
ScanShape default_scan_shape(GpuScan a, std::size_t value_bytes, std::string_view op = "plus");

// Empty when the algorithm can run this shape on n values of value_bytes each; else one sentence
// naming the rule. (cub ignores the shape.)
std::string validate_scan_shape(GpuScan a, const ScanShape& s, std::int64_t n, std::size_t value_bytes);

// The shapes `sumlab verify` and the scan study sweep (small and large tiles, non-powers of two
// for the warp scans), for an algorithm and values of value_bytes each (the shapes whose shared
// memory fits: the chained scan's largest tiles are for 4- and 8-byte values); quick: a subset.
std::vector<ScanShape> scan_shapes(GpuScan a, bool quick, std::size_t value_bytes);

}  // namespace sumlab::scan
