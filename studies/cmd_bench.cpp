// `sumlab bench`: how fast each sum is, as ratios against peers measured in the same run.
//   bench_gpu.csv  per (dtype, distribution, n, kernel, shape): median time of one sum (gpu/bench.hpp
//                  says how: rotated inputs larger than L2, warm-up, event-timed samples), GB/s,
//                  and the ratios to CUB's DeviceReduce::Sum and to the read roof of that cell.
//                  Each plugin (--plugin LIB:SYMBOL) with a device entry for the dtype: one row per
//                  configuration, kernel name[label], role "plugin", timed the same way on the same
//                  input (gpu/bench.hpp's time_device_entry); ratio_cub = CUB's time / the plugin's.
//                  A plugin with host entries only is skipped with a note (its time would be the
//                  host's, not a kernel's).
//   bench_families.csv  per (dtype, n, family, kernel): the scans, segmented sums and row kernels
//                  (variance in both layouts; every row kernel over rows of 4096 and 16384, float32
//                  also as bfloat16) on the first distribution's input (gpu/bench.hpp's time_families), with
//                  the bandwidth ratio to that cell's read roof (read_ms over read_bytes: the cell's
//                  input, or the same bytes as a bfloat16 row's input), the time ratio to its CUB
//                  DeviceReduce::Sum, and the time ratio to the family's own CUB peer.
//   bench_cpu.csv  per (dtype, algorithm): ns per element of every CPU algorithm, and the ratio to
//                  the ordered double loop (`serial` on float64) timed in the same run.
// Without a GPU only bench_cpu.csv is written, so the command runs on any laptop.
#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdlib>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/cpu_algorithms.hpp"
#include "core/float_traits.hpp"
#include "core/generators.hpp"
#include "core/gpu_kernel.hpp"
#include "core/scan/scan_kernel.hpp"
#include "studies/commands.hpp"
#include "studies/external.hpp"
#include "studies/input_file.hpp"
#include "studies/input_options.hpp"
#include "studies/plugin.hpp"
#include "studies/run_folder.hpp"
#include "studies/shape_options.hpp"
#include "studies/size_text.hpp"
#include "studies/study_driver.hpp"
// Declarations only (plain C++): the families' default shapes are the options' defaults in a build
// without CUDA too, where bench times the CPU algorithms.
#include "gpu/bench.hpp"
#if defined(SUMLAB_WITH_CUDA)
#include "gpu/gpu_sum.hpp"
#endif

