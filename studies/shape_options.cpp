#include "studies/shape_options.hpp"

#include <CLI/CLI.hpp>

#include "studies/commands.hpp"

namespace sumlab {

bool ShapeOptions::any_given() const {
  for (const CLI::Option* o : {grid_opt, block_opt, vector_opt, mapping_opt, warp_opt, block_stage_opt, cross_opt})
    if (o && o->count() > 0) return true;
  return false;
}

void add_shape_options(CLI::App& cmd, ShapeOptions& o) {
  const std::string group = "Launch shape (GPU kernels; default: each kernel's own)";
  o.grid_opt = cmd.add_option("--grid", o.grid, "Blocks in the grid (default: 4 x SM count; 2 x for gpu_exact and gpu_fixed_point, 1 x for gpu_exact on float64)")->group(group);
  o.block_opt = cmd.add_option("--block", o.block, "Threads per block, 1..1024 (default 256)")->group(group);
  o.vector_opt = cmd.add_option("--vector", o.vector, "Elements per load: 1, 2 or 4 (default 4)")->group(group);
  o.mapping_opt = cmd.add_option("--mapping", o.mapping,
                                 "Element-to-thread mapping: " + std::string(mapping_names()))->group(group);
  o.warp_opt = cmd.add_option("--warp-stage", o.warp_stage,
                              "Warp tree: " + std::string(warp_stage_names()))->group(group);
  o.block_stage_opt = cmd.add_option("--block-stage", o.block_stage,
                                     "Tree over the warp totals: " + std::string(block_stage_names()))->group(group);
  o.cross_opt = cmd.add_option("--cross-block", o.cross_block,
                               "How blocks meet: " + std::string(cross_block_names()) +
                                   " (gpu_two_pass/gpu_atomic/gpu_last_block fix their own)")->group(group);
}

namespace {
bool given(const CLI::Option* o) { return o && o->count() > 0; }

template <class E, class Parse>
E parse_or_throw(const std::string& text, Parse parse, std::string_view option, std::string_view valid) {
  if (auto v = parse(text)) return *v;
  throw UserError("--" + std::string(option) + " '" + text + "' is not one of " + std::string(valid));
}
}  // namespace

ShapeOverrides overrides(const ShapeOptions& o) {
  ShapeOverrides v;
  if (given(o.grid_opt)) v.grid = o.grid;
  if (given(o.block_opt)) v.block = o.block;
  if (given(o.vector_opt)) v.vector = o.vector;
  if (given(o.mapping_opt)) v.mapping = o.mapping;
  if (given(o.warp_opt)) v.warp_stage = o.warp_stage;
  if (given(o.block_stage_opt)) v.block_stage = o.block_stage;
  if (given(o.cross_opt)) v.cross_block = o.cross_block;
  return v;
}

ResolvedShape resolve_shape(const ShapeOverrides& o, GpuKernel k, int sm_count, std::string_view dtype,
                            std::int64_t n) {
  ResolvedShape r;
  LaunchShape& s = r.shape;
  s = default_shape(k, sm_count, dtype);
  const unsigned reads = info(k).shape_fields;
  auto note = [&](bool set, unsigned field, const char* name) {
    if (set && !(reads & field)) r.ignored.emplace_back(name);
  };
  note(o.grid.has_value(), field_grid, "grid");
  note(o.block.has_value(), field_block, "block");
  note(o.vector.has_value(), field_vector, "vector");
  note(o.mapping.has_value(), field_mapping, "mapping");
  note(o.warp_stage.has_value(), field_warp, "warp-stage");
  note(o.block_stage.has_value(), field_block_stage, "block-stage");
  note(o.cross_block.has_value() && !fixed_cross_block(k), field_cross, "cross-block");
  if (o.grid) s.grid = *o.grid;
  if (o.block) s.block = *o.block;
  if (o.vector) s.vector = *o.vector;
  if (o.mapping) s.mapping = parse_or_throw<Mapping>(*o.mapping, parse_mapping, "mapping", mapping_names());
  if (o.warp_stage) s.warp = parse_or_throw<WarpStage>(*o.warp_stage, parse_warp_stage, "warp-stage", warp_stage_names());
  if (o.block_stage)
    s.block_stage = parse_or_throw<BlockStage>(*o.block_stage, parse_block_stage, "block-stage", block_stage_names());
  // A kernel with its own cross-block stage refuses another one (validate_shape says which to use).
  if (o.cross_block)
    s.cross = parse_or_throw<CrossBlock>(*o.cross_block, parse_cross_block, "cross-block", cross_block_names());
  // Validate before canonicalizing, so that a bad value is reported even for a field the kernel
  // ignores (grid 0 is an error, not a default); then reset the ignored fields.
  if (const std::string e = validate(s); !e.empty() && reads != 0) throw UserError(e);
  if (auto fixed = fixed_cross_block(k); fixed && o.cross_block && s.cross != *fixed)
    throw UserError(validate_shape(k, s, dtype, n));
  s = canonicalize(k, s, sm_count);
  if (const std::string e = validate_shape(k, s, dtype, n); !e.empty()) throw UserError(e);
  return r;
}

std::vector<std::pair<LaunchShape, std::string>> bench_shapes(GpuKernel k, int sm_count, bool sweep,
                                                              std::string_view dtype) {
  std::vector<std::pair<LaunchShape, std::string>> v{{default_shape(k, sm_count, dtype), "default"}};
  const unsigned f = info(k).shape_fields;
  if (!sweep || !(f & field_grid) || !(f & field_block)) return v;
  for (int per_sm : {1, 2, 4, 8})
    for (int block : {256, 512, 1024}) {
      if (per_sm * block > 2048) continue;
      LaunchShape s = default_shape(k, sm_count, dtype);
      s.grid = per_sm * sm_count;
      s.block = block;
      if (f & field_vector) s.vector = 4;
      for (const bool last : {false, true}) {
        if (last && !(f & field_cross)) continue;
        LaunchShape c = s;
        c.cross = last ? CrossBlock::last_block : CrossBlock::second_kernel;
        c = canonicalize(k, c, sm_count);
        bool seen = false;
        for (const auto& [t, role] : v) seen = seen || t == c;
        if (!seen) v.push_back({c, "sweep"});
      }
    }
  return v;
}

}  // namespace sumlab
