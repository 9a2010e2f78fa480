// A character-level vocabulary: one id per distinct byte of the training text, in byte order.
// The course's BPE tokenizer (module 04) takes over once it is built; this keeps module 07's
// exercises runnable without it.
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace g2c::exercises {

class CharVocabulary {
 public:
  /// Every distinct byte of `text`, sorted. Example: "hello" -> {'e', 'h', 'l', 'o'}.
  explicit CharVocabulary(std::string_view text);

  std::int64_t size() const { return static_cast<std::int64_t>(symbols_.size()); }
  /// ValueError for a byte that is not in the vocabulary.
  std::vector<std::int64_t> encode(std::string_view text) const;
  /// ValueError for an id outside [0, size()).
  std::string decode(const std::vector<std::int64_t>& ids) const;

 private:
  std::vector<char> symbols_;
  std::array<std::int64_t, 256> ids_;
};

}  // namespace g2c::exercises
