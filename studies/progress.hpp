#pragma once
// Progress on stderr: a redrawn bar when stderr is a terminal, else one plain line per step
// (so logs of non-interactive runs stay readable).
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
  std::size_t total_, done_ = 0;
  bool tty_;
};

}  // namespace sumlab
