// `sumlab explain`: the exact tree of additions a kernel performs for a launch shape, from the
// order model (core/order_model/order_trace.hpp): stage by stage, with the barriers, and for small
// n every intermediate value. Text on stdout; --svg FILE draws the same tree.
#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include <cmath>
#include <cstdio>
#include <fstream>
#include <functional>
#include <map>
#include <memory>

#include "core/float_traits.hpp"
#include "core/generators.hpp"
#include "core/gpu_kernel.hpp"
#include "core/order_model/cross_block.hpp"
#include "core/order_model/model_sum.hpp"
#include "core/order_model/order_trace.hpp"
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
};

std::string operand(int id) {
  if (id == -1) return "0";
  if (id <= -2) return fmt::format("x{}", -id - 2);
  return fmt::format("s{}", id);
}

const char* barrier_before(TraceStage s) {
  switch (s) {
    case TraceStage::thread: return "each thread walks its own elements (registers, no barrier)";
    case TraceStage::warp: return "warp stage: shuffles within each warp (no barrier; __shfl_*_sync)";
    case TraceStage::block: return "---- __syncthreads(): warp totals meet in shared memory ----";
    case TraceStage::cross_block: return "---- grid boundary: block partials meet (second kernel / last block / atomics) ----";
  }
  return "";
}

