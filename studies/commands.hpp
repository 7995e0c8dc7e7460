#pragma once
// Each `sumlab` subcommand lives in its own cmd_<name>.cpp and registers itself here.
// A command's callback returns through CLI11; failures throw sumlab::UserError, which main()
// prints as one line on stderr with a non-zero exit.
#include <stdexcept>
#include <string>

namespace CLI { class App; }

namespace sumlab {

struct UserError : std::runtime_error {
  using std::runtime_error::runtime_error;
};
// A check the user asked for failed (a bound broken under --strict, a verify mismatch, golden
// drift): main() prints it and exits 1.
struct CheckFailed : std::runtime_error {
  using std::runtime_error::runtime_error;
};

void register_sum(CLI::App& app);
void register_study(CLI::App& app);
void register_verify(CLI::App& app);
void register_report(CLI::App& app);
void register_explain(CLI::App& app);
void register_bench(CLI::App& app);
void register_specials(CLI::App& app);
void register_algorithms(CLI::App& app);
// Studies that live in their own study_<name>.cpp attach themselves to `sumlab study`.
void register_study_determinism(CLI::App& study);
void register_study_variance(CLI::App& study);
void register_study_segmented(CLI::App& study);
void register_study_scan(CLI::App& study);

}  // namespace sumlab
