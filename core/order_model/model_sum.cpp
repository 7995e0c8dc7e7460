#include "core/order_model/model_sum.hpp"

#include <type_traits>

#include "core/exact_sum.hpp"
#include "core/float_traits.hpp"
#include "core/order_model/classic_trees.hpp"
#include "core/order_model/cross_block.hpp"
#include "core/order_model/fixed_point_model.hpp"
#include "core/order_model/reduce_ops.hpp"
#include "core/order_model/smem_race.hpp"

namespace sumlab {
namespace {

// Stages 1-4 of a shuffle-family kernel with a second kernel or last block: both reduce the
// partials with reduce_partials.
template <class Op>
typename Op::Acc shuffle_model(std::span<const typename Op::In> x, const LaunchShape& s) {
  using Acc = typename Op::Acc;
  const std::vector<Acc> partials = order_model::block_partials<Op>(x, s);
  return order_model::reduce_partials<Op>(std::span<const Acc>(partials), s.block, s.warp,
                                          s.block_stage);
}

template <class T> T serial_model(std::span<const T> x) {
  if (x.empty()) return T(0);
  T s = x[0];  // the kernel starts from x0, so a sum of -0s stays -0 (as core/serial_sum.hpp)
  for (std::size_t i = 1; i < x.size(); ++i) s = s + x[i];
  return s;
}

// The racy tree has no value to model: the note says where block 0 reads before the write.
template <class T> std::string racy_note(const LaunchShape& shape, std::span<const T> x) {
  const auto first = x.subspan(0, std::min<std::size_t>(x.size(), static_cast<std::size_t>(shape.block)));
  std::vector<T> words(first.begin(), first.end());
  words.resize(static_cast<std::size_t>(shape.block), T(0));
  const auto trace = order_model::smem_tree_trace<T>(std::span<const T>(words), 0);
  std::string note = "no value: a data race (" + std::to_string(trace.races.size()) + " reads before their writes in block 0";
  if (!trace.races.empty()) note += ", e.g. " + order_model::describe(trace.races.front());
  return note + ")";
}

}  // namespace

template <class T>
ModelResult<T> model_sum(GpuKernel k, const LaunchShape& shape, std::span<const T> x, const KernelOptions& opt) {
  ModelResult<T> r;
  const auto n = static_cast<std::int64_t>(x.size());
  r.error = validate_options(k, opt);
  if (r.error.empty()) r.error = validate_shape(k, shape, FloatTraits<T>::dtype, n);
  if (!r.error.empty()) {
    r.note = r.error;
    return r;
  }
  auto set = [&r](T v) {
    r.has_value = true;
    r.value = v;
    r.accumulator = static_cast<double>(v);
  };
  switch (info(k).family) {
    case KernelFamily::serial: set(serial_model<T>(x)); break;
    case KernelFamily::classic:
      if (info(k).diagnostic_only) {
        r.note = racy_note<T>(shape, x);
        break;
      }
      set(order_model::classic_sum<T>(k, shape.block, x));
      break;
    case KernelFamily::multi_add: set(order_model::multi_add_sum<T>(shape.grid, shape.block, x)); break;
    case KernelFamily::shuffle:
      if (shape.cross == CrossBlock::atomic) {
        const std::vector<T> p = model_block_partials<T>(shape, x);
        const std::vector<int> order = order_model::launch_order(shape.grid);
        set(order_model::atomic_fold<T>(std::span<const T>(p), std::span<const int>(order)));
        // Only where the bits can depend on the order (see atomic_fold_order_free): with at most
        // two nonzero partials every order gives these bits.
        if (!order_model::atomic_fold_order_free<T>(std::span<const T>(p)))
          r.note = "one arrival order (launch order) of " + std::to_string(shape.grid) +
                   " blocks; other orders can give other bits";
        break;
      }
      with_shuffle_op<T>(k, [&]<class Op>() {
        const typename Op::Acc acc = shuffle_model<Op>(x, shape);
        set(Op::finish(acc));
        if constexpr (std::is_same_v<typename Op::Acc, double>) r.accumulator = acc;
      });
      break;
    case KernelFamily::integer:
      if (k == GpuKernel::exact) {
        set(exact_sum<T>(x));
      } else {
        const auto f = order_model::fixed_point_model<T>(x, opt.fixed_scale);
        set(f.value);
        r.note = f.note;
      }
      break;
    case KernelFamily::library:
      r.note = "not modelled: the library chooses its own order (measured, not predicted)";
      break;
  }
  return r;
}

template <class T>
std::vector<T> model_block_partials(const LaunchShape& shape, std::span<const T> x) {
  return order_model::block_partials<PlainSumOp<T>>(x, shape);
}

template ModelResult<float> model_sum<float>(GpuKernel, const LaunchShape&, std::span<const float>, const KernelOptions&);
template ModelResult<double> model_sum<double>(GpuKernel, const LaunchShape&, std::span<const double>, const KernelOptions&);
template std::vector<float> model_block_partials<float>(const LaunchShape&, std::span<const float>);
template std::vector<double> model_block_partials<double>(const LaunchShape&, std::span<const double>);

}  // namespace sumlab
