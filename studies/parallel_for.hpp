#pragma once
// Runs fn(i) for every i in [0, count) on up to `threads` threads, each taking the next index. A
// worker's exception is rethrown here, after every worker has stopped (a std::thread would end
// the process instead).
#include <algorithm>
#include <atomic>
#include <cstddef>
#include <future>
#include <vector>

namespace sumlab {

template <class F> void parallel_for(std::size_t count, int threads, F fn) {
  std::atomic<std::size_t> next{0};
  std::vector<std::future<void>> pool;
  const std::size_t t = std::max<std::size_t>(1, std::min<std::size_t>(count, static_cast<std::size_t>(std::max(threads, 1))));
  for (std::size_t w = 0; w < t; ++w)
    pool.push_back(std::async(std::launch::async, [&] {
      for (std::size_t i = next++; i < count; i = next++) fn(i);
    }));
  for (auto& f : pool) f.wait();
  for (auto& f : pool) f.get();  // the first worker's exception, if any
}

}  // namespace sumlab
