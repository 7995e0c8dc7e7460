// The dot family in the lab (core/dot/dot_family.hpp: subjects, order, reference, bound): its runners
// (studies/family_runner.hpp) and `sumlab study dot`. Per (distribution, n, seed) cell every subject
// runs at each of its configurations (columns: data/README.md):
//   dot_errors.csv       the value and the exact dot (hex), |error|, the bound and its verdict, ulps,
//                        on cuda the GPU bits against the model's and the distinct values over runs;
//   dot_determinism.csv  per subject, distinct values across runs and across shapes, the measured
//                        class against the declared one (core/determinism_classify.hpp's rule: one
//                        shape shows no invariance). `runs` is the calls each configuration got:
//                        a GPU subject --runs on cuda and one evaluation of the model on the model
//                        backend (its class is then the model's: shapes compared, runs not); a
//                        CPU subject max(--runs, 2) calls on either backend.
// Exits 1 when GPU bits differ from the model's or a measured class is weaker than declared;
// everything is written first.
#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstdint>
#include <limits>
#include <memory>
#include <set>
#include <span>
#include <string>
#include <vector>

#include "core/determinism_classify.hpp"
#include "core/dot/dot_family.hpp"
#include "core/float_traits.hpp"
#include "core/generators.hpp"
#include "core/metrics.hpp"
#include "studies/backend.hpp"
#include "studies/commands.hpp"
#include "studies/family_runner.hpp"
#include "studies/memory_check.hpp"
#include "studies/row_backend.hpp"  // pick_row_backend, row_backend_description: the same backends
#include "studies/run_folder.hpp"
#include "studies/size_text.hpp"
#include "studies/study_driver.hpp"

#if defined(SUMLAB_WITH_CUDA)
#include "gpu/dot.hpp"
#endif

namespace sumlab {
namespace {

using dot::Pair;
using dot::Subject;

// The family's input: the pairs on the host, and on the device for cuda (uploaded once).
class DotKernelInput {
 public:
  DotKernelInput(BackendKind kind, std::span<const Pair> p) : kind_(kind), host_(p) {
#if defined(SUMLAB_WITH_CUDA)
    if (kind == BackendKind::cuda) {
      try {
        device_ = std::make_unique<gpu::DotInput>(p);
      } catch (const std::exception& e) {
        throw UserError(e.what());
      }
    }
#else
    if (kind == BackendKind::cuda) throw UserError("this sumlab was built without CUDA");
#endif
  }
  BackendKind backend() const { return kind_; }
  std::span<const Pair> host() const { return host_; }
  // GPU subject k at shape s on the device: the value and the mean time of `reps` launches.
  Outcome<float> run_gpu(Subject k, const LaunchShape& s, int reps) const {
    Outcome<float> o;
#if defined(SUMLAB_WITH_CUDA)
    const gpu::GpuDotResult r = gpu::gpu_dot(k, s, *device_, reps);
    if (!r.ok()) throw UserError(std::string(dot::info(k).name) + ": " + r.error);
    o.has_value = true;
    o.value = r.value;
    o.ms = r.ms;
#else
    (void)k, (void)s, (void)reps;
#endif
    return o;
  }

