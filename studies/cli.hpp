#pragma once
// The `sumlab` command line: parses argv, runs the subcommand, prints a failure as one line on
// stderr and returns the documented exit code (studies/commands.hpp). main() is this call, and the
// Python package runs commands through it too, so both faces of the lab behave the same.
namespace sumlab {

int run_cli(int argc, const char* const* argv);

}  // namespace sumlab
