#pragma once
// The launch-shape options shared by `sumlab sum`, `sumlab verify` and the studies:
// --grid --block --vector --mapping --warp-stage --block-stage --cross-block. An option not given
// keeps the kernel's default (core/gpu_kernel.hpp: default_shape); a kernel ignores the fields it
// does not take (canonicalize), and the shape actually used is what outputs report.
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "core/gpu_kernel.hpp"
#include "core/launch_shape.hpp"

namespace CLI { class App; class Option; }

namespace sumlab {

// Shape fields the caller set (the CLI's options, or Python's LaunchShape); the rest keep each
// kernel's default.
struct ShapeOverrides {
  std::optional<int> grid, block, vector;
  std::optional<std::string> mapping, warp_stage, block_stage, cross_block;
};

struct ShapeOptions {
  int grid = 0, block = 0, vector = 0;
  std::string mapping, warp_stage, block_stage, cross_block;
  // Set by add_shape_options; count() > 0 means the user gave the option.
  CLI::Option *grid_opt = nullptr, *block_opt = nullptr, *vector_opt = nullptr, *mapping_opt = nullptr,
              *warp_opt = nullptr, *block_stage_opt = nullptr, *cross_opt = nullptr;
  bool any_given() const;
};

void add_shape_options(CLI::App& cmd, ShapeOptions& o);
// The options the user gave.
ShapeOverrides overrides(const ShapeOptions& o);

// The shape a kernel runs, and the given fields it does not read ("grid": Harris 1-6 derive their
// grid from n), which outputs report instead of silently dropping them.
struct ResolvedShape {
  LaunchShape shape;
  std::vector<std::string> ignored;
};

// default_shape(k, sm_count) with every given field applied, canonicalized for k and validated
// for (dtype, n): a shape the kernel cannot run throws UserError with validate_shape's sentence
// (block above 1024 or not a multiple of 32, grid 0, vector 3, an unknown stage name, ...).
ResolvedShape resolve_shape(const ShapeOverrides& o, GpuKernel k, int sm_count, std::string_view dtype,
                            std::int64_t n);

// The shapes `sumlab bench` times kernel k with on dtype's data, each with its role: its default
// ("default"), and with `sweep` (kernels that take a grid and a block) 1, 2, 4 and 8 blocks per SM
// x 256, 512 and 1024 threads, at most 2048 threads per SM (9 shapes; the --sweep help says this
// rule), with 4-wide loads, each with both cross-block ends for kernels that take one
// (second_kernel and last_block: the same bits, two launches or one) ("sweep"); canonicalized, no
// shape twice.
std::vector<std::pair<LaunchShape, std::string>> bench_shapes(GpuKernel k, int sm_count, bool sweep,
                                                              std::string_view dtype);

}  // namespace sumlab
