#include "g2c/tokenizer/char_tokenizer.h"

#include <algorithm>
#include <set>

#include <fmt/format.h>

#include "g2c/core/errors.h"
#include "g2c/tokenizer/utf8.h"

namespace g2c::tokenizer {
namespace {

// Code point of one well-formed UTF-8 character (as utf8_characters returns them).
char32_t code_point(std::string_view character) {
  const auto byte = [&](std::size_t i) { return static_cast<unsigned char>(character[i]); };
  switch (character.size()) {
    case 1:
      return byte(0);
    case 2:
      return ((byte(0) & 0x1F) << 6) | (byte(1) & 0x3F);
    case 3:
      return ((byte(0) & 0x0F) << 12) | ((byte(1) & 0x3F) << 6) | (byte(2) & 0x3F);
    default:
      return ((byte(0) & 0x07) << 18) | ((byte(1) & 0x3F) << 12) | ((byte(2) & 0x3F) << 6) |
             (byte(3) & 0x3F);
  }
}

}  // namespace

CharTokenizer::CharTokenizer(std::string_view text) {
  std::set<std::pair<char32_t, std::string>> distinct;
  for (std::string& character : utf8_characters(text)) {
    const char32_t cp = code_point(character);
    distinct.emplace(cp, std::move(character));
  }
  for (const auto& [cp, character] : distinct) {
    ids_.emplace(character, static_cast<TokenId>(symbols_.size()));
    symbols_.push_back(character);
  }
}

std::optional<TokenId> CharTokenizer::id_of(std::string_view character) const {
  const auto it = ids_.find(std::string(character));
  if (it == ids_.end()) return std::nullopt;
  return it->second;
}

TokenId CharTokenizer::fallback_id() const {
  return id_of(" ").value_or(0);
}

Ids CharTokenizer::encode(std::string_view text, std::optional<TokenId> unknown_id) const {
  Ids ids;
  ids.reserve(text.size());
  for (const std::string& character : utf8_characters(text)) {
    const auto it = ids_.find(character);
    if (it != ids_.end()) {
      ids.push_back(it->second);
    } else if (unknown_id) {
      ids.push_back(*unknown_id);
    } else {
      throw ValueError(
          fmt::format("the character {} is not in this character vocabulary of {} symbols (pass an "
                      "unknown_id to map such characters to a fallback)",
                      python_repr(character), symbols_.size()));
    }
  }
  return ids;
}

std::string CharTokenizer::decode(const Ids& ids) const {
  std::string text;
  text.reserve(ids.size());
  for (const TokenId id : ids) {
    if (id >= symbols_.size()) {
      throw ValueError(
          fmt::format("id {} is outside the character vocabulary [0, {})", id, symbols_.size()));
    }
    text += symbols_[id];
  }
  return text;
}

}  // namespace g2c::tokenizer
