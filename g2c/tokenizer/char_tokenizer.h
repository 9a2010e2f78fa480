// A character-level tokenizer: one id per distinct character (code point) of a text, in code
// point order. The fallback wherever no BPE artifact is available.
#pragma once

#include <array>
#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "g2c/tokenizer/bpe.h"

namespace g2c::tokenizer {

class CharTokenizer {
 public:
  /// The distinct characters of `text`, sorted by code point (Python's sorted(set(text))).
  /// Invalid UTF-8 counts as U+FFFD. Example: "hello" -> symbols {"e", "h", "l", "o"}.
  explicit CharTokenizer(std::string_view text);

  /// One id per character. An unknown character becomes `unknown_id` when given, else
  /// ValueError naming it. Example ("hello" vocabulary): "hole" -> [1, 3, 2, 0].
  Ids encode(std::string_view text, std::optional<TokenId> unknown_id = std::nullopt) const;
  /// Concatenates the symbols; ValueError for an id >= vocab_size().
  std::string decode(const Ids& ids) const;

  std::size_t vocab_size() const { return symbols_.size(); }
  /// id -> the character (UTF-8 bytes).
  const std::vector<std::string>& symbols() const { return symbols_; }
  /// The id of one character, if it is in the vocabulary.
  std::optional<TokenId> id_of(std::string_view character) const;
  /// The id to use for unknown characters: that of " " when present, else 0.
  TokenId fallback_id() const;

 private:
  std::vector<std::string> symbols_;
  std::unordered_map<std::string, TokenId> ids_;
  std::array<TokenId, 128> ascii_ids_;  // the common case without a hash lookup; ~0u: absent
};

}  // namespace g2c::tokenizer
