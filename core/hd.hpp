#pragma once
// SUMLAB_HD marks functions that compile for both the host and the device, so that a generator or
// an order model is literally the same code on the CPU and in a CUDA kernel.
#if defined(__CUDACC__)
#define SUMLAB_HD __host__ __device__
#else
#define SUMLAB_HD
#endif
