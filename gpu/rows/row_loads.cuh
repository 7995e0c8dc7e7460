#pragma once
// How a row kernel's thread reads its elements. The order is the model's (row_kernel.hpp): thread
// t of a row's T threads folds elements t, t + T, t + 2T, ... in that order; these helpers change
// only when each load is issued, never which element a fold step sees, so the bits are those of
// the plain strided loop.
//
// Why: a fold step depends on the one before, so a plain loop waits a full memory latency per
// element unless the compiler hoists the loads, which it does not across a loop of unknown trip
// count. Issuing a batch of loads before the batch's first step keeps kRowBatch loads a thread in
// flight (8 x 4 bytes x 2048 threads = 64 KiB an SM, enough to cover HBM latency).
//
// A kernel with a second pass over the row (two_pass, softmax_three_pass, any normalised output)
// keeps the thread's elements in registers when they number at most kRowSliceItems (cols <=
// kRowSliceItems * T: rows of 4096 at block_per_row/256, of 16384 at /1024), so the row is read from
// memory once; longer rows read it again in each pass (from L2 where it stays).
#include <cstdint>

#include "gpu/rows/row_tree.cuh"

namespace sumlab::gpu::rows {

inline constexpr int kRowBatch = 8;
inline constexpr int kRowSliceItems = 16;

// f(value, j) for j = g.t, g.t + T, ... < cols, in that order, the loads kRowBatch at a time.
template <class In, class F>
__device__ __forceinline__ void row_for_each(const In* __restrict__ row, std::int64_t cols, const RowGroup& g, F&& f) {
  const std::int64_t T = g.threads;
  std::int64_t j = g.t;
  for (; j + (kRowBatch - 1) * T < cols; j += kRowBatch * T) {
    In v[kRowBatch];
#pragma unroll
    for (int u = 0; u < kRowBatch; ++u) v[u] = row[j + u * T];
#pragma unroll
    for (int u = 0; u < kRowBatch; ++u) f(v[u], j + u * T);
  }
  if (j >= cols) return;
  In v[kRowBatch];
#pragma unroll
  for (int u = 0; u < kRowBatch; ++u)
    if (j + u * T < cols) v[u] = row[j + u * T];
#pragma unroll
  for (int u = 0; u < kRowBatch; ++u)
    if (j + u * T < cols) f(v[u], j + u * T);
}

// A thread's elements of one row held in registers (the caller checks row_slice_fits first).
template <class In> struct RowSlice {
  In v[kRowSliceItems];
  int count;  // elements this thread holds: ceil((cols - t) / T), at most kRowSliceItems
  int t, threads;

  template <class F> __device__ __forceinline__ void for_each(F&& f) const {
#pragma unroll
    for (int u = 0; u < kRowSliceItems; ++u)
      if (u < count) f(v[u], std::int64_t(t) + std::int64_t(u) * threads);
  }
};

// Every thread of a group gets the same answer (cols and T are the group's), so the whole group
// takes the same path through the kernel's barriers.
__device__ __forceinline__ bool row_slice_fits(std::int64_t cols, const RowGroup& g) {
  return cols <= std::int64_t(kRowSliceItems) * g.threads;
}

template <class In>
__device__ __forceinline__ RowSlice<In> row_slice(const In* __restrict__ row, std::int64_t cols, const RowGroup& g) {
  RowSlice<In> s;
  s.t = g.t;
  s.threads = g.threads;
  s.count = cols > g.t ? int((cols - g.t + g.threads - 1) / g.threads) : 0;
#pragma unroll
  for (int u = 0; u < kRowSliceItems; ++u)
    if (u < s.count) s.v[u] = row[g.t + std::int64_t(u) * g.threads];
  return s;
}

// Runs body(for_each) once, where for_each(f) visits the thread's elements in order: from a
// register slice when many_passes and the row fits one, else from memory each time.
template <class In, class Body>
__device__ __forceinline__ void with_row(const In* __restrict__ row, std::int64_t cols, const RowGroup& g, bool many_passes,
                                         Body&& body) {
  if (many_passes && row_slice_fits(cols, g)) {
    const RowSlice<In> s = row_slice(row, cols, g);
    body([&](auto&& f) { s.for_each(f); });
  } else {
    body([&](auto&& f) { row_for_each(row, cols, g, f); });
  }
}

}  // namespace sumlab::gpu::rows
