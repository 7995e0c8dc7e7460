#pragma once
// Progress on stderr: a redrawn bar with the elapsed time and an estimate of what is left when
// stderr is a terminal, else at most about 20 plain lines (so logs of long runs stay readable).
#include <chrono>
#include <cstddef>
#include <string>

namespace sumlab {

class Progress {
 public:
  Progress(std::string title, std::size_t total);
  void step(const std::string& what);  // one unit done
  void finish();

 private:
  std::string title_;
  std::size_t total_, done_ = 0, skipped_ = 0;
  bool tty_;
  std::chrono::steady_clock::time_point start_;
  std::size_t last_tick_ = static_cast<std::size_t>(-1);
};

}  // namespace sumlab
