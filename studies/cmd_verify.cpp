// `sumlab verify`: every deterministic GPU kernel's bits against the CPU order model, over a sweep
// of launch shapes x distributions x sizes x dtypes; then, at n = 2^26, the atomic kernel's
// measured run-to-run distribution next to the model's sampled one, and the two-pass kernel's
// single value per shape.
//
// The sweep (documented in --help and printed with the results):
//   shapes   --shapes (default 128) distinct shapes drawn with a fixed seed from the product of
//            grid {1, 2, 5, SM/2, SM, 2SM+1, 4SM, 8SM} x block {32, 64, 96, 128, 256, 512, 640, 1024}
//            x vector {1,2,4} x mapping x warp stage x block stage x cross-block {second_kernel,
//            last_block}; the first 8 cycle through every value of every field, so each is present.
//            Each kernel runs the shapes' canonical forms (core/gpu_kernel.hpp: the fields it reads),
//            deduplicated: the classic trees see the power-of-two block sizes, gpu_atomic only its
//            grid-1 shapes (one arrival order, so its bits are checkable), gpu_serial one shape.
//   sizes    0, 1, 31, 33, 1000, 2^20+3, 2^24, 2^28 (--sizes). Above 2^24 the CPU side is the cost
//            (one model evaluation streams the whole input), so n > 2^24 runs 16 of the shapes (the
//            first 16 with at least 2^15 threads: a one-warp grid alone would take seconds per launch)
//            and the device-generated distributions only; gpu_serial (one GPU thread) runs up to
//            --serial-max (2^24). The GPU cases and the model jobs of one input run concurrently.
//            --time-limit stops starting new inputs (and the atomic and family checks after them) and
//            reports what was not covered. --kernels with a list checks those sum kernels only (and
//            the atomic check where gpu_atomic is listed), not the row, segmented and scan kernels.
//   inputs   uniform, normal, cancellation, lognormal, constant, random_bits (every finite bit
//            pattern: subnormals, overflow to Inf, Inf - Inf = NaN in a tree), generated on the
//            device with core/generators.hpp and downloaded for the model (1024 elements
//            spot-checked against the CPU generator); ill_conditioned generated on the host and
//            uploaded, n <= 2^20+3. --dists names them as the bench does, NAME[:SIGMA]
//            (lognormal:12: parse_distribution_spec).
//   dtypes   float32 and float64 (--dtype); gpu_double_acc is float32 only.
//   compare  bitwise; any NaN equals any NaN (the GPU returns the canonical NaN, x86 propagates a
//            payload); gpu_double_acc compares its double accumulator too.
// The model side runs on --threads CPU threads (default: all), one job per distinct model
// (one per order_key: kernels that share an order share one).
//
// Without a GPU: the reason, and exit 2; with --allow-no-gpu the model side of the sweep runs
// alone (it checks that shape-invariant kernels give one value per input and that the last-block
// and two-pass orders agree) and exits 0 unless that fails.
#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <fstream>
#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <span>
#include <string>
#include <thread>
#include <vector>

#include "core/counter_rng.hpp"
#include "core/float_traits.hpp"
#include "core/generators.hpp"
#include "core/gpu_kernel.hpp"
#include "core/launch_shape.hpp"
#include "core/order_model/cross_block.hpp"
#include "core/fixed_point_sum.hpp"
#include "core/order_model/model_sum.hpp"
#include "core/order_model/reduce_ops.hpp"
#include "core/order_model/smem_race.hpp"
#include "studies/backend.hpp"
#include "studies/commands.hpp"
#include "studies/input_options.hpp"
#include "studies/parallel_for.hpp"
#include "studies/size_text.hpp"
#include "studies/verify_rows.hpp"
#include "studies/verify_segmented.hpp"
#include "studies/verify_scan.hpp"
#include "studies/progress.hpp"

