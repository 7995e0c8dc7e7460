// `sumlab verify` lands with the GPU layer (issue 3).
#include <CLI/CLI.hpp>

#include "studies/commands.hpp"

namespace sumlab {
void register_verify(CLI::App&) {}
}  // namespace sumlab
