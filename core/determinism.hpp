#pragma once
// The determinism vocabulary, used for CSV columns, plot labels and the determinism study.
#include <string_view>

namespace sumlab {

enum class Determinism {
  not_deterministic,  // the result may change from run to run (e.g. atomics: arrival order)
  run_to_run,         // same bits every run for a fixed launch shape; the shape changes the order
  shape_invariant,    // same bits for every shape and every run (order-independent result)
};

constexpr std::string_view to_string(Determinism d) {
  switch (d) {
    case Determinism::not_deterministic: return "not_deterministic";
    case Determinism::run_to_run: return "run_to_run";
    case Determinism::shape_invariant: return "shape_invariant";
  }
  return "?";
}

}  // namespace sumlab
