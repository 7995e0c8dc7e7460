// `sumlab algorithms`: the registries as a markdown table: every CPU algorithm and GPU kernel with
// its order, its error bound, the theorem the bound comes from, and its declared determinism.
// The README's table is this command's output; a test keeps the two equal.
#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include <iostream>

#include "core/cpu_algorithms.hpp"
#include "core/gpu_kernel.hpp"
#include "studies/commands.hpp"

namespace sumlab {

void register_algorithms(CLI::App& app) {
  auto* cmd = app.add_subcommand("algorithms",
                                 "List every CPU algorithm and GPU kernel with its error bound, the bound's "
                                 "source and its determinism class (markdown)");
  cmd->callback([] {
    std::cout << "| name | what | bound on \\|result - exact sum\\| | source | determinism |\n"
                 "| --- | --- | --- | --- | --- |\n";
    auto cell = [](std::string_view text) {  // a '|' inside a cell would end it
      std::string out;
      for (char c : text) out += c == '|' ? std::string("\\|") : std::string(1, c);
      return out;
    };
    auto row = [&](std::string_view name, std::string_view summary, const BoundDoc& b, Determinism d) {
      std::cout << fmt::format("| {} | {} | {} | {} | {} |\n", name, cell(summary), cell(b.formula), cell(b.source),
                               to_string(d));
    };
    for (const auto& a : cpu_algorithms<double>()) row(a.info.name, a.info.summary, a.info.bound, a.info.determinism);
    for (const auto& k : gpu_kernels()) row(k.name, k.summary, k.bound, k.determinism);
    // One definition per symbol the formulas use (core/error_bound.hpp states each theorem).
    std::cout << "\nS = sum |x_i|, s = sum x_i (exact), u = 2^-p of the input type (p: its significand bits), "
                 "gamma(k) = k u / (1 - k u); gamma_X(k), u_X: the same in format X (wide: one step wider than the "
                 "input, float -> double -> long double; bf16; double; dw: double-word); "
                 "d: the most roundings on any term's path (the tree's depth); "
                 "2^(emin-1): half the smallest subnormal of the result's type (emin: its exponent); "
                 "serial_bf16: r, a = the relative and absolute error of one addend's rounding to bfloat16; "
                 "kahan: N = n - 1, lambda = u (2 + 7u + 6u^2), C = a bound on every |correction| "
                 "(core/error_bound.hpp); gpu_kahan: alpha = the compensated tree's error factor after its "
                 "chains and combine levels (core/error_bound.cpp); fixed point: k = the scale (grid 2^-k), "
                 "m = the inputs not on that grid, Q = m 2^(-k-1) their quantisation; "
                 "\"none\": the theorem's condition fails and no bound is claimed.\n";
  });
}

}  // namespace sumlab
