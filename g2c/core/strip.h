// Small text helpers. strip: characters taken off both ends, as Python's str.strip (module 16B's
// shape gates and list parser, module 18's tool-call parser, module 19's ReAct parser, g2c-serve's
// HTTP layer). ascii_lowercase: names compared without case (HTTP headers, hosts, model names).
#pragma once

#include <string>
#include <string_view>

namespace g2c {

inline constexpr std::string_view kWhitespace = " \t\n\r\f\v";

/// `text` without the `characters` at either end. Example: strip("  \"hi\" ", " \"") -> "hi".
inline std::string strip(std::string_view text, std::string_view characters = kWhitespace) {
  const auto first = text.find_first_not_of(characters);
  if (first == std::string_view::npos) return "";
  const auto last = text.find_last_not_of(characters);
  return std::string(text.substr(first, last - first + 1));
}

/// `text` with A-Z as a-z; other bytes, UTF-8 included, unchanged. Example: "Content-Type" ->
/// "content-type".
inline std::string ascii_lowercase(std::string_view text) {
  std::string out(text);
  for (auto& c : out) {
    if (c >= 'A' && c <= 'Z') c = static_cast<char>(c - 'A' + 'a');
  }
  return out;
}

}  // namespace g2c
