#include "core/row_reduce/row_kernel.hpp"

#include <array>

namespace sumlab::row_reduce {
namespace {

constexpr std::array<RowKernelInfo, 7> kernels{{
    {RowKernel::textbook, "textbook",
     "one pass: sum and sum of squares, var = sumsq/n - mean^2 (cancels when |mean| >> sigma)",
     "thread: (s, q) += (x, x*x); node: (s_a + s_b, q_a + q_b); mean = s/n, var = q/n - mean*mean",
     RowFamily::moments, Determinism::run_to_run, 2},
    {RowKernel::two_pass, "two_pass",
     "mean first, then the mean of (x - mean)^2 over the row read again",
     "pass 1 thread: s += x, node: s_a + s_b, mean = s/n; pass 2 thread: q += (x-mean)*(x-mean), "
     "node: q_a + q_b; var = q/n",
     RowFamily::moments, Determinism::run_to_run, 3},
    {RowKernel::welford, "welford",
     "Welford per thread, general Chan-Golub-LeVeque merge through the trees",
     "thread: n += 1, d = x - mean, mean += d/n (q0 = d*r, r = RN(1/n), fma(fma(-q0, n, d), r, q0)), "
     "m2 += d*(x - mean); node (a = own, b = partner): "
     "empty side -> the other; n = na+nb, d = mean_b - mean_a, mean = mean_a + d*(nb/n), "
     "m2 = (m2_a + m2_b) + d*d*(na*nb/n); var = m2/n",
     RowFamily::moments, Determinism::run_to_run, 2},
    {RowKernel::welford_equal, "welford_equal",
     "Welford per thread, the equal-count lane merge where both counts agree (general otherwise)",
     "thread: as welford; node with na == nb > 0: d = mean_b - mean_a, mean = mean_a + 0.5*d, "
     "m2 = m2_a + (m2_b + d*d*0.5*na), n = 2*na; other nodes: the general merge",
     RowFamily::moments, Determinism::run_to_run, 2},
    {RowKernel::softmax_online, "softmax_online",
     "online softmax: running (max m, sum l of exp(x - m)) rescaled to the larger max, then outputs",
     "thread: x > m ? (l = l*exp(m - x) + 1, m = x) : l += (x == m ? 1 : exp(x - m)); node: "
     "M = max, l = l_a*s_a + l_b*s_b with s = (m == M ? 1 : exp(m - M)); identity (-Inf, 0); "
     "p = exp(x - m)/l",
     RowFamily::softmax, Determinism::run_to_run, 2},
    {RowKernel::softmax_three_pass, "softmax_three_pass",
     "three passes: row max, sum of exp(x - max), outputs",
     "pass 1 thread: m = (x > m ? x : m), node: the same; pass 2 thread: l += (x == m ? 1 : "
     "exp(x - m)), node: l_a + l_b; p = exp(x - m)/l",
     RowFamily::softmax, Determinism::run_to_run, 3},
    {RowKernel::argmax, "argmax",
     "(value, index) with ties to the lower index and NaN as the maximum (torch.argmax)",
     "thread: state = better(state, (x, j)); node: better(a, b); better prefers NaN, then the "
     "larger value, then the lower index; identity (-Inf, no index)",
     RowFamily::argmax, Determinism::shape_invariant, 1},
}};

}  // namespace

std::span<const RowKernelInfo> row_kernels() { return kernels; }

const RowKernelInfo& info(RowKernel k) {
  for (const auto& i : kernels)
    if (i.kernel == k) return i;
  return kernels[0];
}

std::optional<RowKernel> find_row_kernel(std::string_view name) {
  for (const auto& i : kernels)
    if (i.name == name) return i.kernel;
  return std::nullopt;
}

std::string row_kernel_names() {
  std::string s;
  for (const auto& i : kernels) {
    if (!s.empty()) s += ", ";
    s += i.name;
  }
  return s;
}

std::string_view to_string(RowLayout l) {
  return l == RowLayout::warp_per_row ? "warp_per_row" : "block_per_row";
}

std::optional<RowLayout> parse_row_layout(std::string_view s) {
  if (s == "warp_per_row") return RowLayout::warp_per_row;
  if (s == "block_per_row") return RowLayout::block_per_row;
  return std::nullopt;
}

std::string to_string(const RowShape& s) {
  return std::string(to_string(s.layout)) + "/" + std::to_string(s.block);
}

std::string validate_row_shape(RowKernel k, const RowShape& s, std::string_view dtype,
                               std::int64_t rows, std::int64_t cols) {
  const std::string what = std::string(info(k).name) + " " + to_string(s);
  if (dtype != "float32" && dtype != "bfloat16" && dtype != "float64")
    return "dtype '" + std::string(dtype) + "' is not one of float32, bfloat16, float64";
  if (s.block < 32 || s.block > 1024 || s.block % 32 != 0)
    return what + ": block " + std::to_string(s.block) + " must be a multiple of 32 in 32..1024";
  if (rows < 0 || cols < 0)
    return what + ": rows and cols must be >= 0 (got " + std::to_string(rows) + " x " +
           std::to_string(cols) + ")";
  const std::int64_t max_cols = dtype == "float64" ? max_cols_double_acc : max_cols_float_acc;
  if (cols > max_cols)
    return what + ": cols = " + std::to_string(cols) + " exceeds " + std::to_string(max_cols) + " for " +
           std::string(dtype) +
           (dtype == "float64" ? " (32-bit column index)"
                               : " (a float accumulator counts elements exactly only up to 2^24)");
  const std::int64_t grid = (rows + s.rows_per_block() - 1) / s.rows_per_block();
  if (grid > max_grid)
    return what + ": " + std::to_string(rows) + " rows need " + std::to_string(grid) +
           " blocks, above the grid limit 2^31 - 1";
  return "";
}

}  // namespace sumlab::row_reduce
