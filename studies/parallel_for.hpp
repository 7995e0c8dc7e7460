#pragma once
// Runs fn(i) for every i in [0, count) on up to `threads` threads, each taking the next index.
#include <algorithm>
#include <atomic>
#include <cstddef>
#include <thread>
#include <vector>

namespace sumlab {

template <class F> void parallel_for(std::size_t count, int threads, F fn) {
  std::atomic<std::size_t> next{0};
  std::vector<std::thread> pool;
  const int t = std::max(1, std::min<int>(threads, static_cast<int>(count)));
  for (int w = 0; w < t; ++w)
    pool.emplace_back([&] {
      for (std::size_t i = next++; i < count; i = next++) fn(i);
    });
  for (auto& th : pool) th.join();
}

}  // namespace sumlab
