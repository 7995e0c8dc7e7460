// Documents that are a command's output stay equal to what the command prints today: the README's
// table of algorithms and bounds (`sumlab algorithms`) and docs/special-values.md (`sumlab
// specials`). A change to a registry row or to an algorithm's special values fails here until the
// document is regenerated (scripts/regenerate-docs.sh).
#include <gtest/gtest.h>

#include <fstream>
#include <sstream>
#include <string>

#include "run_sumlab.hpp"

namespace sumlab {
namespace {

std::string read_file(const std::string& relative) {
  std::ifstream in(std::string(SUMLAB_SOURCE_DIR) + "/" + relative);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

// The text between "<!-- sumlab <command>: generated, do not edit -->\n" and
// "<!-- end of sumlab <command> -->".
std::string generated_section(const std::string& doc, const std::string& command) {
  const std::string open = "<!-- sumlab " + command + ": generated, do not edit -->\n";
  const std::string close = "<!-- end of sumlab " + command + " -->";
  const auto a = doc.find(open), b = doc.find(close);
  if (a == std::string::npos || b == std::string::npos || b < a) return "(markers missing)";
  return doc.substr(a + open.size(), b - a - open.size());
}

void expect_generated(const std::string& doc, const std::string& command) {
  const auto r = test::run(command);
  ASSERT_EQ(r.code, 0) << r.out;
  EXPECT_EQ(generated_section(read_file(doc), command), r.out)
      << doc << " is out of date: run scripts/regenerate-docs.sh";
}

TEST(GeneratedDocs, ReadmeAlgorithmTable) { expect_generated("README.md", "algorithms"); }
TEST(GeneratedDocs, SpecialValuesTable) { expect_generated("docs/special-values.md", "specials"); }

// Every symbol a bound formula uses is defined in the legend under the table.
TEST(GeneratedDocs, AlgorithmLegendDefinesEverySymbol) {
  const auto r = test::run("algorithms");
  ASSERT_EQ(r.code, 0) << r.out;
  const std::string legend = r.out.substr(r.out.rfind("\nS = sum"));
  for (const char* definition :
       {"S = sum |x_i|", "s = sum x_i", "u = 2^-p", "gamma(k) = ", "gamma_X(k), u_X", "d: ", "(emin: ",
        "r, a = ", "N = n - 1", "lambda = ", "C = ", "alpha = ", "k = ", "m = ", "Q = "})
    EXPECT_NE(legend.find(definition), std::string::npos) << definition << " is not defined in:" << legend;
}

// The GPU rows of `sumlab specials` say what they are: the order model at the default shape,
// gpu_atomic in launch order; the hand-written preamble does not repeat it.
TEST(GeneratedDocs, SpecialsSaysTheGpuRowsAreTheModel) {
  const auto r = test::run("specials");
  ASSERT_EQ(r.code, 0) << r.out;
  EXPECT_NE(r.out.find("The gpu_ rows are the CPU order model (core/order_model) of each kernel at its default "
                       "launch shape, not a GPU run; gpu_atomic's is one arrival order of its block partials, "
                       "launch order."),
            std::string::npos)
      << r.out;
  EXPECT_LT(r.out.find("gpu_ rows are"), r.out.find("### float32"));
}

}  // namespace
}  // namespace sumlab
