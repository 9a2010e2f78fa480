// Text with characters taken off both ends: the shape gates and the list parser of module 16B.
#pragma once

#include <string>
#include <string_view>

namespace g2c::synth {

inline constexpr std::string_view kWhitespace = " \t\n\r\f\v";

/// `text` without the `characters` at either end. Example: strip("  \"hi\" ", " \"") -> "hi".
inline std::string strip(std::string_view text, std::string_view characters = kWhitespace) {
  const auto first = text.find_first_not_of(characters);
  if (first == std::string_view::npos) return "";
  const auto last = text.find_last_not_of(characters);
  return std::string(text.substr(first, last - first + 1));
}

}  // namespace g2c::synth
