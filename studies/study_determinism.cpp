// `sumlab study determinism`: which sums give the same bits run to run, which give the same bits
// for every launch shape, and how far apart the different answers are. Measured, then compared
// with each kernel's declared class (core/gpu_kernel.hpp, core/cpu_peers.hpp).
//
// One cell = one input (dtype, dist, seed, n). In a cell, every selected GPU kernel runs every
// shape of the sweep it accepts (grids x blocks x vectors x mappings, canonicalized and checked by
// validate_shape, deduplicated), R times each; every CPU peer runs R times per thread count.
//   cuda backend   every run is a launch on the GPU (the input stays on the device); the CPU order
//                  model predicts each deterministic (kernel, shape) and the row says whether the
//                  GPU agreed; for gpu_atomic the model's sampled arrival orders are written beside
//                  the measured values (source model_sampled).
//   model backend  a deterministic kernel's order is evaluated once per shape: one evaluation,
//                  written as one run (source model), so its class is the model's (shapes compared;
//                  run to run it is the model's fixed order, not a measurement). gpu_atomic's R
//                  runs are R arrival orders drawn by the model (source model_sampled). Library
//                  peers (CUB, Thrust) have no model and are left out.
//   CPU peers      measured on either backend (source measured).
// A shape runs R times, or fewer (at least 2) once --max-shape-seconds of it are spent: the row's
// `runs` says how many, determinism_inputs.csv's runs_per_shape the fewest of any shape (what ran,
// not the R asked for). Per (kernel, input) the measurements are classified by
// core/determinism_classify.hpp; per kernel the least deterministic input decides.
//
// Files (columns in data/README.md): determinism_runs.csv (one row per distinct value of each
// shape), determinism_inputs.csv (one row per kernel and input: the cell's done-marker for
// --resume), determinism_classes.csv (one row per kernel, rewritten at the end), summary.json,
// provenance.json. --save-golden writes every deterministic GPU result's bits; --check-golden
// re-runs those cases alone and fails on any change.
#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <limits>
#include <map>
#include <memory>
#include <set>
#include <span>
#include <string>
#include <thread>
#include <vector>

#include "core/cpu_peers.hpp"
#include "core/determinism_classify.hpp"
#include "core/exact_sum.hpp"
#include "core/float_traits.hpp"
#include "core/generators.hpp"
#include "core/gpu_kernel.hpp"
#include "core/launch_shape.hpp"
#include "core/metrics.hpp"
#include "core/order_model/cross_block.hpp"
#include "core/order_model/model_sum.hpp"
#include "core/order_model/reduce_ops.hpp"
#include "reference/mpfr_sum.hpp"
#include "studies/backend.hpp"
#include "studies/commands.hpp"
#include "studies/parallel_for.hpp"
#include "studies/size_text.hpp"
#include "studies/input_options.hpp"
#include "studies/external.hpp"
#include "studies/study_data.hpp"
#include "studies/plugin.hpp"
#include "studies/study_driver.hpp"
#include "studies/run_folder.hpp"
#include "studies/runner.hpp"

#if defined(SUMLAB_WITH_CUDA)
#include "gpu/gpu_sum.hpp"
#endif

