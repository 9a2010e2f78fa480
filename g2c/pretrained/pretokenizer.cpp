#include "g2c/pretrained/pretokenizer.h"

#include <algorithm>
#include <iterator>

namespace g2c::pretrained {

namespace {

struct ClassRange {
  char32_t first;
  char32_t last;
  CharClass cls;
};

using enum CharClass;
#include "g2c/pretrained/unicode_classes.inc"  // kClassRanges, kSplitDigitsSince17

// The range of `ranges` (sorted, disjoint) holding the code point, or nullptr.
template <std::size_t N>
const ClassRange* find_range(const ClassRange (&ranges)[N], char32_t code_point) {
  // The last range starting at or before the code point, if it reaches that far.
  const auto after =
      std::upper_bound(std::begin(ranges), std::end(ranges), code_point,
                       [](char32_t value, const ClassRange& range) { return value < range.first; });
  if (after == std::begin(ranges)) return nullptr;
  const ClassRange* range = std::prev(after);
  return code_point <= range->last ? range : nullptr;
}

// One character of the text being cut: where its bytes are, its class, and whether the digit split
// makes it a piece of its own.
struct Char {
  std::size_t begin;
  std::size_t end;
  CharClass cls;
  bool digit;
};

std::vector<Char> characters(std::string_view text) {
  std::vector<Char> chars;
  chars.reserve(text.size());
  for (std::size_t pos = 0; pos < text.size();) {
    const Utf8Char c = utf8_char_at(text, pos);
    const CharClass cls = c.valid ? char_class(c.code_point) : kNone;
    // Hugging Face's digit split asks Rust's char::is_numeric, a Unicode version newer than its
    // pattern's: a few numbers of no class in the pattern still split
    // (scripts/gen_unicode_classes.py).
    const bool digit =
        cls == kNumber || (c.valid && find_range(kSplitDigitsSince17, c.code_point) != nullptr);
    chars.push_back({pos, pos + c.length, cls, digit});
    pos += c.length;
  }
  return chars;
}

// The characters [i, end) of one stretch of text, with the pattern's view of them.
class Scanner {
 public:
  Scanner(std::string_view text, const std::vector<Char>& chars, std::size_t end)
      : text_(text), chars_(chars), end_(end) {}

  // The number of characters the pattern's first matching alternative takes at i (at least 1).
  std::size_t match_length(std::size_t i) const {
    if (const std::size_t n = contraction(i)) return n;
    // " ?\p{L}+", " ?\p{N}+", " ?[^\s\p{L}\p{N}]+": the classes are disjoint, so the character
    // after an optional space decides which alternative it is, and the run is all of that class.
    const std::size_t j =
        (ascii(i) == ' ' && i + 1 < end_ && chars_[i + 1].cls != kSpace) ? i + 1 : i;
    if (chars_[j].cls != kSpace) return run(j, chars_[j].cls) - i;
    // "\s+(?!\S)": the whole run at the end of the stretch; before a non-space, all but its last
    // character (backtracking by one satisfies the look-ahead). A run of one before a non-space
    // fails there and is taken by "\s+".
    const std::size_t spaces = run(i, kSpace) - i;
    if (i + spaces == end_ || spaces == 1) return spaces;
    return spaces - 1;
  }

 private:
  // The character at k as an ASCII byte, or 0 when it is past the end or not ASCII.
  char ascii(std::size_t k) const {
    if (k >= end_ || chars_[k].end - chars_[k].begin != 1) return 0;
    const char c = text_[chars_[k].begin];
    return static_cast<unsigned char>(c) < 0x80 ? c : 0;
  }

  // "'s|'t|'re|'ve|'m|'ll|'d": 2 or 3 characters, 0 when none matches. Case-sensitive: "'S" is not
  // a contraction.
  std::size_t contraction(std::size_t i) const {
    if (ascii(i) != '\'') return 0;
    const char a = ascii(i + 1);
    const char b = ascii(i + 2);
    if (a == 's' || a == 't' || a == 'm' || a == 'd') return 2;
    if ((a == 'r' && b == 'e') || (a == 'v' && b == 'e') || (a == 'l' && b == 'l')) return 3;
    return 0;
  }