namespace sumlab {
namespace {

constexpr std::int64_t kLargeSize = std::int64_t(1) << 24;  // above: reduced sweep (see header)

struct VerifyOptions {
  bool quick = false;
  std::vector<std::string> sizes;
  std::vector<std::string> dists;
  std::string dtype = "both";
  std::vector<std::string> kernels;
  std::string csv;
  bool allow_no_gpu = false;
  int threads = 0;
  std::uint64_t seed = 1;
  int shapes = 128;
  std::string atomic_n = "2^26";
  int atomic_runs = 20;
  int atomic_samples = 1000;
  std::string serial_max = "2^24";
  bool racy = false;
  double time_limit = 0;  // seconds; 0 = none
};

// The sweep's shapes (see the header comment).
std::vector<LaunchShape> sweep_shapes(int sm, int count) {
  const int grids[] = {1, 2, 5, std::max(1, sm / 2), sm, 2 * sm + 1, 4 * sm, 8 * sm};
  const int blocks[] = {32, 64, 96, 128, 256, 512, 640, 1024};
  const int vectors[] = {1, 2, 4};
  const Mapping maps[] = {Mapping::grid_stride, Mapping::contiguous};
  const WarpStage warps[] = {WarpStage::shfl_down, WarpStage::xor_butterfly};
  const BlockStage bstages[] = {BlockStage::warp_of_warps, BlockStage::smem_tree};
  const CrossBlock crosses[] = {CrossBlock::second_kernel, CrossBlock::last_block};
  std::vector<LaunchShape> out;
  std::set<std::string> seen;
  order_model::SplitMix64 rng{0x5eed5eedull};
  for (int i = 0; static_cast<int>(out.size()) < count && i < 100000; ++i) {
    LaunchShape s;
    auto pick = [&](int size) { return i < 8 ? i % size : static_cast<int>(rng.below(static_cast<std::uint64_t>(size))); };
    s.grid = grids[pick(8)];
    s.block = blocks[pick(8)];
    s.vector = vectors[pick(3)];
    s.mapping = maps[pick(2)];
    s.warp = warps[pick(2)];
    s.block_stage = bstages[pick(2)];
    s.cross = crosses[pick(2)];
    if (seen.insert(to_string(s)).second) out.push_back(s);
  }
  // gpu_atomic is bit-checked at grid 1 only: make sure a few grid-1 shapes exist.
  for (int b : {32, 256, 1024}) {
    LaunchShape s;
    s.grid = 1;
    s.block = b;
    s.vector = b == 256 ? 4 : 1;
    if (seen.insert(to_string(s)).second) out.push_back(s);
  }
  return out;
}

struct Input {
  std::string name;
  DistributionSpec spec;
  bool device_generated = true;
};

Input parse_input(const std::string& name) {
  Input in;
  in.name = name;
  try {
    in.spec = parse_distribution_spec(name);
  } catch (const std::invalid_argument& e) {
    throw UserError(std::string("--dists: ") + e.what());
  }
  in.device_generated = in.spec.kind != Distribution::ill_conditioned;
  return in;
}

struct Case {
  GpuKernel kernel = GpuKernel::two_pass;
  LaunchShape shape;
  KernelOptions options;  // gpu_fixed_point's caller's-scale cases
  std::string key;
  bool gpu_ok = false;
  double gpu_value = 0, gpu_acc = 0, gpu_ms = 0;
  std::string gpu_hex, error;
};

struct ModelValue {
  bool has_value = false;
  double value = 0, acc = 0;
  std::string hex;
  std::uint64_t bits = 0, acc_bits = 0;
  bool nan = false, acc_nan = false;
};

struct Tally {
  std::set<std::string> shapes;
  long cases = 0, mismatches = 0, errors = 0;
};

template <class T> std::uint64_t bits_of(T v) { return static_cast<std::uint64_t>(to_bits(v)); }

class Verifier {
 public:
  Verifier(const VerifyOptions& o, bool gpu, int sm)
      : opts_(o), gpu_(gpu), sm_(sm), cuda_(gpu ? make_backend("cuda") : nullptr) {
    threads_ = o.threads > 0 ? o.threads : static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
    shapes_ = sweep_shapes(sm, o.quick ? std::min(o.shapes, 12) : o.shapes);
    // n > 2^24: 16 of the shapes, each with at least 2^15 threads (a one-warp grid takes seconds
    // per launch at n = 2^28, and the CPU model's cost is per shape, not per thread).
    for (const auto& sh : shapes_)
      if (sh.threads() >= (1 << 15) && large_shapes_.size() < 16) large_shapes_.push_back(sh);
    for (const auto& name : o.kernels) {
      if (name == "all") {
        for (const auto& k : gpu_kernels())
          if (!k.diagnostic_only && (k.modelled || gpu)) kernels_.push_back(k.kernel);
        continue;
      }
      const auto k = find_gpu_kernel(name);
      if (!k) throw UserError("unknown GPU kernel '" + name + "' (valid: all, " + gpu_kernel_names() + ")");
      if (info(*k).diagnostic_only) throw UserError(name + " is a diagnostic (see --racy), not part of the sweep");
      kernels_.push_back(*k);
    }
    if (!o.csv.empty()) {
      csv_.open(o.csv);
      if (!csv_) throw UserError("cannot write '" + o.csv + "'");
      csv_ << "dtype,n,dist,kernel,determinism,shape,model_key,gpu_hex,model_hex,match,gpu_ms,error\n";
    }
  }

  const std::vector<LaunchShape>& shapes() const { return shapes_; }
  std::size_t large_shape_count() const { return large_shapes_.size(); }
  double last_gpu_seconds = 0, last_model_seconds = 0;
  int threads() const { return threads_; }