namespace sumlab {
namespace {

namespace fs = std::filesystem;

const std::vector<std::string> kRunsColumns = {
    "study", "backend", "kind", "kernel", "dtype", "dist", "seed", "n", "shape", "grid", "block", "vector",
    "mapping", "threads", "source", "runs", "count", "value", "hex", "ulps_from_rounded", "abs_error",
    "rel_error", "reference_hex", "model_hex", "model_agrees", "ms", "note"};
const std::vector<std::string> kInputsColumns = {
    "study", "backend", "kind", "kernel", "dtype", "dist", "seed", "n", "declared", "measured", "agreement",
    "source", "shapes", "runs_per_shape", "runs", "distinct_within_shape_max", "shapes_with_variation",
    "distinct_across_shapes", "nan_patterns", "min_ulps", "max_ulps", "spread_ulps", "max_abs_ulps",
    "max_rel_error", "reference_hex", "model_mismatches"};
const std::vector<std::string> kClassesColumns = {
    "study", "backend", "kind", "kernel", "declared", "measured", "agreement", "inputs", "inputs_at_measured",
    "witness", "shapes_max", "runs_per_shape_min", "distinct_within_shape_max", "distinct_across_shapes_max",
    "nan_patterns_max", "spread_ulps_max", "max_abs_ulps", "model_mismatches", "source", "note"};
const std::vector<std::string> kCellKey = {"dtype", "dist", "n", "seed"};
// The measured class and the agreement of a record some of whose calls failed.
constexpr std::string_view kFailed = "failed";

struct DeterminismOptions {
  RunOptions run;
  bool quick = false, summarize_only = false;
  std::string backend;
  std::vector<std::string> kernels;
  std::vector<std::string> dists, dtypes, sizes;
  std::string runs_text;
  std::vector<std::string> grids, blocks, vectors, mappings, threads;
  std::uint64_t seed = 1;
  int jobs = 0;
  int atomic_samples = 100;
  double max_shape_seconds = 2.0;
  std::string serial_max = "2^24";
  std::string save_golden, check_golden;
  std::vector<std::string> externals;  // the user's subjects, by name (studies/external.hpp)
  std::vector<std::string> plugins;    // LIB:SYMBOL (studies/plugin.hpp): measured without --external
  std::string input, input_format, flatten;  // the user's data instead of the generators
};

// --- parsing the command line's lists -----------------------------------------------------------


long long parse_integer(const std::string& option, const std::string& text, const std::string& what) {
  try {
    std::size_t pos = 0;
    const long long v = std::stoll(text, &pos);
    if (pos != text.size()) throw std::invalid_argument("trailing");
    return v;
  } catch (const std::logic_error&) {
    throw UserError(option + ": '" + text + "' is not " + what);
  }
}

int parse_runs(const std::string& text, bool quick) {
  if (text.empty()) return quick ? 5 : 20;
  const long long r = parse_integer("--runs", text, "a whole number of runs");
  if (r < 2 || r > 100000)
    throw UserError("--runs must be 2..100000 (got " + text + "): one run cannot show run-to-run variation");
  return static_cast<int>(r);
}

// Grid sizes: integers, or kSM = k times the multiprocessor count ("SM", "4SM").
std::vector<int> parse_grids(const std::vector<std::string>& items, int sm) {
  std::vector<int> out;
  for (const auto& t : items) {
    long long g = 0;
    if (t.size() >= 2 && t.substr(t.size() - 2) == "SM") {
      const std::string k = t.substr(0, t.size() - 2);
      g = (k.empty() ? 1 : parse_integer("--grids", k, "a multiple like 4SM")) * sm;
    } else {
      g = parse_integer("--grids", t, "a grid size (an integer, or kSM for k times the SM count)");
    }
    if (g < 1 || g > max_grid)
      throw UserError(fmt::format("--grids: {} gives {} blocks; a grid must be 1..{}", t, g, max_grid));
    out.push_back(static_cast<int>(g));
  }
  if (out.empty()) throw UserError("--grids is empty");
  return out;
}

std::vector<int> parse_blocks(const std::vector<std::string>& items) {
  std::vector<int> out;
  for (const auto& t : items) {
    const long long b = parse_integer("--blocks", t, "a block size");
    if (b < 32 || b > max_block || b % 32 != 0)
      throw UserError(fmt::format("--blocks: {} is not a multiple of 32 in 32..{} (every shaped kernel runs "
                                  "whole warps)", t, max_block));
    out.push_back(static_cast<int>(b));
  }
  if (out.empty()) throw UserError("--blocks is empty");
  return out;
}

std::vector<int> parse_vectors(const std::vector<std::string>& items) {
  std::vector<int> out;
  for (const auto& t : items) {
    const long long v = parse_integer("--vectors", t, "a vector width");
    if (v != 1 && v != 2 && v != 4) throw UserError("--vectors: " + t + " is not an elements-per-load of 1, 2 or 4");
    out.push_back(static_cast<int>(v));
  }
  if (out.empty()) throw UserError("--vectors is empty");
  return out;
}

std::vector<Mapping> parse_mappings(const std::vector<std::string>& items) {
  std::vector<Mapping> out;
  for (const auto& t : items) {
    const auto m = parse_mapping(t);
    if (!m) throw UserError("--mappings: '" + t + "' is not one of " + std::string(mapping_names()));
    out.push_back(*m);
  }
  if (out.empty()) throw UserError("--mappings is empty");
  return out;
}

std::vector<int> parse_threads(const std::vector<std::string>& items) {
  std::vector<int> out;
  for (const auto& t : items) {
    const long long v = parse_integer("--threads", t, "a thread count");
    if (v < 1 || v > 1024) throw UserError("--threads: " + t + " is not a thread count in 1..1024");
    out.push_back(static_cast<int>(v));
  }
  if (out.empty()) throw UserError("--threads is empty");
  std::sort(out.begin(), out.end());
  out.erase(std::unique(out.begin(), out.end()), out.end());
  return out;
}

template <class T> std::vector<T> dedupe(std::vector<T> v) {
  std::vector<T> out;
  for (const auto& x : v)
    if (std::find(out.begin(), out.end(), x) == out.end()) out.push_back(x);
  return out;
}

// --- the plan ----------------------------------------------------------------------------------

struct Plan {
  BackendKind backend = BackendKind::model;
  std::string device;
  int sm = 132;
  std::vector<GpuKernel> kernels;
  std::vector<std::string> peers;
  std::vector<std::shared_ptr<ExternalSum>> externals;  // the user's subjects (studies/external.hpp)
  std::vector<LoadedPlugin> plugins;                      // where the plugins among them came from
  std::optional<StudyData> data;  // --input: one cell over the user's data
  std::vector<std::string> skipped;  // "gpu_cub: ..." (not measurable here)
  std::vector<std::int64_t> sizes;
  std::vector<std::string> dists, dtypes;
  int runs = 20;
  std::vector<LaunchShape> raw_shapes;  // the product of the lists, before each kernel's pruning
  std::vector<int> grids, blocks, vectors;
  std::vector<Mapping> mappings;
  std::vector<int> threads;
  int jobs = 1;
  int atomic_samples = 100;
  double max_shape_seconds = 2.0;
  std::int64_t serial_max = std::int64_t(1) << 24;
  std::uint64_t seed = 1;
};

void select_kernels(const DeterminismOptions& o, Plan& p) {
  std::vector<std::string> names = o.kernels.empty() ? std::vector<std::string>{"all"} : o.kernels;
  auto add_gpu = [&](GpuKernel k) {
    if (std::find(p.kernels.begin(), p.kernels.end(), k) != p.kernels.end()) return;
    if (!info(k).modelled && p.backend == BackendKind::model) {
      p.skipped.push_back(std::string(info(k).name) + ": library peer with no model; measured on --backend cuda only");
      return;
    }
    p.kernels.push_back(k);
  };
  auto add_peer = [&](std::string_view n) {
    if (std::find(p.peers.begin(), p.peers.end(), n) == p.peers.end()) p.peers.emplace_back(n);
  };
  for (const auto& name : names) {
    if (name == "none") continue;  // only the user's subjects (--external)
    if (name == "all" || name == "gpu")
      for (const auto& k : gpu_kernels())
        if (!k.diagnostic_only) add_gpu(k.kernel);
    if (name == "all" || name == "cpu")
      for (const auto& peer : cpu_peers<float>()) add_peer(peer.info.name);
    if (name == "all" || name == "gpu" || name == "cpu") continue;
    if (const auto k = find_gpu_kernel(name)) {
      if (info(*k).diagnostic_only)
        throw UserError(name + " is a diagnostic with no meaningful value (see `sumlab verify --racy`)");
      add_gpu(*k);
    } else if (find_cpu_peer<float>(name)) {
      add_peer(name);
    } else {
      throw UserError("--kernels: unknown '" + name + "' (valid: all, gpu, cpu, none, " + gpu_kernel_names() + ", " +
                      cpu_peer_names() + ")");
    }
  }
  p.plugins = load_plugins(o.plugins);
  p.externals = externals(with_plugins(o.externals, p.plugins));
  if (p.kernels.empty() && p.peers.empty() && p.externals.empty())
    throw UserError("--kernels selects nothing measurable on this backend");
}

Plan make_plan(const DeterminismOptions& o, const Backend& b) {
  Plan p;
  p.backend = b.kind();
  p.device = b.description();
  p.sm = b.sm_count();
  p.runs = parse_runs(o.runs_text, o.quick);
  const bool cuda = p.backend == BackendKind::cuda;
  select_kernels(o, p);

  std::vector<std::string> sizes = o.sizes;
  if (sizes.empty())
    sizes = cuda ? (o.quick ? std::vector<std::string>{"2^20"} : std::vector<std::string>{"2^20", "2^24", "2^26"})
                 : (o.quick ? std::vector<std::string>{"4099"} : std::vector<std::string>{"2^16+3", "2^20"});
  for (const auto& s : sizes) p.sizes.push_back(parse_size(s, "--sizes"));
  p.sizes = dedupe(p.sizes);
  p.dists = dedupe(o.dists.empty() ? (o.quick ? std::vector<std::string>{"uniform", "cancellation"}
                                              : std::vector<std::string>{"uniform", "normal", "cancellation"})
                                   : o.dists);
  for (const auto& d : p.dists) {
    try {
      (void)parse_distribution(d);
    } catch (const std::invalid_argument& e) {
      throw UserError(std::string("--dists: ") + e.what());
    }
  }
  p.dtypes = dedupe(o.dtypes.empty() ? (o.quick ? std::vector<std::string>{"float32"}
                                                : std::vector<std::string>{"float32", "float64"})
                                     : o.dtypes);
  for (const auto& t : p.dtypes)
    if (t != "float32" && t != "float64") throw UserError("--dtypes: '" + t + "' is not float32 or float64");

  const auto grid_text = o.grids.empty() ? (o.quick ? std::vector<std::string>{"1", "SM", "8SM"}
                                                    : std::vector<std::string>{"1", "SM", "2SM", "4SM", "8SM"})
                                         : o.grids;
  p.grids = dedupe(parse_grids(grid_text, p.sm));
  p.blocks = dedupe(parse_blocks(o.blocks.empty() ? (o.quick ? std::vector<std::string>{"32", "256"}
                                                             : std::vector<std::string>{"32", "128", "256", "1024"})
                                                  : o.blocks));
  p.vectors = dedupe(parse_vectors(o.vectors.empty() ? std::vector<std::string>{"1", "4"} : o.vectors));
  p.mappings = dedupe(parse_mappings(o.mappings.empty() ? std::vector<std::string>{"grid_stride", "contiguous"}
                                                        : o.mappings));
  for (int g : p.grids)
    for (int bl : p.blocks)
      for (int v : p.vectors)
        for (Mapping m : p.mappings) {
          LaunchShape s;
          s.grid = g;
          s.block = bl;
          s.vector = v;
          s.mapping = m;
          p.raw_shapes.push_back(s);
        }
  const int hw = static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  p.threads = parse_threads(o.threads.empty()
                                ? std::vector<std::string>{"1", "2", "4", std::to_string(hw)}
                                : o.threads);
  p.jobs = o.jobs > 0 ? o.jobs : hw;
  if (o.atomic_samples < 2 || o.atomic_samples > 1000000) throw UserError("--atomic-samples must be 2..1000000");
  p.atomic_samples = o.atomic_samples;
  if (!(o.max_shape_seconds > 0)) throw UserError("--max-shape-seconds must be positive");
  p.max_shape_seconds = o.max_shape_seconds;
  p.serial_max = parse_size(o.serial_max);
  p.seed = o.seed;
  if (!o.input.empty()) {  // one cell: the user's data in its own dtype
    for (const auto& [given, option] : {std::pair{!o.dists.empty(), "--dists"}, std::pair{!o.sizes.empty(), "--sizes"}})
      if (given) throw UserError(fmt::format("{} has no effect with --input (the data is the one input); drop it", option));
    p.data = open_study_data(o.input, o.input_format, o.flatten);
    p.dtypes = p.data->dtypes(o.dtypes);
    p.dists = {"data"};
    p.sizes = {static_cast<std::int64_t>(p.data->size())};
  }
  return p;
}

// The shapes kernel k runs on n elements of dtype: the sweep canonicalized for k (fields it does
// not read reset), checked by validate_shape, deduplicated in sweep order.
std::vector<LaunchShape> shapes_for(GpuKernel k, const Plan& p, std::string_view dtype, std::int64_t n) {
  std::vector<LaunchShape> out;
  std::set<std::string> seen;
  if (k == GpuKernel::serial && n > p.serial_max) return out;
  for (const auto& raw : p.raw_shapes) {
    const LaunchShape s = canonicalize(k, raw, p.sm);
    if (!validate_shape(k, s, dtype, n).empty()) continue;
    if (seen.insert(to_string(s)).second) out.push_back(s);
  }
  return out;
}

bool shape_free(GpuKernel k) { return info(k).shape_fields == 0; }

// --- one cell ----------------------------------------------------------------------------------

template <class T> std::string fmt_value(T v) { return fmt::format("{}", v); }

template <class T> struct ShapeRecord {
  std::map<std::string, int> failures;  // external subjects: message -> failed calls
  std::string label;
  LaunchShape shape;
  int threads = 0;  // CPU peers: the thread count; 0 for GPU kernels
  std::string source;
  std::vector<ValueCount<T>> values;
  double ms = std::numeric_limits<double>::quiet_NaN();
  bool has_model = false;  // cuda: the model's prediction for this deterministic (kernel, shape)
  T model{};
  std::vector<ValueCount<T>> model_samples;  // cuda, gpu_atomic: the model's sampled arrival orders
  int model_sample_count = 0;
};

template <class T> struct KernelRecord {
  std::string name;
  std::string kind;  // gpu | cpu_peer
  Determinism declared = Determinism::run_to_run;
  std::vector<ShapeRecord<T>> shapes;
};

// Runs `once` until R runs are done, or (after at least 2) the shape's time budget is spent.
// Returns the values and the run times (ms).
template <class T, class F>
std::pair<std::vector<T>, std::vector<double>> repeat(int R, double budget_s, F once) {
  std::vector<T> values;
  std::vector<double> ms;
  const auto t0 = std::chrono::steady_clock::now();
  double fastest = std::numeric_limits<double>::infinity();
  for (int r = 0; r < R; ++r) {
    const auto a = std::chrono::steady_clock::now();
    const auto [v, t] = once();
    const double wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - a).count();
    values.push_back(v);
    ms.push_back(t);
    fastest = std::min(fastest, wall);
    const double spent = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    if (r + 1 >= 2 && spent + fastest > budget_s) break;
  }
  return {values, ms};
}

std::uint64_t mix_seed(std::uint64_t seed, std::uint64_t a, std::uint64_t b) {
  order_model::SplitMix64 g{seed ^ (a * 0x9e3779b97f4a7c15ull) ^ (b * 0xc2b2ae3d27d4eb4full)};
  return g.next();
}

template <class T> struct CellOutput {
  std::vector<std::vector<std::string>> runs_rows, inputs_rows;
  long model_mismatches = 0;
  bool exact_matches_mpfr = true;
};

// One cell's work: the input where the kernels read it, its host view, and the records the stages
// below fill in turn (GPU kernels, their model, CPU peers, the user's subjects).
template <class T> struct CellWork {
  const Plan& p;
  std::string dist;
  std::int64_t n = 0;
  bool cuda = false;
  std::unique_ptr<KernelInput<T>> input;
  std::span<const T> x;
  std::vector<KernelRecord<T>> records;
};

// A (kernel, shape) whose value the order model gives: the GPU's prediction on cuda, the value
// itself on the model backend; gpu_atomic's arrival orders are sampled.
struct ModelJob {
  std::size_t record, shape;
  bool atomic;
  int samples;
};

template <class T> std::unique_ptr<KernelInput<T>> cell_input(Backend& backend, const Plan& p, const std::string& dist,
                                                              std::int64_t n) {
  if (p.data) return backend.load(p.data->values<T>());
  DistributionSpec spec;
  spec.kind = parse_distribution(dist);
  return backend.generate<T>(spec, p.seed, n);
}

// Every configuration of one runner run R times (or fewer, once its time budget is spent): a GPU
// kernel's launch shapes on cuda, a CPU peer's thread counts, the user's configurations. A failed
// call is counted with its message and the study goes on; a configuration that gives no value (a
// kernel the backend does not run) is left out.
template <class T> KernelRecord<T> measure(const CellWork<T>& w, Runner<T>& r, std::string kind) {
  KernelRecord<T> rec{r.name(), std::move(kind), r.declared(), {}};
  for (std::size_t c = 0; c < r.configs(); ++c) {
    ShapeRecord<T> sr;
    sr.label = r.config_label(c);
    sr.source = "measured";
    sr.threads = r.threads(c);
    if (const auto s = r.shape(c)) sr.shape = *s;
    std::vector<T> values;
    std::vector<double> ms;
    bool no_value = false;
    repeat<int>(w.p.runs, w.p.max_shape_seconds, [&] {
      const Outcome<T> o = r.run(c, *w.input);
      if (o.has_value) {
        values.push_back(o.value);
        ms.push_back(o.ms);
      } else if (o.failed) {
        ++sr.failures[o.note];
      } else {
        no_value = true;
      }
      return std::pair<int, double>(0, o.ms);
    });
    if (no_value) continue;
    sr.values = tally<T>(std::span<const T>(values));
    sr.ms = median(ms);
    rec.shapes.push_back(std::move(sr));
  }
  return rec;
}

// GPU kernels: every shape, R runs on cuda (the model's jobs queued for the deterministic ones), or
// only the model's jobs on the model backend (an order is evaluated once: every run would repeat
// its bits).
template <class T> std::vector<ModelJob> measure_gpu_kernels(CellWork<T>& w) {
  const Plan& p = w.p;
  std::vector<ModelJob> jobs;
  for (GpuKernel k : p.kernels) {
    const auto shapes = shapes_for(k, p, std::string(FloatTraits<T>::dtype), w.n);
    if (shapes.empty()) continue;  // e.g. gpu_serial above --serial-max
    const bool atomic = k == GpuKernel::atomic;
    if (w.cuda) {
      KernelRecord<T> rec = measure(w, *kernel_runner<T>(k, BackendKind::cuda, shapes), "gpu");
      if (info(k).modelled)
        for (std::size_t s = 0; s < rec.shapes.size(); ++s) jobs.push_back({w.records.size(), s, atomic, p.atomic_samples});
      w.records.push_back(std::move(rec));
      continue;
    }
    KernelRecord<T> rec{std::string(info(k).name), "gpu", info(k).determinism, {}};
    for (const LaunchShape& shape : shapes) {
      ShapeRecord<T> sr;
      sr.shape = shape;
      sr.label = to_string(shape);
      sr.source = atomic ? "model_sampled" : "model";
      jobs.push_back({w.records.size(), rec.shapes.size(), atomic, p.runs});
      rec.shapes.push_back(std::move(sr));
    }
    w.records.push_back(std::move(rec));
  }
  return jobs;
}

// The job that computes each job's value: kernels and shapes with one order (order_key) share one
// evaluation.
template <class T> std::vector<std::size_t> model_aliases(const CellWork<T>& w, const std::vector<ModelJob>& jobs) {
  std::map<std::string, std::size_t> first_of;  // order key -> job index that computes it
  std::vector<std::size_t> alias(jobs.size());
  for (std::size_t j = 0; j < jobs.size(); ++j) {
    const auto& rec = w.records[jobs[j].record];
    const std::string key = order_key(*find_gpu_kernel(rec.name), rec.shapes[jobs[j].shape].shape, w.p.sm);
    alias[j] = first_of.emplace(key, j).first->second;
  }
  return alias;
}

// The model: every deterministic (kernel, shape) once; gpu_atomic's partials once per shape, then
// `samples` arrival orders drawn uniformly (seeded by the input and the shape). Independent jobs
// on p.jobs CPU threads.
template <class T> void run_model_jobs(Backend& backend, CellWork<T>& w, const std::vector<ModelJob>& jobs) {
  const Plan& p = w.p;
  const std::vector<std::size_t> alias = model_aliases(w, jobs);
  std::vector<std::size_t> unique;
  for (std::size_t j = 0; j < jobs.size(); ++j)
    if (alias[j] == j) unique.push_back(j);
  std::vector<T> values(jobs.size());
  std::vector<unsigned char> has(jobs.size(), 0);  // not vector<bool>: the jobs write it in parallel
  std::vector<std::vector<ValueCount<T>>> samples(jobs.size());
  parallel_for(unique.size(), p.jobs, [&](std::size_t u) {
    const std::size_t j = unique[u];
    const auto& job = jobs[j];
    const auto& rec = w.records[job.record];
    const GpuKernel k = *find_gpu_kernel(rec.name);
    const LaunchShape& s = rec.shapes[job.shape].shape;
    if (job.atomic) {
      const std::vector<T> partials = model_block_partials<T>(s, w.x);
      const auto drawn = order_model::sample_atomic_results<T>(std::span<const T>(partials), job.samples,
                                                               mix_seed(p.seed, static_cast<std::uint64_t>(w.n), j));
      for (const auto& d : drawn) samples[j].push_back({d.value, d.count});
      has[j] = true;
    } else if (w.cuda) {  // the prediction for the GPU's bits
      const ModelResult<T> m = model_sum<T>(k, s, w.x);
      has[j] = m.has_value && m.error.empty();
      values[j] = m.value;
    } else {  // the model backend's value (ModelBackend::sum is model_sum: stateless, thread-safe)
      const KernelOutcome<T> m = backend.sum(k, s, w.x);
      has[j] = m.has_value;
      values[j] = m.value;
    }
  });
  for (std::size_t j = 0; j < jobs.size(); ++j) {
    const std::size_t a = alias[j];
    ShapeRecord<T>& sr = w.records[jobs[j].record].shapes[jobs[j].shape];
    if (!has[a]) continue;
    if (jobs[j].atomic && w.cuda) {
      sr.model_samples = samples[a];
      sr.model_sample_count = jobs[j].samples;
    } else if (jobs[j].atomic) {
      sr.values = samples[a];
    } else if (w.cuda) {
      sr.has_model = true;
      sr.model = values[a];
    } else {
      sr.values = {{values[a], 1}};  // one evaluation: not R runs
    }
  }
  // Model-backend shapes with no value (none expected: library peers are not planned there).
  for (auto& rec : w.records) std::erase_if(rec.shapes, [](const ShapeRecord<T>& s) { return s.values.empty(); });
}

// CPU peers (their "shapes" the thread counts) and the user's subjects (their configurations; on
// cuda a device entry reads the device-resident input in place: studies/external.hpp).
template <class T> void measure_cpu_and_externals(CellWork<T>& w) {
  for (const auto& name : w.p.peers)
    w.records.push_back(measure(w, *peer_runner<T>(*find_cpu_peer<T>(name), w.p.threads), "cpu_peer"));
  const bool finite_input = std::all_of(w.x.begin(), w.x.end(), [](T v) { return std::isfinite(v); });
  for (const auto& subject : w.p.externals)
    w.records.push_back(measure(w, *external_runner<T>(subject, finite_input), "external"));
}

// Turns a cell's records into determinism_runs.csv rows (one per distinct value, failure and model
// sample of each shape) and determinism_inputs.csv rows (one class per record). Residuals
// exact - value are exact in the superaccumulator and rounded once to T.
template <class T> class RowWriter {
 public:
  RowWriter(const CellWork<T>& w, T reference, const Superaccumulator<T>& exact)
      : w_(w), reference_(reference), exact_(exact), ref_hex_(hex_bits(reference)),
        lead_{"determinism", std::string(to_string(w.p.backend)), "", "", std::string(FloatTraits<T>::dtype), w.dist,
              std::to_string(w.p.seed), std::to_string(w.n)} {}

  // A record whose calls failed (a user's subject) gets a row too, measured "failed": the class of
  // the calls that returned would claim more than was measured, and none returning is no class.
  // Its shapes and runs count the calls that returned; its figures stay empty.
  void add(const KernelRecord<T>& rec, CellOutput<T>& out) {
    std::vector<ShapeOutcome<T>> outcomes;
    long mismatches = 0;
    int failed_calls = 0;
    max_rel_ = std::numeric_limits<double>::quiet_NaN();
    for (const auto& sr : rec.shapes) {
      if (!sr.values.empty()) outcomes.push_back({sr.label, sr.values});
      mismatches += shape_rows(rec, sr, out) ? 1 : 0;
      for (const auto& f : sr.failures) failed_calls += f.second;
    }
    out.model_mismatches += mismatches;
    const auto c = classify<T>(std::span<const ShapeOutcome<T>>(outcomes), reference_);
    if (c || failed_calls > 0) out.inputs_rows.push_back(class_row(rec, c.value_or(Classification{}), mismatches, failed_calls > 0));
  }

 private:
  std::pair<double, double> error_of(T v) {  // (abs, rel), memoised by bits
    const auto b = to_bits(v);
    if (auto it = errors_.find(b); it != errors_.end()) return it->second;
    std::pair<double, double> e{std::numeric_limits<double>::quiet_NaN(), std::numeric_limits<double>::quiet_NaN()};
    if (std::isfinite(v) && std::isfinite(reference_)) {
      Superaccumulator<T> r = exact_;
      r.add(-v);
      const double abs_err = std::fabs(static_cast<double>(r.round()));
      const double ref = std::fabs(static_cast<double>(reference_));
      e = {abs_err, ref > 0 ? abs_err / ref : (abs_err == 0 ? 0.0 : std::numeric_limits<double>::infinity())};
    }
    errors_.emplace(b, e);
    return e;
  }
  std::string ulps_text(T v) const {
    return std::isnan(v) || std::isnan(reference_) ? std::string("nan")
                                                    : std::to_string(signed_ulp_distance(v, reference_));
  }
  std::vector<std::string> row_start(const KernelRecord<T>& rec, const ShapeRecord<T>& sr) const {
    std::vector<std::string> row = lead_;
    row[2] = rec.kind;
    row[3] = rec.name;
    row.push_back(sr.label);
    if (rec.kind == "gpu")
      for (std::string f : {std::to_string(sr.shape.grid), std::to_string(sr.shape.block),
                            std::to_string(sr.shape.vector), std::string(to_string(sr.shape.mapping)), std::string()})
        row.push_back(std::move(f));
    else
      for (std::string f : {std::string(), std::string(), std::string(), std::string(), std::to_string(sr.threads)})
        row.push_back(std::move(f));
    return row;
  }
  void value_row(const KernelRecord<T>& rec, const ShapeRecord<T>& sr, const ValueCount<T>& v,
                 const std::string& source, int total, const std::string& model_hex, const std::string& agrees,
                 const std::string& ms, CellOutput<T>& out) {
    const auto [abs_err, rel] = error_of(v.value);
    if (!std::isnan(rel)) max_rel_ = std::isnan(max_rel_) ? rel : std::max(max_rel_, rel);  // NaN: no error figure
    std::vector<std::string> row = row_start(rec, sr);
    for (std::string f : {source, std::to_string(total), std::to_string(v.count), fmt_value(v.value),
                          hex_bits(v.value), ulps_text(v.value), fmt::format("{}", abs_err), fmt::format("{}", rel),
                          ref_hex_, model_hex, agrees, ms, std::string()})
      row.push_back(std::move(f));
    out.runs_rows.push_back(std::move(row));
  }
  // The shape's rows; true when a measured value disagrees with the model's prediction.
  bool shape_rows(const KernelRecord<T>& rec, const ShapeRecord<T>& sr, CellOutput<T>& out) {
    int runs = 0;
    for (const auto& v : sr.values) runs += v.count;
    for (const auto& [message, count] : sr.failures) {
      std::vector<std::string> row = row_start(rec, sr);
      for (std::string f : {std::string("failed"), std::to_string(runs + count), std::to_string(count),
                            std::string("nan"), std::string(), std::string(), std::string(), std::string(), ref_hex_,
                            std::string(), std::string(), std::string(), message})
        row.push_back(std::move(f));
      out.runs_rows.push_back(std::move(row));
    }
    std::set<typename FloatTraits<T>::Bits> sampled;
    for (const auto& m : sr.model_samples) sampled.insert(to_bits(m.value));
    const std::string ms = std::isnan(sr.ms) ? "" : fmt::format("{:.4g}", sr.ms);
    bool mismatch = false;
    for (const auto& v : sr.values) {
      std::string model_hex, agrees;
      if (sr.has_model) {
        model_hex = hex_bits(sr.model);
        agrees = same_bits(v.value, sr.model) ? "1" : "0";
        mismatch = mismatch || agrees == "0";
      } else if (!sr.model_samples.empty()) {
        agrees = sampled.count(to_bits(v.value)) ? "1" : "0";
      }
      value_row(rec, sr, v, sr.source, runs, model_hex, agrees, ms, out);
    }
    for (const auto& m : sr.model_samples) value_row(rec, sr, m, "model_sampled", sr.model_sample_count, "", "", "", out);
    return mismatch;
  }
  std::vector<std::string> class_row(const KernelRecord<T>& rec, const Classification& c, long mismatches,
                                     bool failed) const {
    const bool has_model_col = w_.cuda && rec.kind == "gpu" && info(*find_gpu_kernel(rec.name)).modelled &&
                               rec.declared != Determinism::not_deterministic;
    auto ulps = [&](auto v) { return failed ? std::string() : c.has_ulps ? std::to_string(v) : std::string("nan"); };
    auto figure = [&](auto v) { return failed ? std::string() : std::to_string(v); };
    std::vector<std::string> row = lead_;
    row[2] = rec.kind;
    row[3] = rec.name;
    for (std::string f :
         {std::string(to_string(rec.declared)), failed ? std::string(kFailed) : std::string(to_string(c.measured)),
          failed ? std::string(kFailed) : std::string(to_string(compare(rec.declared, c.measured, c.shapes))),
          rec.shapes.empty() ? std::string() : rec.shapes.front().source, std::to_string(c.shapes),
          std::to_string(c.runs_min), std::to_string(c.runs), figure(c.distinct_within_shape_max),
          figure(c.shapes_with_variation), figure(c.distinct_across_shapes), figure(c.nan_patterns),
          ulps(c.min_ulps), ulps(c.max_ulps), ulps(c.spread_ulps), ulps(c.max_abs_ulps),
          failed ? std::string() : fmt::format("{}", max_rel_), ref_hex_,
          has_model_col ? std::to_string(mismatches) : std::string()})
      row.push_back(std::move(f));
    return row;
  }

  const CellWork<T>& w_;
  T reference_;
  const Superaccumulator<T>& exact_;
  std::string ref_hex_;
  std::vector<std::string> lead_;  // study, backend, kind, kernel, dtype, dist, seed, n
  std::map<typename FloatTraits<T>::Bits, std::pair<double, double>> errors_;
  double max_rel_ = 0;  // of the record being added; NaN when no pattern has a relative error
};

template <class T>
CellOutput<T> run_cell(Backend& backend, const Plan& p, const std::string& dist, std::int64_t n) {
  CellWork<T> w{p, dist, n, p.backend == BackendKind::cuda, cell_input<T>(backend, p, dist, n), {}, {}};
  w.x = w.input->host();
  // The reference (MPFR, correctly rounded) and the exact sum for residuals (core's
  // superaccumulator, cross-checked against MPFR here).
  const T reference = reference::correctly_rounded_sum<T>(w.x);
  Superaccumulator<T> exact;
  exact.add(w.x);
  CellOutput<T> out;
  out.exact_matches_mpfr = same_bits(exact.round(), reference);

  const std::vector<ModelJob> jobs = measure_gpu_kernels(w);
  run_model_jobs(backend, w, jobs);
  measure_cpu_and_externals(w);
  RowWriter<T> rows(w, reference, exact);
  for (const auto& rec : w.records) rows.add(rec, out);
  return out;
}

// --- the end of a run: classes, summary, golden ------------------------------------------------------

std::string kernel_note(const std::string& kind, const std::string& name, BackendKind backend) {
  if (kind == "cpu_peer") {
    const CpuPeer<float>* p = find_cpu_peer<float>(name);
    std::string note = cpu_peer_backend(name);
    if (p && !p->takes_threads) note += "; takes no thread count: one shape (threads=1)";
    return note;
  }
  const auto k = find_gpu_kernel(name);
  if (!k) return "";
  if (*k == GpuKernel::atomic)
    return backend == BackendKind::model
               ? "modelled: runs are the model's sampled arrival orders (uniformly random block permutations)"
               : "runs measured; model_sampled rows: the model's arrival orders beside them";
  std::string note;
  if (shape_free(*k))  // only a one-thread kernel has one order whatever launches it
    note = info(*k).family == KernelFamily::serial
               ? "takes no launch shape: one thread, one fixed order, the same for every launch by construction"
               : "the library chooses its own launch (the lab passes no shape): one configuration, shape "
                 "invariance not measured";
  if (backend == BackendKind::model)
    note += std::string(note.empty() ? "" : "; ") +
            "modelled: the order model evaluated once per shape (runs = evaluations), not run on a GPU";
  else if (!info(*k).modelled)
    note += std::string(note.empty() ? "" : "; ") + "library peer: measured, not modelled";
  return note;
}

struct ClassRow {
  std::string kind, kernel;
  Determinism declared;
  std::vector<Classification> per_input;  // the inputs where every call returned
  std::vector<std::string> inputs;
  std::vector<std::string> failed_inputs;  // where some call failed
  long model_mismatches = -1;  // -1: not applicable
  std::string source;
};

std::vector<ClassRow> class_rows(const CsvTable& t) {
  std::vector<ClassRow> rows;
  auto col = [&](const std::vector<std::string>& r, const char* c) {
    const int i = t.column(c);
    return i >= 0 ? r[static_cast<std::size_t>(i)] : std::string();
  };
  // An ulp figure: "nan" (every pattern NaN, or a NaN reference) or empty is no figure, not 0.
  auto has_figure = [](const std::string& s) { return !s.empty() && s != "nan"; };
  for (const auto& r : t.rows) {
    const std::string kernel = col(r, "kernel");
    auto it = std::find_if(rows.begin(), rows.end(), [&](const ClassRow& c) { return c.kernel == kernel; });
    if (it == rows.end()) {
      ClassRow c;
      c.kind = col(r, "kind");
      c.kernel = kernel;
      c.declared = parse_determinism(col(r, "declared")).value_or(Determinism::run_to_run);
      c.source = col(r, "source");
      rows.push_back(c);
      it = rows.end() - 1;
    }
    const std::string input = fmt::format("{} {} n={}", col(r, "dtype"), col(r, "dist"), size_text(std::stoll(col(r, "n"))));
    if (col(r, "measured") == kFailed) {
      it->failed_inputs.push_back(input);
      continue;
    }
    Classification c;
    c.measured = parse_determinism(col(r, "measured")).value_or(Determinism::not_deterministic);
    c.shapes = std::stoi(col(r, "shapes"));
    c.runs_min = std::stoi(col(r, "runs_per_shape"));
    c.distinct_within_shape_max = std::stoi(col(r, "distinct_within_shape_max"));
    c.distinct_across_shapes = std::stoi(col(r, "distinct_across_shapes"));
    c.nan_patterns = std::stoi(col(r, "nan_patterns"));
    c.has_ulps = has_figure(col(r, "spread_ulps")) && has_figure(col(r, "max_abs_ulps"));
    if (c.has_ulps) {
      c.spread_ulps = std::stoull(col(r, "spread_ulps"));
      c.max_abs_ulps = std::stoull(col(r, "max_abs_ulps"));
    }
    it->per_input.push_back(c);
    it->inputs.push_back(input);
    const std::string mm = col(r, "model_mismatches");
    if (!mm.empty()) it->model_mismatches = std::max<long>(0, it->model_mismatches) + std::stol(mm);
    if (it->source != col(r, "source")) it->source = "mixed";
  }
  return rows;
}

// Golden entries: every GPU result of a kernel declared deterministic whose shape gave one value.
nlohmann::ordered_json golden_cases(const CsvTable& runs) {
  auto col = [&](const std::vector<std::string>& r, const char* c) {
    return r[static_cast<std::size_t>(runs.column(c))];
  };
  std::map<std::string, std::vector<const std::vector<std::string>*>> by_case;
  for (const auto& r : runs.rows) {
    if (col(r, "kind") != "gpu" || col(r, "source") == "model_sampled") continue;
    const auto k = find_gpu_kernel(col(r, "kernel"));
    if (!k || info(*k).determinism == Determinism::not_deterministic) continue;
    const std::string key = col(r, "kernel") + "|" + col(r, "dtype") + "|" + col(r, "dist") + "|" + col(r, "seed") +
                            "|" + col(r, "n") + "|" + col(r, "shape");
    by_case[key].push_back(&r);
  }
  nlohmann::ordered_json cases = nlohmann::ordered_json::array();
  for (const auto& [key, rows] : by_case) {
    if (rows.size() != 1) continue;  // more than one value in one shape: nothing golden about it
    const auto& r = *rows.front();
    nlohmann::ordered_json c;
    c["kernel"] = col(r, "kernel");
    c["shape"] = col(r, "shape");
    c["dist"] = col(r, "dist");
    c["seed"] = std::stoull(col(r, "seed"));
    c["n"] = std::stoll(col(r, "n"));
    c["dtype"] = col(r, "dtype");
    c["hex"] = col(r, "hex");
    cases.push_back(c);
  }
  return cases;
}

void write_golden(const fs::path& path, const CsvTable& runs, const Plan& p) {
  nlohmann::ordered_json g;
  g["format"] = "sumlab-golden/1";
  g["what"] = "bits of every deterministic GPU sum of a `sumlab study determinism` run; "
              "`sumlab study determinism --check-golden FILE` re-runs each case and reports any change";
  g["backend"] = std::string(to_string(p.backend));
  g["device"] = p.device;
  const auto prov = invocation(this_command_line(), std::string(to_string(p.backend)));
  for (const char* k : {"git_commit", "git_dirty", "date_utc", "driver", "cuda_runtime"})
    if (prov.contains(k)) g[k] = prov[k];
  const nlohmann::ordered_json cases = golden_cases(runs);
  // One case per line: small, and a drift shows as a one-line diff.
  std::string text = "{\n";
  for (const auto& [k, v] : g.items()) text += "  " + nlohmann::ordered_json(k).dump() + ": " + v.dump() + ",\n";
  text += "  \"cases\": [\n";
  for (std::size_t i = 0; i < cases.size(); ++i) text += "    " + cases[i].dump() + (i + 1 < cases.size() ? ",\n" : "\n");
  text += "  ]\n}\n";
  atomic_write(path, text);
  fmt::print("golden: {} deterministic cases -> {}\n", cases.size(), path.string());
}

// The classes (determinism_classes.csv, a whole-file phase), the summary and the terminal table.
// The classes over every input of the run: determinism_classes.csv's rows, summary.json's
// entries and the terminal table's lines.
struct Classes {
  Rows rows;
  nlohmann::ordered_json summary = nlohmann::ordered_json::array();
  std::string table;
  long model_mismatches = 0;
  // Rows per agreement (failed: no class), and the rows whose class is the order model's.
  long matches = 0, stronger = 0, one_shape = 0, violated = 0, failed = 0, modelled = 0;
};

// A class from the order model (model backend): one evaluation per shape, or sampled orders.
bool modelled_source(const std::string& source) { return source.rfind("model", 0) == 0; }

Classes classes_of(const std::vector<ClassRow>& rows, const Plan& p) {
  Classes c;
  for (const auto& r : rows) {
    const ClassSummary s = summarize(std::span<const Classification>(r.per_input));
    const bool failed = !r.failed_inputs.empty();
    const Agreement a = compare(r.declared, s.measured, s.shapes_max);
    const std::string measured(failed ? kFailed : to_string(s.measured));
    const std::string agreement(failed ? kFailed : to_string(a));
    const std::string witness = failed ? r.failed_inputs.front()
                                : s.witness >= 0 ? r.inputs[static_cast<std::size_t>(s.witness)] : "";
    if (r.model_mismatches > 0) c.model_mismatches += r.model_mismatches;
    if (failed) ++c.failed;
    else if (a == Agreement::violated) ++c.violated;
    else if (a == Agreement::one_shape) ++c.one_shape;
    else if (a == Agreement::stronger) ++c.stronger;
    else ++c.matches;
    c.modelled += !failed && modelled_source(r.source);
    std::string note = kernel_note(r.kind, r.kernel, p.backend);
    if (failed)
      note = fmt::format("calls failed on {} of {} inputs (determinism_runs.csv: the rows of source failed have the "
                         "messages); no class is claimed", r.failed_inputs.size(), r.failed_inputs.size() + r.per_input.size());
    // A failed row claims nothing: its figures stay empty. An input whose every pattern is NaN has
    // no ulps: "nan", not 0.
    auto figure = [&](auto v) { return failed ? std::string() : std::to_string(v); };
    auto ulps = [&](auto v) { return failed ? std::string() : s.has_ulps ? std::to_string(v) : std::string("nan"); };
    c.rows.push_back({"determinism", std::string(to_string(p.backend)), r.kind, r.kernel,
                      std::string(to_string(r.declared)), measured, agreement,
                      std::to_string(s.inputs + static_cast<int>(r.failed_inputs.size())),
                      std::to_string(failed ? static_cast<int>(r.failed_inputs.size()) : s.inputs_at_measured), witness,
                      figure(s.shapes_max), figure(s.runs_min), figure(s.distinct_within_shape_max),
                      figure(s.distinct_across_shapes_max), figure(s.nan_patterns_max), ulps(s.spread_ulps_max),
                      ulps(s.max_abs_ulps), r.model_mismatches < 0 ? "" : std::to_string(r.model_mismatches),
                      r.source, note});
    c.summary.push_back({{"kernel", r.kernel}, {"kind", r.kind}, {"declared", to_string(r.declared)},
                         {"measured", measured}, {"agreement", agreement}, {"witness", witness}});
    c.table += fmt::format("  {:<18} {:<8} {:<17} {:<17} {:<9} {:>6} {:>5} {:>6} {:>7} {:>8}  {}\n", r.kernel, r.kind,
                           to_string(r.declared), measured + (!failed && modelled_source(r.source) ? "*" : ""),
                           agreement, figure(s.shapes_max), figure(s.runs_min), figure(s.distinct_within_shape_max),
                           figure(s.distinct_across_shapes_max), ulps(s.spread_ulps_max), witness);
  }
  return c;
}

// The expectations: fixed-point and exact in the last class, the two-pass tree in the
// middle one, atomics in the first.
nlohmann::ordered_json expectations_of(const std::vector<ClassRow>& rows) {
  nlohmann::ordered_json expectations = nlohmann::ordered_json::array();
  const std::pair<const char*, Determinism> expected[] = {{"gpu_fixed_point", Determinism::shape_invariant},
                                                          {"gpu_exact", Determinism::shape_invariant},
                                                          {"gpu_two_pass", Determinism::run_to_run},
                                                          {"gpu_atomic", Determinism::not_deterministic}};
  for (const auto& [name, want] : expected) {
    auto it = std::find_if(rows.begin(), rows.end(), [&](const ClassRow& r) { return r.kernel == name; });
    if (it == rows.end()) continue;
    const Determinism got = summarize(std::span<const Classification>(it->per_input)).measured;
    expectations.push_back({{"kernel", name}, {"expected", to_string(want)}, {"measured", to_string(got)},
                            {"ok", got == want}});
  }
  return expectations;
}

nlohmann::ordered_json run_summary(const Plan& p, const DeterminismOptions& o, double seconds, const Classes& c,
                                   const nlohmann::ordered_json& expectations, long exact_mpfr_mismatches) {
  nlohmann::ordered_json summary;
  summary["backend"] = to_string(p.backend);
  summary["device"] = p.device;
  summary["csv"] = {"determinism_runs.csv", "determinism_inputs.csv", "determinism_classes.csv"};
  summary["seconds"] = seconds;
  summary["runs_per_shape"] = p.runs;
  summary["max_shape_seconds"] = p.max_shape_seconds;
  nlohmann::ordered_json sweep;
  sweep["grids"] = p.grids;
  sweep["blocks"] = p.blocks;
  sweep["vectors"] = p.vectors;
  std::vector<std::string> maps;
  for (Mapping m : p.mappings) maps.emplace_back(to_string(m));
  sweep["mappings"] = maps;
  sweep["sm_count"] = p.sm;
  sweep["cpu_threads"] = p.threads;
  sweep["atomic_model_samples"] = p.backend == BackendKind::cuda ? p.atomic_samples : p.runs;
  summary["sweep"] = sweep;
  std::vector<std::string> sizes;
  for (auto n : p.sizes) sizes.push_back(size_text(n));
  summary["sizes"] = sizes;
  summary["dists"] = p.dists;
  summary["dtypes"] = p.dtypes;
  summary["seed"] = p.seed;
  summary["not_measured"] = p.skipped;
  summary["model_mismatches"] = p.backend == BackendKind::cuda ? nlohmann::ordered_json(c.model_mismatches)
                                                               : nlohmann::ordered_json();
  summary["exact_vs_mpfr_mismatches"] = exact_mpfr_mismatches;
  summary["classes"] = c.summary;
  summary["expectations"] = expectations;
  if (!o.save_golden.empty()) summary["golden"] = o.save_golden;
  return summary;
}

// What the run shows of the declared classes, counted by what was measured: a declaration holds
// where the measured class is at least as deterministic, one_shape leaves invariance unmeasured,
// and a failed subject has no class.
std::string declared_tally(const Classes& c) {
  return fmt::format("declared classes: {} hold ({} as declared, {} measured stronger), {} one_shape (one shape run: "
                     "invariance not measured), {} failed (no class), {} violated",
                     c.matches + c.stronger, c.matches, c.stronger, c.one_shape, c.failed, c.violated);
}

void finish_run(Study& study, const Plan& p, const DeterminismOptions& o, double seconds, long exact_mpfr_mismatches) {
  if (p.data) p.data->check_unchanged();
  RunFolder& folder = study.folder();
  const std::vector<ClassRow> rows = class_rows(read_csv(folder.file("determinism_inputs.csv")));
  const Classes c = classes_of(rows, p);
  const nlohmann::ordered_json expectations = expectations_of(rows);
  folder.write_csv("determinism_classes.csv", kClassesColumns, c.rows);

  // The terminal table: what the columns mean first.
  fmt::print("  shapes: most shapes of one input; runs: fewest runs of one shape; within: most distinct results over "
             "the runs of one shape; across: over the shapes; spread: ulps between the extremes; *: modelled (the "
             "order model, not a GPU)\n");
  fmt::print("  {:<18} {:<8} {:<17} {:<17} {:<9} {:>6} {:>5} {:>6} {:>7} {:>8}  {}\n", "kernel", "kind", "declared",
             "measured", "agreement", "shapes", "runs", "within", "across", "spread",
             "witness (least deterministic input)");
  fmt::print("{}", c.table);
  std::vector<std::string> headline{fmt::format("{} kernels and peers classified on {} ({}); {:.1f} s", rows.size(),
                                                to_string(p.backend), p.device, seconds)};
  for (const auto& e : expectations)
    if (!e["ok"].get<bool>())
      headline.push_back(fmt::format("EXPECTED {} to be {}, measured {}", e["kernel"].get<std::string>(),
                                     e["expected"].get<std::string>(), e["measured"].get<std::string>()));
  headline.push_back(declared_tally(c));
  if (c.violated) headline.push_back(fmt::format("ALARM: {} declared classes violated by the measurements", c.violated));
  if (c.modelled)
    headline.push_back(fmt::format("{} of the classes are modelled, not measured: the order model evaluated once per "
                                   "shape (gpu_atomic: sampled arrival orders); run-to-run behaviour on a GPU is not "
                                   "measured by this backend", c.modelled));
  if (c.failed)
    headline.push_back(fmt::format("FAILED: {} subject(s) had calls fail (determinism_runs.csv has the messages); "
                                   "no class is claimed for them", c.failed));
  if (p.backend == BackendKind::cuda)
    headline.push_back(fmt::format("GPU vs model: {} shape(s) disagreed", c.model_mismatches));
  if (exact_mpfr_mismatches) headline.push_back(fmt::format("core exact sum != MPFR on {} input(s)", exact_mpfr_mismatches));
  for (const auto& sk : p.skipped) headline.push_back("not measured: " + sk);
  study.finish(run_summary(p, o, seconds, c, expectations, exact_mpfr_mismatches), headline);

  if (!o.save_golden.empty()) write_golden(o.save_golden, read_csv(folder.file("determinism_runs.csv")), p);
}

// The plan as provenance.json records it (and --resume compares).
nlohmann::ordered_json plan_json(const Plan& p) {
  nlohmann::ordered_json j;
  j["backend"] = to_string(p.backend);
  j["device"] = p.device;
  std::vector<std::string> kernels;
  for (GpuKernel k : p.kernels) kernels.emplace_back(info(k).name);
  j["kernels"] = kernels;
  j["peers"] = p.peers;
  j["sizes"] = p.sizes;
  j["dists"] = p.dists;
  j["dtypes"] = p.dtypes;
  j["seed"] = p.seed;
  j["runs"] = p.runs;
  j["grids"] = p.grids;
  j["blocks"] = p.blocks;
  j["vectors"] = p.vectors;
  std::vector<std::string> maps;
  for (Mapping m : p.mappings) maps.emplace_back(to_string(m));
  j["mappings"] = maps;
  j["threads"] = p.threads;
  j["atomic_samples"] = p.atomic_samples;
  j["max_shape_seconds"] = p.max_shape_seconds;
  j["serial_max"] = p.serial_max;
  if (p.data) j["input"] = {{"source", p.data->source}, {"fnv1a64", p.data->hash}};
  if (!p.externals.empty()) {
    nlohmann::ordered_json e = nlohmann::ordered_json::array();
    for (const auto& x : p.externals) e.push_back({{"name", x->name()}, {"configs", x->configs()}});
    j["externals"] = e;
  }
  if (!p.plugins.empty()) j["plugins"] = plugin_plan(p.plugins);
  return j;
}

void run_determinism(const DeterminismOptions& o) {
  if (o.summarize_only && !o.run.resume) throw UserError("--summarize-only needs --resume (a folder to summarize)");
  const auto t0 = std::chrono::steady_clock::now();
  std::unique_ptr<Backend> backend = make_backend(o.backend);
  const Plan p = make_plan(o, *backend);
  std::uint64_t largest = 0;
  for (auto n : p.sizes) largest = std::max(largest, static_cast<std::uint64_t>(n));
  check_fits_in_memory(largest, 8 * 2, fmt::format("n = {}", largest));

  Study study("determinism", o.run, plan_json(p), std::string(to_string(p.backend)),
              {{"determinism_runs.csv", kRunsColumns}, {"determinism_inputs.csv", kInputsColumns}},
              {"determinism_classes.csv"});
  long exact_mismatches = 0;
  std::vector<Cell> cells;
  for (const auto& dt : p.dtypes)
    for (auto n : p.sizes)
      for (const auto& dist : p.dists) {
        if (o.summarize_only) continue;
        cells.push_back({fmt::format("{}|{}|{}|{}", dt, dist, n, p.seed), fmt::format("{} {} n={}", dt, dist, size_text(n)),
                         [&, dt, dist, n]() -> CellRows {
                           auto one = [&](auto c) -> CellRows {
                             exact_mismatches += c.exact_matches_mpfr ? 0 : 1;
                             return {{"determinism_runs.csv", c.runs_rows}, {"determinism_inputs.csv", c.inputs_rows}};
                           };
                           return dt == "float32" ? one(run_cell<float>(*backend, p, dist, n))
                                                  : one(run_cell<double>(*backend, p, dist, n));
                         }});
      }
  study.run(cells);
  const double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  finish_run(study, p, o, secs, exact_mismatches);
}

// --- --check-golden ----------------------------------------------------------------------------

template <class T>
void check_golden_input(Backend& backend, const std::vector<nlohmann::json>& cases, long& drift, long& skipped,
                        long& checked) {
  const auto& first = cases.front();
  DistributionSpec spec;
  try {
    spec.kind = parse_distribution(first["dist"].get<std::string>());
  } catch (const std::invalid_argument& e) {
    throw UserError(std::string("golden file: ") + e.what());
  }
  const auto seed = first["seed"].get<std::uint64_t>();
  const auto n = first["n"].get<std::int64_t>();
  const std::unique_ptr<KernelInput<T>> input = backend.generate<T>(spec, seed, n);
  for (const auto& c : cases) {
    const std::string name = c["kernel"].get<std::string>(), shape_text = c["shape"].get<std::string>();
    const auto k = find_gpu_kernel(name);
    if (!k) throw UserError("golden file: unknown kernel '" + name + "'");
    const auto shape = parse_launch_shape(shape_text);
    if (!shape) throw UserError("golden file: '" + shape_text + "' is not a launch shape");
    const KernelOutcome<T> o = input->run(*k, *shape);
    const std::string what = fmt::format("{} {} {} seed={} n={} [{}]", name, FloatTraits<T>::dtype,
                                         c["dist"].get<std::string>(), seed, size_text(n), shape_text);
    if (!o.has_value) {
      ++skipped;
      continue;
    }
    ++checked;
    const std::string want = c["hex"].get<std::string>(), got = hex_bits(o.value);
    if (want == got) continue;
    ++drift;
    std::string detail;
    using Bits = typename FloatTraits<T>::Bits;
    try {
      const T golden = from_bits<T>(static_cast<Bits>(std::stoull(want, nullptr, 16)));
      detail = fmt::format(" ({} -> {}, {:+} ulps)", fmt_value(golden), fmt_value(o.value),
                           signed_ulp_distance(o.value, golden));
    } catch (const std::logic_error&) {
      detail = " (golden hex unreadable)";
    }
    fmt::print("DRIFT {}: golden {} now {}{}\n", what, want, got, detail);
  }
}

void run_check_golden(const DeterminismOptions& o) {
  std::ifstream in(o.check_golden);
  if (!in) throw UserError("cannot read the golden file '" + o.check_golden + "'");
  const nlohmann::json g = nlohmann::json::parse(in, nullptr, false);
  if (g.is_discarded() || !g.is_object() || g.value("format", "") != "sumlab-golden/1" || !g.contains("cases") ||
      !g["cases"].is_array())
    throw UserError("'" + o.check_golden + "' is not a sumlab golden file (format sumlab-golden/1)");
  std::unique_ptr<Backend> backend = make_backend(o.backend);
  long drift = 0, skipped = 0, checked = 0;
  try {
    // One input per (dtype, dist, seed, n), every case on it.
    std::map<std::string, std::vector<nlohmann::json>> groups;
    for (const auto& c : g["cases"]) {
      for (const char* k : {"kernel", "shape", "dist", "seed", "n", "dtype", "hex"})
        if (!c.contains(k)) throw UserError(std::string("golden file: a case lacks '") + k + "'");
      const std::string dtype = c["dtype"].get<std::string>();
      if (dtype != "float32" && dtype != "float64") throw UserError("golden file: dtype '" + dtype + "'");
      groups[fmt::format("{}|{}|{}|{}", dtype, c["dist"].get<std::string>(), c["seed"].get<std::uint64_t>(),
                         c["n"].get<std::int64_t>())]
          .push_back(c);
    }
    fmt::print("golden check: {} cases from {} (saved on {}: {}) on backend {} ({})\n", g["cases"].size(),
               o.check_golden, g.value("backend", "?"), g.value("device", "?"), to_string(backend->kind()),
               backend->description());
    for (const auto& [key, cases] : groups) {
      if (key.rfind("float32", 0) == 0) check_golden_input<float>(*backend, cases, drift, skipped, checked);
      else check_golden_input<double>(*backend, cases, drift, skipped, checked);
    }
  } catch (const nlohmann::json::exception& e) {
    throw UserError("golden file '" + o.check_golden + "': " + e.what());
  }
  fmt::print("golden check: {} cases checked, {} drifted, {} without a value on this backend\n", checked, drift,
             skipped);
  if (drift > 0)
    throw CheckFailed(fmt::format("golden check: {} of {} cases drifted from {}", drift, checked, o.check_golden));
  // A check of nothing is a failure, not a pass: an empty file, or a backend with no value for any case.
  if (checked == 0)
    throw CheckFailed(fmt::format("golden check: no case of {} could be checked ({} in the file, {} without a value on "
                                  "this backend)",
                                  o.check_golden, g["cases"].size(), skipped));
}

}  // namespace

