// The row kernels' order on the CPU; see row_model.hpp and row_kernel.hpp.
#include "core/row_reduce/row_model.hpp"

#include <cstdio>
#include <cstring>
#include <stdexcept>
#include <string>
#include <vector>

#include "core/float_traits.hpp"
#include "core/row_reduce/argmax.hpp"
#include "core/row_reduce/layer_norm.hpp"
#include "core/row_reduce/one_pass_moments.hpp"
#include "core/row_reduce/online_softmax.hpp"
#include "core/row_reduce/row_tree.hpp"
#include "core/row_reduce/three_pass_softmax.hpp"
#include "core/row_reduce/two_pass_moments.hpp"
#include "core/row_reduce/welford.hpp"

namespace sumlab::row_reduce {
namespace {

template <class In> class RowModel {
 public:
  using Acc = row_acc_t<In>;
  RowModel(const RowShape& s, std::int64_t cols)
      : threads_(s.threads_per_row()), block_stage_(s.layout == RowLayout::block_per_row), cols_(cols) {}

  // One row: fills o's per-row entries at r and, if out != nullptr, the row's cols outputs.
  void run(RowKernel k, const In* row, std::int64_t r, RowOutputs<Acc>& o, Acc* out) {
    const auto ri = static_cast<std::size_t>(r);
    auto x = [row](std::int64_t j) { return RowInput<In>::widen(row[j]); };
    const Acc n = static_cast<Acc>(cols_);
    switch (k) {
      case RowKernel::textbook: {
        const auto st = reduce<SumSquaresOp<Acc>>(
            [&](SumSquares<Acc> s, std::int64_t j) { return sum_squares_step(s, x(j)); });
        write_moments(textbook_finish(st, n), x, ri, o, out);
        break;
      }
      case RowKernel::two_pass: {
        const Acc s = reduce<PlainSumOp<Acc>>([&](Acc a, std::int64_t j) { return sum_step(a, x(j)); });
        const Acc mean = s / n;
        const Acc q = reduce<PlainSumOp<Acc>>(
            [&](Acc a, std::int64_t j) { return squared_deviation_step(a, x(j), mean); });
        write_moments(MeanVariance<Acc>{mean, q / n}, x, ri, o, out);
        break;
      }
      case RowKernel::welford:
      case RowKernel::welford_equal: {
        auto step = [&](RowMoments<Acc> s, std::int64_t j) { return welford_step(s, x(j)); };
        const auto st = k == RowKernel::welford ? reduce<ChanMergeOp<Acc>>(step) : reduce<ChanEqualMergeOp<Acc>>(step);
        write_moments(welford_finish(st), x, ri, o, out);
        break;
      }
      case RowKernel::softmax_online: {
        const auto st = reduce<OnlineSoftmaxOp<Acc>>(
            [&](SoftmaxState<Acc> s, std::int64_t j) { return online_softmax_step(s, x(j)); });
        write_softmax(st.m, st.l, x, ri, o, out);
        break;
      }
      case RowKernel::softmax_three_pass: {
        const Acc m = reduce<MaxOp<Acc>>([&](Acc a, std::int64_t j) { return max_step(a, x(j)); });
        const Acc l = reduce<PlainSumOp<Acc>>([&](Acc a, std::int64_t j) { return sum_exp_step(a, x(j), m); });
        write_softmax(m, l, x, ri, o, out);
        break;
      }
      case RowKernel::argmax: {
        const auto st = reduce<ArgmaxOp<Acc>>([&](ArgmaxState<Acc> s, std::int64_t j) {
          return argmax_step(s, x(j), static_cast<std::int32_t>(j));
        });
        o.max_value[ri] = st.value;
        o.max_index[ri] = argmax_index(st.index);
        break;
      }
    }
  }

 private:
  template <class Op, class Step> typename Op::State reduce(Step step) {
    auto& scratch = scratch_for(static_cast<typename Op::State*>(nullptr));
    return row_reduce<Op>(cols_, threads_, block_stage_, scratch, step);
  }
  // One scratch vector per state type.
  std::vector<Acc>& scratch_for(Acc*) { return s_acc_; }
  std::vector<SumSquares<Acc>>& scratch_for(SumSquares<Acc>*) { return s_sq_; }
  std::vector<RowMoments<Acc>>& scratch_for(RowMoments<Acc>*) { return s_mom_; }
  std::vector<SoftmaxState<Acc>>& scratch_for(SoftmaxState<Acc>*) { return s_soft_; }
  std::vector<ArgmaxState<Acc>>& scratch_for(ArgmaxState<Acc>*) { return s_arg_; }

  template <class X>
  void write_moments(const MeanVariance<Acc>& mv, X x, std::size_t r, RowOutputs<Acc>& o, Acc* out) const {
    o.mean[r] = mv.mean;
    o.variance[r] = mv.variance;
    if (!out) return;
    const Acc rstd = layer_norm_rstd(mv.variance);
    for (std::int64_t j = 0; j < cols_; ++j) out[j] = layer_norm_apply(x(j), mv.mean, rstd);
  }
  template <class X> void write_softmax(Acc m, Acc l, X x, std::size_t r, RowOutputs<Acc>& o, Acc* out) const {
    o.row_max[r] = m;
    o.row_sum[r] = l;
    if (!out) return;
    for (std::int64_t j = 0; j < cols_; ++j) out[j] = softmax_probability(x(j), m, l);
  }

  int threads_;
  bool block_stage_;
  std::int64_t cols_;
  std::vector<Acc> s_acc_;
  std::vector<SumSquares<Acc>> s_sq_;
  std::vector<RowMoments<Acc>> s_mom_;
  std::vector<SoftmaxState<Acc>> s_soft_;
  std::vector<ArgmaxState<Acc>> s_arg_;
};

template <class Acc> std::string value_text(Acc v) {
  char buf[48];
  std::snprintf(buf, sizeof buf, "%.17g", static_cast<double>(v));
  return std::string(buf) + " (" + hex_bits(v) + ")";
}

template <class Acc> bool same_value(Acc a, Acc b) {
  if (a != a && b != b) return true;
  return std::memcmp(&a, &b, sizeof a) == 0;
}

}  // namespace

template <class In>
RowOutputs<row_acc_t<In>> model_rows(RowKernel k, const RowShape& shape, std::span<const In> x, std::int64_t rows,
                                     std::int64_t cols, bool want_out) {
  const std::string why = validate_row_shape(k, shape, RowInput<In>::dtype, rows, cols);
  if (!why.empty()) throw std::invalid_argument(why);
  if (static_cast<std::int64_t>(x.size()) != rows * cols)
    throw std::invalid_argument("model_rows: " + std::to_string(x.size()) + " elements for " + std::to_string(rows) +
                                " x " + std::to_string(cols));
  RowOutputs<row_acc_t<In>> o;
  resize_for(o, k, rows, cols, want_out);
  RowModel<In> m(shape, cols);
  for (std::int64_t r = 0; r < rows; ++r)
    m.run(k, x.data() + r * cols, r, o, o.out.empty() ? nullptr : o.out.data() + r * cols);
  return o;
}

template <class Acc> std::int64_t count_mismatches(const RowOutputs<Acc>& a, const RowOutputs<Acc>& b, std::string* first) {
  std::int64_t bad = 0;
  auto note = [&](const char* what, std::size_t i, const std::string& va, const std::string& vb) {
    if (bad++ == 0 && first) *first = std::string(what) + "[" + std::to_string(i) + "]: " + va + " vs " + vb;
  };
  auto cmp = [&](const char* what, const std::vector<Acc>& u, const std::vector<Acc>& v) {
    if (u.size() != v.size()) {
      note(what, 0, "size " + std::to_string(u.size()), "size " + std::to_string(v.size()));
      return;
    }
    for (std::size_t i = 0; i < u.size(); ++i)
      if (!same_value(u[i], v[i])) note(what, i, value_text(u[i]), value_text(v[i]));
  };
  cmp("mean", a.mean, b.mean);
  cmp("variance", a.variance, b.variance);
  cmp("row_max", a.row_max, b.row_max);
  cmp("row_sum", a.row_sum, b.row_sum);
  cmp("max_value", a.max_value, b.max_value);
  cmp("out", a.out, b.out);
  if (a.max_index.size() != b.max_index.size()) {
    note("max_index", 0, "size " + std::to_string(a.max_index.size()), "size " + std::to_string(b.max_index.size()));
  } else {
    for (std::size_t i = 0; i < a.max_index.size(); ++i)
      if (a.max_index[i] != b.max_index[i])
        note("max_index", i, std::to_string(a.max_index[i]), std::to_string(b.max_index[i]));
  }
  return bad;
}

template RowOutputs<float> model_rows<float>(RowKernel, const RowShape&, std::span<const float>, std::int64_t,
                                             std::int64_t, bool);
template RowOutputs<double> model_rows<double>(RowKernel, const RowShape&, std::span<const double>, std::int64_t,
                                               std::int64_t, bool);
template RowOutputs<float> model_rows<bfloat16_bits>(RowKernel, const RowShape&, std::span<const bfloat16_bits>,
                                                     std::int64_t, std::int64_t, bool);
template std::int64_t count_mismatches<float>(const RowOutputs<float>&, const RowOutputs<float>&, std::string*);
template std::int64_t count_mismatches<double>(const RowOutputs<double>&, const RowOutputs<double>&, std::string*);

}  // namespace sumlab::row_reduce
