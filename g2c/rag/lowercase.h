// Python's str.lower() in C++, for the retrieval module's hashing embedder: it lowercases text
// before cutting it into character n-grams, and its vectors must be those of the Python edition.
//
// Each character is lowercased on its own by Unicode's full mapping (a few become more than one
// character: U+0130 'İ' -> "i̇", U+0069 U+0307), except U+03A3 'Σ', which becomes the final sigma
// 'ς' instead of 'σ' at the end of a word: after a cased character (any case-ignorable ones, like
// combining marks and apostrophes, in between) and not before one.
//
// The tables are generated from Python's own str.lower() by scripts/gen_lowercase_table.py
// into lowercase_table.inc; they are its Unicode version's (kLowercaseUnicodeVersion).
//
// subtle: the text may be any bytes. A byte that is not part of well-formed UTF-8 is kept as it is,
// and to the final sigma rule it is a character neither cased nor case-ignorable: the result is
// Python's lower() of the text decoded with errors="surrogateescape", encoded back the same way.
#pragma once

#include <string>
#include <string_view>

namespace g2c::rag {

/// The Unicode version of Python's str.lower() that python_lower reproduces (Python 3.11's).
inline constexpr const char* kLowercaseUnicodeVersion = "14.0.0";

/// Python's utf8_text.decode().lower().encode(): the text lowercased, as UTF-8.
/// Example: python_lower("ÀΣ") == "àς", python_lower("ΣΑΣ ΟΔΟΣ.") == "σας οδος.",
/// python_lower("İ") == "i\u0307".
std::string python_lower(std::string_view utf8_text);

}  // namespace g2c::rag
