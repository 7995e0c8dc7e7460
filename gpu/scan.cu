// Host side of the scans: validation, device memory per level of scan-then-propagate or per tile
// of the chained scan, launches, timing, download. Every CUDA call is checked (gpu/cuda_check.cuh);
// a GpuError becomes GpuScanResult::error.
#include "gpu/scan.hpp"

#include <cuda_runtime.h>

#include <algorithm>
#include <cstring>
#include <cstdio>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "core/metrics.hpp"
#include "gpu/cuda_check.cuh"
#include "gpu/host/cuda_host.cuh"
#include "gpu/scan/cub_scan.hpp"
#include "gpu/scan/scan_kernels.cuh"

namespace sumlab::gpu {

using scan::GpuScan;
using scan::ScanShape;
using detail::DeviceBytes;

namespace {

// One level of scan-then-propagate: the tile totals of the level above and their scan.
struct Level {
  DeviceBytes totals, carry;
  std::int64_t tiles = 0;
};

template <class Op>
void launch_scan(GpuScan alg, const ScanShape& s, const typename Op::Value* d_in, std::int64_t n,
                 typename Op::Value* d_out, bool inclusive, std::vector<Level>& levels, std::size_t level) {
  using V = typename Op::Value;
  if (n == 0) return;
  const std::int64_t tile = s.tile(), tiles = (n + tile - 1) / tile;
  Level& L = levels[level];
  const std::size_t smem = scan::scan_shared_bytes(alg, s, sizeof(V));
  if (alg == GpuScan::warp_hillis_steele) {
    detail::warp_hs_tile_kernel<Op><<<unsigned(tiles), unsigned(s.block), smem>>>(d_in, n, s.items, inclusive, d_out,
                                                                                 L.totals.template as<V>());
  } else {
    detail::blelloch_tile_kernel<Op><<<unsigned(tiles), unsigned(s.block), smem>>>(d_in, n, s.items, inclusive, d_out,
                                                                                  L.totals.template as<V>());
  }
  SUMLAB_CUDA_CHECK_LAUNCH("scan tile kernel");
  if (tiles == 1) return;
  launch_scan<Op>(alg, s, L.totals.template as<V>(), tiles, L.carry.template as<V>(), false, levels, level + 1);
  const std::int64_t rest = n - tile;
  const unsigned grid = unsigned(std::min<std::int64_t>((rest + 255) / 256, 65535));
  detail::add_carry_kernel<Op><<<grid, 256>>>(d_out, n, tile, L.carry.template as<V>(), inclusive);
  SUMLAB_CUDA_CHECK_LAUNCH("scan carry kernel");
}

// warp_hs_chained's per-tile state, zeroed once; each launch takes the next epoch.
struct Chain {
  DeviceBytes records, counter;
  std::int64_t tiles = 0;
  unsigned epoch = 0;
  bool checked = false;  // the kernel's limits against this GPU, at the first launch
  std::int64_t gate = 0, resident = 0;  // the first wave's stagger (gpu/block/chained_lookback.cuh), at the first launch
};

template <class Op, int ITEMS>
void launch_chained_items(const ScanShape& s, const typename Op::Value* d_in, std::int64_t n, typename Op::Value* d_out,
                          bool inclusive, Chain& chain) {
  using V = typename Op::Value;
  const auto kernel = detail::chained_tile_kernel<Op, ITEMS>;
  const std::size_t smem = scan::scan_shared_bytes(GpuScan::warp_hs_chained, s, sizeof(V));
  const auto what = [&] {
    return "warp_hs_chained " + scan::to_string(s) + " (" + Op::name + ", " + std::to_string(sizeof(V)) + "-byte values)";
  };
  if (!chain.checked) {
    const int max_threads = detail::max_block_threads(reinterpret_cast<const void*>(kernel));
    if (s.block > max_threads)
      throw GpuError(what() + " runs at most " + std::to_string(max_threads) + " threads per block on this GPU (registers)");
    chain.checked = true;
  }
  detail::opt_in_shared(reinterpret_cast<const void*>(kernel), smem, what);
  if (chain.resident == 0) {
    // The first wave's stagger (gpu/block/chained_lookback.cuh): half the tiles the SMs hold at
    // once, for values of 8 bytes or more (whose look-back warp 0 walks alone) in launches of more
    // than a wave. Against no gate on an H200: float64 + and max 2-6% faster at 2^22-2^24, but
    // float32 max up to 7% slower and float32 + unchanged, so 4-byte values start at once; a gate
    // of an SM count was slower than none (docs/performance-notes.md). After the opt-in, which the
    // occupancy of a tile past 48 KB needs.
    int device = 0, per_sm = 0, sms = 0;
    SUMLAB_CUDA_CHECK(cudaGetDevice(&device));
    SUMLAB_CUDA_CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, kernel, s.block, smem));
    SUMLAB_CUDA_CHECK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device));
    chain.resident = std::max<std::int64_t>(std::int64_t(per_sm) * sms, 1);
    chain.gate = sizeof(V) >= 8 && chain.tiles > chain.resident ? chain.resident / 2 : 0;
  }
  detail::ChainTiles<V> c;
  c.records = chain.records.template as<unsigned long long>();
  c.counter = chain.counter.template as<unsigned long long>();
  c.epoch = ++chain.epoch;
  c.tiles = chain.tiles;
  c.gate = chain.gate;
  c.gated = chain.gate > 0 ? chain.resident : 0;
  kernel<<<unsigned(chain.tiles), unsigned(s.block), smem>>>(d_in, n, inclusive, d_out, c);
  SUMLAB_CUDA_CHECK_LAUNCH("chained scan kernel");
}

