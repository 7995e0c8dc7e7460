// sumlab: a laboratory for floating-point summation order. See README.md.
#include "studies/cli.hpp"

int main(int argc, char** argv) { return sumlab::run_cli(argc, argv); }