  // The cases of one input: every kernel x its canonical shapes for this size, deduplicated.
  std::vector<Case> cases_for(std::int64_t n, bool is_float) const {
    std::vector<Case> out;
    const std::vector<LaunchShape>& shapes = n <= kLargeSize ? shapes_ : large_shapes_;
    const std::int64_t serial_max = parse_size(opts_.serial_max, "--serial-max");
    for (GpuKernel k : kernels_) {
      if (info(k).float_input_only && !is_float) continue;
      if (k == GpuKernel::serial && n > serial_max) continue;
      std::set<std::string> seen;
      for (const auto& s0 : shapes) {
        if (k == GpuKernel::atomic && s0.grid != 1) continue;
        const LaunchShape s = canonicalize(k, s0, sm_);
        if (!validate_shape(k, s, is_float ? "float32" : "float64", n).empty()) continue;
        if (!seen.insert(to_string(s)).second) continue;
        Case c;
        c.kernel = k;
        c.shape = s;
        c.key = order_key(k, s, sm_);
        out.push_back(std::move(c));
      }
    }
    return out;
  }

  template <class T> void run_input(const Input& in, std::int64_t n) {
    const std::string dtype(FloatTraits<T>::dtype);
    const Loaded<T> loaded = prepare_input<T>(in, n);
    const std::span<const T> x = loaded.x;
    std::vector<Case> cases = cases_for(n, sizeof(T) == 4);
    // gpu_fixed_point again with the caller's scale (KernelOptions::fixed_scale: the quantising pass
    // alone), 12 bits coarser than the data's own, so that elements lose bits there.
    const int given_k = fixed_point_detail::data_scale(std::span<const T>(x)) - 12;
    for (std::size_t i = 0, count = cases.size(); i < count; ++i)
      if (cases[i].kernel == GpuKernel::fixed_point) {
        Case c = cases[i];
        c.options.fixed_scale = given_k;
        c.key += " k=" + std::to_string(given_k);
        cases.push_back(std::move(c));
      }
    // The GPU cases (one stream, in order, driven by this thread) and the models (on the other CPU
    // threads) run at the same time: both only read x.
    std::map<std::string, ModelValue> models;
    std::vector<std::pair<std::string, const Case*>> jobs;
    for (const auto& c : cases)
      if (info(c.kernel).modelled && models.emplace(c.key, ModelValue{}).second) jobs.push_back({c.key, &c});
    std::vector<ModelValue> results(jobs.size());
    const auto t_start = std::chrono::steady_clock::now();
    std::thread model_thread([&] {
    parallel_for(jobs.size(), gpu_ ? std::max(1, threads_ - 1) : threads_, [&](std::size_t i) {
      const Case& c = *jobs[i].second;
      const ModelResult<T> m = model_sum<T>(c.kernel, c.shape, x, c.options);
      ModelValue v;
      v.has_value = m.has_value;
      v.value = static_cast<double>(m.value);
      v.acc = m.accumulator;
      v.bits = bits_of(m.value);
      v.nan = std::isnan(m.value);
      v.acc_bits = bits_of(m.accumulator);
      v.acc_nan = std::isnan(m.accumulator);
      v.hex = hex_bits(m.value);
      results[i] = v;
    });
    last_model_seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t_start).count();
    });
    if (gpu_) run_gpu<T>(cases, *loaded.device);
    last_gpu_seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t_start).count();
    model_thread.join();
    for (std::size_t i = 0; i < jobs.size(); ++i) models[jobs[i].first] = results[i];

    // Model-only consistency: shape-invariant kernels give one value per input.
    std::map<std::string, std::set<std::uint64_t>> invariant_values;  // by model key: the shape is not in it
    for (const auto& c : cases) {
      const ModelValue& m = models[c.key];
      Tally& t = tally_[c.kernel];
      t.shapes.insert(to_string(c.shape));
      ++t.cases;
      bool match = true;
      std::string error = c.error;
      const bool peer = !info(c.kernel).modelled;  // library peers: launched and timed, not predicted
      if (peer) {
        match = error.empty();
      } else if (!m.has_value) {
        error = error.empty() ? "model gave no value" : error;
      } else if (gpu_ && error.empty()) {
        const bool value_eq = (m.nan && std::isnan(c.gpu_value)) || bits_of(static_cast<T>(c.gpu_value)) == m.bits;
        const bool acc_eq = c.kernel != GpuKernel::double_acc || (m.acc_nan && std::isnan(c.gpu_acc)) ||
                            bits_of(c.gpu_acc) == m.acc_bits;
        match = value_eq && acc_eq;
      }
      if (info(c.kernel).determinism == Determinism::shape_invariant && m.has_value)
        invariant_values[c.key].insert(m.nan ? ~std::uint64_t(0) : m.bits);
      if (!error.empty()) ++t.errors;
      else if (!match) ++t.mismatches;
      if (!match && mismatch_examples_.size() < 20)
        mismatch_examples_.push_back(fmt::format("{} n={} {} {} [{}]: gpu {} model {}", dtype, n, in.name,
                                                 info(c.kernel).name, to_string(c.shape), c.gpu_hex, m.hex));
      if (!error.empty() && error_examples_.size() < 20)
        error_examples_.push_back(fmt::format("{} n={} {} {} [{}]: {}", dtype, n, in.name, info(c.kernel).name,
                                              to_string(c.shape), error));
      if (csv_)
        csv_ << fmt::format("{},{},{},{},{},{},{},{},{},{},{:.4f},\"{}\"\n", dtype, n, in.name, info(c.kernel).name,
                            to_string(info(c.kernel).determinism), to_string(c.shape), c.key,
                            gpu_ ? c.gpu_hex : "", m.hex, (gpu_ && error.empty() && !peer) ? (match ? 1 : 0) : -1,
                            c.gpu_ms, error);
    }
    for (const auto& [k, vals] : invariant_values)
      if (vals.size() > 1) {
        ++invariance_failures_;
        error_examples_.push_back(fmt::format("{} n={} {}: {} model values across shapes for shape-invariant {}",
                                              dtype, n, in.name, vals.size(), k));
      }
    cases_total_ += static_cast<long>(cases.size());
    if (csv_) csv_.flush();
  }