template <class Op>
void launch_chained(const ScanShape& s, const typename Op::Value* d_in, std::int64_t n, typename Op::Value* d_out,
                    bool inclusive, Chain& chain) {
  switch (s.items) {  // kChainedItems; validate_scan_shape refused any other
    case 1: launch_chained_items<Op, 1>(s, d_in, n, d_out, inclusive, chain); break;
    case 2: launch_chained_items<Op, 2>(s, d_in, n, d_out, inclusive, chain); break;
    case 3: launch_chained_items<Op, 3>(s, d_in, n, d_out, inclusive, chain); break;
    case 4: launch_chained_items<Op, 4>(s, d_in, n, d_out, inclusive, chain); break;
    case 7: launch_chained_items<Op, 7>(s, d_in, n, d_out, inclusive, chain); break;
    case 8: launch_chained_items<Op, 8>(s, d_in, n, d_out, inclusive, chain); break;
    case 15: launch_chained_items<Op, 15>(s, d_in, n, d_out, inclusive, chain); break;
    case 16: launch_chained_items<Op, 16>(s, d_in, n, d_out, inclusive, chain); break;
    default: launch_chained_items<Op, 23>(s, d_in, n, d_out, inclusive, chain); break;
  }
}

}  // namespace

template <class V> struct ScanInput<V>::Impl {
  DeviceBytes data;  // `copies` copies of the n values, one after another
  std::int64_t n = 0;
  int copies = 1;
};

template <class V> ScanInput<V>::ScanInput(std::span<const V> host, int copies) : impl_(std::make_unique<Impl>()) {
  if (copies < 1) throw std::invalid_argument("ScanInput: copies must be >= 1 (got " + std::to_string(copies) + ")");
  impl_->n = static_cast<std::int64_t>(host.size());
  impl_->copies = copies;
  if (host.empty()) return;
  std::string why;
  if (!gpu_available(&why)) throw GpuError(why);
  impl_->data = detail::upload_copies(host.data(), host.size_bytes(), copies, "the scan input");
}
template <class V> ScanInput<V>::~ScanInput() = default;
template <class V> ScanInput<V>::ScanInput(ScanInput&&) noexcept = default;
template <class V> ScanInput<V>& ScanInput<V>::operator=(ScanInput&&) noexcept = default;
template <class V> std::int64_t ScanInput<V>::size() const { return impl_->n; }
template <class V> int ScanInput<V>::copies() const { return impl_->copies; }
template <class V> const V* ScanInput<V>::device_data(int copy) const {
  return impl_->data.template as<V>() + std::size_t(copy % impl_->copies) * std::size_t(impl_->n);
}

