#include "studies/input_error.hpp"

#include <fmt/format.h>

#include "studies/commands.hpp"

namespace sumlab {

void input_error(std::string_view name, std::string_view what) {
  throw UserError(fmt::format("'{}': {}", name, what));
}

std::string excerpt(std::string_view text, std::size_t max) {
  std::string out = "'";
  for (std::size_t i = 0; i < text.size(); ++i) {
    if (i == max) {
      out += "...";
      break;
    }
    const auto c = static_cast<unsigned char>(text[i]);
    if (c >= 0x20 && c < 0x7f && c != '\\') out += static_cast<char>(c);
    else out += fmt::format("\\x{:02x}", c);
  }
  return out + "'";
}

}  // namespace sumlab
