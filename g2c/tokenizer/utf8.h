// UTF-8 helpers: validation, U+FFFD replacement the way Python's errors="replace" does it,
// character counts and prefixes, and printable forms of tokens.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

namespace g2c::tokenizer {

/// The UTF-8 bytes of U+FFFD, the replacement character.
inline constexpr std::string_view kReplacementCharacter = "\xEF\xBF\xBD";

/// True when `bytes` is well-formed UTF-8 (no overlongs, surrogates or code points past U+10FFFF).
bool is_valid_utf8(std::string_view bytes);

/// `bytes` with each maximal ill-formed subsequence replaced by one U+FFFD, exactly like Python's
/// bytes.decode("utf-8", errors="replace"). Example: "a\xE2\x82" -> "a\uFFFD"; "\xED\xA0\x80"
/// (a surrogate) -> three U+FFFD.
std::string to_valid_utf8(std::string_view bytes);

/// The number of leading bytes of `bytes` that end on a character boundary: all of them, unless
/// the last character is cut short (text streamed token by token holds those bytes back).
/// Example: "a\xC3" -> 1; "a\xC3\xA9" -> 3.
std::size_t complete_utf8_prefix(std::string_view bytes);

/// Bytes that arrive in pieces (a token's bytes at a time) as text in whole characters: push()
/// returns what the new bytes complete and holds back a character cut short, so every piece is
/// valid UTF-8 and the pieces concatenate to to_valid_utf8(all the bytes).
/// Example: push("a\xC3") -> "a", push("\xA9") -> "\xC3\xA9".
class Utf8Stream {
 public:
  std::string push(std::string_view bytes);
  /// Whatever is still held back, an incomplete character as U+FFFD; the stream is then empty.
  std::string finish();

 private:
  std::string pending_;  // the bytes of an incomplete character
};

/// The characters of `text`, each as its UTF-8 bytes; ill-formed bytes become U+FFFD as in
/// to_valid_utf8. Example: "h\xC3\xA9" -> {"h", "\xC3\xA9"}.
std::vector<std::string> utf8_characters(std::string_view text);

/// Number of characters (code points) in `text`, counting each U+FFFD replacement as one.
std::size_t utf8_length(std::string_view text);

/// The longest prefix of `text` holding at most `max_chars` characters (Python's text[:max_chars]
/// on the decoded string). Example: utf8_prefix("h\xC3\xA9llo", 2) == "h\xC3\xA9".
std::string_view utf8_prefix(std::string_view text, std::size_t max_chars);

/// Python's repr() of a str given as UTF-8: quotes, and \n \t \r \\ \xNN escapes for control
/// characters. Example: "it's\n" -> "\"it's\\n\"" ; "the" -> "'the'".
std::string python_repr(std::string_view text);

/// A one-line label for a token's bytes: invalid UTF-8 replaced, control characters escaped
/// (\n, \t, \x01), spaces shown as U+2423 "␣" only when the token is all spaces.
/// Example: " the" -> " the"; "\n\n" -> "\\n\\n"; " " -> "␣".
std::string display_token(std::string_view bytes);

}  // namespace g2c::tokenizer
