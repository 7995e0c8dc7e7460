#include "core/launch_shape.hpp"

#include <charconv>
#include <vector>

namespace sumlab {

std::string_view to_string(Mapping m) {
  switch (m) {
    case Mapping::grid_stride: return "grid_stride";
    case Mapping::contiguous: return "contiguous";
  }
  return "?";
}
std::string_view to_string(WarpStage w) {
  switch (w) {
    case WarpStage::shfl_down: return "shfl_down";
    case WarpStage::xor_butterfly: return "xor_butterfly";
  }
  return "?";
}
std::string_view to_string(BlockStage b) {
  switch (b) {
    case BlockStage::smem_tree: return "smem_tree";
    case BlockStage::warp_of_warps: return "warp_of_warps";
  }
  return "?";
}
std::string_view to_string(CrossBlock c) {
  switch (c) {
    case CrossBlock::second_kernel: return "second_kernel";
    case CrossBlock::atomic: return "atomic";
    case CrossBlock::last_block: return "last_block";
  }
  return "?";
}

std::optional<Mapping> parse_mapping(std::string_view s) {
  for (auto m : {Mapping::grid_stride, Mapping::contiguous})
    if (s == to_string(m)) return m;
  return std::nullopt;
}
std::optional<WarpStage> parse_warp_stage(std::string_view s) {
  for (auto w : {WarpStage::shfl_down, WarpStage::xor_butterfly})
    if (s == to_string(w)) return w;
  return std::nullopt;
}
std::optional<BlockStage> parse_block_stage(std::string_view s) {
  for (auto b : {BlockStage::smem_tree, BlockStage::warp_of_warps})
    if (s == to_string(b)) return b;
  return std::nullopt;
}
std::optional<CrossBlock> parse_cross_block(std::string_view s) {
  for (auto c : {CrossBlock::second_kernel, CrossBlock::atomic, CrossBlock::last_block})
    if (s == to_string(c)) return c;
  return std::nullopt;
}

std::string_view mapping_names() { return "grid_stride|contiguous"; }
std::string_view warp_stage_names() { return "shfl_down|xor_butterfly"; }
std::string_view block_stage_names() { return "smem_tree|warp_of_warps"; }
std::string_view cross_block_names() { return "second_kernel|atomic|last_block"; }

std::string to_string(const LaunchShape& s) {
  std::string out = std::to_string(s.grid) + "x" + std::to_string(s.block) + " v" +
                    std::to_string(s.vector) + " ";
  out += to_string(s.mapping);
  out += " ";
  out += to_string(s.warp);
  out += " ";
  out += to_string(s.block_stage);
  out += " ";
  out += to_string(s.cross);
  return out;
}

namespace {

std::optional<int> parse_int(std::string_view s) {
  int v = 0;
  const auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (ec != std::errc{} || p != s.data() + s.size()) return std::nullopt;
  return v;
}

std::vector<std::string_view> split_spaces(std::string_view s) {
  std::vector<std::string_view> out;
  std::size_t i = 0;
  while (i < s.size()) {
    while (i < s.size() && s[i] == ' ') ++i;
    std::size_t j = i;
    while (j < s.size() && s[j] != ' ') ++j;
    if (j > i) out.push_back(s.substr(i, j - i));
    i = j;
  }
  return out;
}

}  // namespace

std::optional<LaunchShape> parse_launch_shape(std::string_view text) {
  const auto parts = split_spaces(text);
  if (parts.size() != 6) return std::nullopt;
  LaunchShape s;
  const auto x = parts[0].find('x');
  if (x == std::string_view::npos) return std::nullopt;
  const auto g = parse_int(parts[0].substr(0, x));
  const auto b = parse_int(parts[0].substr(x + 1));
  if (!g || !b || parts[1].size() < 2 || parts[1][0] != 'v') return std::nullopt;
  const auto v = parse_int(parts[1].substr(1));
  const auto m = parse_mapping(parts[2]);
  const auto w = parse_warp_stage(parts[3]);
  const auto bs = parse_block_stage(parts[4]);
  const auto c = parse_cross_block(parts[5]);
  if (!v || !m || !w || !bs || !c) return std::nullopt;
  s.grid = *g;
  s.block = *b;
  s.vector = *v;
  s.mapping = *m;
  s.warp = *w;
  s.block_stage = *bs;
  s.cross = *c;
  return s;
}

std::string validate(const LaunchShape& s) {
  if (s.grid < 1)
    return "grid must be at least 1 block (got " + std::to_string(s.grid) + ")";
  if (s.grid > max_grid)
    return "grid must be at most " + std::to_string(max_grid) + " blocks (got " +
           std::to_string(s.grid) + ")";
  if (s.block < 1 || s.block > max_block)
    return "block must be 1.." + std::to_string(max_block) + " threads (got " +
           std::to_string(s.block) + "): 1024 is the CUDA limit per block";
  if (s.vector != 1 && s.vector != 2 && s.vector != 4)
    return "vector (elements per load) must be 1, 2 or 4 (got " + std::to_string(s.vector) + ")";
  return "";
}

}  // namespace sumlab
