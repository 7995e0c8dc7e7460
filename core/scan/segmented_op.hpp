#pragma once
// The segmented-sum operator on (head, value) pairs, shared by segmented scans (core/scan) and
// segmented reductions (core/segmented). Scanning pairs with it restarts the running sum at every
// element whose head flag is set, so one scan over the flattened array computes every segment's
// prefix sums at once, and a segment's total is the scan at its last element.
//
// combine(a, b), a the earlier run and b the later one:
//   b.head ? b : (a.head || b.head, a.value + b.value)
// It is associative in exact arithmetic (the head flag says "this run starts a segment"; a run
// that starts one absorbs nothing from before it). In floating point the additions inside a
// segment happen in whatever order the scan's tree combines runs, so a segment's bits depend on
// the tree exactly as a plain sum's do; the operator itself adds nothing else and rounds once
// per addition.
#include "core/hd.hpp"

namespace sumlab::scan {

template <class T> struct Flagged {
  bool head = false;  // this run begins with the first element of a segment
  T value{};
};

template <class T> SUMLAB_HD constexpr Flagged<T> segmented_combine(const Flagged<T>& a, const Flagged<T>& b) {
  if (b.head) return b;
  return Flagged<T>{a.head, a.value + b.value};
}

}  // namespace sumlab::scan