 private:
  BackendKind kind_;
  std::span<const Pair> host_;
#if defined(SUMLAB_WITH_CUDA)
  std::unique_ptr<gpu::DotInput> device_;
#endif
};

using DotRunner = FamilyRunner<DotKernelInput, float>;

// A subject of the registry: a CPU algorithm (one configuration), or a GPU kernel on cuda or its
// model (one configuration per shape).
class DotSubjectRunner final : public DotRunner {
 public:
  DotSubjectRunner(Subject k, BackendKind b, std::vector<LaunchShape> shapes, int reps)
      : k_(k), backend_(b), shapes_(dot::info(k).gpu ? std::move(shapes) : std::vector<LaunchShape>{{}}), reps_(reps) {}
  RunnerKind kind() const override {
    if (!dot::info(k_).gpu) return RunnerKind::cpu;
    return backend_ == BackendKind::cuda ? RunnerKind::cuda : RunnerKind::model;
  }
  std::string name() const override { return std::string(dot::info(k_).name); }
  Determinism declared() const override { return dot::info(k_).determinism; }
  std::size_t configs() const override { return shapes_.size(); }
  std::string config_label(std::size_t c) const override { return dot::info(k_).gpu ? to_string(shapes_[c]) : "-"; }
  const LaunchShape& shape(std::size_t c) const { return shapes_[c]; }
  Outcome<float> run(std::size_t c, DotKernelInput& x) override {
    if (kind() == RunnerKind::cuda) return x.run_gpu(k_, shapes_[c], reps_);
    Outcome<float> o;
    o.has_value = true;
    if (kind() == RunnerKind::model) o.value = dot::model_dot(k_, x.host(), shapes_[c]);
    else o.value = k_ == Subject::cpu_serial_dot ? dot::serial_dot(x.host()) : dot::exact_dot(x.host()).value;
    return o;
  }
  double bound(std::size_t c, std::uint64_t n, double sum_abs) const { return dot::dot_bound(k_, shapes_[c], n, sum_abs); }