  void print_summary(std::ostream& os) const {
    os << fmt::format("\n{:<18} {:<18} {:>7} {:>8} {:>11} {:>7}\n", "kernel", "determinism", "shapes", "cases",
                      "mismatches", "errors");
    long cases = 0, mism = 0, errs = 0;
    for (const auto& [k, t] : tally_) {
      os << fmt::format("{:<18} {:<18} {:>7} {:>8} {:>11} {:>7}\n", info(k).name, to_string(info(k).determinism),
                        t.shapes.size(), t.cases, gpu_ && info(k).modelled ? std::to_string(t.mismatches) : "-",
                        t.errors);
      cases += t.cases;
      mism += t.mismatches;
      errs += t.errors;
    }
    os << fmt::format("{:<18} {:<18} {:>7} {:>8} {:>11} {:>7}\n", "total", "", shapes_.size(), cases,
                      gpu_ ? std::to_string(mism) : "-", errs);
    if (gpu_)
      os << "gpu_atomic is bit-checked on grid-1 shapes only (one arrival order); the library peers (gpu_cub, gpu_thrust, "
            "gpu_cub_gpu_to_gpu) are launched and timed, not modelled (mismatches '-' means no model to compare with)\n";
    else
      os << "no GPU ran: only the model side was evaluated (mismatches '-' means no GPU bits to compare with); "
            "shape_invariant kernels whose model gives more than one value across shapes are reported as ERROR\n";
    for (const auto& e : mismatch_examples_) os << "MISMATCH " << e << "\n";
    for (const auto& e : error_examples_) os << "ERROR    " << e << "\n";
  }

  long mismatches() const {
    long m = 0;
    for (const auto& [k, t] : tally_) m += t.mismatches;
    return m;
  }
  long errors() const {
    long e = invariance_failures_;
    for (const auto& [k, t] : tally_) e += t.errors;
    return e;
  }
  long cases() const { return cases_total_; }

 private:
  // The input on the host and, with a GPU, where the kernels read it: generated on the device by
  // the CPU's generator (the backend spot-checks the two), or made here and uploaded once.
  template <class T> struct Loaded {
    std::vector<T> owned;
    std::span<const T> x;
    std::unique_ptr<KernelInput<T>> device;
  };
  template <class T> Loaded<T> prepare_input(const Input& in, std::int64_t n) {
    Loaded<T> l;
    if (gpu_ && in.device_generated) {
      l.device = cuda_->generate<T>(in.spec, opts_.seed, n);
      l.x = l.device->host();
      return l;
    }
    l.owned = host_input<T>(in, n);
    l.x = l.owned;
    if (gpu_) l.device = cuda_->load(l.x);
    return l;
  }

  template <class T> std::vector<T> host_input(const Input& in, std::int64_t n) {
    const auto count = static_cast<std::size_t>(n);
    try {
      return generate<T>(in.spec, opts_.seed, count);
    } catch (const std::invalid_argument& e) {
      throw UserError(std::string(in.name) + ": " + e.what());
    }
  }

  // One stream, in order, driven by this thread; a launch that fails is the case's error.
  template <class T> void run_gpu(std::vector<Case>& cases, KernelInput<T>& device) {
    for (auto& c : cases) {
      try {
        const KernelOutcome<T> r = device.run(c.kernel, c.shape, c.options);
        c.gpu_ok = true;
        c.gpu_value = static_cast<double>(r.value);
        c.gpu_acc = r.accumulator;
        c.gpu_ms = r.ms;
        c.gpu_hex = hex_bits(r.value);
      } catch (const UserError& e) {
        c.gpu_ok = false;
        c.error = e.what();
      }
    }
  }

  const VerifyOptions& opts_;
  bool gpu_;
  int sm_;
  std::unique_ptr<Backend> cuda_;  // with a GPU: the kernels' backend
  int threads_ = 1;
  std::vector<LaunchShape> shapes_, large_shapes_;
  std::vector<GpuKernel> kernels_;
  std::map<GpuKernel, Tally> tally_;
  std::vector<std::string> mismatch_examples_, error_examples_;
  long invariance_failures_ = 0;
  long cases_total_ = 0;
  std::ofstream csv_;
};