void register_study_determinism(CLI::App& study) {
  auto o = std::make_shared<DeterminismOptions>();
  auto* cmd = study.add_subcommand(
      "determinism",
      "Which sums give the same bits run to run and for every launch shape: every GPU kernel over a sweep of "
      "shapes, R runs each, and CPU peers over thread counts; measured classes compared with declared ones");
  add_run_options(*cmd, o->run);
  cmd->add_flag("--quick", o->quick,
                "A small version: sizes 4099 (model) or 2^20 (cuda), uniform and cancellation, float32, grids "
                "1,SM,8SM, blocks 32,256, 5 runs");
  cmd->add_flag("--summarize-only", o->summarize_only,
                "With --resume: run nothing; rewrite the classes, summary.json (and --save-golden) from the folder");
  cmd->add_option("--backend", o->backend, "cuda or model (default: cuda when a GPU is present, else model)");
  cmd->add_option("--kernels", o->kernels,
                  "GPU kernels and CPU peers (comma list; all, gpu, cpu, none, or names: " + gpu_kernel_names() + ", " +
                      cpu_peer_names() + ")")
      ->delimiter(',');
  cmd->add_option("--dists", o->dists, "Distributions (default uniform,normal,cancellation)")->delimiter(',');
  cmd->add_option("--dtypes", o->dtypes, "float32,float64 (default both)")->delimiter(',');
  cmd->add_option("--sizes", o->sizes,
                  "Sizes: numbers, 2^k or 2^k+c (default 2^16+3,2^20 on the model, 2^20,2^24,2^26 on cuda)")
      ->delimiter(',');
  cmd->add_option("--runs", o->runs_text, "Runs per shape, 2.. (default 20, quick 5)");
  cmd->add_option("--grids", o->grids, "Grid sizes: integers or kSM (default 1,SM,2SM,4SM,8SM)")->delimiter(',');
  cmd->add_option("--blocks", o->blocks, "Block sizes, multiples of 32 up to 1024 (default 32,128,256,1024)")
      ->delimiter(',');
  cmd->add_option("--vectors", o->vectors, "Elements per load: 1, 2, 4 (default 1,4)")->delimiter(',');
  cmd->add_option("--mappings", o->mappings, "grid_stride,contiguous (default both)")->delimiter(',');
  cmd->add_option("--threads", o->threads, "CPU peers' thread counts (default 1,2,4,all cores)")->delimiter(',');
  add_seed_option(*cmd, "--seed", o->seed, "Generator seed of every input");
  cmd->add_option("--jobs", o->jobs, "CPU threads for the order model (0 = all cores)")->capture_default_str();
  cmd->add_option("--atomic-samples", o->atomic_samples,
                  "cuda: arrival orders the model draws per gpu_atomic shape (the model backend draws --runs)")
      ->capture_default_str();
  cmd->add_option("--max-shape-seconds", o->max_shape_seconds,
                  "Stop repeating a shape once this much time is spent on it (after at least 2 runs)")
      ->capture_default_str();
  cmd->add_option("--serial-max", o->serial_max, "Largest n for gpu_serial (one GPU thread)")->capture_default_str();
  cmd->add_option("--external", o->externals,
                  "Subjects the user brings, by name (registered from Python; a --plugin's subject needs no "
                  "naming here); their configurations are their shapes")
      ->delimiter(',');
  add_plugin_option(*cmd, o->plugins);
  add_text_option(*cmd, "--input", o->input, "The user's data (.npy, .csv/.txt, raw with --format) as the one input");
  add_text_option(*cmd, "--format", o->input_format, "--input's format: npy, csv or raw (default: from the extension)");
  add_text_option(*cmd, "--flatten", o->flatten, "How a 2-D --input becomes one sequence: C or F");
  add_text_option(*cmd, "--save-golden", o->save_golden,
                  "Also write the bits of every deterministic GPU result to this JSON file");
  add_text_option(*cmd, "--check-golden", o->check_golden,
                  "Only re-run the cases of this golden file and report any bits that changed (exit 1 on drift)");
  cmd->callback([o] {
    if (!o->check_golden.empty()) {
      if (!o->save_golden.empty()) throw UserError("--check-golden and --save-golden exclude each other");
      run_check_golden(*o);
      return;
    }
    run_determinism(*o);
  });
}

}  // namespace sumlab