 private:
  Subject k_;
  BackendKind backend_;
  std::vector<LaunchShape> shapes_;
  int reps_;
};

struct DotOptions {
  RunOptions run;
  std::string backend;
  bool quick = false;
  std::vector<std::string> sizes, dists{"normal", "uniform"};
  int seeds = 1, runs = 0;
};

struct Plan {
  BackendKind backend;
  std::string backend_name;
  std::vector<std::int64_t> sizes;
  std::vector<LaunchShape> shapes;
  int runs;
};

const std::vector<std::string> kErrorColumns = {
    "backend", "dist", "n", "seed", "algorithm", "kind", "shape", "value_hex", "exact_hex", "abs_error", "bound",
    "verdict", "ulps", "gpu_equals_model", "distinct_runs", "ms"};
const std::vector<std::string> kDeterminismColumns = {
    "backend", "dist", "n", "seed", "algorithm", "shapes", "runs", "distinct_runs", "distinct_shapes", "declared",
    "measured", "consistent"};

Plan make_plan(const DotOptions& o) {
  Plan p;
  p.backend = pick_row_backend(o.backend);
  p.backend_name = std::string(to_string(p.backend));
  const std::vector<std::string> sizes =
      !o.sizes.empty() ? o.sizes
                       : (o.quick ? std::vector<std::string>{"1000", "2^14+3"}
                                  : std::vector<std::string>{"2^10", "2^14+3", "2^18", "2^20+1", "2^22", "2^24"});
  for (const auto& s : sizes) {
    const std::int64_t n = parse_size(s, "--sizes");
    if (n < 1) throw UserError("--sizes: every n must be >= 1 (got " + s + ")");
    p.sizes.push_back(n);
  }
  for (const auto& d : o.dists) {
    try {
      if (parse_distribution(d) == Distribution::ill_conditioned)
        throw UserError("--dists: ill_conditioned makes a sum, not two factors; choose another");
    } catch (const std::invalid_argument& e) {
      throw UserError(std::string("--dists: ") + e.what());
    }
  }
  if (o.seeds < 1) throw UserError(fmt::format("--seeds must be >= 1 (got {})", o.seeds));
  p.shapes = dot::dot_shapes();
  for (const LaunchShape& s : p.shapes)
    for (std::int64_t n : p.sizes)
      if (const std::string why = validate_shape(GpuKernel::two_pass, s, "float32", n); !why.empty())
        throw UserError("gpu_dot shape " + to_string(s) + ": " + why);
  p.runs = o.runs ? o.runs : (p.backend == BackendKind::cuda ? 3 : 1);
  if (p.runs < 1) throw UserError(fmt::format("--runs must be >= 1 (got {})", p.runs));
  // x, y, the pairs and the superaccumulators' chunks of the largest cell.
  check_fits_in_memory(static_cast<std::uint64_t>(*std::max_element(p.sizes.begin(), p.sizes.end())), 16,
                       "the largest dot cell");
  return p;
}

// A second stream for y, so x and y are independent pure functions of (seed, index).
constexpr std::uint64_t kYStream = 0x9e3779b97f4a7c15ull;

struct DotCell {
  Rows errors, determinism;
};

DotCell run_cell(const Plan& p, const std::string& dist, std::int64_t n, std::uint64_t seed) {
  DistributionSpec spec;
  spec.kind = parse_distribution(dist);
  const auto count = static_cast<std::size_t>(n);
  const std::vector<Pair> pairs =
      dot::interleave(generate<float>(spec, seed, count), generate<float>(spec, seed ^ kYStream, count));
  const dot::ExactDot exact = dot::exact_dot(pairs);
  DotKernelInput input(p.backend, pairs);
  DotKernelInput on_model(BackendKind::model, pairs);  // the model's bits, for the GPU's check
  const std::vector<std::string> key = {p.backend_name, dist, std::to_string(n), std::to_string(seed)};
  DotCell cell;
  for (const auto& inf : dot::dot_subjects()) {
    DotSubjectRunner runner(inf.subject, p.backend, p.shapes, 5);
    DotSubjectRunner model(inf.subject, BackendKind::model, p.shapes, 1);
    std::set<std::uint32_t> across_shapes;
    std::size_t distinct_runs = 1;
    // Calls per configuration: the model is evaluated once (a second evaluation of its fixed order
    // would repeat its bits); code that runs here or on the GPU is called and counted.
    const int calls = runner.kind() == RunnerKind::model ? 1
                      : runner.kind() == RunnerKind::cpu ? std::max(p.runs, 2)
                                                          : p.runs;
    for (std::size_t c = 0; c < runner.configs(); ++c) {
      const Outcome<float> o = runner.run(c, input);
      std::set<std::uint32_t> runs{std::bit_cast<std::uint32_t>(o.value)};
      for (int r = 1; r < calls; ++r) runs.insert(std::bit_cast<std::uint32_t>(runner.run(c, input).value));
      distinct_runs = std::max(distinct_runs, runs.size());
      across_shapes.insert(std::bit_cast<std::uint32_t>(o.value));
      std::string equals_model;
      if (runner.kind() == RunnerKind::cuda) {
        const bool same = std::bit_cast<std::uint32_t>(model.run(c, on_model).value) == std::bit_cast<std::uint32_t>(o.value);
        equals_model = same ? "1" : "0";
      }
      Judged j;
      j.input_special = exact.input_special;
      j.exact_overflows = !exact.input_special && !std::isfinite(exact.value);
      j.result_finite = std::isfinite(o.value);
      j.abs_error = exact.error_of(o.value);
      const double b = runner.bound(c, static_cast<std::uint64_t>(n), exact.sum_abs);
      const auto ms = device_ms(runner, o);
      Rows::value_type row = key;
      row.insert(row.end(), {runner.name(), std::string(to_string(runner.kind())), runner.config_label(c),
                             hex_bits(o.value), hex_bits(exact.value), csv_number(j.abs_error), csv_number(b),
                             std::string(to_string(judge(j, b))), std::to_string(ulp_distance(o.value, exact.value)),
                             equals_model, std::to_string(runs.size()), ms ? csv_number(*ms) : ""});
      cell.errors.push_back(std::move(row));
    }
    const std::size_t shapes = runner.configs();
    // The lab's rule: a CPU subject has one configuration, and one shape shows no invariance
    // (run_to_run at best, a declared shape_invariant then one_shape, not violated).
    const Determinism measured = measured_class(static_cast<int>(shapes), static_cast<int>(distinct_runs),
                                                static_cast<int>(across_shapes.size()));
    const Agreement a = compare(inf.determinism, measured, static_cast<int>(shapes));
    Rows::value_type row = key;
    row.insert(row.end(), {runner.name(), std::to_string(shapes), std::to_string(calls), std::to_string(distinct_runs),
                           std::to_string(across_shapes.size()), std::string(to_string(inf.determinism)),
                           std::string(to_string(measured)), a == Agreement::violated ? "0" : "1"});
    cell.determinism.push_back(std::move(row));
  }
  return cell;
}

void run_dot_study(const DotOptions& o) {
  const Plan p = make_plan(o);
  nlohmann::ordered_json plan;
  plan["backend"] = p.backend_name;
  plan["dists"] = o.dists;
  plan["sizes"] = p.sizes;
  plan["seeds"] = o.seeds;
  plan["runs"] = p.runs;
  nlohmann::ordered_json shapes = nlohmann::ordered_json::array();
  for (const LaunchShape& s : p.shapes) shapes.push_back(to_string(s));
  plan["shapes"] = shapes;
  Study study("dot", o.run, plan, p.backend_name,
              {{"dot_errors.csv", kErrorColumns}, {"dot_determinism.csv", kDeterminismColumns}});
  fmt::print("dot study on {}\n", p.backend == BackendKind::cuda ? row_backend_description(p.backend)
                                                                 : "the CPU model of the dot kernels' order");
  std::vector<Cell> cells;
  for (const auto& dist : o.dists)
    for (std::int64_t n : p.sizes)
      for (int seed = 1; seed <= o.seeds; ++seed)
        cells.push_back({fmt::format("{}|{}|{}", dist, n, seed), fmt::format("{} n={} seed={}", dist, n, seed),
                         [&p, dist, n, seed]() -> CellRows {
                           DotCell c = run_cell(p, dist, n, std::uint64_t(seed));
                           return {{"dot_errors.csv", c.errors}, {"dot_determinism.csv", c.determinism}};
                         }});
  study.run(cells);
  // Over every cell, resumed ones too: read back from the folder.
  const CsvTable errors = read_csv(study.folder().file("dot_errors.csv"));
  const CsvTable det = read_csv(study.folder().file("dot_determinism.csv"));
  long mismatches = 0;
  for (const auto& r : errors.rows) mismatches += r[static_cast<std::size_t>(errors.column("gpu_equals_model"))] == "0";
  long inconsistent = 0;
  for (const auto& r : det.rows) inconsistent += r[static_cast<std::size_t>(det.column("consistent"))] == "0";
  nlohmann::ordered_json summary = plan;
  const GpuModelCheck gpu = gpu_model_check(p.backend == BackendKind::cuda, mismatches);
  summary["gpu_model_mismatches"] = gpu.count;
  summary["determinism_inconsistent"] = inconsistent;
  // Every dot subject has a theorem (dot::dot_bound): a no_bound row is one whose condition fails.
  summary["no_bound_claimed"] = nlohmann::ordered_json::array();
  summary["csv"] = {"dot_errors.csv", "dot_determinism.csv"};
  study.finish(summary, {fmt::format("{}, {} determinism classes weaker than declared", gpu.words, inconsistent)});
  if (mismatches || inconsistent)
    throw CheckFailed(fmt::format("dot: {} GPU-vs-model mismatches, {} determinism classes weaker than declared (see {})",
                                  mismatches, inconsistent, study.folder().dir().string()));
}

}  // namespace

void register_study_dot(CLI::App& study) {
  auto o = std::make_shared<DotOptions>();
  auto* cmd = study.add_subcommand(
      "dot", "Dot products of float32 vectors: serial, exact, and the GPU tree with and without FMA, against the "
             "exact dot and Higham's bound, bits vs the model, determinism over shapes and runs; cuda or model");
  add_run_options(*cmd, o->run);
  cmd->add_flag("--quick", o->quick, "A small version: n = 1000 and 2^14+3");
  cmd->add_option("--backend", o->backend, "cuda or model (default: cuda when a GPU is present, else model)");
  cmd->add_option("--sizes", o->sizes, "n values: N, 2^k, 2^k+c (comma list; default 2^10 .. 2^24)")->delimiter(',');
  cmd->add_option("--dists", o->dists, "Distributions of x and y (core/generators.hpp; default normal,uniform)")
      ->delimiter(',');
  cmd->add_option("--seeds", o->seeds, "Seeds 1..N per cell")->capture_default_str();
  cmd->add_option("--runs", o->runs,
                  "Calls of each GPU configuration on cuda (default 3; the model is evaluated once) and of each CPU "
                  "subject (at least 2)");
  cmd->callback([o] { run_dot_study(*o); });
}

}  // namespace sumlab