// The atomic demo's shapes: grids of 1, 4 and 8 blocks per SM and an odd one, every stage variant.
std::vector<LaunchShape> atomic_demo_shapes(int sm) {
  std::vector<LaunchShape> shapes;
  auto add = [&](int g, int b, int v, Mapping m, WarpStage w, BlockStage bs) {
    LaunchShape s;
    s.grid = g;
    s.block = b;
    s.vector = v;
    s.mapping = m;
    s.warp = w;
    s.block_stage = bs;
    s.cross = CrossBlock::atomic;
    shapes.push_back(s);
  };
  add(sm, 256, 4, Mapping::grid_stride, WarpStage::shfl_down, BlockStage::warp_of_warps);
  add(4 * sm, 256, 4, Mapping::grid_stride, WarpStage::shfl_down, BlockStage::warp_of_warps);
  add(8 * sm, 1024, 1, Mapping::grid_stride, WarpStage::xor_butterfly, BlockStage::smem_tree);
  add(2 * sm + 1, 128, 2, Mapping::contiguous, WarpStage::shfl_down, BlockStage::smem_tree);
  return shapes;
}

// The deterministic contrast to gpu_atomic: gpu_two_pass with the same thread, warp and block
// stages, `runs` times, against its model. True when every run gave the model's bits.
bool two_pass_contrast(const VerifyOptions& o, const LaunchShape& s, KernelInput<float>& input, std::ostream& os,
                       std::ofstream& csv) {
  const std::span<const float> x = input.host();
  LaunchShape t = s;
  t.cross = CrossBlock::second_kernel;
  std::set<std::uint32_t> two;
  for (int r = 0; r < o.atomic_runs; ++r) {
    two.insert(to_bits(input.run(GpuKernel::two_pass, t).value));
  }
  const auto mt = model_sum<float>(GpuKernel::two_pass, t, x);
  const bool agrees = two.size() == 1 && *two.begin() == to_bits(mt.value);
  os << fmt::format("  gpu_two_pass, same stages: {} distinct value{} in {} runs ({}); model {} -> {}\n", two.size(),
                    two.size() == 1 ? "" : "s", o.atomic_runs, two.size() == 1 ? hex_bits(from_bits<float>(*two.begin())) : "?",
                    hex_bits(mt.value), agrees ? "match" : "MISMATCH");
  if (csv)
    for (std::uint32_t b : two)
      csv << fmt::format("{},gpu_two_pass,{},{:.9g},{},{},{},{}\n", to_string(t), hex_bits(from_bits<float>(b)),
                         from_bits<float>(b), o.atomic_runs, o.atomic_runs, b == to_bits(mt.value) ? 1 : 0, 1);
  return agrees;
}

// gpu_atomic at n = atomic_n: measured values over `runs` launches per shape next to the model's
// sampled arrival orders; gpu_two_pass on the same shapes for contrast.
void atomic_demo(const VerifyOptions& o, int sm, std::ostream& os, const std::string& csv_path, int& failures) {
  const std::int64_t n = parse_size(o.atomic_n, "--atomic-n");
  if (n == 0 || o.atomic_runs <= 0) return;
  DistributionSpec spec;  // uniform [0, 1), float32: the measured blog's setup (the seed text on atomics)
  const auto input = make_backend("cuda")->generate<float>(spec, o.seed, n);
  const std::span<const float> x = input->host();
  std::ofstream csv;
  if (!csv_path.empty()) {
    csv.open(csv_path);
    csv << "shape,kernel,value_hex,value,measured_count,measured_runs,model_count,model_samples\n";
  }
  const std::vector<LaunchShape> shapes = atomic_demo_shapes(sm);

  os << fmt::format("\ngpu_atomic vs the model at n = {} (uniform [0,1) float32, seed {}): {} runs per shape; "
                    "model: {} arrival orders drawn uniformly (seed 1)\n",
                    size_text(n), o.seed, o.atomic_runs, o.atomic_samples);
  for (const auto& s : shapes) {
    std::map<float, int> measured;
    for (int r = 0; r < o.atomic_runs; ++r) {
      ++measured[input->run(GpuKernel::atomic, s).value];
    }
    const std::vector<float> partials = model_block_partials<float>(s, x);
    const auto model = order_model::sample_atomic_results<float>(std::span<const float>(partials), o.atomic_samples, 1);
    std::map<float, int> model_counts;
    for (const auto& m : model) model_counts[m.value] = m.count;
    const auto windowed = order_model::sample_atomic_results<float>(std::span<const float>(partials),
                                                                    o.atomic_samples, 2, {sm});
    os << fmt::format("\nshape {}\n  {:>16} {:>12} {:>14} {:>16}\n", to_string(s), "value", "bits",
                      fmt::format("measured/{}", o.atomic_runs), fmt::format("model/{}", o.atomic_samples));
    std::set<float> all;
    for (const auto& [v, c] : measured) all.insert(v);
    for (const auto& [v, c] : model_counts) all.insert(v);
    int seen_by_model = 0;
    for (float v : all) {
      const int mc = measured.count(v) ? measured.at(v) : 0;
      const int pc = model_counts.count(v) ? model_counts.at(v) : 0;
      if (mc > 0 && pc > 0) ++seen_by_model;
      if (mc > 0 || pc >= std::max(1, o.atomic_samples / 100))
        os << fmt::format("  {:>16.9g} {:>12} {:>14} {:>16}\n", v, hex_bits(v), mc, pc);
      if (csv) csv << fmt::format("{},gpu_atomic,{},{:.9g},{},{},{},{}\n", to_string(s), hex_bits(v), v, mc,
                                  o.atomic_runs, pc, o.atomic_samples);
    }
    float lo = all.empty() ? 0.f : *all.begin(), hi = all.empty() ? 0.f : *all.rbegin();
    os << fmt::format("  distinct: measured {} in {} runs; model {} in {} sampled orders ({} with arrivals in waves "
                      "of {} blocks); measured values the model also drew: {} of {}; all within [{:.9g}, {:.9g}]\n",
                      measured.size(), o.atomic_runs, model.size(), o.atomic_samples, windowed.size(), sm, seen_by_model,
                      measured.size(), lo, hi);
    if (!two_pass_contrast(o, s, *input, os, csv)) ++failures;
  }
}

