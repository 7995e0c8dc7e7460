// `sumlab specials`: what every CPU algorithm and every modelled GPU kernel returns on the special-
// value cases of core/special_inputs.hpp, beside the IEEE answer (the correctly rounded sum).
// docs/special-values.md is this command's output; a test keeps the two equal.
#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include <cmath>
#include <iostream>
#include <limits>
#include <memory>
#include <string>
#include <vector>

#include "core/cpu_algorithms.hpp"
#include "core/gpu_kernel.hpp"
#include "core/order_model/model_sum.hpp"
#include "core/special_inputs.hpp"
#include "reference/mpfr_sum.hpp"
#include "studies/commands.hpp"

namespace sumlab {
namespace {

// "+0", "-0", "+Inf", "NaN", "max", "-max", or the shortest decimal.
template <class T> std::string cell(T v) {
  if (std::isnan(v)) return "NaN";
  if (std::isinf(v)) return v > 0 ? "+Inf" : "-Inf";
  if (v == 0) return std::signbit(v) ? "-0" : "+0";
  if (v == std::numeric_limits<T>::max()) return "max";
  if (v == -std::numeric_limits<T>::max()) return "-max";
  return fmt::format("{}", v);
}

template <class T> std::string table() {
  const std::size_t cases = special_cases.size();
  std::string out = "| |";
  for (const auto& c : special_cases) out += fmt::format(" {} |", c.label);
  out += "\n|---|";
  for (std::size_t i = 0; i < cases; ++i) out += "---|";
  out += "\n";
  auto row = [&](std::string_view name, auto&& value_of) {
    out += fmt::format("| {} |", name);
    for (std::size_t i = 0; i < cases; ++i) {
      const std::vector<T> x = special_input<T>(i);
      // Appended piece by piece: GCC 12 warns (-Wrestrict, a false positive) on " " + std::string&&.
      out += ' ';
      out += value_of(std::span<const T>(x));
      out += " |";
    }
    out += "\n";
  };
  row("**IEEE** (correctly rounded)", [](std::span<const T> x) { return cell(reference::correctly_rounded_sum<T>(x)); });
  for (const auto& a : cpu_algorithms<T>()) row(a.info.name, [&](std::span<const T> x) { return cell(a.sum(x).value); });
  for (const auto& k : gpu_kernels()) {
    if (!k.modelled || k.diagnostic_only || (k.float_input_only && !std::is_same_v<T, float>)) continue;
    row(k.name, [&](std::span<const T> x) {
      const auto r = model_sum<T>(k.kernel, default_shape(k.kernel), x);
      return r.has_value ? cell(r.value) : std::string("-");
    });
  }
  return out;
}

}  // namespace

void register_specials(CLI::App& app) {
  auto* cmd = app.add_subcommand("specials",
                                 "What every algorithm and modelled GPU kernel returns for signed zeros, "
                                 "Inf, NaN and overflow, beside the IEEE answer (markdown)");
  cmd->callback([] {
    std::cout << "Cases (max is the largest finite value of the type):\n\n";
    for (const auto& c : special_cases) std::cout << fmt::format("- `{}`: {}\n", c.label, c.description);
    // The GPU rows come from the order model, not from a GPU: say so where the tables are.
    std::cout << "\nThe gpu_ rows are the CPU order model (core/order_model) of each kernel at its default launch "
                 "shape, not a GPU run; gpu_atomic's is one arrival order of its block partials, launch order.\n";
    std::cout << "\n### float32\n\n" << table<float>() << "\n### float64\n\n" << table<double>();
  });
}

}  // namespace sumlab
