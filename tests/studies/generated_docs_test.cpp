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

}  // namespace
}  // namespace sumlab
