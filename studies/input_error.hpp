#pragma once
// The one-line messages of the file readers: "'x.csv' line 3, column 2: empty field".
// A file's bytes are shown only through excerpt(), so that a hostile file cannot put newlines,
// control characters or megabytes into a message.
#include <string>
#include <string_view>

namespace sumlab {

// Throws UserError "'<name>': <what>".
[[noreturn]] void input_error(std::string_view name, std::string_view what);

// At most `max` characters of `text`, quoted; bytes outside printable ASCII as \xNN; "..." when
// cut.
std::string excerpt(std::string_view text, std::size_t max = 40);

}  // namespace sumlab