template <class Op>
GpuScanResult<typename Op::Value> gpu_scan(GpuScan alg, const ScanShape& s, const ScanInput<typename Op::Value>& x,
                                           bool inclusive, const ScanRunOptions& opts) {
  using V = typename Op::Value;
  GpuScanResult<V> r;
  const std::int64_t n = x.size();
  r.error = scan::validate_scan_shape(alg, s, n, sizeof(V));
  if (!r.error.empty()) return r;
  if (opts.reps < 1) {
    r.error = "reps must be >= 1";
    return r;
  }
  if (n == 0) return r;
  std::string why;
  if (!gpu_available(&why)) {
    r.error = why;
    return r;
  }
  try {
    DeviceBytes out(std::size_t(n) * sizeof(V), "the scan output");
    std::vector<Level> levels;
    Chain chain;
    DeviceBytes temp;
    std::size_t temp_bytes = 0;
    if (alg == GpuScan::cub) {
      temp_bytes = detail::cub_scan_temp_bytes<Op>(n, inclusive);
      temp = DeviceBytes(std::max<std::size_t>(temp_bytes, 1), "cub's temporary storage");
    } else if (alg == GpuScan::warp_hs_chained) {
      chain.tiles = (n + s.tile() - 1) / s.tile();
      const auto tiles = std::size_t(chain.tiles);
      const std::size_t record = detail::ChainTiles<V>::record_bytes();
      chain.records = DeviceBytes(tiles * record, "the tile records");
      chain.counter = DeviceBytes(sizeof(unsigned long long), "the tile counter");
      SUMLAB_CUDA_CHECK(cudaMemset(chain.records.template as<void>(), 0, tiles * record));
      SUMLAB_CUDA_CHECK(cudaMemset(chain.counter.template as<void>(), 0, sizeof(unsigned long long)));
    } else {
      for (std::int64_t m = n; m > 1 || levels.empty();) {
        Level L;
        L.tiles = (m + s.tile() - 1) / s.tile();
        L.totals = DeviceBytes(std::size_t(L.tiles) * sizeof(V), "the tile totals");
        L.carry = DeviceBytes(std::size_t(L.tiles) * sizeof(V), "the tile carries");
        levels.push_back(std::move(L));
        if (levels.back().tiles == 1) break;
        m = levels.back().tiles;
      }
    }
    int launches = 0;  // the copy each scan reads, in turn
    auto once = [&] {
      const V* const d_in = x.device_data(launches++);
      if (alg == GpuScan::cub) detail::cub_scan<Op>(temp.template as<void>(), temp_bytes, d_in, out.template as<V>(), n, inclusive);
      else if (alg == GpuScan::warp_hs_chained) launch_chained<Op>(s, d_in, n, out.template as<V>(), inclusive, chain);
      else launch_scan<Op>(alg, s, d_in, n, out.template as<V>(), inclusive, levels, 0);
    };
    r.ms = median(detail::time_back_to_back(once, opts.reps));
    SUMLAB_CUDA_CHECK(cudaDeviceSynchronize());
    if (opts.want_out) {
      r.out.resize(std::size_t(n));
      SUMLAB_CUDA_CHECK(cudaMemcpy(r.out.data(), out.template as<V>(), std::size_t(n) * sizeof(V), cudaMemcpyDeviceToHost));
    }
  } catch (const GpuError& e) {
    r.error = e.what();
    r.out.clear();
  }
  return r;
}

template <class Op>
GpuScanResult<typename Op::Value> gpu_scan(GpuScan alg, const ScanShape& s, std::span<const typename Op::Value> x,
                                           bool inclusive, const ScanRunOptions& opts) {
  try {
    const ScanInput<typename Op::Value> in(x);
    return gpu_scan<Op>(alg, s, in, inclusive, opts);
  } catch (const std::exception& e) {
    GpuScanResult<typename Op::Value> r;
    r.error = e.what();
    return r;
  }
}

