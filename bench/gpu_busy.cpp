// gpu_busy: how much of a process's life the GPU spent working, from CUPTI's own record of every
// kernel, copy and memset (device timestamps, not a sampled utilisation). Preloaded into any
// program (LD_PRELOAD), it prints at exit, to $SUMLAB_GPU_BUSY_OUT (default stderr):
//   wall      the process's life from this library's load to its exit
//   active    from the first GPU operation's start to the last one's end
//   busy      the union of the operations' intervals (overlaps counted once)
//   kernels   the union of the kernels' intervals alone
// and busy/active, busy/wall; with $SUMLAB_GPU_BUSY_TRACE=FILE also every operation, one a line
// (start and end in us from the first, the GPU's idle gap before it, bytes, kernel name or kind). Built against the CUPTI of the machine it runs on, since its
// activity records change layout between versions (scripts/gpu-busy.sh names the record types):
//   g++ -std=c++20 -shared -fPIC -O2 bench/gpu_busy.cpp -I$CUPTI/include -L$CUPTI/lib -lcupti
//     -DKERNEL_RECORD=CUpti_ActivityKernelN -DMEMCPY_RECORD=... -DMEMSET_RECORD=...
#include <cupti_activity.h>  // alone: cupti.h pulls in every API's generated parameter structs

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <mutex>
#include <string>
#include <stdlib.h>
#include <utility>
#include <vector>

namespace {

using Interval = std::pair<std::uint64_t, std::uint64_t>;
std::mutex lock;
std::vector<Interval> operations, kernels;
// With $SUMLAB_GPU_BUSY_TRACE: every operation, to see where the GPU waits (what ran before a gap).
struct Traced {
  std::uint64_t start, end, bytes;
  std::string what;
};
std::vector<Traced> trace;
const bool tracing = std::getenv("SUMLAB_GPU_BUSY_TRACE") != nullptr;
std::uint64_t loaded_at = 0;
std::once_flag reported, registered;
void report();

void check(CUptiResult r, const char* what) {
  if (r == CUPTI_SUCCESS) return;
  const char* text = nullptr;
  cuptiGetResultString(r, &text);
  std::fprintf(stderr, "gpu_busy: %s: %s\n", what, text ? text : "unknown CUPTI error");
}

void CUPTIAPI give_buffer(std::uint8_t** buffer, std::size_t* size, std::size_t* max_records) {
  // Registered here, once CUDA is in use, so that it runs before the CUDA runtime's own exit
  // handlers tear the context down (atexit runs handlers last registered first).
  std::call_once(registered, [] { std::atexit(report); });
  *size = 8 << 20;
  *buffer = static_cast<std::uint8_t*>(std::aligned_alloc(8, *size));
  *max_records = 0;
}

void CUPTIAPI take_buffer(CUcontext, std::uint32_t, std::uint8_t* buffer, std::size_t, std::size_t valid) {
  CUpti_Activity* record = nullptr;
  const std::lock_guard<std::mutex> guard(lock);
  while (cuptiActivityGetNextRecord(buffer, valid, &record) == CUPTI_SUCCESS) {
    switch (record->kind) {
      case CUPTI_ACTIVITY_KIND_KERNEL:
      case CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL: {
        const auto* k = reinterpret_cast<const KERNEL_RECORD*>(record);
        kernels.emplace_back(k->start, k->end);
        operations.emplace_back(k->start, k->end);
        if (tracing) trace.push_back({k->start, k->end, 0, k->name ? k->name : "kernel"});
        break;
      }
      case CUPTI_ACTIVITY_KIND_MEMCPY: {
        const auto* m = reinterpret_cast<const MEMCPY_RECORD*>(record);
        operations.emplace_back(m->start, m->end);
        if (tracing) trace.push_back({m->start, m->end, m->bytes, "memcpy kind " + std::to_string(m->copyKind)});
        break;
      }
      case CUPTI_ACTIVITY_KIND_MEMSET: {
        const auto* m = reinterpret_cast<const MEMSET_RECORD*>(record);
        operations.emplace_back(m->start, m->end);
        if (tracing) trace.push_back({m->start, m->end, m->bytes, "memset"});
        break;
      }
      default:
        break;
    }
  }
  std::free(buffer);
}

// Total length of the union of the intervals.
std::uint64_t covered(std::vector<Interval> v) {
  std::sort(v.begin(), v.end());
  std::uint64_t total = 0, start = 0, end = 0;
  bool open = false;
  for (const auto& [s, e] : v) {
    if (open && s <= end) {
      end = std::max(end, e);
      continue;
    }
    if (open) total += end - start;
    start = s;
    end = e;
    open = true;
  }
  return open ? total + (end - start) : total;
}

void report() {
  std::call_once(reported, [] {
  check(cuptiActivityFlushAll(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED), "flush");
  std::uint64_t now = 0;
  cuptiGetTimestamp(&now);
  const std::lock_guard<std::mutex> guard(lock);
  std::uint64_t first = ~std::uint64_t{0}, last = 0;
  for (const auto& [s, e] : operations) {
    first = std::min(first, s);
    last = std::max(last, e);
  }
  const double wall = static_cast<double>(now - loaded_at) * 1e-9;
  const double active = operations.empty() ? 0.0 : static_cast<double>(last - first) * 1e-9;
  const double busy = static_cast<double>(covered(operations)) * 1e-9;
  const double kernel = static_cast<double>(covered(kernels)) * 1e-9;
  const char* path = std::getenv("SUMLAB_GPU_BUSY_OUT");
  FILE* out = path ? std::fopen(path, "a") : stderr;
  if (!out) out = stderr;
  std::fprintf(out,
               "gpu_busy: wall %.3f s, active %.3f s, busy %.3f s (%zu operations), kernels %.3f s (%zu); "
               "busy/active %.3f, busy/wall %.3f\n",
               wall, active, busy, operations.size(), kernel, kernels.size(), active > 0 ? busy / active : 0.0,
               wall > 0 ? busy / wall : 0.0);
  if (out != stderr) std::fclose(out);
  if (!tracing) return;
  // start and end in microseconds from the first operation, the gap before it, bytes, what.
  std::sort(trace.begin(), trace.end(), [](const Traced& a, const Traced& b) { return a.start < b.start; });
  if (FILE* t = std::fopen(std::getenv("SUMLAB_GPU_BUSY_TRACE"), "w")) {
    std::uint64_t reached = trace.empty() ? 0 : trace.front().start;
    for (const auto& op : trace) {
      const double gap = op.start > reached ? static_cast<double>(op.start - reached) * 1e-3 : 0.0;
      std::fprintf(t, "%.1f %.1f %.1f %llu %s\n", static_cast<double>(op.start - first) * 1e-3,
                   static_cast<double>(op.end - first) * 1e-3, gap, static_cast<unsigned long long>(op.bytes),
                   op.what.c_str());
      reached = std::max(reached, op.end);
    }
    std::fclose(t);
  }
  });
}

__attribute__((constructor)) void start() {
  ::unsetenv("LD_PRELOAD");  // the command traced, not the helpers it starts (git, a shell)
  check(cuptiActivityRegisterCallbacks(give_buffer, take_buffer), "register");
  for (const auto kind : {CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL, CUPTI_ACTIVITY_KIND_MEMCPY, CUPTI_ACTIVITY_KIND_MEMSET})
    check(cuptiActivityEnable(kind), "enable");
  cuptiGetTimestamp(&loaded_at);
  std::atexit(report);
}

}  // namespace
