#include "studies/progress.hpp"

#include <unistd.h>

#include <cstdio>

namespace sumlab {

Progress::Progress(std::string title, std::size_t total)
    : title_(std::move(title)), total_(total), tty_(isatty(STDERR_FILENO) != 0) {}

void Progress::step(const std::string& what) {
  ++done_;
  if (tty_) {
    const int width = 30;
    const int filled = total_ ? static_cast<int>(width * done_ / total_) : width;
    std::fprintf(stderr, "\r%s [%-*s] %zu/%zu %-40.40s", title_.c_str(), width,
                 std::string(static_cast<std::size_t>(filled), '#').c_str(), done_, total_, what.c_str());
  } else {
    std::fprintf(stderr, "%s %zu/%zu %s\n", title_.c_str(), done_, total_, what.c_str());
  }
  std::fflush(stderr);
}

void Progress::finish() {
  if (tty_) std::fprintf(stderr, "\n");
}

}  // namespace sumlab