  // The end of the run of characters of class `cls` that starts at k.
  std::size_t run(std::size_t k, CharClass cls) const {
    while (k < end_ && chars_[k].cls == cls) ++k;
    return k;
  }

  std::string_view text_;
  const std::vector<Char>& chars_;
  std::size_t end_;
};

// Appends the pieces of chars [begin, end) of `text`, the pattern applied to that stretch alone.
void cut(std::string_view text, const std::vector<Char>& chars, std::size_t begin, std::size_t end,
         std::vector<std::string_view>& pieces) {
  const Scanner scanner(text, chars, end);
  for (std::size_t i = begin; i < end;) {
    const std::size_t n = scanner.match_length(i);
    pieces.push_back(text.substr(chars[i].begin, chars[i + n - 1].end - chars[i].begin));
    i += n;
  }
}

}  // namespace

CharClass char_class(char32_t code_point) {
  const ClassRange* range = find_range(kClassRanges, code_point);
  return range != nullptr ? range->cls : kNone;
}

Utf8Char utf8_char_at(std::string_view text, std::size_t pos) {
  const auto byte = [&](std::size_t k) { return static_cast<unsigned char>(text[k]); };
  const unsigned char lead = byte(pos);
  const Utf8Char invalid{lead, 1, false};
  if (lead < 0x80) return {lead, 1, true};
  // The lead byte gives the length and its payload bits; the second byte's range excludes
  // overlong forms (E0, F0), surrogates (ED) and code points past U+10FFFF (F4).
  std::size_t length = 0;
  char32_t code_point = 0;
  unsigned char low = 0x80, high = 0xBF;
  if (lead >= 0xC2 && lead <= 0xDF) {
    length = 2;
    code_point = lead & 0x1F;
  } else if (lead >= 0xE0 && lead <= 0xEF) {
    length = 3;
    code_point = lead & 0x0F;
    if (lead == 0xE0) low = 0xA0;
    if (lead == 0xED) high = 0x9F;
  } else if (lead >= 0xF0 && lead <= 0xF4) {
    length = 4;
    code_point = lead & 0x07;
    if (lead == 0xF0) low = 0x90;
    if (lead == 0xF4) high = 0x8F;
  } else {
    return invalid;  // a continuation byte, C0/C1 (always overlong) or F5..FF
  }
  if (pos + length > text.size()) return invalid;
  for (std::size_t k = 1; k < length; ++k) {
    const unsigned char next = byte(pos + k);
    if (next < low || next > high) return invalid;
    low = 0x80;
    high = 0xBF;
    code_point = (code_point << 6) | (next & 0x3F);
  }
  return {code_point, length, true};
}

std::vector<std::string_view> pre_tokenize(std::string_view text, PreTokenizer kind) {
  const std::vector<Char> chars = characters(text);
  std::vector<std::string_view> pieces;
  if (kind == PreTokenizer::kGPT2) {
    cut(text, chars, 0, chars.size(), pieces);
    return pieces;
  }
  // smollm: every number character is a piece of its own, and the pattern runs on the stretches
  // between them. (On SmolLM2's vocabulary this differs from running the pattern alone wherever two
  // or more spaces come before a number: "x  12" is "x" "  " "1" "2" here, "x" " " " 12" there, and
  // the merge "Ġ Ġ" makes the ids differ. Hugging Face's tokenizer built from the GGUF file by
  // transformers has only the pattern; SmolLM2's tokenizer.json and llama.cpp's "smollm" have
  // both.)
  std::size_t start = 0;
  for (std::size_t i = 0; i < chars.size(); ++i) {
    if (!chars[i].digit) continue;
    cut(text, chars, start, i, pieces);
    pieces.push_back(text.substr(chars[i].begin, chars[i].end - chars[i].begin));
    start = i + 1;
  }
  cut(text, chars, start, chars.size(), pieces);
  return pieces;
}

}  // namespace g2c::pretrained