template <class Op>
ChainProbeResult<typename Op::Value> gpu_chain_look_back(std::span<const typename Op::Value> aggregates,
                                                         std::span<const std::int64_t> inclusive_at, int block,
                                                         bool by_block) {
  using V = typename Op::Value;
  constexpr int K = detail::ChainTiles<V>::kWords;
  ChainProbeResult<V> r;
  const std::int64_t t = std::int64_t(aggregates.size()) - 1;
  if (t < 1 || block < 32 || block > 1024 || block % 32 != 0) {
    r.error = "gpu_chain_look_back: needs A_0 .. A_t with t >= 1 and a block of 32 .. 1024 threads, a multiple of 32";
    return r;
  }
  std::string why;
  if (!gpu_available(&why)) {
    r.error = why;
    return r;
  }
  // The records as tiles 0 .. t - 1 would have left them in epoch 1 (chain_publish's words).
  using Tiles = detail::ChainTiles<V>;
  std::vector<unsigned long long> records(std::size_t(t + 1) * Tiles::record_bytes() / sizeof(unsigned long long), 0);
  const auto put = [&](std::int64_t k, unsigned kind, const V& v) {
    unsigned w[K];
    std::memcpy(w, &v, sizeof(V));
    for (int i = 0; i < K; ++i) records[std::size_t(Tiles::word_index(k, kind) + i)] = detail::chain_word(1, kind, w[i]);
  };
  V p = aggregates[0];
  std::vector<bool> inclusive(std::size_t(t), false);
  inclusive[0] = true;
  for (std::int64_t k : inclusive_at)
    if (k >= 0 && k < t) inclusive[std::size_t(k)] = true;
  for (std::int64_t k = 0; k < t; ++k) {
    if (k > 0) p = Op::combine(p, aggregates[std::size_t(k)]);
    if (k > 0) put(k, detail::kChainAggregate, aggregates[std::size_t(k)]);
    if (inclusive[std::size_t(k)]) put(k, detail::kChainInclusive, p);
  }
  try {
    DeviceBytes d_records(records.size() * sizeof(unsigned long long), "the tile records");
    DeviceBytes d_carry(sizeof(V), "the carry");
    SUMLAB_CUDA_CHECK(cudaMemcpy(d_records.template as<void>(), records.data(), records.size() * sizeof(unsigned long long),
                                 cudaMemcpyHostToDevice));
    Tiles c;
    c.records = d_records.template as<unsigned long long>();
    c.epoch = 1;
    c.tiles = t + 1;
    const std::size_t smem = scan::chained_header_bytes(sizeof(V));
    detail::chain_probe_kernel<Op><<<1, unsigned(block), smem>>>(c, t, aggregates[std::size_t(t)], by_block,
                                                                 d_carry.template as<V>());
    SUMLAB_CUDA_CHECK_LAUNCH("chain probe kernel");
    SUMLAB_CUDA_CHECK(cudaMemcpy(&r.carry, d_carry.template as<V>(), sizeof(V), cudaMemcpyDeviceToHost));
    SUMLAB_CUDA_CHECK(cudaMemcpy(records.data(), d_records.template as<void>(), records.size() * sizeof(unsigned long long),
                                 cudaMemcpyDeviceToHost));
  } catch (const GpuError& e) {
    r.error = e.what();
    return r;
  }
  unsigned w[K];
  for (int i = 0; i < K; ++i) {
    const unsigned long long word = records[std::size_t(Tiles::word_index(t, detail::kChainInclusive) + i)];
    if ((word >> 32) != detail::chain_tag(1, detail::kChainInclusive)) {
      r.error = "gpu_chain_look_back: tile t did not publish its inclusive prefix";
      return r;
    }
    w[i] = unsigned(word);
  }
  std::memcpy(&r.published, w, sizeof(V));
  return r;
}

#define SUMLAB_GPU_SCAN(OP)                                                                                        \
  template GpuScanResult<OP::Value> gpu_scan<OP>(GpuScan, const ScanShape&, const ScanInput<OP::Value>&, bool,   \
                                                 const ScanRunOptions&);                                       \
  template GpuScanResult<OP::Value> gpu_scan<OP>(GpuScan, const ScanShape&, std::span<const OP::Value>, bool,    \
                                                 const ScanRunOptions&);                                       \
  template ChainProbeResult<OP::Value> gpu_chain_look_back<OP>(std::span<const OP::Value>,                       \
                                                               std::span<const std::int64_t>, int, bool);
SUMLAB_GPU_SCAN(scan::PlusOp<float>)
SUMLAB_GPU_SCAN(scan::PlusOp<double>)
SUMLAB_GPU_SCAN(scan::MaxOp<float>)
SUMLAB_GPU_SCAN(scan::MaxOp<double>)
SUMLAB_GPU_SCAN(scan::SegmentedOp<float>)
SUMLAB_GPU_SCAN(scan::SegmentedOp<double>)
SUMLAB_GPU_SCAN(scan::AffineOp<float>)
SUMLAB_GPU_SCAN(scan::AffineOp<double>)
#undef SUMLAB_GPU_SCAN

template class ScanInput<float>;
template class ScanInput<double>;
template class ScanInput<scan::Flagged<float>>;
template class ScanInput<scan::Flagged<double>>;
template class ScanInput<scan::Affine<float>>;
template class ScanInput<scan::Affine<double>>;

}  // namespace sumlab::gpu