void racy_demo(std::ostream& os) {
  DistributionSpec spec;
  const std::int64_t n = 4096;
  const auto input = make_backend("cuda")->generate<float>(spec, 1, n);
  const std::span<const float> x = input->host();
  LaunchShape s = default_shape(GpuKernel::racy_tree);
  const auto r = input->run(GpuKernel::racy_tree, s);
  const auto first = x.subspan(0, static_cast<std::size_t>(s.block));
  const auto trace = order_model::smem_tree_trace<float>(first, 0);
  os << fmt::format("gpu_racy_tree (barrier after the loads removed), n = {}, block {}: launched once; its value {} "
                    "means nothing.\nmodel of block 0 with that barrier missing: {} reads before their writes, no "
                    "numeric result; first: {}\n",
                    n, s.block, r.value, trace.races.size(),
                    trace.races.empty() ? "none" : order_model::describe(trace.races.front()));
  os << "run this under `compute-sanitizer --tool racecheck` to see the hardware-level report of the same hazard\n";
}

// The sweep the options ask for, with the defaults filled in and every size and input parsed.
struct Sweep {
  VerifyOptions opts;
  std::vector<std::int64_t> sizes;
  std::vector<Input> inputs;
  std::vector<std::string> dtypes;
};

Sweep resolve_sweep(const VerifyOptions& o) {
  Sweep w{o, {}, {}, {}};
  VerifyOptions& opts = w.opts;
  if (o.quick && o.atomic_n == "2^26") opts.atomic_n = "2^20";
  // Read here, with the sweep's other options: a bad value is refused before anything runs, and
  // without a GPU too (where the atomic check never runs and would never read it).
  (void)parse_size(opts.atomic_n, "--atomic-n");
  if (opts.sizes.empty())
    opts.sizes = o.quick ? std::vector<std::string>{"0", "1", "31", "33", "1000", "4099"}
                         : std::vector<std::string>{"0", "1", "31", "33", "1000", "2^20+3", "2^24", "2^28"};
  if (opts.dists.empty())
    opts.dists = {"uniform", "normal", "cancellation", "lognormal", "constant", "ill_conditioned", "random_bits"};
  if (opts.kernels.empty()) opts.kernels = {"all"};
  for (const auto& s : opts.sizes) w.sizes.push_back(parse_size(s, "--sizes"));
  for (const auto& d : opts.dists) w.inputs.push_back(parse_input(d));
  if (opts.dtype != "both" && opts.dtype != "float32" && opts.dtype != "float64")
    throw UserError("--dtype must be float32, float64 or both");
  if (opts.dtype != "float64") w.dtypes.push_back("float32");
  if (opts.dtype != "float32") w.dtypes.push_back("float64");
  return w;
}

void print_sweep(const Sweep& w, const Verifier& v, const std::string& device, int sm) {
  std::cout << fmt::format("sumlab verify: GPU kernel bits vs the CPU order model (core/order_model)\n");
  std::cout << fmt::format("device   {}\n", device);
  std::cout << fmt::format("sweep    {} launch shapes (grid 1..{}, block 32..1024, vector 1/2/4, grid_stride/contiguous, "
                           "shfl_down/xor_butterfly, smem_tree/warp_of_warps, second_kernel/last_block); n > 2^24: "
                           "{} of them (those with >= 2^15 threads), device-generated inputs only; gpu_serial up to "
                           "n = {}\n",
                           v.shapes().size(), 8 * sm, v.large_shape_count(), w.opts.serial_max);
  std::string size_list, dist_list;
  for (auto n : w.sizes) size_list += (size_list.empty() ? "" : ", ") + size_text(n);
  for (const auto& d : w.opts.dists) dist_list += (dist_list.empty() ? "" : ", ") + d;
  std::cout << fmt::format("sizes    {}\ninputs   {} (seed {})\ndtypes   {}\nmodel    {} CPU threads\n", size_list,
                           dist_list, w.opts.seed, w.opts.dtype, v.threads());
  std::cout.flush();
}

