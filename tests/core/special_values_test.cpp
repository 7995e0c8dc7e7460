// Special values, per algorithm and kernel: every result on core/special_inputs.hpp's cases is the
// IEEE answer (the correctly rounded sum, MPFR) except where this file lists a documented
// exception with its reason (docs/special-values.md shows the same table).
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "core/cpu_algorithms.hpp"
#include "core/gpu_kernel.hpp"
#include "core/order_model/model_sum.hpp"
#include "core/order_model/reduce_ops.hpp"
#include "core/special_inputs.hpp"
#include "reference/mpfr_sum.hpp"

namespace sumlab {
namespace {

std::size_t case_index(std::string_view label) {
  for (std::size_t i = 0; i < special_cases.size(); ++i)
    if (special_cases[i].label == label) return i;
  ADD_FAILURE() << "no case " << label;
  return 0;
}

// (algorithm or kernel, case label) -> the documented result, where it is not IEEE's.
template <class T> std::map<std::pair<std::string, std::string>, T> exceptions() {
  const T inf = std::numeric_limits<T>::infinity(), nan = std::numeric_limits<T>::quiet_NaN();
  std::map<std::pair<std::string, std::string>, T> e;
  // An intermediate overflow (max + max) is not undone by a later -max: every order that adds
  // the two max first returns +Inf; the trees that pair max with -max first return max.
  for (const char* a : {"serial", "pairwise_b128", "numpy_pairwise", "neumaier", "gpu_serial", "gpu_interleaved",
                        "gpu_strided", "gpu_two_pass", "gpu_atomic", "gpu_last_block"})
    e[{a, "max,max,-max"}] = inf;
  // NumPy's reduction starts from the identity +0: a sum of -0s is +0, as np.sum gives.
  e[{"numpy_pairwise", "-0"}] = T(0);
  e[{"numpy_pairwise", "-0 x300"}] = T(0);
  // bfloat16 rounds max up to +Inf before adding anything: Inf + Inf - Inf = NaN.
  e[{"serial_bf16", "max,max,-max"}] = nan;
  // Kahan: once s is infinite, c = (t - s) - y = Inf - Inf = NaN, and the next step's y = x - c is
  // NaN. So an infinity (input or overflow) gives NaN unless it comes last, or first of exactly two.
  e[{"kahan", "-Inf,1x299"}] = nan;
  e[{"kahan", "-max x3"}] = nan;
  e[{"kahan", "max,max,-max"}] = nan;
  // gpu_kahan's compensated combines and gpu_double_word's double-word adds take TwoSum of
  // infinite values (Inf - Inf): NaN for every infinity, input or overflow.
  for (const char* k : {"gpu_kahan", "gpu_double_word"})
    for (const char* c : {"Inf,1", "1,Inf", "1,1,Inf", "-Inf,1x299", "1x299,-Inf", "max,max", "-max x3", "max,max,-max"})
      e[{k, c}] = nan;
  // GPU trees start idle threads (and padding lanes) at +0, and +0 + -0 = +0: a sum of -0s is +0
  // wherever the shape leaves a thread or lane without an element (gpu_serial starts from x0; the
  // first-add kernels fill every word of a 300-element block with -0 + -0).
  for (const auto& k : gpu_kernels()) {
    const std::string name(k.name);
    if (!k.modelled || k.diagnostic_only || name == "gpu_serial" || name == "gpu_fixed_point" || name == "gpu_exact")
      continue;
    e[{name, "-0"}] = T(0);
    if (name != "gpu_first_add" && name != "gpu_warp_unrolled" && name != "gpu_unrolled") e[{name, "-0 x300"}] = T(0);
  }
  return e;
}

template <class T> void check_all() {
  const auto except = exceptions<T>();
  std::set<std::pair<std::string, std::string>> used;
  auto check = [&](const std::string& name, std::size_t i, T got) {
    const std::vector<T> x = special_input<T>(i);
    T want = reference::correctly_rounded_sum<T>(x);
    const std::pair<std::string, std::string> key{name, std::string(special_cases[i].label)};
    if (auto it = except.find(key); it != except.end()) {
      want = it->second;
      used.insert(key);
    }
    EXPECT_TRUE(same_bits(got, want)) << name << " on '" << special_cases[i].description << "': got " << got
                                      << ", want " << want;
  };
  for (std::size_t i = 0; i < special_cases.size(); ++i) {
    const std::vector<T> x = special_input<T>(i);
    for (const auto& a : cpu_algorithms<T>()) check(std::string(a.info.name), i, a.sum(x).value);
    for (const auto& k : gpu_kernels()) {
      if (!k.modelled || k.diagnostic_only || (k.float_input_only && !std::is_same_v<T, float>)) continue;
      const auto r = model_sum<T>(k.kernel, default_shape(k.kernel), std::span<const T>(x));
      ASSERT_TRUE(r.has_value) << k.name;
      check(std::string(k.name), i, r.value);
    }
  }
  // Every listed exception is still needed (a fixed algorithm must leave this list).
  for (const auto& [key, value] : except) {
    if (key.first != "gpu_double_acc" || std::is_same_v<T, float>) {
      EXPECT_TRUE(used.count(key)) << "unused exception " << key.first << " / " << key.second;
    }
  }
}

TEST(SpecialValues, Float32) { check_all<float>(); }
TEST(SpecialValues, Float64) { check_all<double>(); }

TEST(SpecialValues, CasesAreWhatTheirLabelsSay) {
  EXPECT_TRUE(special_input<float>(case_index("empty")).empty());
  EXPECT_TRUE(std::signbit(special_input<float>(case_index("-0"))[0]));
  EXPECT_EQ(special_input<double>(case_index("1x150,NaN,1x149")).size(), 300u);
  EXPECT_TRUE(std::isnan(special_input<double>(case_index("1x150,NaN,1x149"))[150]));
  EXPECT_EQ(special_input<float>(case_index("max,max,-max")).back(), -std::numeric_limits<float>::max());
}

}  // namespace
}  // namespace sumlab
