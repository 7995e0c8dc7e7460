#pragma once
// The `sumlab` command line: parses argv, runs the subcommand, prints a failure as one line on
// stderr and returns the documented exit code (studies/commands.hpp). main() is this call, and the
// Python package runs commands through it too, so both faces of the lab behave the same; `error`,
// where given, receives that line (empty on success), for a caller whose user does not see stderr.
#include <string>

namespace sumlab {

int run_cli(int argc, const char* const* argv, std::string* error = nullptr);

}  // namespace sumlab