template <class T> void run_explain(const ExplainOptions& o, std::vector<T>& data) {
  const auto k = find_gpu_kernel(o.kernel);
  if (!k || (*k != GpuKernel::two_pass && *k != GpuKernel::last_block && *k != GpuKernel::atomic))
    throw UserError("explain draws gpu_two_pass, gpu_last_block and gpu_atomic (the shuffle kernels); got '" +
                    o.kernel + "'");
  if (data.size() > 4096) throw UserError("explain is for small inputs: n <= 4096 (got " + std::to_string(data.size()) + ")");
  const std::int64_t n = static_cast<std::int64_t>(data.size());
  const LaunchShape shape = resolve_shape(overrides(o.shape), *k, 132, FloatTraits<T>::dtype, n).shape;

  Trace<T> trace;
  trace.block = shape.block;
  trace.leaves = data;
  for (std::int64_t i = 0; i < n; ++i) trace.leaf_thread.push_back(owner_thread(i, n, shape));
  current_trace<T>() = &trace;
  std::vector<TracedLeaf<T>> leaves;
  for (std::int64_t i = 0; i < n; ++i) leaves.push_back({data[static_cast<std::size_t>(i)], i});
  using Op = TracedSumOp<T>;
  const auto partials = block_partials<Op>(std::span<const TracedLeaf<T>>(leaves), shape);
  TracedValue<T> result;
  if (*k == GpuKernel::atomic) {
    result = Op::identity();
    for (int b : launch_order(shape.grid)) result = Op::combine(result, partials[static_cast<std::size_t>(b)]);
  } else {
    result = reduce_partials<Op>(std::span<const TracedValue<T>>(partials), shape.block, shape.warp, shape.block_stage);
  }
  current_trace<T>() = nullptr;

  // The model's own value for the same kernel and shape: the trace must reproduce its bits.
  const auto model = model_sum<T>(*k, shape, std::span<const T>(data));
  const bool same = model.has_value && to_bits(model.value) == to_bits(result.value);

  // Idle additions (x + 0) are pass-throughs: follow them to the real operand.
  auto resolve = [&](int id) {
    while (id >= 0 && trace.events[static_cast<std::size_t>(id)].idle) {
      const auto& e = trace.events[static_cast<std::size_t>(id)];
      id = e.lhs == -1 ? e.rhs : e.lhs;
    }
    return id;
  };
  std::vector<char> live(trace.events.size(), 0);
  std::vector<int> stack{resolve(result.id)};
  while (!stack.empty()) {
    const int id = stack.back();
    stack.pop_back();
    if (id < 0 || live[static_cast<std::size_t>(id)]) continue;
    live[static_cast<std::size_t>(id)] = 1;
    const auto& e = trace.events[static_cast<std::size_t>(id)];
    stack.push_back(resolve(e.lhs));
    stack.push_back(resolve(e.rhs));
  }

  const bool values = o.values || n <= 64;
  fmt::print("{} on {} {} elements, shape {}\n", o.kernel, n, FloatTraits<T>::dtype, to_string(shape));
  fmt::print("order: {}\n", info(*k).order);
  std::map<TraceStage, int> counts;
  TraceStage last = TraceStage::thread;
  bool first = true;
  for (std::size_t id = 0; id < trace.events.size(); ++id) {
    if (!live[id]) continue;
    const auto& e = trace.events[id];
    if (first || e.stage != last) fmt::print("\n{}\n", barrier_before(e.stage));
    first = false;
    last = e.stage;
    ++counts[e.stage];
    const std::string who = e.first_thread == e.last_thread ? fmt::format("thread {}", e.first_thread)
                                                            : fmt::format("threads {}-{}", e.first_thread, e.last_thread);
    std::string line = fmt::format("  {:<11} s{} = {} + {}   [{}]", to_string(e.stage), id, operand(resolve(e.lhs)),
                                   operand(resolve(e.rhs)), who);
    if (values) line += fmt::format("   = {}", static_cast<T>(e.value));
    fmt::print("{}\n", line);
  }
  if (first && n > 0) fmt::print("\n(no additions: a single element)\n");
  fmt::print("\nresult {} ({}); additions: thread {}, warp {}, block {}, cross-block {}\n", result.value,
             hex_bits(result.value), counts[TraceStage::thread], counts[TraceStage::warp], counts[TraceStage::block],
             counts[TraceStage::cross_block]);
  fmt::print("model_sum for the same kernel and shape: {} -> {}\n", hex_bits(model.value),
             same ? "same bits" : "DIFFERENT BITS (a bug in the trace)");
  if (values && n <= 64) {
    std::string xs;
    for (std::int64_t i = 0; i < n; ++i) xs += fmt::format("{}x{}={}", i ? ", " : "", i, data[static_cast<std::size_t>(i)]);
    fmt::print("inputs: {}\n", xs);
  }

  if (!o.csv.empty()) {
    std::vector<std::vector<std::string>> rows;
    const std::string sh = to_string(shape);
    const std::string dt(FloatTraits<T>::dtype);
    for (std::int64_t i = 0; i < n; ++i)
      rows.push_back({o.kernel, dt, std::to_string(n), sh, fmt::format("x{}", i), "", "",
                      fmt::format("{}", data[static_cast<std::size_t>(i)]), "input",
                      std::to_string(trace.leaf_thread[static_cast<std::size_t>(i)]),
                      std::to_string(trace.leaf_thread[static_cast<std::size_t>(i)])});
    for (std::size_t id = 0; id < trace.events.size(); ++id) {
      if (!live[id]) continue;
      const auto& e = trace.events[id];
      rows.push_back({o.kernel, dt, std::to_string(n), sh, fmt::format("s{}", id), operand(resolve(e.lhs)),
                      operand(resolve(e.rhs)), fmt::format("{}", static_cast<T>(e.value)), to_string(e.stage),
                      std::to_string(e.first_thread), std::to_string(e.last_thread)});
    }
    append_csv(o.csv, {"kernel", "dtype", "n", "shape", "node", "lhs", "rhs", "value", "stage", "first_thread",
                       "last_thread"},
               rows);
    fmt::print("csv: {} ({} rows appended)\n", o.csv, rows.size());
  }

  if (!o.svg.empty()) {
    // Leaves evenly spaced on the bottom row in index order; a node sits above the mean of its
    // operands, one row per addition depth; colours by stage.
    std::map<int, std::pair<double, int>> pos;  // id -> (x, depth)
    std::function<std::pair<double, int>(int)> place = [&](int id) -> std::pair<double, int> {
      if (id <= -2) return {static_cast<double>(-id - 2), 0};
      if (id == -1) return {0.0, 0};
      if (auto it = pos.find(id); it != pos.end()) return it->second;
      const auto& e = trace.events[static_cast<std::size_t>(id)];
      const auto a = place(resolve(e.lhs)), b = place(resolve(e.rhs));
      const std::pair<double, int> p{(a.first + b.first) / 2, std::max(a.second, b.second) + 1};
      pos[id] = p;
      return p;
    };
    place(resolve(result.id));
    int depth = 0;
    for (const auto& [id, p] : pos) depth = std::max(depth, p.second);
    const double dx = 36, dy = 48, w = dx * static_cast<double>(std::max<std::int64_t>(n, 1)) + 80,
                 h = dy * (depth + 1) + 90;
    auto X = [&](double x) { return 40 + x * dx; };
    auto Y = [&](int d) { return h - 50 - d * dy; };
    const std::map<TraceStage, const char*> colour{{TraceStage::thread, "#1f77b4"}, {TraceStage::warp, "#2ca02c"},
                                                   {TraceStage::block, "#ff7f0e"}, {TraceStage::cross_block, "#d62728"}};
    std::string svg = fmt::format(
        "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"{:.0f}\" height=\"{:.0f}\" font-family=\"monospace\" "
        "font-size=\"10\">\n<text x=\"10\" y=\"16\" font-size=\"12\">{} {} n={} shape {} -> {}</text>\n",
        w, h, o.kernel, FloatTraits<T>::dtype, n, to_string(shape), fmt::format("{}", result.value));
    std::string legend;
    double lx = 10;
    for (const auto& [st, c] : colour) {
      legend += fmt::format("<circle cx=\"{:.0f}\" cy=\"34\" r=\"5\" fill=\"{}\"/><text x=\"{:.0f}\" y=\"38\">{}</text>\n",
                            lx + 6, c, lx + 14, to_string(st));
      lx += 110;
    }
    svg += legend;
    for (const auto& [id, p] : pos) {
      const auto& e = trace.events[static_cast<std::size_t>(id)];
      for (int child : {resolve(e.lhs), resolve(e.rhs)}) {
        const auto c = child <= -2 ? std::pair<double, int>{static_cast<double>(-child - 2), 0} : pos[child];
        svg += fmt::format("<line x1=\"{:.1f}\" y1=\"{:.1f}\" x2=\"{:.1f}\" y2=\"{:.1f}\" stroke=\"#999\"/>\n",
                           X(p.first), Y(p.second), X(c.first), Y(c.second));
      }
    }
    for (const auto& [id, p] : pos) {
      const auto& e = trace.events[static_cast<std::size_t>(id)];
      svg += fmt::format("<circle cx=\"{:.1f}\" cy=\"{:.1f}\" r=\"6\" fill=\"{}\"><title>s{} = {} ({}, {})</title></circle>\n",
                         X(p.first), Y(p.second), colour.at(e.stage), id, static_cast<T>(e.value), to_string(e.stage),
                         e.first_thread == e.last_thread ? fmt::format("thread {}", e.first_thread)
                                                         : fmt::format("threads {}-{}", e.first_thread, e.last_thread));
    }
    for (std::int64_t i = 0; i < n; ++i)
      svg += fmt::format("<rect x=\"{:.1f}\" y=\"{:.1f}\" width=\"8\" height=\"8\" fill=\"#444\"><title>x{} = {} (thread {})</title></rect>"
                         "<text x=\"{:.1f}\" y=\"{:.1f}\" text-anchor=\"middle\">x{}</text>\n",
                         X(static_cast<double>(i)) - 4, Y(0) - 4, i, data[static_cast<std::size_t>(i)],
                         trace.leaf_thread[static_cast<std::size_t>(i)], X(static_cast<double>(i)), Y(0) + 18, i);
    svg += "</svg>\n";
    const std::string tmp = o.svg + ".tmp";
    {
      std::ofstream out(tmp);
      if (!out) throw UserError("cannot write '" + o.svg + "'");
      out << svg;
    }
    if (std::rename(tmp.c_str(), o.svg.c_str()) != 0) throw UserError("cannot write '" + o.svg + "'");
    fmt::print("svg: {}\n", o.svg);
  }
  if (!same) throw UserError("the trace disagrees with the order model");
}

}  // namespace

void register_explain(CLI::App& app) {
  auto o = std::make_shared<ExplainOptions>();
  o->input.n = 16;
  auto* cmd = app.add_subcommand("explain", "Print (and draw) the exact tree of additions a GPU kernel performs "
                                            "for a launch shape, from the order model");
  cmd->add_option("-a,--algorithm", o->kernel, "gpu_two_pass, gpu_last_block or gpu_atomic (launch-order arrival)")
      ->capture_default_str();
  add_input_options(*cmd, o->input);
  add_shape_options(*cmd, o->shape);
  cmd->add_option("--svg", o->svg, "Also draw the tree to this SVG file");
  cmd->add_option("--csv", o->csv,
                  "Append the tree (one row per input and per addition) to this CSV, e.g. RUN_DIR/order_trace.csv, "
                  "which `sumlab report` draws");
  cmd->add_flag("--values", o->values, "Print every intermediate value (default when n <= 64)");
  cmd->callback([o] {
    Array a = load_input(o->input);
    if (auto* f = std::get_if<std::vector<float>>(&a)) run_explain<float>(*o, *f);
    else run_explain<double>(*o, std::get<std::vector<double>>(a));
  });
}

}  // namespace sumlab
