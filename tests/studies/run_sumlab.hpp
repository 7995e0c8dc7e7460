#pragma once
// Test helper: run the built `sumlab` binary (SUMLAB_BINARY) with arguments and collect its exit
// code and its stdout and stderr together.
#include <sys/wait.h>

#include <array>
#include <cstdio>
#include <string>

namespace sumlab::test {

struct Result {
  int code;         // exit status; 128 + signal when the binary crashed
  std::string out;  // stdout and stderr together
};

inline Result run(const std::string& args) {
  const std::string cmd = std::string(SUMLAB_BINARY) + " " + args + " 2>&1";
  std::string out;
  FILE* p = popen(cmd.c_str(), "r");
  if (!p) return {-1, "popen failed"};
  std::array<char, 4096> buf{};
  while (std::fgets(buf.data(), buf.size(), p)) out += buf.data();
  const int status = pclose(p);
  return {WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status), out};
}

}  // namespace sumlab::test
