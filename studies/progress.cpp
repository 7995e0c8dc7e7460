#include "studies/progress.hpp"

#include <unistd.h>

#include <cstdio>
#include <string>

namespace sumlab {
namespace {

// "1 h 02 min", "3 min 05 s", "12 s".
std::string duration_text(double s) {
  char buf[32];
  if (s >= 3600) std::snprintf(buf, sizeof buf, "%d h %02d min", int(s / 3600), int(s / 60) % 60);
  else if (s >= 60) std::snprintf(buf, sizeof buf, "%d min %02d s", int(s / 60), int(s) % 60);
  else std::snprintf(buf, sizeof buf, "%d s", int(s + 0.5));
  return buf;
}

}  // namespace

Progress::Progress(std::string title, std::size_t total)
    : title_(std::move(title)), total_(total), tty_(isatty(STDERR_FILENO) != 0),
      start_(std::chrono::steady_clock::now()) {}

void Progress::step(const std::string& what) {
  ++done_;
  const double elapsed = std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count();
  // The rate of the steps that did work (steps resumed from an earlier run cost nothing).
  if (what.find("(done before)") != std::string::npos) ++skipped_;
  const std::size_t worked = done_ - skipped_;
  const std::string eta = worked > 0 && done_ < total_
                              ? ", ~" + duration_text(elapsed / double(worked) * double(total_ - done_)) + " left"
                              : "";
  if (tty_) {
    const int width = 30;
    const int filled = total_ ? static_cast<int>(width * done_ / total_) : width;
    std::fprintf(stderr, "\r%s [%-*s] %zu/%zu %s%s %-36.36s", title_.c_str(), width,
                 std::string(static_cast<std::size_t>(filled), '#').c_str(), done_, total_,
                 duration_text(elapsed).c_str(), eta.c_str(), what.c_str());
  } else {
    // A log gets at most about 20 lines: one per twentieth of the steps, and the last.
    const std::size_t tick = total_ ? done_ * 20 / total_ : 20;
    if (tick == last_tick_ && done_ != total_) return;
    last_tick_ = tick;
    std::fprintf(stderr, "%s %zu/%zu (%s%s) %s\n", title_.c_str(), done_, total_, duration_text(elapsed).c_str(),
                 eta.c_str(), what.c_str());
  }
  std::fflush(stderr);
}

void Progress::finish() {
  if (tty_ && done_ > 0) std::fprintf(stderr, "\n");
}

}  // namespace sumlab
