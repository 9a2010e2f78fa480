#include "g2c/tokenizer/utf8.h"

#include <algorithm>
#include <cstdint>

#include <fmt/format.h>

namespace g2c::tokenizer {
namespace {

constexpr char32_t kInvalid = 0xFFFFFFFF;

struct Decoded {
  char32_t code_point;  // kInvalid for an ill-formed subsequence
  std::size_t length;   // bytes consumed (the maximal subpart when ill-formed)
};

// One character starting at bytes[pos], following the Unicode "maximal subpart" rule that
// Python's decoder uses: an ill-formed sequence is cut at the first byte that cannot continue it.
Decoded decode_one(std::string_view bytes, std::size_t pos) {
  const auto byte = [&](std::size_t i) { return static_cast<unsigned char>(bytes[i]); };
  const unsigned char lead = byte(pos);
  if (lead < 0x80) return {lead, 1};
  std::size_t needed;
  unsigned char low = 0x80;
  unsigned char high = 0xBF;
  char32_t value;
  if (lead >= 0xC2 && lead <= 0xDF) {
    needed = 1;
    value = lead & 0x1F;
  } else if (lead >= 0xE0 && lead <= 0xEF) {
    needed = 2;
    value = lead & 0x0F;
    if (lead == 0xE0) low = 0xA0;   // no overlongs
    if (lead == 0xED) high = 0x9F;  // no surrogates
  } else if (lead >= 0xF0 && lead <= 0xF4) {
    needed = 3;
    value = lead & 0x07;
    if (lead == 0xF0) low = 0x90;   // no overlongs
    if (lead == 0xF4) high = 0x8F;  // nothing past U+10FFFF
  } else {
    return {kInvalid, 1};
  }
  for (std::size_t k = 1; k <= needed; ++k) {
    if (pos + k >= bytes.size()) return {kInvalid, k};
    const unsigned char next = byte(pos + k);
    const unsigned char lo = k == 1 ? low : 0x80;
    const unsigned char hi = k == 1 ? high : 0xBF;
    if (next < lo || next > hi) return {kInvalid, k};
    value = (value << 6) | (next & 0x3F);
  }
  return {value, needed + 1};
}

void append_utf8(std::string& out, char32_t cp) {
  if (cp < 0x80) {
    out.push_back(static_cast<char>(cp));
  } else if (cp < 0x800) {
    out.push_back(static_cast<char>(0xC0 | (cp >> 6)));
    out.push_back(static_cast<char>(0x80 | (cp & 0x3F)));
  } else if (cp < 0x10000) {
    out.push_back(static_cast<char>(0xE0 | (cp >> 12)));
    out.push_back(static_cast<char>(0x80 | ((cp >> 6) & 0x3F)));
    out.push_back(static_cast<char>(0x80 | (cp & 0x3F)));
  } else {
    out.push_back(static_cast<char>(0xF0 | (cp >> 18)));
    out.push_back(static_cast<char>(0x80 | ((cp >> 12) & 0x3F)));
    out.push_back(static_cast<char>(0x80 | ((cp >> 6) & 0x3F)));
    out.push_back(static_cast<char>(0x80 | (cp & 0x3F)));
  }
}

// Control characters Python's repr escapes: C0, DEL and C1.
bool is_control(char32_t cp) {
  return cp < 0x20 || (cp >= 0x7F && cp <= 0x9F);
}

void append_escaped(std::string& out, char32_t cp) {
  switch (cp) {
    case '\n':
      out += "\\n";
      return;
    case '\t':
      out += "\\t";
      return;
    case '\r':
      out += "\\r";
      return;
    default:
      out += fmt::format("\\x{:02x}", static_cast<unsigned>(cp));
  }
}

}  // namespace

bool is_valid_utf8(std::string_view bytes) {
  std::size_t pos = 0;
  while (pos < bytes.size()) {
    const Decoded d = decode_one(bytes, pos);
    if (d.code_point == kInvalid) return false;
    pos += d.length;
  }
  return true;
}

std::string to_valid_utf8(std::string_view bytes) {
  std::string out;
  out.reserve(bytes.size());
  std::size_t pos = 0;
  while (pos < bytes.size()) {
    // Runs of ASCII are the common case: copy them in one go.
    std::size_t run = pos;
    while (run < bytes.size() && static_cast<unsigned char>(bytes[run]) < 0x80) ++run;
    out.append(bytes.substr(pos, run - pos));
    pos = run;
    if (pos == bytes.size()) break;
    const Decoded d = decode_one(bytes, pos);
    if (d.code_point == kInvalid) {
      out.append(kReplacementCharacter);
    } else {
      out.append(bytes.substr(pos, d.length));
    }
    pos += d.length;
  }
  return out;
}

std::vector<std::string> utf8_characters(std::string_view text) {
  std::vector<std::string> characters;
  std::size_t pos = 0;
  while (pos < text.size()) {
    const Decoded d = decode_one(text, pos);
    characters.emplace_back(d.code_point == kInvalid ? kReplacementCharacter
                                                     : text.substr(pos, d.length));
    pos += d.length;
  }
  return characters;
}

std::size_t utf8_length(std::string_view text) {
  std::size_t count = 0;
  std::size_t pos = 0;
  while (pos < text.size()) {
    pos += decode_one(text, pos).length;
    ++count;
  }
  return count;
}

std::string_view utf8_prefix(std::string_view text, std::size_t max_chars) {
  std::size_t pos = 0;
  for (std::size_t count = 0; count < max_chars && pos < text.size(); ++count) {
    pos += decode_one(text, pos).length;
  }
  return text.substr(0, pos);
}

std::string python_repr(std::string_view text) {
  const bool has_single = text.find('\'') != std::string_view::npos;
  const bool has_double = text.find('"') != std::string_view::npos;
  const char quote = has_single && !has_double ? '"' : '\'';
  std::string out(1, quote);
  std::size_t pos = 0;
  while (pos < text.size()) {
    const Decoded d = decode_one(text, pos);
    const char32_t cp = d.code_point == kInvalid ? 0xFFFD : d.code_point;
    if (cp == static_cast<char32_t>(quote) || cp == '\\') {
      out.push_back('\\');
      out.push_back(static_cast<char>(cp));
    } else if (is_control(cp)) {
      append_escaped(out, cp);
    } else {
      append_utf8(out, cp);
    }
    pos += d.length;
  }
  out.push_back(quote);
  return out;
}

std::string display_token(std::string_view bytes) {
  if (!bytes.empty() && bytes.find_first_not_of(' ') == std::string_view::npos) {
    std::string out;
    for (std::size_t i = 0; i < bytes.size(); ++i) out += "\u2423";
    return out;
  }
  std::string out;
  std::size_t pos = 0;
  while (pos < bytes.size()) {
    const Decoded d = decode_one(bytes, pos);
    const char32_t cp = d.code_point == kInvalid ? 0xFFFD : d.code_point;
    if (is_control(cp)) {
      append_escaped(out, cp);
    } else {
      append_utf8(out, cp);
    }
    pos += d.length;
  }
  return out;
}

std::size_t complete_utf8_prefix(std::string_view bytes) {
  const std::size_t n = bytes.size();
  // The last character starts at most four bytes from the end: find its lead byte.
  for (std::size_t back = 1; back <= std::min<std::size_t>(4, n); ++back) {
    const auto byte = static_cast<unsigned char>(bytes[n - back]);
    if ((byte & 0xC0) == 0x80) continue;  // a continuation byte
    const std::size_t length = byte >= 0xF0 ? 4 : byte >= 0xE0 ? 3 : byte >= 0xC0 ? 2 : 1;
    return length > back ? n - back : n;
  }
  return n;  // only continuation bytes: nothing to wait for, they print as U+FFFD
}

std::string Utf8Stream::push(std::string_view bytes) {
  pending_ += bytes;
  const auto complete = complete_utf8_prefix(pending_);
  auto text = to_valid_utf8(std::string_view(pending_).substr(0, complete));
  pending_.erase(0, complete);
  return text;
}

std::string Utf8Stream::finish() {
  auto text = to_valid_utf8(pending_);
  pending_.clear();
  return text;
}

}  // namespace g2c::tokenizer
