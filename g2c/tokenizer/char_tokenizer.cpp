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

constexpr TokenId kAbsent = ~TokenId{0};

}  // namespace

CharTokenizer::CharTokenizer(std::string_view text) {
  ascii_ids_.fill(kAbsent);
  std::set<std::pair<char32_t, std::string>> distinct;
  std::array<bool, 128> ascii_seen{};
  std::size_t pos = 0;
  while (pos < text.size()) {
    const auto byte = static_cast<unsigned char>(text[pos]);
    if (byte < 0x80) {
      ascii_seen[byte] = true;
      ++pos;
      continue;
    }
    const std::string_view piece = utf8_prefix(text.substr(pos), 1);
    std::string character = to_valid_utf8(piece);
    distinct.emplace(code_point(character), std::move(character));
    pos += piece.size();
  }
  for (int byte = 0; byte < 128; ++byte) {
    if (ascii_seen[byte]) distinct.emplace(byte, std::string(1, static_cast<char>(byte)));
  }
  for (const auto& [cp, character] : distinct) {
    const auto id = static_cast<TokenId>(symbols_.size());
    ids_.emplace(character, id);
    if (cp < 0x80) ascii_ids_[cp] = id;
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
  std::size_t pos = 0;
  while (pos < text.size()) {
    const auto byte = static_cast<unsigned char>(text[pos]);
    TokenId id = kAbsent;
    std::string character;
    if (byte < 0x80) {
      id = ascii_ids_[byte];
      ++pos;
    } else {
      const std::string_view piece = utf8_prefix(text.substr(pos), 1);
      character = to_valid_utf8(piece);
      pos += piece.size();
      const auto it = ids_.find(character);
      if (it != ids_.end()) id = it->second;
    }
    if (id == kAbsent) {
      if (!unknown_id) {
        throw ValueError(fmt::format(
            "the character {} is not in this character vocabulary of {} symbols (pass an "
            "unknown_id to map such characters to a fallback)",
            python_repr(byte < 0x80 ? std::string(1, static_cast<char>(byte)) : character),
            symbols_.size()));
      }
      id = *unknown_id;
    }
    ids.push_back(id);
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
