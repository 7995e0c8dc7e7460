// Names, shapes and validation of the GPU scans; see scan_kernel.hpp.
#include "core/scan/scan_kernel.hpp"

#include <algorithm>
#include <bit>
#include <charconv>

namespace sumlab::scan {

std::optional<GpuScan> parse_gpu_scan(std::string_view name) {
  for (GpuScan a : kAllGpuScans)
    if (to_string(a) == name) return a;
  return std::nullopt;
}

bool is_modelled(GpuScan a) { return a != GpuScan::cub; }

Determinism declared_determinism(GpuScan a, std::string_view op) {
  if (a == GpuScan::cub) return Determinism::not_deterministic;
  if (op == "max") return Determinism::shape_invariant;
  return Determinism::run_to_run;
}

std::string to_string(const ScanShape& s) {
  std::string t(1, 'b');  // appended piecewise: GCC 12 warns (-Wrestrict, a false positive) on "b" + string
  t += std::to_string(s.block);
  t += 'x';
  t += std::to_string(s.items);
  return t;
}

std::optional<ScanShape> parse_scan_shape(std::string_view t) {
  if (t.size() < 4 || t[0] != 'b') return std::nullopt;
  const auto x = t.find('x');
  if (x == std::string_view::npos) return std::nullopt;
  ScanShape s;
  const auto a = std::from_chars(t.data() + 1, t.data() + x, s.block);
  const auto b = std::from_chars(t.data() + x + 1, t.data() + t.size(), s.items);
  if (a.ec != std::errc() || a.ptr != t.data() + x || b.ec != std::errc() || b.ptr != t.data() + t.size())
    return std::nullopt;
  return s;
}

std::size_t scan_shared_bytes(GpuScan a, const ScanShape& s, std::size_t value_bytes) {
  if (a == GpuScan::block_blelloch) {
    const std::size_t m = std::size_t(s.tile());
    return (m + m / 32) * value_bytes + value_bytes;  // padded tile + the saved total
  }
  if (a == GpuScan::warp_hillis_steele) return 32 * value_bytes;  // one total per warp
  if (a == GpuScan::warp_hs_chained)
    return chained_header_bytes(value_bytes) + std::size_t(s.block / 32) * 33 * std::size_t(s.items) * value_bytes;
  return 0;
}

std::string validate_scan_shape(GpuScan a, const ScanShape& s, std::int64_t n, std::size_t value_bytes) {
  if (n < 0) return "n must be >= 0";
  if (a == GpuScan::cub) return n > (std::int64_t(1) << 31) - 1 ? "cub: n must be < 2^31" : "";
  if (n > kMaxScanItems) return "n must be <= 2^34";
  if (s.block < 32 || s.block > 1024 || s.block % 32 != 0)
    return "block must be a multiple of 32 in 32..1024 (got " + std::to_string(s.block) + ")";
  if (a == GpuScan::warp_hillis_steele) {
    if (s.items < 1 || s.items > 16) return "items must be in 1..16 (got " + std::to_string(s.items) + ")";
  } else if (a == GpuScan::warp_hs_chained) {
    if (std::find(std::begin(kChainedItems), std::end(kChainedItems), s.items) == std::end(kChainedItems))
      return "warp_hs_chained: items must be 1, 2, 3, 4, 7, 8, 15, 16 or 23 (got " + std::to_string(s.items) + ")";
  } else {
    if (!std::has_single_bit(unsigned(s.block)))
      return "block_blelloch: block must be a power of two (got " + std::to_string(s.block) + ")";
    if (s.items < 2 || s.items > 16 || !std::has_single_bit(unsigned(s.items)))
      return "block_blelloch: items must be 2, 4, 8 or 16 (got " + std::to_string(s.items) + ")";
  }
  const std::size_t smem = scan_shared_bytes(a, s, value_bytes);
  const std::size_t limit = a == GpuScan::warp_hs_chained ? kChainedSharedLimit : kScanSharedLimit;
  if (smem > limit)
    return "shape " + to_string(s) + " needs " + std::to_string(smem) + " bytes of shared memory for " +
           std::to_string(value_bytes) + "-byte values (limit " + std::to_string(limit) + ")";
  return "";
}

ScanShape default_scan_shape(GpuScan a, std::size_t value_bytes, std::string_view op) {
  if (a == GpuScan::warp_hs_chained) {
    if (op == "max" && value_bytes == 8) return {256, 15};
    return value_bytes <= 4 ? ScanShape{512, 23} : value_bytes <= 8 ? ScanShape{192, 23} : ScanShape{256, 15};
  }
  return {256, 4};
}

namespace {
std::vector<ScanShape> listed_shapes(GpuScan a, bool quick) {
  if (a == GpuScan::cub) return {ScanShape{0, 0}};
  if (a == GpuScan::warp_hillis_steele) {
    if (quick) return {{32, 1}, {96, 3}, {256, 4}};
    return {{32, 1}, {64, 1}, {96, 3}, {128, 7}, {256, 4}, {512, 2}, {1024, 1}, {256, 16}};
  }
  if (a == GpuScan::warp_hs_chained) {
    if (quick) return {{32, 1}, {96, 3}, {128, 15}};
    return {{32, 1}, {64, 2}, {96, 3}, {128, 7}, {128, 15}, {128, 23}, {192, 23}, {256, 8}, {256, 15}, {256, 23}, {384, 23}, {512, 4}, {512, 8}, {512, 23}, {1024, 1}, {1024, 4}};
  }
  if (quick) return {{32, 2}, {128, 4}, {256, 2}};
  return {{32, 2}, {64, 2}, {128, 4}, {256, 2}, {256, 4}, {512, 2}, {1024, 2}, {128, 16}};
}

}  // namespace

std::vector<ScanShape> scan_shapes(GpuScan a, bool quick, std::size_t value_bytes) {
  std::vector<ScanShape> out;
  for (const ScanShape& s : listed_shapes(a, quick))
    if (validate_scan_shape(a, s, 0, value_bytes).empty()) out.push_back(s);
  return out;
}

}  // namespace sumlab::scan
