#pragma once
// Warp shuffles of any state the kernels combine: a float, a double, a Kahan pair, a scan's
// flagged or affine pair, a row's moments. The state travels as its 32-bit words, so the bits that
// arrive are exactly the partner's (NaN payloads included): what every CPU model assumes when it
// reads "lane i + off's value". All 32 lanes must call.
#include <cstring>
#include <type_traits>

namespace sumlab::gpu::warp {

inline constexpr unsigned full_mask = 0xffffffffu;

enum class Shfl {
  down,      // from lane i + arg (lanes past 31 get their own value back)
  up,        // from lane i - arg (lanes below arg get their own value back)
  xor_lane,  // from lane i ^ arg
  lane,      // from lane arg (a broadcast)
};

__device__ __forceinline__ unsigned shfl_word(unsigned w, int arg, Shfl k) {
  switch (k) {
    case Shfl::down: return __shfl_down_sync(full_mask, w, arg);
    case Shfl::up: return __shfl_up_sync(full_mask, w, arg);
    case Shfl::xor_lane: return __shfl_xor_sync(full_mask, w, arg);
    default: return __shfl_sync(full_mask, w, arg);
  }
}

template <class S> __device__ __forceinline__ S shfl(const S& v, int arg, Shfl k) {
  static_assert(std::is_trivially_copyable_v<S> && sizeof(S) % 4 == 0, "a state travels as whole 32-bit words");
  unsigned w[sizeof(S) / 4];
  memcpy(w, &v, sizeof(S));
#pragma unroll
  for (int i = 0; i < static_cast<int>(sizeof(S) / 4); ++i) w[i] = shfl_word(w[i], arg, k);
  S r;
  memcpy(&r, w, sizeof(S));
  return r;
}

}  // namespace sumlab::gpu::warp
