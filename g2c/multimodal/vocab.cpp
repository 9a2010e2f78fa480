// Beyond module multimodal — the caption vocabulary (vocab.h). Provided.
#include "g2c/multimodal/vocab.h"

#include <fmt/format.h>

#include "g2c/core/errors.h"

namespace g2c::multimodal {

std::vector<std::int64_t> caption_ids(std::int64_t digit) {
  if (digit < 0 || digit > 9) {
    throw ValueError(fmt::format("a caption's digit must be in 0..9, got {}", digit));
  }
  return {5, 6, 7, FIRST_DIGIT_ID + digit, 8, END_ID};  // This is a <d> . <end>
}

std::string decode_ids(const std::vector<std::int64_t>& ids) {
  std::string text;
  for (const auto id : ids) {
    if (!text.empty()) text += ' ';
    text += id >= 0 && id < VOCAB_SIZE ? std::string(CAPTION_TOKENS[static_cast<std::size_t>(id)])
                                       : fmt::format("<{}?>", id);
  }
  return text;
}

std::int64_t digit_of(std::int64_t id) {
  return id >= FIRST_DIGIT_ID && id < FIRST_DIGIT_ID + 10 ? id - FIRST_DIGIT_ID : -1;
}

}  // namespace g2c::multimodal
