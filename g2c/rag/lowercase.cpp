#include "g2c/rag/lowercase.h"

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <iterator>
#include <vector>

#include "g2c/pretrained/pretokenizer.h"

namespace g2c::rag {

namespace {

using g2c::pretrained::Utf8Char;

// The code points first, first + stride, ... up to last lowercase to code point + delta; the
// others in [first, last] are their own lowercase.
struct LowerRange {
  char32_t first;
  char32_t last;
  std::int32_t delta;
  std::uint8_t stride;
};

// A code point whose lowercase is two or three code points.
struct LowerExpansion {
  char32_t code_point;
  char32_t mapped[3];
  std::uint8_t length;
};

// The classes of the final sigma rule. kCased is cased and not case-ignorable: the rule skips
// case-ignorable characters before it asks whether one is cased.
enum class CaseClass : std::uint8_t { kNone, kCased, kCaseIgnorable };

struct CaseRange {
  char32_t first;
  char32_t last;
  CaseClass cls;
};

using enum CaseClass;
#include "g2c/rag/lowercase_table.inc"  // kTableUnicodeVersion, kLowerRanges, kLowerExpansions,
                                        // kCaseRanges

static_assert(kTableUnicodeVersion == kLowercaseUnicodeVersion,
              "lowercase_table.inc is of another Unicode version than lowercase.h says");

constexpr char32_t kCapitalSigma = 0x03A3;
constexpr char32_t kSmallSigma = 0x03C3;
constexpr char32_t kFinalSigma = 0x03C2;

// The range of `ranges` (sorted by first, disjoint) whose [first, last] holds the code point, or
// nullptr.
template <typename Range, std::size_t N>
const Range* find_range(const Range (&ranges)[N], char32_t code_point) {
  const auto after =
      std::upper_bound(std::begin(ranges), std::end(ranges), code_point,
                       [](char32_t value, const Range& range) { return value < range.first; });
  if (after == std::begin(ranges)) return nullptr;
  const Range* range = std::prev(after);
  return code_point <= range->last ? range : nullptr;
}

// The final sigma rule's class of a character; a byte of ill-formed UTF-8 is of none.
CaseClass case_class(const Utf8Char& c) {
  if (!c.valid) return kNone;
  const CaseRange* range = find_range(kCaseRanges, c.code_point);
  return range ? range->cls : kNone;
}

// Whether the Σ at chars[i] ends a word: a cased character before it and none after it, skipping
// case-ignorable characters both ways. Example: in "ΟΔΟΣ'" yes, in "Σ'Α" and "ΑΣ'Α" no.
bool is_final_sigma(const std::vector<Utf8Char>& chars, std::size_t i) {
  std::size_t before = i;
  while (before > 0 && case_class(chars[before - 1]) == kCaseIgnorable) --before;
  if (before == 0 || case_class(chars[before - 1]) != kCased) return false;
  std::size_t after = i + 1;
  while (after < chars.size() && case_class(chars[after]) == kCaseIgnorable) ++after;
  return after == chars.size() || case_class(chars[after]) != kCased;
}

void append_utf8(char32_t code_point, std::string& out) {
  const auto byte = [&](char32_t bits) { out.push_back(static_cast<char>(bits)); };
  if (code_point < 0x80) {
    byte(code_point);
  } else if (code_point < 0x800) {
    byte(0xC0 | (code_point >> 6));
    byte(0x80 | (code_point & 0x3F));
  } else if (code_point < 0x10000) {
    byte(0xE0 | (code_point >> 12));
    byte(0x80 | ((code_point >> 6) & 0x3F));
    byte(0x80 | (code_point & 0x3F));
  } else {
    byte(0xF0 | (code_point >> 18));
    byte(0x80 | ((code_point >> 12) & 0x3F));
    byte(0x80 | ((code_point >> 6) & 0x3F));
    byte(0x80 | (code_point & 0x3F));
  }
}

// Appends the lowercase of a code point on its own (Σ gives σ) as UTF-8.
// Example: 'A' -> "a", U+0130 'İ' -> "i\u0307", '1' -> "1".
void append_lower(char32_t code_point, std::string& out) {
  const auto expansion =
      std::find_if(std::begin(kLowerExpansions), std::end(kLowerExpansions),
                   [&](const LowerExpansion& e) { return e.code_point == code_point; });
  if (expansion != std::end(kLowerExpansions)) {
    for (std::size_t k = 0; k < expansion->length; ++k) append_utf8(expansion->mapped[k], out);
    return;
  }
  const LowerRange* range = find_range(kLowerRanges, code_point);
  if (range && (code_point - range->first) % range->stride == 0) {
    code_point = static_cast<char32_t>(static_cast<std::int32_t>(code_point) + range->delta);
  }
  append_utf8(code_point, out);
}

// The text's characters in order, each valid one a code point, each invalid byte one of its own.
std::vector<Utf8Char> decode(std::string_view text) {
  std::vector<Utf8Char> chars;
  for (std::size_t pos = 0; pos < text.size();) {
    chars.push_back(g2c::pretrained::utf8_char_at(text, pos));
    pos += chars.back().length;
  }
  return chars;
}

std::string ascii_lower(std::string_view text) {
  std::string out(text);
  for (char& c : out) {
    if (c >= 'A' && c <= 'Z') c = static_cast<char>(c - 'A' + 'a');
  }
  return out;
}

}  // namespace

std::string python_lower(std::string_view utf8_text) {
  const bool ascii = std::all_of(utf8_text.begin(), utf8_text.end(),
                                 [](char c) { return static_cast<unsigned char>(c) < 0x80; });
  if (ascii) return ascii_lower(utf8_text);
  const std::vector<Utf8Char> chars = decode(utf8_text);
  std::string out;
  out.reserve(utf8_text.size());
  std::size_t pos = 0;
  for (std::size_t i = 0; i < chars.size(); ++i) {
    const Utf8Char& c = chars[i];
    if (!c.valid) {
      out.push_back(utf8_text[pos]);
    } else if (c.code_point == kCapitalSigma) {
      append_utf8(is_final_sigma(chars, i) ? kFinalSigma : kSmallSigma, out);
    } else {
      append_lower(c.code_point, out);
    }
    pos += c.length;
  }
  return out;
}

}  // namespace g2c::rag
