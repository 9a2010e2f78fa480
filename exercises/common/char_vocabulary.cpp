#include "exercises/common/char_vocabulary.h"

#include <fmt/format.h>

#include "g2c/core/errors.h"

namespace g2c::exercises {

CharVocabulary::CharVocabulary(std::string_view text) {
  ids_.fill(-1);
  std::array<bool, 256> seen{};
  for (const char c : text) seen[static_cast<unsigned char>(c)] = true;
  for (int byte = 0; byte < 256; ++byte) {
    if (!seen[byte]) continue;
    ids_[byte] = static_cast<std::int64_t>(symbols_.size());
    symbols_.push_back(static_cast<char>(byte));
  }
}

std::vector<std::int64_t> CharVocabulary::encode(std::string_view text) const {
  std::vector<std::int64_t> ids;
  ids.reserve(text.size());
  for (const char c : text) {
    const std::int64_t id = ids_[static_cast<unsigned char>(c)];
    if (id < 0) throw ValueError(fmt::format("character {:?} is not in the vocabulary", c));
    ids.push_back(id);
  }
  return ids;
}

std::string CharVocabulary::decode(const std::vector<std::int64_t>& ids) const {
  std::string text;
  text.reserve(ids.size());
  for (const std::int64_t id : ids) {
    if (id < 0 || id >= size())
      throw ValueError(fmt::format("id {} is outside the vocabulary [0, {})", id, size()));
    text.push_back(symbols_[static_cast<std::size_t>(id)]);
  }
  return text;
}

}  // namespace g2c::exercises
