// `sumlab explain`: the exact tree of additions a kernel performs for a launch shape, from the
// order model (core/order_model/order_trace.hpp): stage by stage, with the barriers, and for small
// n every intermediate value. Text on stdout; --svg FILE draws the same tree.
#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include <cmath>
#include <cstdio>
#include <filesystem>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <type_traits>

#include "core/cpu_algorithms.hpp"
#include "core/float_traits.hpp"
#include "core/generators.hpp"
#include "core/gpu_kernel.hpp"
#include "core/order_model/classic_trees.hpp"
#include "core/order_model/cross_block.hpp"
#include "core/order_model/model_sum.hpp"
#include "core/order_model/order_trace.hpp"
#include "core/order_model/reduce_ops.hpp"
#include "core/scan/scan_kernel.hpp"
#include "core/scan/scan_model.hpp"
#include "core/scan/scan_ops.hpp"
#include "core/segmented/segmented_model.hpp"
#include "core/segmented/strategy.hpp"
#include "studies/commands.hpp"
#include "studies/input_options.hpp"
#include "studies/run_folder.hpp"
#include "studies/shape_options.hpp"

namespace sumlab {
namespace {

using namespace order_model;

struct ExplainOptions {
  InputOptions input;
  std::string kernel = "gpu_two_pass";
  ShapeOptions shape;
  std::string svg;
  std::string csv;
  bool values = false;
  int items = 2;  // scans and the segmented scan: elements per thread
  std::vector<std::int64_t> segment_sizes;  // segmented strategies (empty: the default pattern)
};

std::string operand(int id) {
  if (id == -1) return "0";
  if (id <= -2) return fmt::format("x{}", -id - 2);
  return fmt::format("s{}", id);
}

// The kernels explain draws: the registry's additive families (the integer and library kernels have
// no tree to draw; the racy tree no value).
std::optional<KernelFamily> family_of(GpuKernel k) {
  const GpuKernelInfo& i = info(k);
  if (i.diagnostic_only || i.family == KernelFamily::integer || i.family == KernelFamily::library) return std::nullopt;
  return i.family;
}

std::string drawable_kernels() {
  std::string out;
  for (const auto& i : gpu_kernels())
    if (family_of(i.kernel)) out += (out.empty() ? "" : ", ") + std::string(i.name);
  return out;
}

// What separates one stage from the next, in the words of the kernel's own code.
const char* barrier_before(KernelFamily f, TraceStage s) {
  const bool smem = f == KernelFamily::classic || f == KernelFamily::multi_add;
  switch (s) {
    case TraceStage::thread:
      return f == KernelFamily::serial ? "one thread walks every element (registers, no barrier)"
             : smem              ? "each thread adds during its load (registers, no barrier)"
                                 : "each thread walks its own elements (registers, no barrier)";
    case TraceStage::warp:
      return smem ? "shared-memory tree, both operands in one warp (Harris 5-7: the last warp's levels unrolled)"
                  : "warp stage: shuffles within each warp (no barrier; __shfl_*_sync)";
    case TraceStage::block:
      return smem ? "---- shared-memory tree across warps: __syncthreads() between levels ----"
                  : "---- __syncthreads(): warp totals meet in shared memory ----";
    case TraceStage::cross_block:
      return f == KernelFamily::classic     ? "---- relaunch: the block partials are the next pass's input ----"
             : f == KernelFamily::multi_add ? "---- second pass: one block over the block partials ----"
                                            : "---- grid boundary: block partials meet (second kernel / last block / atomics) ----";
  }
  return "";
}

// The global thread that loads element i first (the leaf's owner), for the stage of each addition.
std::int64_t loader_thread(KernelFamily f, GpuKernel k, std::int64_t i, std::int64_t n, const LaunchShape& s) {
  const std::int64_t block = s.block;
  switch (f) {
    case KernelFamily::serial: return 0;
    case KernelFamily::shuffle: return owner_thread(i, n, s);
    case KernelFamily::classic: {
      const std::int64_t per_block = classic_elements_per_block(k, s.block);
      return i / per_block * block + i % per_block % block;
    }
    case KernelFamily::multi_add: {
      const std::int64_t j = i % (2 * block * s.grid);
      return j / (2 * block) * block + j % (2 * block) % block;
    }
    case KernelFamily::integer:
    case KernelFamily::library: break;
  }
  return 0;
}

// The additions of kernel k for this shape, recorded by running the order model's own stage
// functions with the traced op (core/order_model/order_trace.hpp).
// The root of a traced tree: the kernel's result and its node.
template <class T> struct Root {
  T value{};
  int id = -1;
  bool wide = false;  // the nodes' accumulator is a plain wider float (a double under float input)
};

template <class T> struct Explained {
  Trace<T> trace;
  Root<T> result;
  bool wide = false;  // nodes hold a wider accumulator (gpu_double_acc's double), shown unrounded
  std::string value_text(const TraceEvent& e) const {
    return wide ? fmt::format("{}", e.value) : fmt::format("{}", static_cast<T>(e.value));
  }
  std::vector<char> live;  // the additions the result depends on
  // Idle additions (x + 0) are pass-throughs: follow them to the real operand.
  int resolve(int id) const {
    while (id >= 0 && trace.events[static_cast<std::size_t>(id)].idle) {
      const auto& e = trace.events[static_cast<std::size_t>(id)];
      id = e.lhs == -1 ? e.rhs : e.lhs;
    }
    return id;
  }
};

// A shuffle-family kernel's tree, with its own op (a plain add, a Kahan pair, a double word...).
template <class T, class Base>
Root<T> run_shuffle_traced(const LaunchShape& s, std::span<const TracedLeaf<T>> leaves) {
  using Op = TracedSumOp<T, Base>;
  using V = typename Op::Acc;
  const auto partials = block_partials<Op>(leaves, s);
  V r = Op::identity();
  if (s.cross != CrossBlock::atomic) {
    r = reduce_partials<Op>(std::span<const V>(partials), s.block, s.warp, s.block_stage);
  } else {  // atomicAdd: for float, subnormal operands and results flushed, as the model does
    for (int b : launch_order(s.grid)) {
      const V& p = partials[static_cast<std::size_t>(b)];
      if constexpr (requires { r.value; } && std::is_same_v<std::remove_cvref_t<decltype(r.value)>, T>) {
        const T before = r.value;
        r = Op::combine(r, p);
        r.value = order_model::atomic_add_as_the_gpu(before, p.value);
      } else {
        r = Op::combine(r, p);
      }
    }
  }
  return {Op::finish(r), r.id, std::is_floating_point_v<typename Base::Acc> && sizeof(typename Base::Acc) > sizeof(T)};
}

template <class T>
Root<T> run_traced(KernelFamily f, GpuKernel k, const LaunchShape& s, std::span<const TracedLeaf<T>> leaves) {
  using Op = TracedSumOp<T>;
  auto root = [](const TracedValue<T>& v) { return Root<T>{v.value, v.id}; };
  switch (f) {
    case KernelFamily::serial: {
      if (leaves.empty()) return root(Op::identity());
      TracedValue<T> r = Op::leaf(leaves[0]);
      for (std::size_t i = 1; i < leaves.size(); ++i) r = Op::add(r, leaves[i]);
      return root(r);
    }
    case KernelFamily::classic: return root(classic_reduce<Op>(k, s.block, leaves));
    case KernelFamily::multi_add: return root(multi_add_reduce<Op>(s.grid, s.block, leaves));
    case KernelFamily::shuffle: {
      Root<T> r;
      const bool ran = with_shuffle_op<T>(k, [&]<class Base>() {
        if constexpr (std::is_same_v<typename Base::In, T>) r = run_shuffle_traced<T, Base>(s, leaves);
      });
      if (ran) return r;
      break;
    }
    case KernelFamily::integer:
    case KernelFamily::library: break;
  }
  throw UserError(std::string(info(k).name) + ": no additive tree to draw for this input type");
}

// The additions the result depends on (idle ones followed through).
template <class T> void mark_live(Explained<T>& x, const std::vector<int>& more_roots = {}) {
  x.live.assign(x.trace.events.size(), 0);
  std::vector<int> stack{x.resolve(x.result.id)};
  for (int r : more_roots) stack.push_back(x.resolve(r));
  while (!stack.empty()) {
    const int id = stack.back();
    stack.pop_back();
    if (id < 0 || x.live[static_cast<std::size_t>(id)]) continue;
    x.live[static_cast<std::size_t>(id)] = 1;
    const auto& e = x.trace.events[static_cast<std::size_t>(id)];
    stack.push_back(x.resolve(e.lhs));
    stack.push_back(x.resolve(e.rhs));
  }
}

template <class T> Explained<T> explain(KernelFamily f, GpuKernel k, const LaunchShape& s, std::span<const T> data) {
  const auto n = static_cast<std::int64_t>(data.size());
  Explained<T> x;
  x.trace.block = s.block;
  x.trace.leaves.assign(data.begin(), data.end());
  std::vector<TracedLeaf<T>> leaves;
  for (std::int64_t i = 0; i < n; ++i) {
    x.trace.leaf_thread.push_back(loader_thread(f, k, i, n, s));
    leaves.push_back({data[static_cast<std::size_t>(i)], i});
  }
  current_trace<T>() = &x.trace;
  x.result = run_traced<T>(f, k, s, leaves);
  x.wide = x.result.wide;
  current_trace<T>() = nullptr;
  mark_live(x);
  return x;
}

// A CPU algorithm's tree, recorded by running the algorithm itself on traced numbers.
template <class T> Explained<T> explain_cpu(const CpuAlgorithm<T>& a, std::span<const T> data) {
  Explained<T> x;
  x.trace.block = 1;
  x.trace.leaves.assign(data.begin(), data.end());
  x.trace.leaf_thread.assign(data.size(), 0);
  std::vector<TracedNumber<T>> leaves;
  for (std::size_t i = 0; i < data.size(); ++i) leaves.push_back(TracedNumber<T>::leaf(data[i], static_cast<std::int64_t>(i)));
  current_trace<T>() = &x.trace;
  const TracedNumber<T> r = a.traced(std::span<const TracedNumber<T>>(leaves));
  current_trace<T>() = nullptr;
  x.result = {r.value, r.id};
  mark_live(x);
  return x;
}

std::string threads_text(std::int64_t first, std::int64_t last) {
  return first == last ? fmt::format("thread {}", first) : fmt::format("threads {}-{}", first, last);
}

template <class T>
void print_text(const ExplainOptions& o, const std::function<std::string(TraceStage)>& barrier, bool staged,
                const Explained<T>& x, std::span<const T> data) {
  const auto n = data.size();
  const bool values = o.values || n <= 64;
  std::map<TraceStage, int> counts;
  bool first = true;
  TraceStage last = TraceStage::thread;
  for (std::size_t id = 0; id < x.trace.events.size(); ++id) {
    if (!x.live[id]) continue;
    const auto& e = x.trace.events[id];
    if (first || e.stage != last)
      fmt::print("\n{}\n", barrier(e.stage));
    first = false;
    last = e.stage;
    ++counts[e.stage];
    std::string line = fmt::format("  {:<11} s{} = {} + {}   [{}]", to_string(e.stage), id, operand(x.resolve(e.lhs)),
                                   operand(x.resolve(e.rhs)), threads_text(e.first_thread, e.last_thread));
    if (values) line += "   = " + x.value_text(e);
    fmt::print("{}\n", line);
  }
  if (first && n > 0) fmt::print("\n(no additions: a single element)\n");
  if (staged)
    fmt::print("\nresult {} ({}); additions: thread {}, warp {}, block {}, cross-block {}\n", x.result.value,
               hex_bits(x.result.value), counts[TraceStage::thread], counts[TraceStage::warp], counts[TraceStage::block],
               counts[TraceStage::cross_block]);
  else
    fmt::print("\nresult {} ({}); additions: {}\n", x.result.value, hex_bits(x.result.value), counts[TraceStage::thread]);
  if (values && n <= 64) {
    std::string xs;
    for (std::size_t i = 0; i < n; ++i) xs += fmt::format("{}x{}={}", i ? ", " : "", i, data[i]);
    fmt::print("inputs: {}\n", xs);
  }
}

template <class T>
void write_csv(const ExplainOptions& o, const std::string& shape, const Explained<T>& x, std::span<const T> data) {
  std::vector<std::vector<std::string>> rows;
  const std::string& sh = shape;
  const std::string dt(FloatTraits<T>::dtype), n = std::to_string(data.size());
  for (std::size_t i = 0; i < data.size(); ++i) {
    const std::string th = std::to_string(x.trace.leaf_thread[i]);
    rows.push_back({o.kernel, dt, n, sh, fmt::format("x{}", i), "", "", fmt::format("{}", data[i]), "input", th, th});
  }
  for (std::size_t id = 0; id < x.trace.events.size(); ++id) {
    if (!x.live[id]) continue;
    const auto& e = x.trace.events[id];
    rows.push_back({o.kernel, dt, n, sh, fmt::format("s{}", id), operand(x.resolve(e.lhs)), operand(x.resolve(e.rhs)),
                    x.value_text(e), to_string(e.stage), std::to_string(e.first_thread),
                    std::to_string(e.last_thread)});
  }
  append_csv(o.csv, {"kernel", "dtype", "n", "shape", "node", "lhs", "rhs", "value", "stage", "first_thread",
                     "last_thread"},
             rows);
  fmt::print("csv: {} ({} rows appended)\n", o.csv, rows.size());
}

// Leaves evenly spaced on the bottom row in index order; a node sits above the mean of its
// operands, one row per addition depth; colours by stage. The title gets its own line and the
// width fits it, so nothing is clipped.
template <class T>
std::string tree_svg(const ExplainOptions& o, const std::string& shape, const Explained<T>& x, std::span<const T> data,
                     const std::vector<int>& more_roots = {}) {
  const auto n = static_cast<std::int64_t>(data.size());
  std::map<int, std::pair<double, int>> pos;  // id -> (x, depth)
  std::function<std::pair<double, int>(int)> place = [&](int id) -> std::pair<double, int> {
    if (id <= -2) return {static_cast<double>(-id - 2), 0};
    if (id == -1) return {0.0, 0};
    if (auto it = pos.find(id); it != pos.end()) return it->second;
    const auto& e = x.trace.events[static_cast<std::size_t>(id)];
    const auto a = place(x.resolve(e.lhs)), b = place(x.resolve(e.rhs));
    const std::pair<double, int> p{(a.first + b.first) / 2, std::max(a.second, b.second) + 1};
    pos[id] = p;
    return p;
  };
  place(x.resolve(x.result.id));
  for (int r : more_roots) place(x.resolve(r));
  int depth = 0;
  for (const auto& [id, p] : pos) depth = std::max(depth, p.second);
  const std::string title = fmt::format("{} {} n={} shape {}", o.kernel, FloatTraits<T>::dtype, n, shape);
  const std::string result = fmt::format("result {} ({})", x.result.value, hex_bits(x.result.value));
  const double dx = 36, dy = 48, h = dy * (depth + 1) + 110;
  const double w = std::max(dx * static_cast<double>(std::max<std::int64_t>(n, 1)) + 80,
                            20 + 7.0 * static_cast<double>(std::max(title.size(), result.size())));
  auto X = [&](double v) { return 40 + v * dx; };
  auto Y = [&](int d) { return h - 50 - d * dy; };
  const std::map<TraceStage, const char*> colour{{TraceStage::thread, "#1f77b4"}, {TraceStage::warp, "#2ca02c"},
                                                 {TraceStage::block, "#ff7f0e"}, {TraceStage::cross_block, "#d62728"}};
  std::string svg = fmt::format(
      "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"{:.0f}\" height=\"{:.0f}\" font-family=\"monospace\" "
      "font-size=\"10\">\n<text x=\"10\" y=\"16\" font-size=\"12\">{}</text>\n<text x=\"10\" y=\"32\" "
      "font-size=\"12\">{}</text>\n",
      w, h, title, result);
  double lx = 10;
  for (const auto& [st, c] : colour) {
    svg += fmt::format("<circle cx=\"{:.0f}\" cy=\"50\" r=\"5\" fill=\"{}\"/><text x=\"{:.0f}\" y=\"54\">{}</text>\n",
                       lx + 6, c, lx + 14, to_string(st));
    lx += 110;
  }
  for (const auto& [id, p] : pos) {
    const auto& e = x.trace.events[static_cast<std::size_t>(id)];
    for (int child : {x.resolve(e.lhs), x.resolve(e.rhs)}) {
      const auto c = child <= -2 ? std::pair<double, int>{static_cast<double>(-child - 2), 0} : pos[child];
      svg += fmt::format("<line x1=\"{:.1f}\" y1=\"{:.1f}\" x2=\"{:.1f}\" y2=\"{:.1f}\" stroke=\"#999\"/>\n", X(p.first),
                         Y(p.second), X(c.first), Y(c.second));
    }
  }
  for (const auto& [id, p] : pos) {
    const auto& e = x.trace.events[static_cast<std::size_t>(id)];
    svg += fmt::format("<circle cx=\"{:.1f}\" cy=\"{:.1f}\" r=\"6\" fill=\"{}\"><title>s{} = {} ({}, {})</title></circle>\n",
                       X(p.first), Y(p.second), colour.at(e.stage), id, x.value_text(e), to_string(e.stage),
                       threads_text(e.first_thread, e.last_thread));
  }
  for (std::int64_t i = 0; i < n; ++i)
    svg += fmt::format("<rect x=\"{:.1f}\" y=\"{:.1f}\" width=\"8\" height=\"8\" fill=\"#444\"><title>x{} = {} (thread {})</title></rect>"
                       "<text x=\"{:.1f}\" y=\"{:.1f}\" text-anchor=\"middle\">x{}</text>\n",
                       X(static_cast<double>(i)) - 4, Y(0) - 4, i, data[static_cast<std::size_t>(i)],
                       x.trace.leaf_thread[static_cast<std::size_t>(i)], X(static_cast<double>(i)), Y(0) + 18, i);
  return svg + "</svg>\n";
}

// The files every explanation may write: the CSV rows and the SVG (roots: a scan's other outputs).
template <class T>
void write_files(const ExplainOptions& o, const std::string& shape, const Explained<T>& x, std::span<const T> xs,
                 const std::vector<int>& roots = {}) {
  if (!o.csv.empty()) write_csv<T>(o, shape, x, xs);
  if (!o.svg.empty()) {
    atomic_write(o.svg, tree_svg<T>(o, shape, x, xs, roots));
    fmt::print("svg: {}\n", o.svg);
  }
}

// A trace with several outputs (a scan's prefixes, the segments' sums): each output's node is a
// root, the last output stands as the result, and the outputs whose bits differ from the model's
// (`real`) are counted.
template <class T, class Output>
std::size_t settle_outputs(Explained<T>& x, const std::vector<Output>& outs, const std::vector<T>& real,
                           std::vector<int>& roots) {
  std::size_t differ = 0;
  for (std::size_t i = 0; i < outs.size(); ++i) {
    roots.push_back(outs[i].id);
    if (to_bits(outs[i].value) != to_bits(real[i])) ++differ;
  }
  if (!outs.empty()) x.result = {outs.back().value, outs.back().id};
  mark_live(x, roots);
  return differ;
}

// The end of a multi-output explanation: the check against the model, the files, the refusal.
template <class T>
void finish_outputs(const ExplainOptions& o, const std::string& model, std::size_t count, const std::string& what,
                    std::size_t differ, const std::string& shape, const Explained<T>& x, std::span<const T> xs,
                    const std::vector<int>& roots) {
  fmt::print("the {} model: {} {} -> {}\n", model, count, what,
             differ == 0 ? "same bits" : fmt::format("{} DIFFERENT BITS (a bug in the trace)", differ));
  write_files<T>(o, shape, x, xs, roots);
  if (differ != 0) throw UserError("the trace disagrees with the " + model + " model");
}

// The scans' and segmented sums' block: --block, or one warp (a tile small enough to read).
int tile_block(const ExplainOptions& o) {
  return o.shape.block_opt && o.shape.block_opt->count() > 0 ? o.shape.block : 32;
}

// What separates the stages of a tiled scan (core/scan/scan_kernel.hpp).
std::string scan_barrier(TraceStage st) {
  switch (st) {
    case TraceStage::thread: return "each thread scans its own items (registers, no barrier)";
    case TraceStage::warp: return "within a warp: shuffles, or the block tree's levels inside one warp";
    case TraceStage::block: return "---- within the tile, across warps: __syncthreads() between levels ----";
    case TraceStage::cross_block: return "---- carry: the tile totals scanned (warp_hs_chained: folded left to right), then added to every later tile ----";
  }
  return "";
}

// A modelled GPU scan (+): every output's additions, traced by running the scan model on traced
// numbers, and checked output by output against the model's bits.
template <class T> void explain_scan(const ExplainOptions& o, scan::GpuScan alg, std::span<const T> xs) {
  scan::ScanShape shape;
  shape.block = tile_block(o);
  shape.items = o.items;
  const std::string why = scan::validate_scan_shape(alg, shape, static_cast<std::int64_t>(xs.size()), sizeof(T));
  if (!why.empty()) throw UserError(why);
  Explained<T> x;
  x.trace.block = shape.block;
  x.trace.items = shape.items;
  x.trace.leaves.assign(xs.begin(), xs.end());
  std::vector<TracedNumber<T>> leaves;
  for (std::size_t i = 0; i < xs.size(); ++i) {
    x.trace.leaf_thread.push_back(static_cast<std::int64_t>(i) / shape.items);
    leaves.push_back(TracedNumber<T>::leaf(xs[i], static_cast<std::int64_t>(i)));
  }
  current_trace<T>() = &x.trace;
  const auto outs = scan::model_scan<TracedPlusOp<T>>(alg, shape, std::span<const TracedNumber<T>>(leaves), true);
  current_trace<T>() = nullptr;
  const auto real = scan::model_scan<scan::PlusOp<T>>(alg, shape, xs, true);
  std::vector<int> roots;
  const std::size_t differ = settle_outputs(x, outs, real, roots);
  fmt::print("{} (+, inclusive) on {} {} elements, block {}, {} items per thread\n", o.kernel, xs.size(),
             FloatTraits<T>::dtype, shape.block, shape.items);
  print_text<T>(o, scan_barrier, true, x, xs);
  std::string ys;
  for (std::size_t i = 0; i < outs.size() && i < 64; ++i) ys += fmt::format("{}y{}={}", i ? ", " : "", i, operand(x.resolve(outs[i].id)));
  if (!ys.empty()) fmt::print("outputs: {}\n", ys);
  finish_outputs<T>(o, "scan", outs.size(), "outputs", differ, fmt::format("block {}, items {}", shape.block, shape.items),
                    x, xs, roots);
}

// The segments explain cuts the input into: the user's sizes (which must add up to n), or a
// pattern that shows every case on a small input (an empty segment, a single element, segments
// longer than a warp when n allows), its last segment cut to what is left.
std::vector<segmented::Offset> explain_offsets(const std::vector<std::int64_t>& sizes, std::int64_t n) {
  std::vector<segmented::Offset> off{0};
  if (!sizes.empty()) {
    for (const auto size : sizes) {
      if (size < 0) throw UserError("--segment-sizes: a size is negative (" + std::to_string(size) + ")");
      // Checked: sizes whose sum wraps int64 (undefined, and in practice back to small numbers)
      // could otherwise pass for n.
      std::int64_t next = 0;
      if (__builtin_add_overflow(off.back(), size, &next))
        throw UserError(
            fmt::format("--segment-sizes add up to more than 2^63-1, but the input has n = {} elements", n));
      off.push_back(next);
    }
    if (off.back() != n)
      throw UserError(fmt::format("--segment-sizes add up to {}, but the input has n = {} elements", off.back(), n));
    return off;
  }
  static constexpr std::int64_t pattern[] = {5, 0, 3, 1, 7, 40, 2, 70};
  for (std::size_t j = 0; off.back() < n; ++j) off.push_back(std::min(n, off.back() + pattern[j % std::size(pattern)]));
  return off;
}

// What separates the stages of a segmented strategy (gpu/segmented/*.cuh).
std::string segmented_barrier(segmented::Strategy st, TraceStage stage) {
  if (st == segmented::Strategy::segmented_scan) {
    if (stage == TraceStage::thread) return "each thread folds its own items with the (head, value) operator (registers)";
    return scan_barrier(stage);
  }
  const bool warp = st == segmented::Strategy::warp_per_segment;
  switch (stage) {
    case TraceStage::thread:
      return warp ? "lane l of the segment's warp chains elements begin + l, begin + l + 32, ... (registers)"
                  : "thread t of the segment's block chains elements begin + t, begin + t + block, ... (registers)";
    case TraceStage::warp: return "warp stage: shuffles within each warp (no barrier; __shfl_down_sync)";
    case TraceStage::block: return "---- __syncthreads(): the block's warp totals meet in shared memory ----";
    case TraceStage::cross_block: return "(a segment never spans blocks)";
  }
  return "";
}

// A modelled GPU segmented strategy: every segment's tree, traced by running its model on traced
// numbers, each segment's sum checked against the model's bits.
template <class T> void explain_segmented(const ExplainOptions& o, segmented::Strategy st, std::span<const T> xs) {
  segmented::SegShape shape;
  shape.block = tile_block(o);
  shape.items_per_thread = st == segmented::Strategy::segmented_scan ? o.items : 1;
  if (const std::string why = segmented::validate_shape(st, shape); !why.empty()) throw UserError(why);
  const auto off = explain_offsets(o.segment_sizes, static_cast<std::int64_t>(xs.size()));
  Explained<T> x;
  const auto sums = segmented::trace_segmented<T>(st, shape, xs, off, x.trace);
  const auto real = segmented::model_segmented<T>(st, shape, xs, off);
  std::vector<int> roots;
  const std::size_t differ = settle_outputs(x, sums, real, roots);
  std::string sizes;
  for (std::size_t j = 0; j + 1 < off.size() && j < 64; ++j) sizes += fmt::format("{}{}", j ? "," : "", off[j + 1] - off[j]);
  const std::string shape_text = segmented::to_string(shape, st);
  fmt::print("{} on {} {} elements in {} segments (sizes {}), shape {}\norder: {}\n", o.kernel, xs.size(),
             FloatTraits<T>::dtype, sums.size(), sizes, shape_text, segmented::info(st).description);
  print_text<T>(o, [st](TraceStage stage) { return segmented_barrier(st, stage); }, true, x, xs);
  std::string out;
  for (std::size_t j = 0; j < sums.size() && j < 64; ++j) {
    const int id = x.resolve(sums[j].id);
    out += fmt::format("{}seg{}={}", j ? ", " : "", j, id == -1 ? "0 (empty)" : operand(id));
  }
  if (!out.empty()) fmt::print("segments: {}\n", out);
  finish_outputs<T>(o, "segmented", sums.size(), "sums", differ, shape_text, x, xs, roots);
}

// The outputs every tree shares: the text, the check against the real result, the CSV and SVG.
template <class T>
void report(const ExplainOptions& o, std::optional<KernelFamily> f, const std::string& shape, const Explained<T>& x,
            std::span<const T> xs, T real, const std::string& real_name, const std::string& qualifier = "") {
  const auto barrier = [f](TraceStage st) -> std::string {
    return f ? barrier_before(*f, st) : "one CPU thread: the additions in the order the algorithm makes them";
  };
  print_text<T>(o, barrier, f.has_value(), x, xs);
  const bool same = to_bits(real) == to_bits(x.result.value);
  fmt::print("{}: {} -> {}{}\n", real_name, hex_bits(real), same ? "same bits" : "DIFFERENT BITS (a bug in the trace)",
             qualifier.empty() ? "" : " " + qualifier);
  write_files<T>(o, shape, x, xs);
  if (!same) throw UserError("the trace disagrees with " + real_name);
}

// The refusal for a name with no tree to draw, listing every name that has one.
UserError not_drawable(const std::string& name) {
  std::string cpu;
  for (const auto& a : cpu_algorithms<float>())
    if (a.traced) cpu += (cpu.empty() ? "" : ", ") + std::string(a.info.name);
  return UserError("explain draws the additive trees: the GPU kernels " + drawable_kernels() +
                   " (gpu_atomic in launch order), the CPU algorithms " + cpu +
                   ", the scans warp_hillis_steele, block_blelloch, warp_hs_chained and the segmented strategies block_per_segment, "
                   "warp_per_segment, segmented_scan; got '" + name + "'");
}

// A tree of more additions than this is no longer read or drawn.
constexpr std::uint64_t kExplainMax = 4096;
UserError too_large(std::uint64_t n) {
  return UserError(fmt::format("explain is for small inputs: n <= {} (got {})", kExplainMax, n));
}

// --csv and --svg name files: a folder there is refused before anything is traced.
void check_output_path(const char* option, const std::string& path, const char* example) {
  std::error_code ec;
  if (!path.empty() && std::filesystem::is_directory(path, ec))
    throw UserError(fmt::format("{} '{}' is a folder; give a file path in it (e.g. {})", option, path,
                                (std::filesystem::path(path) / example).string()));
}

template <class T> void run_explain(const ExplainOptions& o, std::vector<T>& data) {
  if (data.size() > kExplainMax) throw too_large(data.size());
  const std::span<const T> xs(data);
  if (const auto alg = scan::parse_gpu_scan(o.kernel); alg && scan::is_modelled(*alg)) return explain_scan<T>(o, *alg, xs);
  if (const auto st = segmented::find_strategy(o.kernel); st && segmented::info(*st).where == segmented::Where::gpu_modelled)
    return explain_segmented<T>(o, *st, xs);
  const auto k = find_gpu_kernel(o.kernel);
  if (!k) {  // a CPU algorithm: its own code, run on traced numbers
    const CpuAlgorithm<T>* a = find_cpu_algorithm<T>(o.kernel);
    if (!a || !a->traced) throw not_drawable(o.kernel);
    fmt::print("{} on {} {} elements (CPU, one thread)\norder: {}\n", o.kernel, xs.size(), FloatTraits<T>::dtype,
               a->info.order);
    report<T>(o, std::nullopt, "cpu", explain_cpu<T>(*a, xs), xs, a->sum(xs).value, "the algorithm itself");
    return;
  }
  const auto f = family_of(*k);
  if (!f) throw not_drawable(o.kernel);
  const ResolvedShape resolved = resolve_shape(overrides(o.shape), *k, 132, FloatTraits<T>::dtype,
                                               static_cast<std::int64_t>(xs.size()));
  const LaunchShape& shape = resolved.shape;
  fmt::print("{} on {} {} elements, {}\n", o.kernel, xs.size(), FloatTraits<T>::dtype, shape_text(*k, shape));
  for (const auto& field : resolved.ignored) fmt::print("note: {} does not read --{}\n", o.kernel, field);
  fmt::print("order: {}\n", info(*k).order);
  // The model's own value for the same kernel and shape: the trace must reproduce its bits.
  const auto model = model_sum<T>(*k, shape, xs);
  if (!model.has_value) throw UserError(o.kernel + ": " + model.note);
  // gpu_atomic over several blocks: the trace and the model fold the partials in launch order, one
  // arrival order; the model's note is there when other orders can give other bits.
  std::string qualifier;
  if (shape.cross == CrossBlock::atomic && shape.grid > 1)
    qualifier = model.note.empty() ? "(launch order; here every arrival order gives these bits)"
                                   : "(launch order; other arrival orders can differ)";
  report<T>(o, *f, to_string(shape), explain<T>(*f, *k, shape, xs), xs, model.value,
            "model_sum for the same kernel and shape", qualifier);
}

}  // namespace

void register_explain(CLI::App& app) {
  auto o = std::make_shared<ExplainOptions>();
  o->input.n = 16;
  auto* cmd = app.add_subcommand("explain", "Print (and draw) the exact tree of additions a GPU kernel performs "
                                            "for a launch shape, from the order model");
  cmd->add_option("-a,--algorithm", o->kernel,
                  "a kernel with an additive tree: gpu_serial, Harris 1-7, the shuffle kernels (gpu_two_pass, "
                  "gpu_last_block, gpu_atomic in launch order, gpu_kahan, gpu_double_acc, gpu_double_word); a CPU "
                  "tree: serial, pairwise, pairwise_b128, numpy_pairwise; a scan (+): warp_hillis_steele, "
                  "block_blelloch, warp_hs_chained; or a segmented sum: block_per_segment, warp_per_segment, segmented_scan")
      ->capture_default_str();
  add_input_options(*cmd, o->input);
  add_shape_options(*cmd, o->shape);
  add_text_option(*cmd, "--svg", o->svg, "Also draw the tree to this SVG file");
  add_text_option(*cmd, "--csv", o->csv,
                  "Append the tree (one row per input and per addition) to this CSV, e.g. RUN_DIR/order_trace.csv, "
                  "which `sumlab report` draws");
  cmd->add_flag("--values", o->values, "Print every intermediate value (default when n <= 64)");
  cmd->add_option("--items", o->items,
                  "Scans and segmented_scan: elements per thread (with --block, default 32; the tile is their product)")
      ->capture_default_str();
  cmd->add_option("--segment-sizes", o->segment_sizes,
                  "Segmented strategies: the segment sizes, adding up to n (comma list; default the pattern "
                  "5,0,3,1,7,40,2,70,... cut at n)")
      ->delimiter(',');
  cmd->callback([o] {
    check_input_source(o->input);
    check_output_path("--csv", o->csv, "order_trace.csv");
    check_output_path("--svg", o->svg, "tree.svg");
    // A generated input's size is known before any value is made: refused at once, not after
    // generating (or failing to find memory for) values explain would never draw.
    if (o->input.input.empty() && o->input.n > kExplainMax) throw too_large(o->input.n);
    Array a = load_input(o->input);
    if (auto* f = std::get_if<std::vector<float>>(&a)) run_explain<float>(*o, *f);
    else run_explain<double>(*o, std::get<std::vector<double>>(a));
  });
}

}  // namespace sumlab