double seconds_since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

// The sum kernels over the sweep (inputs above 2^20 + 3 only where the device generates them);
// returns the inputs left out by --time-limit.
std::vector<std::string> verify_sums(const Sweep& w, Verifier& v, std::chrono::steady_clock::time_point t0) {
  const auto host_ok = [](const Input& in, std::int64_t n) { return in.device_generated || n <= (std::int64_t(1) << 20) + 3; };
  std::size_t steps = 0;
  for (auto n : w.sizes)
    for (const auto& in : w.inputs) steps += host_ok(in, n) ? 1 : 0;
  Progress progress("verify", steps * w.dtypes.size());
  std::vector<std::string> not_covered;
  for (const auto& dt : w.dtypes)
    for (auto n : w.sizes)
      for (const auto& in : w.inputs) {
        if (!host_ok(in, n)) continue;
        if (w.opts.time_limit > 0 && seconds_since(t0) > w.opts.time_limit) {
          not_covered.push_back(fmt::format("{} n={} {}", dt, size_text(n), in.name));
          continue;
        }
        if (dt == "float32") v.run_input<float>(in, n);
        else v.run_input<double>(in, n);
        progress.step(fmt::format("{} n={} {} (gpu {:.1f} s, model {:.1f} s, elapsed {:.0f} s)", dt, size_text(n),
                                  in.name, v.last_gpu_seconds, v.last_model_seconds, seconds_since(t0)));
      }
  progress.finish();
  v.print_summary(std::cout);
  if (!not_covered.empty()) {
    std::cout << fmt::format("TIME LIMIT ({:.0f} s) reached: {} inputs not covered:", w.opts.time_limit,
                             not_covered.size());
    for (const auto& c : not_covered) std::cout << " [" << c << "]";
    std::cout << "\n";
  }
  return not_covered;
}

// `--csv out.csv` puts each family's cases beside it: out_rows.csv, out_segmented.csv, ...
std::string family_csv(const std::string& csv, const std::string& suffix) {
  if (csv.empty()) return "";
  const auto dot = csv.rfind(".csv");
  return (dot == std::string::npos ? csv : csv.substr(0, dot)) + suffix;
}

// The other families' kernels (rows, segmented sums, scans): GPU bits == model bits. Returns
// "rows", "segmented", "scans" for each that failed.
std::vector<std::string> verify_families(const VerifyOptions& opts, bool gpu) {
  auto section = [&](const char* csv_suffix) {
    return VerifySectionOptions{.quick = opts.quick, .seed = opts.seed, .csv = family_csv(opts.csv, csv_suffix), .model_only = !gpu};
  };
  const RowVerifySummary rows = verify_rows(RowVerifyOptions{section("_rows.csv"), {}});
  std::cout << "\n" << rows.table();
  const SegVerifySummary segs = verify_segmented(section("_segmented.csv"));
  std::cout << "\n" << segs.table();
  const ScanVerifySummary scans = verify_scan(section("_scan.csv"));
  std::cout << "\n" << scans.table();
  std::vector<std::string> failed;
  if (!rows.ok()) failed.push_back("rows");
  if (!segs.ok()) failed.push_back("segmented");
  if (!scans.ok()) failed.push_back("scans");
  return failed;
}

