#pragma once
// The gpu-labelled tests' first line: skip, with the reason, when there is no CUDA device (so CI
// without a GPU stays green).
#include <gtest/gtest.h>

#include <string>

#include "gpu/gpu_sum.hpp"

#define SUMLAB_REQUIRE_GPU()                                          \
  do {                                                                \
    std::string why_;                                                 \
    if (!::sumlab::gpu::gpu_available(&why_)) GTEST_SKIP() << why_;   \
  } while (0)
