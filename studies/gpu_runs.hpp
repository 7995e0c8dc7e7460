#pragma once
// GPU kernels inside `sumlab sum` and the studies: pick kernels by name, resolve each one's launch
// shape from the shape options, run them on a backend (cuda or model), and describe the shape in
// JSON. Keeps cmd_sum.cpp's part to a few lines.
#include <span>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/gpu_kernel.hpp"
#include "core/launch_shape.hpp"
#include "studies/backend.hpp"
#include "studies/shape_options.hpp"

namespace sumlab {

// The GPU kernels among `names`, in the order given: a gpu_* name selects that kernel, "all" or
// "gpu" every kernel but the diagnostic one; other names (CPU algorithms) are skipped. A gpu_* name
// that is not a kernel throws UserError listing the valid ones.
std::vector<GpuKernel> select_gpu_kernels(const std::vector<std::string>& names);

template <class T> struct GpuKernelRun {
  GpuKernel kernel;
  LaunchShape shape;  // the shape that ran (each kernel's default, the options applied, canonical)
  KernelOutcome<T> outcome;
};

// Resolves every kernel's shape first (so a bad option fails before anything runs), then runs them;
// opt goes to the kernels that take it (KernelOptions::fixed_scale: gpu_fixed_point).
// Throws UserError for a shape a kernel cannot take or a backend failure.
template <class T>
std::vector<GpuKernelRun<T>> run_gpu_kernels(Backend& backend, const std::vector<GpuKernel>& kernels,
                                            const ShapeOptions& shape, std::span<const T> x,
                                            const KernelOptions& opt = {});

// {"text": "528x256 v4 grid_stride ...", "grid": 528, "block": 256, "vector": 4, "mapping": ...,
//  "warp_stage": ..., "block_stage": ..., "cross_block": ...}; null for kernels that take no shape.
nlohmann::ordered_json shape_json(GpuKernel k, const LaunchShape& s);

}  // namespace sumlab
