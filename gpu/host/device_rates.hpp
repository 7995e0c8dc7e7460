#pragma once
// A GPU's rates from its attributes, as plain arithmetic (cuda_host.cuh reads the attributes; a
// CPU test checks the figures below without a device).

namespace sumlab::gpu {

// Peak memory bandwidth in bytes per SM cycle: what the memory delivers against what the SMs can
// do with it. Memory clock (double data rate) times bus width, over SMs times SM clock; 0 where an
// attribute is unknown (0). An H100 SXM (HBM3 at 2619 MHz on 5120 bits, 132 SMs at 1980 MHz)
// gives 12.8, the H200 about 18 (4.8 TB/s).
constexpr double memory_bytes_per_sm_cycle(double memory_khz, double bus_bits, double sms, double sm_khz) {
  const double sm_cycles = sms * sm_khz;
  return sm_cycles > 0 ? 2.0 * memory_khz * (bus_bits / 8.0) / sm_cycles : 0.0;
}

// Whether double's whole-range bins in gpu_exact keep pace with memory of this rate: they add
// about 1.5 elements, 12 bytes, an SM cycle (0.98-0.99 of CUB on an H100 SXM, 0.68 on the H200;
// docs/performance-notes.md, "gpu_exact on middling spans"). Then a warp of a wider span goes to
// them sooner (exact_kernel.cuh, ExactLayout::wide_span_bins_keep_up). Speed only: both paths
// are exact.
constexpr bool exact_bins_keep_up(double bytes_per_sm_cycle) { return bytes_per_sm_cycle > 0 && bytes_per_sm_cycle <= 14; }

}  // namespace sumlab::gpu