namespace sumlab {
namespace {

struct BenchOptions {
  RunOptions run;
  bool quick = false, no_gpu = false, no_cpu = false, sweep = false, no_families = false;
  std::vector<std::string> kernels;  // empty: every kernel but the diagnostic one
  std::vector<std::string> dtypes{"float32", "float64"};
  std::vector<std::string> dists{"uniform"};
  std::vector<std::string> exact_dists{"normal", "lognormal", "cancellation", "lognormal:12", "random_bits"};
  int log2_min = 20, log2_max = 30, log2_step = 2;
  int samples = 15;
  std::int64_t cpu_n = 10'000'000;
  int cpu_reps = 7;
  std::uint64_t seed = 1;
  std::vector<std::string> plugins;  // LIB:SYMBOL (studies/plugin.hpp): device entries timed beside CUB
  std::string scan_shape, segmented_tile;  // "b256x15": the families at this shape instead of the default
  std::vector<int> row_elements = gpu::FamilyShapes{}.row_elements;  // the rows family's elements a thread
};

const std::vector<std::string> kGpuColumns{"dtype", "distribution", "n", "kernel", "shape", "role", "ms", "ms_min",
                                           "ms_max", "launches", "samples", "gb_per_s", "ratio_cub", "ratio_read",
                                           "cub_ms", "read_ms", "value_hex", "error"};
const std::vector<std::string> kFamilyColumns{"dtype", "n", "family", "kernel", "detail", "ms", "bytes_per_element",
                                              "gb_per_s", "ratio_read", "ratio_cub_reduce", "peer", "ratio_peer",
                                              "read_ms", "read_bytes", "cub_ms", "error"};
const std::vector<std::string> kCpuColumns{"dtype", "algorithm", "n", "ns_per_element", "ns_min", "reps",
                                           "ratio_serial_double", "value_hex"};

// --scan-shape / --segmented-tile, "b256x15" (scan::to_string's notation for both).
std::optional<scan::ScanShape> parse_family_shape(const std::string& text, const char* option) {
  if (text.empty()) return std::nullopt;
  const auto s = scan::parse_scan_shape(text);
  if (!s) throw UserError(std::string(option) + ": '" + text + "' is not bBLOCKxITEMS (e.g. b256x15)");
  return s;
}

// "NAME[:SIGMA][/ORDER]": a distribution (parse_distribution_spec; lognormal:12 lies far past the
// 2^60 range the exact kernel's fast path covers), and an ordering of each bench copy
// (lognormal:12/magnitude_ascending), sorted on the device as apply_ordering sorts on the CPU.
struct BenchDist {
  DistributionSpec spec;
  Ordering order = Ordering::as_generated;
};

BenchDist parse_bench_dist(const std::string& text) {
  BenchDist d;
  const auto slash = text.find('/');
  try {
    d.spec = parse_distribution_spec(std::string_view(text).substr(0, slash));
    if (slash != std::string::npos) d.order = parse_ordering(text.substr(slash + 1));
  } catch (const std::invalid_argument& e) {
    throw UserError(std::string("--dists/--exact-dists: ") + e.what());
  }
  return d;
}

// ---- CPU -------------------------------------------------------------------------------------

template <class T> std::vector<std::vector<std::string>> cpu_rows(const BenchOptions& o) {
  DistributionSpec spec;
  const std::vector<T> x = generate<T>(spec, o.seed, static_cast<std::size_t>(o.cpu_n));
  std::vector<std::vector<std::string>> rows;
  for (const CpuAlgorithm<T>& a : cpu_algorithms<T>()) {
    std::vector<double> ns;
    T value{};
    for (int r = 0; r < std::max(1, o.cpu_reps); ++r) {
      const auto t0 = std::chrono::steady_clock::now();
      value = a.sum(std::span<const T>(x)).value;
      const auto t1 = std::chrono::steady_clock::now();
      ns.push_back(std::chrono::duration<double, std::nano>(t1 - t0).count() / static_cast<double>(x.size()));
    }
    std::sort(ns.begin(), ns.end());
    const double med = ns[ns.size() / 2];
    rows.push_back({std::string(FloatTraits<T>::dtype), std::string(a.info.name), std::to_string(x.size()), csv_number(med),
                    csv_number(ns.front()), std::to_string(ns.size()), "", hex_bits(value)});
  }
  return rows;
}

// Every dtype's CPU rows, with each algorithm's time over the ordered double loop's.
Rows bench_cpu(const BenchOptions& o) {
  Rows rows;
  for (const auto& dt : o.dtypes) {
    auto r = parse_dtype(dt) == Dtype::float32 ? cpu_rows<float>(o) : cpu_rows<double>(o);
    rows.insert(rows.end(), r.begin(), r.end());
  }
  // The peer, the ordered double loop, as the CSV holds it (so that its own row reads exactly 1);
  // timed on its own when float64 was not asked for.
  auto serial_double = [](const std::vector<std::vector<std::string>>& rs) {
    for (const auto& r : rs)
      if (r[0] == "float64" && r[1] == "serial") return std::stod(r[3]);
    return 0.0;
  };
  double serial_double_ns = serial_double(rows);
  if (serial_double_ns == 0) serial_double_ns = serial_double(cpu_rows<double>(o));
  for (auto& r : rows) r[6] = csv_number(std::stod(r[3]) / serial_double_ns);
  return rows;
}

// ---- The terminal's tables (every row and column stay in the CSVs) ----------------------------

struct Shown {
  const char* column;  // in the CSV
  const char* heading;
  enum { text, us, ratio, number } as;
};

// The rows `keep` accepts, in `shown`'s columns: times (ms in the CSV) in µs, ratios to 2 places.
template <class Keep> void print_table(const CsvTable& t, const std::vector<Shown>& shown, Keep keep) {
  std::vector<int> at;
  for (const auto& c : shown) at.push_back(t.column(c.column));
  std::vector<std::vector<std::string>> cells;
  for (const auto& row : t.rows) {
    if (!keep(row)) continue;
    auto& out = cells.emplace_back();
    for (std::size_t i = 0; i < shown.size(); ++i) {
      const auto c = static_cast<std::size_t>(at[i]);
      const std::string v = at[i] < 0 || c >= row.size() ? "" : row[c];
      const double x = v.empty() || shown[i].as == Shown::text ? 0.0 : std::strtod(v.c_str(), nullptr);
      out.push_back(v.empty() || shown[i].as == Shown::text ? v
                    : shown[i].as == Shown::us            ? fmt::format("{:.2f}", x * 1e3)
                    : shown[i].as == Shown::ratio         ? fmt::format("{:.2f}", x)
                                                          : fmt::format("{:.3g}", x));
    }
  }
  if (cells.empty()) return;
  std::vector<std::size_t> width;
  for (std::size_t i = 0; i < shown.size(); ++i) {
    width.push_back(std::string_view(shown[i].heading).size());
    for (const auto& r : cells) width[i] = std::max(width[i], r[i].size());
  }
  auto line = [&](auto&& field) {
    std::string l;
    for (std::size_t i = 0; i < shown.size(); ++i) {
      const std::string f = field(i);
      // Text left-aligned, numbers right-aligned.
      l += shown[i].as == Shown::text ? fmt::format("{:<{}}", f, width[i]) : fmt::format("{:>{}}", f, width[i]);
      l += i + 1 < shown.size() ? "  " : "";
    }
    while (!l.empty() && l.back() == ' ') l.pop_back();
    fmt::print("{}\n", l);
  };
  line([&](std::size_t i) { return std::string(shown[i].heading); });
  for (const auto& r : cells) line([&](std::size_t i) { return r[i]; });
}

void print_tables(const RunFolder& folder, bool gpu, bool families, bool cpu) {
  if (gpu) {
    const CsvTable t = read_csv(folder.file("bench_gpu.csv"));
    const int role = t.column("role");
    fmt::print("GPU sums at their default shapes (sweep shapes: bench_gpu.csv); vs CUB, vs read: CUB's or the read "
               "roof's time over this one's (above 1: faster)\n");
    print_table(t,
                {{"dtype", "dtype", Shown::text}, {"distribution", "distribution", Shown::text},
                 {"n", "n", Shown::text}, {"kernel", "kernel", Shown::text}, {"ms", "us", Shown::us},
                 {"ratio_cub", "vs CUB", Shown::ratio}, {"ratio_read", "vs read", Shown::ratio},
                 {"error", "error", Shown::text}},
                [role](const auto& row) {
                  return role < 0 || static_cast<std::size_t>(role) >= row.size() ||
                         row[static_cast<std::size_t>(role)] != "sweep";
                });
  }
  if (families) {
    fmt::print("Scans, segmented sums and row kernels (bench_families.csv); vs read: of the read roof's bandwidth; "
               "vs peer: the peer's time over this one's\n");
    print_table(read_csv(folder.file("bench_families.csv")),
                {{"dtype", "dtype", Shown::text}, {"n", "n", Shown::text}, {"family", "family", Shown::text},
                 {"kernel", "kernel", Shown::text}, {"detail", "detail", Shown::text}, {"ms", "us", Shown::us},
                 {"ratio_read", "vs read", Shown::ratio}, {"peer", "peer", Shown::text},
                 {"ratio_peer", "vs peer", Shown::ratio}, {"error", "error", Shown::text}},
                [](const auto&) { return true; });
  }
  if (cpu) {
    fmt::print("CPU algorithms (bench_cpu.csv); time / serial double: this one's time over the ordered double loop's\n");
    print_table(read_csv(folder.file("bench_cpu.csv")),
                {{"dtype", "dtype", Shown::text}, {"algorithm", "algorithm", Shown::text},
                 {"ns_per_element", "ns/element", Shown::number},
                 {"ratio_serial_double", "time / serial double", Shown::ratio}},
                [](const auto&) { return true; });
  }
}

// The summary's CPU part, read back from the rows (a resumed run's too).
nlohmann::ordered_json cpu_summary(const BenchOptions& o, const CsvTable& t) {
  nlohmann::ordered_json s = {{"n", o.cpu_n}};
  for (const auto& r : t.rows) {
    if (r[0] == "float64" && r[1] == "serial") s["serial_double_ns_per_element"] = std::stod(r[3]);
    if (r[1] == "exact") s["exact_" + r[0] + "_ratio_serial_double"] = std::stod(r[6]);
  }
  return s;
}

// ---- GPU -------------------------------------------------------------------------------------

std::vector<GpuKernel> bench_kernels(const BenchOptions& o) {
  std::vector<GpuKernel> ks;
  if (o.kernels.empty()) {
    for (const auto& k : gpu_kernels())
      if (!k.diagnostic_only) ks.push_back(k.kernel);
    return ks;
  }
  for (const auto& name : o.kernels) {
    const auto k = find_gpu_kernel(name);
    if (!k) throw UserError("--kernels: unknown kernel '" + name + "' (valid: " + gpu_kernel_names() + ")");
    ks.push_back(*k);
  }
  return ks;
}


#if defined(SUMLAB_WITH_CUDA)
gpu::FamilyShapes family_shapes(const BenchOptions& o) {
  gpu::FamilyShapes f;
  f.scan = parse_family_shape(o.scan_shape, "--scan-shape");
  if (const auto t = parse_family_shape(o.segmented_tile, "--segmented-tile"))
    f.segmented_tile = segmented::SegShape{t->block, t->items};
  f.row_elements = o.row_elements;
  return f;
}

// The other families on the cell's input, against the cell's read roof and CUB reduction. A family
// whose input is narrower than T (bfloat16 rows made from float32) is set against a roof timed over
// the same bytes: at 2^22 floats a read of half the bytes takes more than half the time.
template <class T>
Rows bench_families_cell(const gpu::BenchInput<T>& input, const gpu::TimingOptions& to, const gpu::FamilyShapes& shapes,
                         const gpu::Timing& read, const gpu::Timing& cub) {
  const std::string dt(FloatTraits<T>::dtype);
  const std::int64_t n = input.n();
  const std::vector<gpu::FamilyTiming> timings = gpu::time_families<T>(input, to.samples, shapes);
  std::map<int, gpu::Timing> narrow_roofs;  // by input bytes an element
  auto roof_for = [&](const gpu::FamilyTiming& t) -> const gpu::Timing& {
    if (t.input_bytes == 0 || t.input_bytes == int(sizeof(T))) return read;
    auto it = narrow_roofs.find(t.input_bytes);
    if (it == narrow_roofs.end())
      it = narrow_roofs.emplace(t.input_bytes, gpu::time_read<T>(input, to, n * t.input_bytes / std::int64_t(sizeof(T)))).first;
    return it->second;
  };
  std::vector<std::vector<std::string>> rows;
  for (const auto& t : timings) {
    const gpu::Timing& roof = roof_for(t);
    const double roof_bytes = t.input_bytes == 0 ? static_cast<double>(sizeof(T)) : t.input_bytes;
    const bool ok = t.error.empty() && t.ms > 0;
    double peer_ms = 0;
    // The peer of the same problem: its detail is the row's without the shape ("max inclusive" for
    // "max inclusive, b512x23"; the scans time three operators against CUB's call for each).
    for (const auto& p : timings)
      if (p.family == t.family && p.kernel == t.peer && p.error.empty() && t.detail.starts_with(p.detail)) peer_ms = p.ms;
    const double moved = t.bytes_per_element * static_cast<double>(n);
    rows.push_back({dt, std::to_string(n), t.family, t.kernel, t.detail, ok ? csv_number(t.ms) : "",
                    csv_number(t.bytes_per_element), ok ? csv_number(moved / (t.ms * 1e-3) / 1e9) : "",
                    ok && roof.ok() ? csv_number(t.bytes_per_element * roof.ms / (roof_bytes * t.ms)) : "",
                    ok && cub.ok() ? csv_number(cub.ms / t.ms) : "", t.peer,
                    ok && peer_ms > 0 ? csv_number(peer_ms / t.ms) : "", roof.ok() ? csv_number(roof.ms) : "",
                    csv_number(roof_bytes * static_cast<double>(n)), cub.ok() ? csv_number(cub.ms) : "",
                    t.error});
  }
  return rows;
}

// One (dtype, distribution, n) cell: every kernel against the read roof and CUB, and (with_families)
// the other families on the same input.
template <class T>
CellRows bench_gpu_cell(const BenchOptions& o, const std::vector<GpuKernel>& kernels,
                        const std::vector<std::shared_ptr<ExternalSum>>& plugins, int sms, const std::string& dist,
                        std::int64_t n, bool with_families) {
  const std::string dt(FloatTraits<T>::dtype);
  const BenchDist d = parse_bench_dist(dist);
  const gpu::BenchInput<T> input(n, d.spec, o.seed, 0, d.order);
  gpu::TimingOptions to;
  to.samples = o.samples;
  const gpu::Timing read = gpu::time_read<T>(input, to);
  const gpu::Timing cub = gpu::time_sum<T>(GpuKernel::cub, default_shape(GpuKernel::cub, sms), input, to);
  const double bytes = static_cast<double>(n) * sizeof(T);
  std::vector<std::vector<std::string>> rows;
  auto row = [&](const std::string& kernel, const std::string& shape, const std::string& role, const gpu::Timing& t) {
    const bool ok = t.ok() && t.ms > 0;
    rows.push_back({dt, dist, std::to_string(n), kernel, shape, role, ok ? csv_number(t.ms) : "", ok ? csv_number(t.ms_min) : "",
                    ok ? csv_number(t.ms_max) : "", std::to_string(t.launches), std::to_string(t.samples),
                    ok ? csv_number(bytes / (t.ms * 1e-3) / 1e9) : "", ok && cub.ok() ? csv_number(cub.ms / t.ms) : "",
                    ok && read.ok() ? csv_number(read.ms / t.ms) : "", cub.ok() ? csv_number(cub.ms) : "",
                    read.ok() ? csv_number(read.ms) : "", t.value_hex, t.error});
  };
  row("read_roof", "", "peer", read);
  row("gpu_cub", "", "peer", cub);
  const bool extra_dist = std::find(o.dists.begin(), o.dists.end(), dist) == o.dists.end();
  for (GpuKernel k : kernels) {
    if (k == GpuKernel::cub) continue;
    if (info(k).float_input_only && !std::is_same_v<T, float>) continue;
    if (extra_dist && k != GpuKernel::exact) continue;        // the range study is the exact sum's
    if (k == GpuKernel::serial && n > (std::int64_t(1) << 20)) continue;  // one thread: seconds
    // gpu_fixed_point twice: the scale from the data (two passes' work in one read when every
    // element is on the grid), and the same k given by the caller (one pass, nothing to find).
    std::vector<std::pair<std::string, KernelOptions>> variants{{std::string(info(k).name), {}}};
    if (k == GpuKernel::fixed_point) {
      KernelOptions given;
      given.fixed_scale = gpu::data_scale<T>(input);
      variants.push_back({"gpu_fixed_point_given_k", given});
    }
    for (const auto& [label, opt] : variants)
      for (const auto& [shape, role] : bench_shapes(k, sms, o.sweep, FloatTraits<T>::dtype)) {
        const gpu::Timing t = gpu::time_sum<T>(k, shape, input, to, opt);
        const bool has_shape = info(k).shape_fields != 0;
        row(label, has_shape ? to_string(shape) : "", role, t);
      }
  }
  // The plugins' device entries, each configuration as the plugin's launch shape; a value that is
  // NaN on this finite input is the plugin's failure, as in the studies.
  if (std::find(o.dists.begin(), o.dists.end(), dist) != o.dists.end())
    for (const auto& p : plugins) {
      const auto configs = p->configs();
      for (std::size_t c = 0; c < configs.size(); ++c) {
        gpu::Timing t;
        try {
          const PluginDeviceCall<T> call = plugin_device_call<T>(p->name(), c, static_cast<std::size_t>(n));
          if (!call.entry) continue;  // no device entry for T
          t = gpu::time_device_entry<T>(call.entry, call.scratch_bytes, input, to,
                                        p->declared() != Determinism::not_deterministic);
          if (t.ok() && std::isnan(t.value)) t.error = "returned NaN for an input of finite values";
        } catch (const ExternalError& e) {
          t.error = e.what();
        }
        row(config_name(p->name(), configs[c]), "", "plugin", t);
      }
    }
  CellRows out{{"bench_gpu.csv", rows}};
  if (with_families && n % gpu::family_cols == 0)
    out["bench_families.csv"] = bench_families_cell<T>(input, to, family_shapes(o), read, cub);
  return out;
}
#endif

void check_bench_options(const BenchOptions& o) {
  if (o.log2_min < 0 || o.log2_max > 31 || o.log2_min > o.log2_max || o.log2_step < 1)
    throw UserError("--log2-min/--log2-max/--log2-step: need 0 <= min <= max <= 31 and step >= 1");
  if (o.samples < 1 || o.cpu_reps < 1 || o.cpu_n < 1) throw UserError("--samples, --cpu-reps and --cpu-n must be >= 1");
  for (const auto& dt : o.dtypes) (void)parse_dtype(dt);  // a bad name fails before anything runs
  (void)parse_family_shape(o.scan_shape, "--scan-shape");
  (void)parse_family_shape(o.segmented_tile, "--segmented-tile");
  if (o.row_elements.empty()) throw UserError("--row-elements: give at least one count");
  for (const int e : o.row_elements)
    if (e < 1 || e > 1024 || (e & (e - 1)) != 0)
      throw UserError("--row-elements: " + std::to_string(e) + " is not a power of two in 1..1024");
  for (const auto& d : o.dists) (void)parse_bench_dist(d);
  for (const auto& d : o.exact_dists) (void)parse_bench_dist(d);
}

// Plugins are timed by their device entries; a host-only one (or any, without a GPU) is named and
// skipped.
std::vector<std::shared_ptr<ExternalSum>> timed_plugins_of(const std::vector<std::shared_ptr<ExternalSum>>& subjects,
                                                           bool gpu) {
  std::vector<std::shared_ptr<ExternalSum>> timed_plugins;
  for (const auto& p : subjects) {
    if (!p->has_device_entry("float32") && !p->has_device_entry("float64"))
      fmt::print(stderr, "bench: plugin '{}' has host entries only; bench times device entries, so it is skipped\n",
                 p->name());
    else if (!gpu)
      fmt::print(stderr, "bench: plugin '{}' is not timed: its device entries need a GPU\n", p->name());
    else
      timed_plugins.push_back(p);
  }
  return timed_plugins;
}

nlohmann::ordered_json bench_plan(const BenchOptions& o, bool gpu, const std::vector<GpuKernel>& selected,
                                  const std::vector<std::string>& dists, const std::vector<std::int64_t>& sizes,
                                  const std::vector<LoadedPlugin>& loaded) {
  std::vector<std::string> kernel_list;
  for (GpuKernel k : selected) kernel_list.emplace_back(info(k).name);
  nlohmann::ordered_json plan;
  plan["gpu"] = gpu;
  plan["cpu"] = !o.no_cpu;
  plan["families"] = gpu && !o.no_families;
  plan["kernels"] = kernel_list;
  plan["dtypes"] = o.dtypes;
  plan["dists"] = dists;
  plan["sizes"] = sizes;
  plan["sweep"] = o.sweep;
  plan["samples"] = o.samples;
  plan["cpu_n"] = o.cpu_n;
  plan["cpu_reps"] = o.cpu_reps;
  plan["seed"] = o.seed;
  // The family shapes, where asked for: a resume with other shapes is another run.
  if (!o.scan_shape.empty()) plan["scan_shape"] = o.scan_shape;
  if (!o.segmented_tile.empty()) plan["segmented_tile"] = o.segmented_tile;
  plan["row_elements"] = o.row_elements;
  if (!loaded.empty()) plan["plugins"] = plugin_plan(loaded);
  return plan;
}

void run_bench(const BenchOptions& o) {
  check_bench_options(o);
  const std::vector<GpuKernel> selected = bench_kernels(o);
  const auto loaded = load_plugins(o.plugins);
  const auto plugin_subjects = externals(with_plugins({}, loaded));
  bool gpu = !o.no_gpu;
  std::string device = "none";
#if defined(SUMLAB_WITH_CUDA)
  std::string why;
  if (gpu && !gpu::gpu_available(&why)) {
    fmt::print(stderr, "bench: {}; timing the CPU algorithms only\n", why);
    gpu = false;
  }
  const std::vector<GpuKernel> kernels = gpu ? selected : std::vector<GpuKernel>{};
#else
  (void)selected;
  if (gpu) fmt::print(stderr, "bench: built without CUDA; timing the CPU algorithms only\n");
  gpu = false;
#endif
  if (!gpu && o.no_cpu) throw UserError("bench: nothing to time (no GPU kernels here, and --no-cpu)");
  const auto timed_plugins = timed_plugins_of(plugin_subjects, gpu);

  std::vector<std::int64_t> sizes;
  for (int e = o.log2_min; e <= o.log2_max; e += o.log2_step) sizes.push_back(std::int64_t(1) << e);
  std::vector<std::string> dists = o.dists;
  if (std::find(selected.begin(), selected.end(), GpuKernel::exact) != selected.end())
    for (const auto& x : o.exact_dists)
      if (std::find(dists.begin(), dists.end(), x) == dists.end()) dists.push_back(x);
  const nlohmann::ordered_json plan = bench_plan(o, gpu, selected, dists, sizes, loaded);
  std::vector<Table> tables;
  if (gpu) tables.push_back({"bench_gpu.csv", kGpuColumns});
  if (gpu && !o.no_families) tables.push_back({"bench_families.csv", kFamilyColumns});
  if (!o.no_cpu) tables.push_back({"bench_cpu.csv", kCpuColumns});
  Study study("bench", o.run, plan, gpu ? "cuda" : "cpu", tables);

  std::vector<Cell> cells;
  nlohmann::ordered_json summary;
#if defined(SUMLAB_WITH_CUDA)
  if (gpu) {
    const gpu::DeviceInfo d = gpu::device_info();
    device = fmt::format("{} ({} SMs, L2 {} MB)", d.name, d.sm_count, d.l2_bytes >> 20);
    for (const auto& dt : o.dtypes)
      for (const auto& dist : dists)
        for (const std::int64_t n : sizes) {
          // The families on the first distribution's input only.
          const bool families = !o.no_families && dist == dists.front();
          const int sms = d.sm_count;
          cells.push_back({fmt::format("gpu|{}|{}|{}", dt, dist, n), fmt::format("{} {} n={}", dt, dist, size_text(n)),
                           [&o, &kernels, &timed_plugins, sms, dt, dist, n, families] {
                             return parse_dtype(dt) == Dtype::float32
                                        ? bench_gpu_cell<float>(o, kernels, timed_plugins, sms, dist, n, families)
                                        : bench_gpu_cell<double>(o, kernels, timed_plugins, sms, dist, n, families);
                           }});
        }
  }
#endif
  if (!o.no_cpu)
    cells.push_back({"cpu", "CPU algorithms", [&o]() -> CellRows { return {{"bench_cpu.csv", bench_cpu(o)}}; }});
  study.run(cells);
  print_tables(study.folder(), gpu, gpu && !o.no_families, !o.no_cpu);
  summary["device"] = device;
  if (!o.no_cpu) summary["cpu"] = cpu_summary(o, read_csv(study.folder().file("bench_cpu.csv")));
  summary["csv"] = nlohmann::ordered_json::array();
  for (const auto& t : tables) summary["csv"].push_back(t.name);
  study.finish(summary);
}

}  // namespace

void register_bench(CLI::App& app) {
  auto o = std::make_shared<BenchOptions>();
  auto* cmd = app.add_subcommand("bench", "Time every sum on the GPU (against CUB and a read roof) and the CPU");
  add_run_options(*cmd, o->run);
  cmd->add_flag("--quick", o->quick, "A small version: n = 2^20 and 2^24, 5 samples, CPU n = 10^6");
  cmd->add_flag("--sweep", o->sweep, "Also time, per kernel at every n, the grid x block shapes of 1, 2, 4, 8 blocks per SM x 256, 512, 1024 threads with at most 2048 threads per SM, each also with the last-block stage where a kernel takes one (bench_gpu.csv has every shape; the report shows the fastest beside the default)");
  cmd->add_flag("--no-gpu", o->no_gpu, "Time the CPU algorithms only");
  cmd->add_flag("--no-cpu", o->no_cpu, "Time the GPU kernels only");
  cmd->add_flag("--no-families", o->no_families,
                "Skip the scans, segmented sums and variance row kernels (timed otherwise at every n that is a "
                "multiple of 4096, on the first --dists input)");
  cmd->add_option("--kernels", o->kernels, "GPU kernels (comma list of gpu_* names; default all)")->delimiter(',');
  cmd->add_option("--dtypes", o->dtypes, "float32, float64 (comma list)")->delimiter(',')->capture_default_str();
  cmd->add_option("--dists", o->dists,
                  "Input distributions for every kernel (comma list of NAME[:SIGMA][/ORDER], e.g. "
                  "lognormal:12/magnitude_ascending: each copy sorted on the device)")
      ->delimiter(',')
      ->capture_default_str();
  cmd->add_option("--exact-dists", o->exact_dists, "Extra distributions timed for gpu_exact (and CUB), the range study")
      ->delimiter(',')->capture_default_str();
  cmd->add_option("--log2-min", o->log2_min, "Smallest n = 2^min")->capture_default_str();
  cmd->add_option("--log2-max", o->log2_max, "Largest n = 2^max")->capture_default_str();
  cmd->add_option("--log2-step", o->log2_step, "Step of the exponent")->capture_default_str();
  cmd->add_option("--samples", o->samples, "Timed samples per measurement (median kept)")->capture_default_str();
  cmd->add_option("--cpu-n", o->cpu_n, "Elements of the CPU timing")->capture_default_str();
  cmd->add_option("--cpu-reps", o->cpu_reps, "CPU repetitions (median kept)")->capture_default_str();
  add_seed_option(*cmd, "--seed", o->seed, "Generator seed");
  cmd->add_option("--scan-shape", o->scan_shape,
                  "Time the modelled scans at this shape, bBLOCKxITEMS (default: each one's own; one a scan refuses is its row's error)");
  cmd->add_option("--segmented-tile", o->segmented_tile,
                  "Time the segmented scan with this tile, bBLOCKxITEMS (default: its own)");
  cmd->add_option("--row-elements", o->row_elements,
                  "The rows family's elements a thread, each a power of two (comma list): block_per_row with cols / e "
                  "threads, cols / 2e for bfloat16, where that is a block of 32..1024 threads")
      ->delimiter(',')->capture_default_str();
  add_plugin_option(*cmd, o->plugins);
  cmd->callback([o] {
    BenchOptions b = *o;
    if (b.quick) {
      b.log2_min = std::max(b.log2_min, 20);
      b.log2_max = std::min(b.log2_max, 24);
      b.log2_step = std::max(b.log2_step, 4);
      b.samples = std::min(b.samples, 5);
      b.cpu_n = std::min<std::int64_t>(b.cpu_n, 1'000'000);
      b.cpu_reps = std::min(b.cpu_reps, 3);
    }
    run_bench(b);
  });
}

}  // namespace sumlab
