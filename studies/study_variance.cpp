// `sumlab study variance` lands with its issue; until then the subcommand does not exist.
#include <CLI/CLI.hpp>

#include "studies/commands.hpp"

namespace sumlab {
void register_study_variance(CLI::App&) {}
}  // namespace sumlab
