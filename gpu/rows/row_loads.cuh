#pragma once
// How a row kernel's thread reads its elements. The order is the model's (row_kernel.hpp): thread
// t of a row's T threads folds elements t, t + T, t + 2T, ... in that order; these helpers change
// only when each load is issued, never which element a fold step sees, so the bits are those of
// the plain strided loop.
//
// Why: where a fold step is a few flops, the plain loop waits a full memory latency per element,
// since the compiler does not hoist loads across a loop of unknown trip count; issuing a batch of
// kRowBatch loads before the batch's first step keeps them in flight together. Where a step is
// long (a correctly rounded division, the portable exp), a batch's steps outlast its loads and the
// memory idles through them: those folds load the next kRowAhead elements before folding the
// current ones (row_for_each_ahead), a few registers for loads always in flight
// (docs/performance-notes.md has the figures).
//
// A cheap fold with a second pass over the row (two_pass, and the normalised output) keeps the
// thread's elements in registers when they number at most kRowSliceItems (cols <= kRowSliceItems *
// T: float rows of 4096 at block_per_row/256, bfloat16 ones at /128), so the row is read from memory
// once. The slice and the batch live in registers, which is why the kernels that use them are
// declared __launch_bounds__(1024): a block of 1024 threads must launch, so the compiler keeps each
// within 64 registers. Where the host gave it a stage (gpu/rows/row_stage.hpp: bfloat16
// rows, and float and double rows that a kernel of several passes cannot hold in a slice), a kernel
// copies its row into shared memory by one bulk copy, the whole row in flight at once, and folds
// every pass from there in the same order (row_to_stage, with_row); other rows are read from memory
// in each pass (from L2 where it stays).
#include <cstdint>
#include <cstring>

#include "gpu/rows/row_stage.hpp"
#include "gpu/rows/row_tree.cuh"
#include "gpu/thread/bulk_loads.cuh"

