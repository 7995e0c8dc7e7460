#pragma once
// A stateless counter-based random number generator: random_bits(seed, index, stream) is a pure
// function, so element i of a generated array is the same on the CPU and on the GPU, whatever n,
// the launch shape or the number of threads, and any element can be drawn without the others.
//
// Construction (all 64-bit integer arithmetic, bit-identical on every platform):
//   key   = mix64(mix64(seed ^ K) + G2 * (stream + 1))        one key per (seed, stream)
//   state = key + G * (index + 1)                              a SplitMix64 state (Steele, Lea &
//                                                              Flood, OOPSLA 2014), counter = index
//   out   = mix64(mix64(state) ^ key)
// mix64 is the SplitMix64 finaliser (David Stafford's "Mix13" variant of MurmurHash3's fmix64),
// a bijection of 64-bit words with full avalanche. For a fixed (seed, stream), index -> out is a
// bijection (no two indices collide) and the first mix64 alone is exactly SplitMix64's output
// sequence, which passes BigCrush; the second round, keyed again, keeps two (seed, stream) pairs
// whose SplitMix64 sequences happen to overlap from producing shifted copies of each other.
// Not cryptographic. Streams separate independent draws for the same element (e.g. the retries
// of a rejection loop, or a sign and a magnitude).
#include <cstdint>

#include "core/hd.hpp"

namespace sumlab {

SUMLAB_HD constexpr std::uint64_t mix64(std::uint64_t z) {
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return z ^ (z >> 31);
}

SUMLAB_HD constexpr std::uint64_t random_bits(std::uint64_t seed, std::uint64_t index,
                                              std::uint32_t stream) {
  constexpr std::uint64_t kGolden = 0x9e3779b97f4a7c15ull;   // 2^64 / phi, odd
  constexpr std::uint64_t kGolden2 = 0xd1b54a32d192ed03ull;  // an odd R2-sequence constant
  constexpr std::uint64_t kSeedSalt = 0x243f6a8885a308d3ull;  // pi's fraction bits
  const std::uint64_t key = mix64(mix64(seed ^ kSeedSalt) + kGolden2 * (std::uint64_t(stream) + 1));
  const std::uint64_t state = key + kGolden * (index + 1);
  return mix64(mix64(state) ^ key);
}

// Uniform in [0, 1): the top 53 bits times 2^-53 (exact; every multiple of 2^-53 equally likely).
SUMLAB_HD constexpr double uniform_double(std::uint64_t seed, std::uint64_t index,
                                          std::uint32_t stream) {
  return double(random_bits(seed, index, stream) >> 11) * 0x1p-53;
}

// Uniform in [0, 1): the top 24 bits times 2^-24 (exact in float).
SUMLAB_HD constexpr float uniform_float(std::uint64_t seed, std::uint64_t index,
                                        std::uint32_t stream) {
  return float(std::uint32_t(random_bits(seed, index, stream) >> 40)) * 0x1p-24f;
}

}  // namespace sumlab
