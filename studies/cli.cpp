// The `sumlab` command line as a library call: main() and the Python package run the same code.
#include "studies/cli.hpp"

#include <CLI/CLI.hpp>

#include <fmt/format.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <exception>
#include <new>
#include <string>
#include <system_error>

#include "studies/backend.hpp"
#include "studies/commands.hpp"
#include "studies/study_driver.hpp"

namespace sumlab {
namespace {

// Every subcommand: the exit codes in its --help footer, and list options that are sets: a
// repeated entry ("--dtypes float32,float32") would run every cell twice and count twice in every
// fit, so it is refused before anything runs. The one list that is a sequence: CSR --offsets.
void add_common_rules(CLI::App& app) {
  app.footer(exit_codes_help);
  app.parse_complete_callback([&app] {
    for (const CLI::Option* opt : app.get_options()) {
      if (opt->get_delimiter() == '\0' || opt->get_name() == "--offsets" || opt->get_name() == "--segment-sizes") continue;
      const auto& values = opt->results();
      for (std::size_t i = 0; i < values.size(); ++i)
        for (std::size_t j = 0; j < i; ++j)
          if (values[i] == values[j])
            throw UserError(opt->get_name() + " lists '" + values[i] + "' twice (a list is a set)");
    }
  });
  for (CLI::App* sub : app.get_subcommands({})) add_common_rules(*sub);
}

bool out_of_space(const std::error_code& ec) {
  return ec == std::errc::no_space_on_device || ec.value() == EDQUOT || ec == std::errc::not_enough_memory ||
         ec == std::errc::file_too_large;
}

int fail(std::string* error, int code, const char* what, const char* prefix = "") {
  std::fprintf(stderr, "sumlab: %s%s\n", prefix, what);
  if (error) *error = std::string(prefix) + what;
  return code;
}

// Output that could not be written (`sum --json > /dev/full`) is a failure, not a success: a full
// disk is exit 3, any other write error exit 2.
int finish_output(std::string* error, int code) {
  if (std::fflush(stdout) == 0 && !std::ferror(stdout)) return code;
  const int err = errno;
  std::clearerr(stdout);
  return fail(error, err == ENOSPC || err == EDQUOT ? exit_resources : exit_bad_input,
              fmt::format("cannot write the output: {}", std::strerror(err)).c_str());
}

bool known_command(const CLI::App& app, const std::string& name) {
  for (const CLI::App* sub : app.get_subcommands({}))
    if (sub->get_name() == name) return true;
  return false;
}

std::string command_names(const CLI::App& app) {
  std::string names;
  for (const CLI::App* sub : app.get_subcommands({})) names += (names.empty() ? "" : ", ") + sub->get_name();
  return names;
}

// The version, the commit it was configured from, and what the GPU side can do here.
std::string version_text() {
  std::string why;
  const bool gpu = cuda_backend_available(&why);
  std::string out = "sumlab " SUMLAB_VERSION " (commit " SUMLAB_BUILD_COMMIT " at configure time)\n";
#if defined(SUMLAB_WITH_CUDA)
  out += "CUDA kernels: built\n";
#else
  out += "CUDA kernels: not built (configure with -DSUMLAB_CUDA=ON where nvcc is installed)\n";
#endif
  out += gpu ? "device: " + make_backend("cuda")->description() : "device: none (" + why + "); --backend model gives the GPU kernels' bits";
  return out;
}

}  // namespace

int run_cli(int argc, const char* const* argv, std::string* error) {
  if (error) error->clear();
  CLI::App app{"sumlab: how the order of a floating-point sum changes its bits, measured against "
               "an exact MPFR reference"};
  app.require_subcommand(1);
  app.set_version_flag("--version", version_text);
  register_sum(app);
  register_study(app);
  register_verify(app);
  register_report(app);
  register_explain(app);
  register_bench(app);
  register_specials(app);
  register_algorithms(app);
  add_common_rules(app);
  int code = exit_ok;
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    // --help and --version print and exit 0; every other parse failure is a usage error, in one
    // line like every other refusal.
    if (e.get_exit_code() == 0) return app.exit(e) == 0 ? finish_output(error, exit_ok) : exit_bad_input;
    std::string what = e.what();
    if (argc > 1 && argv[1][0] != '-' && !known_command(app, argv[1]))
      what = fmt::format("unknown command '{}' (commands: {})", argv[1], command_names(app));
    return fail(error, exit_bad_input, (what + "; see sumlab --help").c_str());
  } catch (const UserError& e) {
    return fail(error, exit_bad_input, e.what());
  } catch (const CheckFailed& e) {
    return fail(error, exit_check_failed, e.what());
  } catch (const Interrupted& e) {
    return fail(error, 130, e.what());  // the shell's code for a process stopped by SIGINT
  } catch (const ResourceError& e) {
    return fail(error, exit_resources, e.what());
  } catch (const std::bad_alloc&) {
    return fail(error, exit_resources, "out of memory (is n larger than this machine's memory?)");
  } catch (const std::system_error& e) {  // std::filesystem_error too
    return fail(error, out_of_space(e.code()) ? exit_resources : exit_bad_input, e.what());
  } catch (const std::exception& e) {
    return fail(error, exit_internal, e.what(), "internal error: ");
  }
  return finish_output(error, code);
}

}  // namespace sumlab