void run_verify(const VerifyOptions& o) {
  const auto t0 = std::chrono::steady_clock::now();
  std::string why;
  const bool gpu = cuda_backend_available(&why);
  if (!gpu && !o.allow_no_gpu)
    throw UserError(why + "; `sumlab verify` compares GPU bits with the CPU model and needs a GPU "
                          "(--allow-no-gpu runs the model side alone and exits 0)");
  int sm = 132;
  std::string device = "none (model only): " + why;
  if (gpu) {
    const auto cuda = make_backend("cuda");
    sm = cuda->sm_count();
    device = cuda->description();
  }
  if (o.racy) {
    if (!gpu) throw UserError(why);
    racy_demo(std::cout);
    return;
  }

  const Sweep w = resolve_sweep(o);
  Verifier v(w.opts, gpu, sm);
  print_sweep(w, v, device, sm);
  std::vector<std::string> not_covered = verify_sums(w, v, t0);
  const double limit = w.opts.time_limit;
  const auto past_limit = [&] { return limit > 0 && seconds_since(t0) > limit; };
  const auto named = [&](const std::string& k) {
    return std::find(w.opts.kernels.begin(), w.opts.kernels.end(), k) != w.opts.kernels.end();
  };
  const auto skip = [&](const std::string& what) {
    std::cout << fmt::format("\nTIME LIMIT ({:.0f} s) reached: {} not covered\n", limit, what);
    not_covered.push_back(what);
  };
  int atomic_failures = 0;
  if (gpu && (named("all") || named("gpu_atomic"))) {
    if (past_limit()) skip("the atomic distribution check");
    else atomic_demo(w.opts, sm, std::cout, family_csv(w.opts.csv, "_atomic.csv"), atomic_failures);
  }
  std::vector<std::string> failed;
  if (!named("all")) {
    std::cout << "\nrow kernels, segmented sums and scans: not checked (--kernels names sum kernels only)\n";
  } else if (past_limit()) {
    skip("the row kernels, segmented sums and scans");
  } else {
    failed = verify_families(w.opts, gpu);
  }
  const double secs = seconds_since(t0);
  std::cout << fmt::format("\n{} cases in {:.1f} s{}\n", v.cases(), secs,
                           w.opts.csv.empty() ? "" : "; every case in " + w.opts.csv);
  std::cout.flush();
  if (v.mismatches() > 0 || v.errors() > 0 || atomic_failures > 0 || !not_covered.empty() || !failed.empty()) {
    std::string families;
    for (const auto& f : failed) families += (families.empty() ? "" : ", ") + f;
    // A check that failed: exit 1, as documented (not 2, which means bad input or usage).
    throw CheckFailed(fmt::format("verify: {} mismatches, {} errors, {} two-pass disagreements, {} inputs or checks "
                                  "not covered, families failed: {} (see above)",
                                  v.mismatches(), v.errors(), atomic_failures, not_covered.size(),
                                  families.empty() ? "none" : families));
  }
  if (!gpu) std::cout << "no GPU: only the model side ran (" << why << ")\n";
}

}  // namespace

void register_verify(CLI::App& app) {
  auto o = std::make_shared<VerifyOptions>();
  auto* cmd = app.add_subcommand(
      "verify", "Check every deterministic GPU kernel's bits against the CPU order model over a sweep of "
                "launch shapes, distributions, sizes and dtypes; show the atomic kernel's run-to-run "
                "distribution next to the model's. Exits non-zero on any mismatch, and without a GPU "
                "(unless --allow-no-gpu)");
  cmd->add_flag("--quick", o->quick, "Small sweep: 12 drawn launch shapes plus the grid-1 shapes gpu_atomic is bit-checked on (the run prints the total), sizes 0,1,31,33,1000,4099 (for sanitizers and CI)");
  cmd->add_option("--sizes", o->sizes, "Comma list of sizes: numbers, 2^k or 2^k+c (default 0,1,31,33,1000,2^20+3,2^24,2^28)")
      ->delimiter(',');
  cmd->add_option("--dists", o->dists,
                  "Comma list of inputs: uniform, normal, cancellation, lognormal, constant, ill_conditioned, "
                  "random_bits (default: all seven), normal and lognormal as NAME[:SIGMA] too (lognormal:12)")
      ->delimiter(',');
  cmd->add_option("--dtype", o->dtype, "float32, float64 or both")->capture_default_str();
  cmd->add_option("--kernels", o->kernels,
                  "Comma list of GPU sum kernels to check (default: all modelled ones, then the atomic check and the "
                  "row, segmented and scan kernels; with a list, the atomic check only if gpu_atomic is in it)")
      ->delimiter(',');
  add_text_option(*cmd, "--csv", o->csv, "Write every case to this CSV (and the atomic table to <name>_atomic.csv)");
  cmd->add_option("--shapes", o->shapes, "Number of launch shapes drawn for the sweep (up to 3 grid-1 shapes are added for gpu_atomic)")->capture_default_str()->check(CLI::Range(1, 3072));
  add_seed_option(*cmd, "--seed", o->seed, "Generator seed of every input");
  cmd->add_option("--threads", o->threads, "CPU threads for the model (0 = all)")->capture_default_str();
  cmd->add_option("--serial-max", o->serial_max, "Largest n for gpu_serial (one GPU thread)")->capture_default_str();
  cmd->add_option("--atomic-n", o->atomic_n, "n of the atomic distribution check (0 skips it)")->capture_default_str();
  cmd->add_option("--atomic-runs", o->atomic_runs, "GPU runs per shape of the atomic check")->capture_default_str();
  cmd->add_option("--atomic-samples", o->atomic_samples, "Arrival orders the model samples per shape")
      ->capture_default_str();
  cmd->add_flag("--racy", o->racy,
                "Only launch the deliberately racy tree once and print the model's race report (run it under "
                "compute-sanitizer --tool racecheck)");
  cmd->add_option("--time-limit", o->time_limit,
                  "Stop starting new inputs (and the atomic and family checks) after this many seconds and report "
                  "what was not covered (0 = no limit; anything left out makes the exit status 1)")
      ->capture_default_str();
  cmd->add_flag("--allow-no-gpu", o->allow_no_gpu, "Without a GPU, run the model side alone and exit 0");
  cmd->callback([o] { run_verify(*o); });
}

}  // namespace sumlab
