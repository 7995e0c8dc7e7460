#pragma once
// Timing of the GPU sums, for `sumlab bench` (no CUDA types here). A reduction reads each element
// once and is memory-bound, so what is measured is the device time of one sum, in the same run as
// two peers: CUB's DeviceReduce::Sum (gpu_cub) and a plain read kernel that loads every byte and
// adds nothing (time_read), the practical bandwidth roof.
//
// Method (each figure is the median of `samples` samples):
// - the input is `copies` copies of the n elements laid end to end (BenchInput), together at least
//   min_total_bytes (default 4 x the L2 size), and consecutive launches rotate through them, so no
//   launch finds its input in L2 where the previous one left it (at n >= 2^24 floats one copy is
//   already larger than the H200's 60 MB L2);
// - one untimed warm-up launch (it also allocates the workspace and gives the value), then each
//   sample times `launches` back-to-back sums with CUDA events and divides by `launches`, with
//   launches chosen so that a sample lasts about target_sample_ms: launch gaps at small n count,
//   as they do for a caller, but the events' own resolution does not;
// - whatever a kernel does per sum (a memset it needs, a second kernel, a copy of an intermediate
//   to the host) is inside the timed sequence;
// - a kernel that gives the same bits every run must end copies + 1 more back-to-back launches (the
//   last over copy 0 again) with the warm-up's bits, or the measurement is an error: launches
//   share counters and totals that each launch resets for the next (its last block; for the integer
//   sums, its block 0 resets the other of two result sets).
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "core/generators.hpp"
#include "core/gpu_kernel.hpp"
#include "core/launch_shape.hpp"
#include "core/scan/scan_kernel.hpp"
#include "core/segmented/strategy.hpp"
#include "gpu/device_buffer.hpp"
#include "gpu/device_entry.hpp"

