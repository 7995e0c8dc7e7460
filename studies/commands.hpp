#pragma once
// Each `sumlab` subcommand lives in its own cmd_<name>.cpp and registers itself here.
// A command's callback returns through CLI11; failures throw one of the errors below, which main()
// prints as one line on stderr and turns into the documented exit code (exit_codes below).
#include <stdexcept>
#include <string>

namespace CLI { class App; }

namespace sumlab {

// Exit codes, the same for every subcommand (README "Exit codes", every --help's footer).
inline constexpr int exit_ok = 0;
inline constexpr int exit_check_failed = 1;  // golden drift, --strict bound violations, verify mismatches
inline constexpr int exit_bad_input = 2;     // bad input or usage (options, files, folders)
inline constexpr int exit_resources = 3;     // out of memory, disk or device resources
inline constexpr int exit_internal = 4;      // a bug in sumlab (an exception nobody expected)
inline constexpr const char* exit_codes_help =
    "Exit codes: 0 ok; 1 a check failed (golden drift, --strict bound violations, verify mismatches); "
    "2 bad input or usage; 3 out of resources (memory, disk, GPU); 4 internal error (a bug: please "
    "report it).";

// Bad input or usage: exit 2.
struct UserError : std::runtime_error {
  using std::runtime_error::runtime_error;
};
// Not enough memory, disk or device to do what was asked: exit 3.
struct ResourceError : std::runtime_error {
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
// Studies that live in their own study_<name>.cpp attach themselves to `sumlab study`, in this
// order: a new family's study is one line here.
void register_study_determinism(CLI::App& study);
void register_study_variance(CLI::App& study);
void register_study_segmented(CLI::App& study);
void register_study_scan(CLI::App& study);
void register_study_dot(CLI::App& study);
inline constexpr void (*kOwnStudies[])(CLI::App&) = {register_study_determinism, register_study_variance,
                                                     register_study_segmented, register_study_scan,
                                                     register_study_dot};

}  // namespace sumlab
