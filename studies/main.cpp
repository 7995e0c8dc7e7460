// sumlab: a laboratory for floating-point summation order. See README.md.
#include <CLI/CLI.hpp>
#include <cstdio>
#include <exception>
#include <new>

#include "studies/commands.hpp"

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
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return app.exit(e);
  } catch (const sumlab::UserError& e) {
    std::fprintf(stderr, "sumlab: %s\n", e.what());
    return 2;
  } catch (const sumlab::CheckFailed& e) {
    std::fprintf(stderr, "sumlab: %s\n", e.what());
    return 1;
  } catch (const std::bad_alloc&) {
    std::fprintf(stderr, "sumlab: out of memory (is n larger than this machine's memory?)\n");
    return 3;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "sumlab: error: %s\n", e.what());
    return 1;
  }
  return 0;
}