namespace sumlab::gpu {

template <class T> class BenchInput {
 public:
  // Generates copy c's element i as generate_element(spec, seed, c * stride + i) on the device, so
  // copy 0 is the standard input of (spec, seed, n), then (order other than as_generated) sorts
  // each copy on the device as apply_ordering does on the CPU (a stable sort by OrderLess): copy 0
  // is apply_ordering(generate(spec, seed, n), order). Throws GpuError when it does not fit.
  BenchInput(std::int64_t n, const DistributionSpec& spec, std::uint64_t seed, std::size_t min_total_bytes = 0,
             Ordering order = Ordering::as_generated);
  std::int64_t n() const { return n_; }
  std::int64_t stride() const { return stride_; }  // a multiple of 64 elements (256-byte aligned copies)
  int copies() const { return copies_; }
  const DeviceBuffer<T>& buffer() const { return buffer_; }

 private:
  std::int64_t n_ = 0, stride_ = 0;
  int copies_ = 1;
  DeviceBuffer<T> buffer_;
};

struct TimingOptions {
  int samples = 15;
  double target_sample_ms = 4.0;
  int max_launches = 4000;
};

struct Timing {
  double ms = 0;      // median device time of one sum
  double ms_min = 0;  // fastest and slowest sample
  double ms_max = 0;
  int launches = 0;   // sums per sample
  int samples = 0;
  double value = 0;   // the warm-up's result on copy 0 (the standard input), widened
  std::string value_hex;  // its bits in T
  std::string error;  // non-empty: nothing valid was timed
  bool ok() const { return error.empty(); }
};

// Kernel k with shape s and options (canonicalised and validated as gpu_sum does).
template <class T>
Timing time_sum(GpuKernel k, const LaunchShape& s, const BenchInput<T>& in, const TimingOptions& o = {},
                const KernelOptions& opt = {});

// A device entry the lab does not own (gpu/device_entry.hpp: a plugin's), timed as time_sum times
// a kernel: the same rotation over the input's copies, warm-up and median of event-timed samples,
// the events recorded on the entry's stream around `launches` calls enqueued back to back (one
// synchronisation per sample). check_repeats (an entry that declares the same bits every run):
// copies + 1 more calls must end with the warm-up's bits. A refused call or a CUDA error is the
// timing's error.
template <class T>
Timing time_device_entry(const DeviceEntry<T>& entry, std::size_t scratch_bytes, const BenchInput<T>& in,
                         const TimingOptions& o = {}, bool check_repeats = false);

// The scale k fixed_point_sum derives from the input's copy 0 (61 - floor(log2 max|x|) over its
// finite elements; 0 when there are none), found on the device: the k a caller who knows the
// data's bound passes as KernelOptions::fixed_scale.
template <class T> int data_scale(const BenchInput<T>& in);

// The read roof: the fastest of a small sweep of a read-only kernel's shapes (grid-stride 16-byte
// loads, 64 bytes in flight per thread, the loaded bits folded so that the compiler keeps every
// load) over the first `elements` of each copy (all n by default: a roof for an input of fewer bytes,
// such as the bfloat16 rows made from a float32 input, is timed over that many bytes, since a
// launch's fixed cost does not shrink with its bytes). Bytes per second = elements * sizeof(T) / ms.
template <class T>
Timing time_read(const BenchInput<T>& in, const TimingOptions& o = {}, std::int64_t elements = -1);

// The other GPU families on copy 0 of the same input, for `sumlab bench`: the scans (+,
// inclusive), the segmented sums (segments of family_segment elements), the variance row kernels
// (rows of family_cols elements, statistics only, both layouts) and every row kernel over rows of
// each family_row_cols that divides n (statistics only, block_per_row with cols / e threads for each
// e of shapes.row_elements; float32 inputs also as bfloat16, whose bytes_per_element counts 2
// bytes), each algorithm at its default shape (or the
// modelled scans at shapes.scan, the segmented scan at shapes.segmented_tile; a shape an algorithm
// refuses is its row's error) with its CUB peer where it has one. A scan's or segmented scan's
// detail names the shape it ran. Timing is each family's own (gpu/scan.hpp, gpu/segmented.hpp,
// gpu/rows.hpp), as the sums are timed: the median of `samples` runs of launches back to back,
// event-timed, over a resident input whose copies the launches read in turn, together past the
// L2 as the sums' inputs. n must be a multiple of family_cols. A failure is the row's error, not
// an exception.
inline constexpr std::int64_t family_segment = 1024;
inline constexpr std::int64_t family_cols = 4096;
inline constexpr std::int64_t family_row_cols[] = {4096, 16384};

struct FamilyTiming {
  std::string family;            // "scan", "segmented", "variance", "rows"
  std::string kernel;            // the algorithm, as the family's study names it
  std::string detail;            // the problem: "+ inclusive", "segments of 1024", "rows of 4096, warp_per_row"
  std::string peer;              // the kernel of the same family whose time ratio_peer divides ("" for none)
  double bytes_per_element = 0;  // bytes read and written per input element
  double ms = 0;                 // median time of one launch sequence
  std::string error;             // non-empty: nothing valid was timed
  int input_bytes = 0;           // bytes of one input element where not the cell's T (2: bfloat16 rows)
};
struct FamilyShapes {
  std::optional<scan::ScanShape> scan;
  std::optional<segmented::SegShape> segmented_tile;
  // The rows family at each of these elements a thread (doubled for bfloat16): block_per_row with
  // cols / (elements) threads, skipped where that is no block of 32..1024 threads. A row's fold
  // and its tree of merges trade against each other: at 16 a thread, Welford and softmax rows
  // spend as much on the merges as on their elements, and the fastest shape differs by kernel,
  // type and size (Welford rows of 16384 at 2^28 fastest at 256 a thread, two-pass rows of 4096
  // at 2^22 at 32: docs/performance-notes.md).
  std::vector<int> row_elements{16, 32, 64, 128, 256, 512};
};
template <class T>
std::vector<FamilyTiming> time_families(const BenchInput<T>& in, int samples, const FamilyShapes& shapes = {});

}  // namespace sumlab::gpu