namespace sumlab::gpu::rows {

// At least 32 bytes a thread in flight: 8 floats or doubles, 16 bfloat16 values.
template <class In> inline constexpr int kRowBatch = sizeof(In) == 2 ? 16 : 8;
// 64 bytes of input a thread (32 bfloat16 values, 16 floats, 8 doubles).
template <class In> inline constexpr int kRowSliceItems = kRowSliceBytes / int(sizeof(In));

// A costly fold's loads in flight while it computes (row_for_each_ahead): 8 floats or bfloat16
// values (4 left Welford's rows waiting on memory once its step was cheap; 8 need the kernel's 64
// registers, gpu/rows/moments_kernel.cuh). Double folds keep the plain loop (1, below): their
// registers a step already cost warps.
template <class In> inline constexpr int kRowAhead = sizeof(In) == 8 ? 1 : 8;

// f(value, j) for j = g.t, g.t + T, ... < cols, in that order, the loads Batch at a time. Counted
// in 32 bits with the address stepped by Batch * T, as row_for_each_ahead below: with 64-bit bounds
// and an address an element, a batch's tail alone set its kernels' registers.
template <int Batch, class In, class F>
__device__ __forceinline__ void row_for_each(const In* __restrict__ row, std::int64_t cols, const RowGroup& g, F&& f) {
  const std::int64_t j = g.t;
  if (j >= cols) return;
  const int T = g.threads;
  const int n = static_cast<int>((cols - 1 - j) / T) + 1;  // this thread's elements, < 2^31
  const In* p = row + j;
  int i = 0;
  for (; i + Batch <= n; i += Batch, p += std::int64_t(Batch) * T) {
    In v[Batch];
#pragma unroll
    for (int u = 0; u < Batch; ++u) v[u] = p[u * T];
#pragma unroll
    for (int u = 0; u < Batch; ++u) f(v[u], j + std::int64_t(i + u) * T);
  }
  if (i == n) return;
  In v[Batch];
#pragma unroll
  for (int u = 0; u < Batch; ++u)
    if (i + u < n) v[u] = p[u * T];
#pragma unroll
  for (int u = 0; u < Batch; ++u)
    if (i + u < n) f(v[u], j + std::int64_t(i + u) * T);
}

// row_for_each with 64-bit bounds and an address an element, for the stage's copy of rows that are
// not whole 16-byte words (row_to_stage): that rarely taken copy still sets the staged kernels'
// register allocation, and this one's is the measured best (copied by row_for_each or the plain
// loop, bfloat16 two_pass and softmax rows ran 3-5% slower: docs/performance-notes.md).
template <int Batch, class In, class F>
__device__ __forceinline__ void row_for_each_wide(const In* __restrict__ row, std::int64_t cols, const RowGroup& g, F&& f) {
  const std::int64_t T = g.threads;
  std::int64_t j = g.t;
  for (; j + (Batch - 1) * T < cols; j += Batch * T) {
    In v[Batch];
#pragma unroll
    for (int u = 0; u < Batch; ++u) v[u] = row[j + u * T];
#pragma unroll
    for (int u = 0; u < Batch; ++u) f(v[u], j + u * T);
  }
  if (j >= cols) return;
  In v[Batch];
#pragma unroll
  for (int u = 0; u < Batch; ++u)
    if (j + u * T < cols) v[u] = row[j + u * T];
#pragma unroll
  for (int u = 0; u < Batch; ++u)
    if (j + u * T < cols) f(v[u], j + u * T);
}

// f(value, j) as row_for_each, for a fold whose steps are long (a division, an exp): the next
// Ahead elements are loaded before the current Ahead are folded, so a thread always has loads in
// flight while it computes, where a batch loaded just before its steps leaves the memory idle
// through them. Counted in 32 bits with the address stepped by Ahead * T: a 64-bit compare and
// multiply-add an element would cost as much as a cheap step. j is dead where f does not use it.
template <int Ahead, class In, class F>
__device__ __forceinline__ void row_for_each_ahead(const In* __restrict__ row, std::int64_t cols, const RowGroup& g, F&& f) {
  static_assert(Ahead > 1, "one ahead is the plain loop");
  const std::int64_t T = g.threads;
  const std::int64_t j = g.t;
  if (j >= cols) return;
  const int n = static_cast<int>((cols - 1 - j) / T) + 1;  // this thread's elements, < 2^31
  const In* p = row + j;
  In cur[Ahead];
#pragma unroll
  for (int u = 0; u < Ahead; ++u)
    if (u < n) cur[u] = __ldg(p + u * T);
  p += Ahead * T;
  int i = 0;
  for (; i + 2 * Ahead <= n; i += Ahead, p += Ahead * T) {  // the next batch is whole
    In next[Ahead];
#pragma unroll
    for (int u = 0; u < Ahead; ++u) next[u] = __ldg(p + u * T);
#pragma unroll
    for (int u = 0; u < Ahead; ++u) f(cur[u], j + (i + u) * T);
#pragma unroll
    for (int u = 0; u < Ahead; ++u) cur[u] = next[u];
  }
  if (i + Ahead < n) {  // a last, partial batch follows this whole one
    In next[Ahead];
#pragma unroll
    for (int u = 0; u < Ahead; ++u)
      if (i + Ahead + u < n) next[u] = __ldg(p + u * T);
#pragma unroll
    for (int u = 0; u < Ahead; ++u) f(cur[u], j + (i + u) * T);
#pragma unroll
    for (int u = 0; u < Ahead; ++u) cur[u] = next[u];
    i += Ahead;
  }
#pragma unroll
  for (int u = 0; u < Ahead; ++u)
    if (i + u < n) f(cur[u], j + (i + u) * T);
}

// fb(v, j, count) for the batches of f's loop above: v[u] is element j + u * T for u < count (count
// is Batch but in the last batch, which is never empty); a fold that wants the batch whole (a tree
// within it) takes this one.
template <int Batch, class In, class F>
__device__ __forceinline__ void row_for_each_batch(const In* __restrict__ row, std::int64_t cols, const RowGroup& g, F&& fb) {
  const std::int64_t T = g.threads;
  std::int64_t j = g.t;
  for (; j + (Batch - 1) * T < cols; j += Batch * T) {
    In v[Batch];
#pragma unroll
    for (int u = 0; u < Batch; ++u) v[u] = __ldg(row + j + u * T);
    fb(v, j, Batch);
  }
  if (j >= cols) return;
  In v[Batch];
  int count = 0;
#pragma unroll
  for (int u = 0; u < Batch; ++u)
    if (j + u * T < cols) {
      v[u] = __ldg(row + j + u * T);
      count = u + 1;
    }
  fb(v, j, count);
}

// A fold whose result does not depend on the order of its elements (argmax, exact) may read a row
// in 16-byte words instead: a thread's word k holds columns kE .. kE + E - 1, so one load brings E
// elements and a batch of a few words is the thread's whole share of a short row.
template <class In> inline constexpr int kRowWordItems = 16 / int(sizeof(In));

// Every row starts on a 16-byte boundary and is whole words: the group agrees (same d_in, cols).
template <class In> __device__ __forceinline__ bool row_words_fit(const In* d_in, std::int64_t cols) {
  return cols % kRowWordItems<In> == 0 && reinterpret_cast<std::uintptr_t>(d_in) % 16 == 0;
}

// fw(v, k, count) for the thread's words k = g.t, g.t + T, ..., Words at a time: v[w E + i] is
// column (k + w T) E + i, so v is in column order; count of them are present (Words * E but in the
// last batch, where the missing words are at the end and never empty the batch).
template <int Words, class In, class F>
__device__ __forceinline__ void row_for_each_words(const In* __restrict__ row, std::int64_t cols, const RowGroup& g, F&& fw) {
  constexpr int E = kRowWordItems<In>;
  const uint4* w = reinterpret_cast<const uint4*>(row);
  const std::int64_t words = cols / E, T = g.threads;
  std::int64_t k = g.t;
  for (; k + (Words - 1) * T < words; k += Words * T) {
    uint4 r[Words];
#pragma unroll
    for (int u = 0; u < Words; ++u) r[u] = __ldg(w + k + u * T);
    In v[Words * E];
    memcpy(v, r, sizeof r);
    fw(v, k, Words * E);
  }
  if (k >= words) return;
  uint4 r[Words];
  int count = 0;
#pragma unroll
  for (int u = 0; u < Words; ++u) {
    r[u] = make_uint4(0, 0, 0, 0);
    if (k + u * T < words) {
      r[u] = __ldg(w + k + u * T);
      count = (u + 1) * E;
    }
  }
  In v[Words * E];
  memcpy(v, r, sizeof r);
  fw(v, k, count);
}

// A thread's elements of one row held in registers (the caller checks row_slice_fits first).
template <class In> struct RowSlice {
  In v[kRowSliceItems<In>];
  int count;  // elements this thread holds: ceil((cols - t) / T), at most kRowSliceItems<In>
  int t, threads;

  template <class F> __device__ __forceinline__ void for_each(F&& f) const {
#pragma unroll
    for (int u = 0; u < kRowSliceItems<In>; ++u)
      if (u < count) f(v[u], std::int64_t(t) + std::int64_t(u) * threads);
  }
};

// Every thread of a group gets the same answer (cols and T are the group's), so the whole group
// takes the same path through the kernel's barriers.
template <class In> __device__ __forceinline__ bool row_slice_fits(std::int64_t cols, const RowGroup& g) {
  return cols <= std::int64_t(kRowSliceItems<In>) * g.threads;
}

template <class In>
__device__ __forceinline__ RowSlice<In> row_slice(const In* __restrict__ row, std::int64_t cols, const RowGroup& g) {
  RowSlice<In> s;
  s.t = g.t;
  s.threads = g.threads;
  s.count = cols > g.t ? int((cols - g.t + g.threads - 1) / g.threads) : 0;
#pragma unroll
  for (int u = 0; u < kRowSliceItems<In>; ++u)
    if (u < s.count) s.v[u] = row[g.t + std::int64_t(u) * g.threads];
  return s;
}

// How a kernel's fold reads its row (with_row below):
//   batched  a cheap step (a few flops): kRowBatch loads then their steps, or a register slice
//            where the kernel passes over the row more than once and the row fits one;
//   ahead    a long step with registers to spare for loads (Welford's): the next kRowAhead loads
//            in flight while the current ones fold (row_for_each_ahead);
//   plain    a long step whose own registers leave none for loads ahead (softmax's exp, 31 of 32
//            with the output pass): the plain loop, counted in 32 bits and unrolled.
enum class RowLoop { batched, ahead, plain };

// Float and bfloat16: counted in 32 bits (a 64-bit compare and multiply-add an element cost as
// much as a cheap step) and unrolled Unroll times (4 from memory, so that the compiler issues a few
// loads early within 32 registers). Double: the strided loop as written; its registers a step
// already cost warps.
template <int Unroll = 4, class In, class F>
__device__ __forceinline__ void row_for_each_plain(const In* __restrict__ row, std::int64_t cols, const RowGroup& g, F&& f) {
  const std::int64_t T = g.threads;
  std::int64_t j = g.t;
  if constexpr (sizeof(In) == 8) {
    for (; j < cols; j += T) f(row[j], j);
  } else {
    if (j >= cols) return;
    const In* p = row + j;
    const int n = static_cast<int>((cols - 1 - j) / T) + 1;  // this thread's elements, < 2^31
#pragma unroll Unroll
    for (int i = 0; i < n; ++i, j += T, p += T) f(*p, j);
  }
}

// A thread's elements, in order, read from memory as Loop says.
template <RowLoop Loop, class In, class F>
__device__ __forceinline__ void row_read(const In* __restrict__ row, std::int64_t cols, const RowGroup& g, F&& f) {
  if constexpr (Loop == RowLoop::batched)
    row_for_each<kRowBatch<In>>(row, cols, g, f);
  else if constexpr (Loop == RowLoop::ahead && kRowAhead<In> > 1)
    row_for_each_ahead<kRowAhead<In>>(row, cols, g, f);
  else
    row_for_each_plain(row, cols, g, f);
}

// The group's stage in the dynamic shared memory the host sized for it (row_stage_bytes in
// gpu/rows/row_stage.hpp): one row per warp for warp_per_row, the block's one row for block_per_row.
template <class In> __device__ __forceinline__ In* row_stage(std::int64_t cols, row_reduce::RowLayout layout) {
  extern __shared__ __align__(16) unsigned char row_stage_smem[];
  const std::int64_t group = layout == row_reduce::RowLayout::warp_per_row ? std::int64_t(threadIdx.x >> 5) : 0;
  return reinterpret_cast<In*>(row_stage_smem) + group * cols;
}

// Copies the group's row into its stage and returns once every element is there for every thread
// of the group (all of them call). A row of whole 16-byte words on a 16-byte boundary goes by one
// bulk copy (gpu/thread/bulk_loads.cuh), issued by the group's first thread and awaited on an
// mbarrier: the whole row in flight at once, no register held, whatever order the fold reads it
// in. Any other row is copied by the group's threads, each its own elements in batches; a thread
// reads back only what it wrote, so that copy needs no barrier.
template <class In>
__device__ __forceinline__ void row_to_stage(const In* __restrict__ row, std::int64_t cols, const RowGroup& g, In* stage) {
  __shared__ __align__(8) unsigned long long landed[32];  // one per group: a warp each, or the block's
  static_assert(smem_state_bytes + sizeof landed <= kRowStaticSmemBytes, "row_stage_bytes counts this");
  const std::int64_t bytes = cols * std::int64_t(sizeof(In));
  if (bytes % 16 != 0 || reinterpret_cast<std::uintptr_t>(row) % 16 != 0) {
    row_for_each_wide<kRowBatch<In>>(row, cols, g, [&](In x, std::int64_t j) { stage[j] = x; });
    return;
  }
  unsigned long long* bar = &landed[g.block_stage ? 0 : threadIdx.x >> 5];
  if (g.t == 0) {
    detail::bulk::init(bar);
    detail::bulk::fence_init();
    detail::bulk::load(stage, row, static_cast<unsigned>(bytes), bar);
  }
  if (g.block_stage) __syncthreads();  // the barrier is initialised before anyone waits on it
  else __syncwarp();
  detail::bulk::wait(bar, 0);
}

// f(value, k) for k = 0 .. S - 1, value the thread's element k, where every thread of the group
// holds exactly S elements (cols == S * T): the loop unrolled whole, so that every load is issued
// before the first step and k is a constant in each step (Welford's count and its reciprocal:
// gpu/rows/moments_kernel.cuh). row: the row in memory or its stage.
template <int S, class In, class F>
__device__ __forceinline__ void row_for_each_exact(const In* __restrict__ row, const RowGroup& g, F&& f) {
  const In* p = row + g.t;
  const int T = g.threads;
  In v[S];
#pragma unroll
  for (int u = 0; u < S; ++u) v[u] = p[u * T];
#pragma unroll
  for (int u = 0; u < S; ++u) f(v[u], u);
}

// Runs body(read, reread, exact) once. read(f) visits the thread's elements in order, read as Loop
// says; reread(f) visits them again for a later pass; exact(S, f), S a std::integral_constant, is
// row_for_each_exact<S> over the same elements, for a group whose threads hold S each. Staged (a
// kernel instance of its own, launched where the host gave it a stage: gpu/rows/row_stage.hpp):
// the row is copied into the stage first and every pass reads it there, in the same order.
// Otherwise: from the register slice where the caller passes more than once and the row fits one
// (batched), else from memory in every pass.
template <RowLoop Loop, bool Staged, class In, class Body>
__device__ __forceinline__ void with_row(const In* __restrict__ row, std::int64_t cols, const RowGroup& g, bool many_passes,
                                         row_reduce::RowLayout layout, Body&& body) {
  if constexpr (Staged) {
    In* const stage = row_stage<In>(cols, layout);
    row_to_stage(row, cols, g, stage);
    // A short latency: no batches; unrolled 8, since a staged fold's step can be as short as a
    // load, a widening and an add (bfloat16 two_pass), against the loop's own three instructions.
    const auto each = [&](auto&& f) { row_for_each_plain<8>(stage, cols, g, f); };
    body(each, each, [&](auto S, auto&& f) { row_for_each_exact<decltype(S)::value>(stage, g, f); });
  } else {
    const auto exact = [&](auto S, auto&& f) { row_for_each_exact<decltype(S)::value>(row, g, f); };
    if constexpr (Loop == RowLoop::batched) {
      if (many_passes && row_slice_fits<In>(cols, g)) {
        const RowSlice<In> s = row_slice(row, cols, g);
        const auto each = [&](auto&& f) { s.for_each(f); };
        body(each, each, exact);
        return;
      }
    }
    const auto read = [&](auto&& f) { row_read<Loop>(row, cols, g, f); };
    body(read, read, exact);
  }
}

}  // namespace sumlab::gpu::rows
