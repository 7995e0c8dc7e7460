// sumlab: a laboratory for floating-point summation order. See README.md.
#include <CLI/CLI.hpp>

#include <cerrno>
#include <cstdio>
#include <exception>
#include <new>
#include <system_error>

#include "studies/commands.hpp"

namespace {

// The footer of every --help: the exit codes, the same for every subcommand.
void add_footer(CLI::App& app) {
  app.footer(sumlab::exit_codes_help);
  for (CLI::App* sub : app.get_subcommands({})) add_footer(*sub);
}

bool out_of_space(const std::error_code& ec) {
  return ec == std::errc::no_space_on_device || ec.value() == EDQUOT || ec == std::errc::not_enough_memory ||
         ec == std::errc::file_too_large;
}

int fail(int code, const char* what, const char* prefix = "") {
  std::fprintf(stderr, "sumlab: %s%s\n", prefix, what);
  return code;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"sumlab: how the order of a floating-point sum changes its bits, measured against "
               "an exact MPFR reference"};
  app.require_subcommand(1);
  sumlab::register_sum(app);
  sumlab::register_study(app);
  sumlab::register_verify(app);
  sumlab::register_report(app);
  sumlab::register_explain(app);
  sumlab::register_bench(app);
  sumlab::register_specials(app);
  sumlab::register_algorithms(app);
  add_footer(app);
  using namespace sumlab;
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    // --help prints and exits 0; every other parse failure is a usage error.
    return app.exit(e) == 0 ? exit_ok : exit_bad_input;
  } catch (const UserError& e) {
    return fail(exit_bad_input, e.what());
  } catch (const CheckFailed& e) {
    return fail(exit_check_failed, e.what());
  } catch (const ResourceError& e) {
    return fail(exit_resources, e.what());
  } catch (const std::bad_alloc&) {
    return fail(exit_resources, "out of memory (is n larger than this machine's memory?)");
  } catch (const std::system_error& e) {  // std::filesystem_error too
    return fail(out_of_space(e.code()) ? exit_resources : exit_bad_input, e.what());
  } catch (const std::exception& e) {
    return fail(exit_internal, e.what(), "internal error: ");
  }
  return exit_ok;
}
