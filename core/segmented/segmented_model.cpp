// The models of segmented_model.hpp. Each mirrors gpu/segmented/*.cuh statement for statement.
#include "core/segmented/segmented_model.hpp"

#include <array>
#include <optional>
#include <stdexcept>
#include <string>

#include "core/order_model/block_tree.hpp"
#include "core/order_model/order_trace.hpp"
#include "core/order_model/reduce_ops.hpp"
#include "core/order_model/warp_tree.hpp"
#include "core/scan/segmented_op.hpp"

namespace sumlab::segmented {

namespace {

using order_model::warp_size;

// Op is PlainSumOp<T> for the model, order_model::TracedSumOp<T> for a trace: one code for both.
template <class Op>
std::vector<typename Op::Acc> block_per_segment(const SegShape& s, std::span<const typename Op::In> x,
                                                std::span<const Offset> off) {
  using Acc = typename Op::Acc;
  std::vector<Acc> out(off.size() - 1);
  std::vector<Acc> threads(static_cast<std::size_t>(s.block));
  for (std::size_t j = 0; j < out.size(); ++j) {
    for (int t = 0; t < s.block; ++t) {
      Acc acc = Op::identity();
      for (Offset i = off[j] + t; i < off[j + 1]; i += s.block) acc = Op::add(acc, x[static_cast<std::size_t>(i)]);
      threads[static_cast<std::size_t>(t)] = acc;
    }
    out[j] = order_model::block_stage<Op>(std::span<const Acc>(threads), WarpStage::shfl_down, BlockStage::warp_of_warps);
  }
  return out;
}

template <class Op>
std::vector<typename Op::Acc> warp_per_segment(std::span<const typename Op::In> x, std::span<const Offset> off) {
  using Acc = typename Op::Acc;
  std::vector<Acc> out(off.size() - 1);
  for (std::size_t j = 0; j < out.size(); ++j) {
    std::array<Acc, warp_size> lanes;
    for (int l = 0; l < warp_size; ++l) {
      Acc acc = Op::identity();
      for (Offset i = off[j] + l; i < off[j + 1]; i += warp_size) acc = Op::add(acc, x[static_cast<std::size_t>(i)]);
      lanes[static_cast<std::size_t>(l)] = acc;
    }
    out[j] = order_model::warp_tree<Op>(lanes, WarpStage::shfl_down);
  }
  return out;
}

template <class T> using F = scan::Flagged<T>;
template <class T> using MaybeF = std::optional<F<T>>;

// The segmented scan runs over any number type T: a float, a double, or a traced number
// (order_model::TracedNumber) whose additions are recorded.
// combine(a, b) where either may be absent (an absent prefix contributes nothing: no operation).
template <class T> MaybeF<T> combine_opt(const MaybeF<T>& a, const MaybeF<T>& b) {
  if (!a) return b;
  if (!b) return a;
  return scan::segmented_combine(*a, *b);
}

// One tile's block-level scan: every thread's in-tile exclusive prefix, and the tile aggregate.
template <class T> struct TileScan {
  std::vector<MaybeF<T>> prefix;
  F<T> aggregate;
};

template <class T>
TileScan<T> tile_scan(const SegShape& s, std::span<const T> x, const std::vector<char>& head, std::int64_t tile) {
  const auto n = static_cast<std::int64_t>(x.size());
  const int B = s.block, I = s.items_per_thread, W = B / warp_size;
  const std::int64_t base = tile * std::int64_t(B) * I;
  std::vector<F<T>> fold(static_cast<std::size_t>(B));
  for (int t = 0; t < B; ++t) {
    F<T> agg{false, T(0)};  // the identity, for a thread with no items
    bool have = false;
    for (int k = 0; k < I; ++k) {
      const std::int64_t i = base + std::int64_t(t) * I + k;
      if (i >= n) break;
      const F<T> f{head[static_cast<std::size_t>(i)] != 0, x[static_cast<std::size_t>(i)]};
      agg = have ? scan::segmented_combine(agg, f) : f;
      have = true;
    }
    fold[static_cast<std::size_t>(t)] = agg;
  }
  TileScan<T> r;
  r.prefix.resize(static_cast<std::size_t>(B));
  std::vector<F<T>> totals(static_cast<std::size_t>(W));
  std::vector<std::array<F<T>, warp_size>> inclusive(static_cast<std::size_t>(W));
  for (int w = 0; w < W; ++w) {
    std::array<F<T>, warp_size> v;
    for (int l = 0; l < warp_size; ++l) v[static_cast<std::size_t>(l)] = fold[static_cast<std::size_t>(w * warp_size + l)];
    for (int d = 1; d < warp_size; d <<= 1) {
      const auto before = v;
      for (int l = d; l < warp_size; ++l)
        v[static_cast<std::size_t>(l)] =
            scan::segmented_combine(before[static_cast<std::size_t>(l - d)], before[static_cast<std::size_t>(l)]);
    }
    inclusive[static_cast<std::size_t>(w)] = v;
    totals[static_cast<std::size_t>(w)] = v[warp_size - 1];
  }
  std::vector<MaybeF<T>> warp_prefix(static_cast<std::size_t>(W));
  F<T> run = totals[0];
  for (int w = 1; w < W; ++w) {
    warp_prefix[static_cast<std::size_t>(w)] = run;
    run = scan::segmented_combine(run, totals[static_cast<std::size_t>(w)]);
  }
  r.aggregate = run;
  for (int t = 0; t < B; ++t) {
    const int w = t / warp_size, l = t % warp_size;
    const MaybeF<T> lane = l > 0 ? MaybeF<T>(inclusive[static_cast<std::size_t>(w)][static_cast<std::size_t>(l - 1)])
                                 : std::nullopt;
    r.prefix[static_cast<std::size_t>(t)] = combine_opt(warp_prefix[static_cast<std::size_t>(w)], lane);
  }
  return r;
}

template <class T> std::vector<T> segmented_scan(const SegShape& s, std::span<const T> x, std::span<const Offset> off) {
  const auto n = static_cast<std::int64_t>(x.size());
  const std::size_t segments = off.size() - 1;
  std::vector<char> head(x.size(), 0);
  for (std::size_t j = 0; j < segments; ++j)
    if (off[j] < off[j + 1]) head[static_cast<std::size_t>(off[j])] = 1;
  const std::int64_t tile_len = std::int64_t(s.block) * s.items_per_thread;
  const std::int64_t tiles = (n + tile_len - 1) / tile_len;
  // Pass 1 and 2: tile aggregates, then their serial exclusive fold (the carries). Pass 3
  // recomputes each tile's block scan instead of keeping every tile's prefixes (memory).
  std::vector<F<T>> aggregate(static_cast<std::size_t>(tiles));
  for (std::int64_t b = 0; b < tiles; ++b) aggregate[static_cast<std::size_t>(b)] = tile_scan(s, x, head, b).aggregate;
  std::vector<MaybeF<T>> carry(static_cast<std::size_t>(tiles));
  if (tiles > 0) {
    F<T> run = aggregate[0];
    for (std::int64_t b = 1; b < tiles; ++b) {
      carry[static_cast<std::size_t>(b)] = run;
      run = scan::segmented_combine(run, aggregate[static_cast<std::size_t>(b)]);
    }
  }
  // Pass 3: every element's scan value.
  std::vector<T> scanned(x.size());
  for (std::int64_t b = 0; b < tiles; ++b) {
    const TileScan<T> tile = tile_scan(s, x, head, b);
    for (int t = 0; t < s.block; ++t) {
      MaybeF<T> run = combine_opt(carry[static_cast<std::size_t>(b)], tile.prefix[static_cast<std::size_t>(t)]);
      for (int k = 0; k < s.items_per_thread; ++k) {
        const std::int64_t i = b * tile_len + std::int64_t(t) * s.items_per_thread + k;
        if (i >= n) break;
        const F<T> f{head[static_cast<std::size_t>(i)] != 0, x[static_cast<std::size_t>(i)]};
        run = combine_opt(run, MaybeF<T>(f));
        scanned[static_cast<std::size_t>(i)] = run->value;
      }
    }
  }
  // Pass 4: gather.
  std::vector<T> out(segments);
  for (std::size_t j = 0; j < segments; ++j)
    out[j] = off[j] < off[j + 1] ? scanned[static_cast<std::size_t>(off[j + 1] - 1)] : T(0);
  return out;
}

}  // namespace

template <class T>
std::vector<T> model_segmented(Strategy st, const SegShape& s, std::span<const T> x, std::span<const Offset> offsets) {
  validate_offsets(offsets, x.size());
  if (const std::string why = validate_shape(st, s); !why.empty()) throw std::invalid_argument(why);
  switch (st) {
    case Strategy::block_per_segment: return block_per_segment<PlainSumOp<T>>(s, x, offsets);
    case Strategy::warp_per_segment: return warp_per_segment<PlainSumOp<T>>(x, offsets);
    case Strategy::segmented_scan: return segmented_scan(s, x, offsets);
    default: break;
  }
  throw std::invalid_argument(std::string(info(st).name) + " has no order model (a CPU algorithm or a library peer)");
}

template <class T>
std::vector<TracedSegment<T>> trace_segmented(Strategy st, const SegShape& s, std::span<const T> x,
                                              std::span<const Offset> offsets, order_model::Trace<T>& trace) {
  using namespace order_model;
  validate_offsets(offsets, x.size());
  if (const std::string why = validate_shape(st, s); !why.empty()) throw std::invalid_argument(why);
  const std::size_t n = x.size(), segments = offsets.size() - 1;
  trace = Trace<T>{};
  trace.leaves.assign(x.begin(), x.end());
  trace.leaf_thread.assign(n, 0);
  // Where each element is loaded: a per-segment strategy's thread j * width + (i - begin) % width
  // (width: the block or the warp that owns segment j); the scan's tile layout, i / items.
  const bool per_segment = st != Strategy::segmented_scan;
  const int width = st == Strategy::warp_per_segment ? warp_size : s.block;
  trace.block = st == Strategy::warp_per_segment ? warp_size : s.block;
  trace.items = per_segment ? 0 : s.items_per_thread;
  for (std::size_t j = 0; j < segments; ++j)
    for (Offset i = offsets[j]; i < offsets[j + 1]; ++i)
      trace.leaf_thread[static_cast<std::size_t>(i)] =
          per_segment ? static_cast<std::int64_t>(j) * width + (i - offsets[j]) % width : i / s.items_per_thread;
  current_trace<T>() = &trace;
  std::vector<TracedSegment<T>> out;
  if (per_segment) {
    std::vector<TracedLeaf<T>> leaves(n);
    for (std::size_t i = 0; i < n; ++i) leaves[i] = {x[i], static_cast<std::int64_t>(i)};
    const std::span<const TracedLeaf<T>> in(leaves);
    using Op = TracedSumOp<T>;
    const auto sums = st == Strategy::block_per_segment ? block_per_segment<Op>(s, in, offsets)
                                                        : warp_per_segment<Op>(in, offsets);
    for (const auto& v : sums) out.push_back({v.value, v.id});
  } else {
    std::vector<TracedNumber<T>> leaves(n);
    for (std::size_t i = 0; i < n; ++i) leaves[i] = TracedNumber<T>::leaf(x[i], static_cast<std::int64_t>(i));
    for (const auto& v : segmented_scan(s, std::span<const TracedNumber<T>>(leaves), offsets))
      out.push_back({v.value, v.id});
  }
  current_trace<T>() = nullptr;
  return out;
}

template std::vector<float> model_segmented<float>(Strategy, const SegShape&, std::span<const float>,
                                                   std::span<const Offset>);
template std::vector<double> model_segmented<double>(Strategy, const SegShape&, std::span<const double>,
                                                     std::span<const Offset>);
template std::vector<TracedSegment<float>> trace_segmented<float>(Strategy, const SegShape&, std::span<const float>,
                                                                  std::span<const Offset>, order_model::Trace<float>&);
template std::vector<TracedSegment<double>> trace_segmented<double>(Strategy, const SegShape&,
                                                                    std::span<const double>, std::span<const Offset>,
                                                                    order_model::Trace<double>&);

}  // namespace sumlab::segmented
