#pragma once
// An order trace: the model's own stage functions (block_partials, reduce_partials) run with an op
// whose accumulator is a node of an expression DAG, so the additions a kernel performs for a launch
// shape are recorded exactly as the model performs them, with every intermediate value rounded as
// the kernel's op rounds it. `sumlab explain` prints and draws it; its final value is checked
// against model_sum's bits.
//
// Stages are read off what each addition covers: every leaf x[i] belongs to one thread (from the
// shape's mapping), a node covers the range of threads of its leaves, and an addition is
//   thread      a step of one thread's chain over its own elements,
//   warp        both operands within one warp (shuffles, no barrier),
//   block       within one block across warps (shared memory, after __syncthreads),
//   cross-block partials of different blocks (second kernel, last block, or atomics).
// Additions of the identity (+0 from idle lanes and threads) are recorded but marked `idle`.
#include <algorithm>
#include <cstdint>
#include <string>
#include <type_traits>
#include <vector>

#include "core/launch_shape.hpp"
#include "core/order_model/reduce_ops.hpp"

namespace sumlab::order_model {

enum class TraceStage { thread, warp, block, cross_block };

inline const char* to_string(TraceStage s) {
  switch (s) {
    case TraceStage::thread: return "thread";
    case TraceStage::warp: return "warp";
    case TraceStage::block: return "block";
    case TraceStage::cross_block: return "cross-block";
  }
  return "?";
}

struct TraceEvent {
  int lhs, rhs;            // node ids; leaves are -(index + 2), the identity is -1
  double value;            // the rounded result, widened
  TraceStage stage;
  std::int64_t first_thread, last_thread;
  bool idle;               // one operand covers no element (the identity, or sums of it)
};

template <class T> struct Trace {
  std::vector<TraceEvent> events;      // node k is events[k]
  std::vector<T> leaves;
  std::vector<std::int64_t> leaf_thread;
  int block = 0;
  int items = 0;  // TracedNumber: elements per thread of a tiled scan (0: one CPU thread)
};

// The range a sum of two nodes covers (first < 0: a node covering nothing, the identity).
inline void cover(std::int64_t a_first, std::int64_t a_last, std::int64_t b_first, std::int64_t b_last,
                  std::int64_t& first, std::int64_t& last) {
  first = a_first < 0 ? b_first : (b_first < 0 ? a_first : std::min(a_first, b_first));
  last = std::max(a_last, b_last);
}

template <class T> Trace<T>*& current_trace() {
  thread_local Trace<T>* t = nullptr;
  return t;
}

// A node: the kernel op's accumulator A (a T for plain sums, a Kahan pair, a double word, a double)
// and the value it stands for, in T.
template <class T, class A = T> struct TracedValue {
  T value{};
  int id = -1;  // -1: the identity; <= -2: leaf -(id + 2); >= 0: an addition node
  std::int64_t first = -1, last = -1;  // threads covered (-1: none, the identity)
  A acc{};
};

template <class T> struct TracedLeaf {
  T value{};
  std::int64_t index = 0;
};

// The op: the arithmetic is Base's (a + b in T by default; any op of reduce_ops.hpp: Kahan pairs,
// double words, a double accumulator), recorded. A node's value is what its accumulator stands for
// (Base::finish), except a double accumulator, which is shown as it is.
template <class T, class Base = PlainSumOp<T>> struct TracedSumOp {
  using In = TracedLeaf<T>;
  using Acc = TracedValue<T, typename Base::Acc>;
  using Out = T;
  static double shown(const typename Base::Acc& a) {
    if constexpr (std::is_same_v<typename Base::Acc, double>) return a;
    else return static_cast<double>(Base::finish(a));
  }
  static Acc make(const typename Base::Acc& acc, int id, std::int64_t first, std::int64_t last) {
    return Acc{Base::finish(acc), id, first, last, acc};
  }
  static Acc identity() { return make(Base::identity(), -1, -1, -1); }
  static Acc record(const Acc& a, const Acc& b, bool chain, const typename Base::Acc& acc) {
    Trace<T>& t = *current_trace<T>();
    std::int64_t first = 0, last = 0;
    cover(a.first, a.last, b.first, b.last, first, last);
    TraceStage stage = TraceStage::cross_block;
    const std::int64_t block = t.block;
    if (chain) stage = TraceStage::thread;
    else if (first / 32 == last / 32) stage = TraceStage::warp;
    else if (first / block == last / block) stage = TraceStage::block;
    const Acc r = make(acc, static_cast<int>(t.events.size()), first, last);
    t.events.push_back({a.id, b.id, shown(acc), stage, first, last, a.first < 0 || b.first < 0});
    return r;
  }
  static Acc leaf(In x) {
    const std::int64_t th = current_trace<T>()->leaf_thread[static_cast<std::size_t>(x.index)];
    return make(Base::leaf(x.value), -static_cast<int>(x.index) - 2, th, th);
  }
  static Acc add(Acc a, In x) {
    return record(a, leaf(x), true, Base::add(a.acc, x.value));
  }
  static Acc combine(Acc a, Acc b) { return record(a, b, false, Base::combine(a.acc, b.acc)); }
  static Out finish(Acc a) { return a.value; }
};

// A number whose additions are recorded: code written over any T (the CPU's serial_sum,
// pairwise_sum, numpy_pairwise_sum; the scan model's tiles through TracedPlusOp; the segmented
// scan's (head, value) pairs) runs on it
// unchanged, so its additions are traced as it runs. T(0) is the identity; a copy is the same
// node. With trace.items = 0 every addition is one CPU thread's; with a tiled scan's items and
// block, an addition's stage is the widest of the thread, warp, tile (block) or carry (cross-block)
// that its elements span.
template <class T> struct TracedNumber {
  T value{};
  int id = -1;                         // as TracedValue's
  std::int64_t first = -1, last = -1;  // elements covered (-1: none, the identity)
  TracedNumber() = default;
  explicit TracedNumber(int zero) : value(static_cast<T>(zero)) {}
  static TracedNumber leaf(T x, std::int64_t index) {
    TracedNumber r;
    r.value = x;
    r.id = -static_cast<int>(index) - 2;
    r.first = r.last = index;
    return r;
  }
  friend TracedNumber operator+(const TracedNumber& a, const TracedNumber& b) {
    Trace<T>& t = *current_trace<T>();
    TracedNumber r;
    r.value = a.value + b.value;
    cover(a.first, a.last, b.first, b.last, r.first, r.last);
    r.id = static_cast<int>(t.events.size());
    TraceStage stage = TraceStage::thread;
    std::int64_t first_thread = 0, last_thread = 0;
    if (t.items > 0 && r.first >= 0) {
      const std::int64_t items = t.items, tile = items * t.block;
      first_thread = r.first / items;
      last_thread = r.last / items;
      stage = first_thread == last_thread                 ? TraceStage::thread
              : r.first / (items * 32) == r.last / (items * 32) ? TraceStage::warp
              : r.first / tile == r.last / tile             ? TraceStage::block
                                                            : TraceStage::cross_block;
    }
    t.events.push_back({a.id, b.id, static_cast<double>(r.value), stage, first_thread, last_thread,
                        a.first < 0 || b.first < 0});
    return r;
  }
  TracedNumber& operator+=(const TracedNumber& b) { return *this = *this + b; }
};

// The scans' plus operator (core/scan/scan_ops.hpp's PlusOp) over traced numbers.
template <class T> struct TracedPlusOp {
  using Value = TracedNumber<T>;
  using Scalar = T;
  static constexpr const char* name = "plus";
  static Value identity() { return Value(0); }
  static Value combine(const Value& earlier, const Value& later) { return earlier + later; }
};

// The thread that owns element i under the shape's mapping (the model's thread_chain order).
inline std::int64_t owner_thread(std::int64_t i, std::int64_t n, const LaunchShape& s) {
  if (s.mapping == Mapping::grid_stride) return (i / s.vector) % s.threads();
  return i / contiguous_chunk(n, s.threads(), s.vector);
}

}  // namespace sumlab::order_model
