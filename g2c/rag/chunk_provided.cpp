// Module 17, provided: the Chunk value and the character offsets chunk_text cuts at.
#include <fmt/format.h>

#include "g2c/core/errors.h"
#include "g2c/pretrained/pretokenizer.h"
#include "g2c/rag/chunk.h"
#include "g2c/tokenizer/utf8.h"

namespace g2c::rag {

std::vector<std::size_t> character_offsets(std::string_view text) {
  std::vector<std::size_t> offsets;
  offsets.reserve(text.size() + 1);
  for (std::size_t pos = 0; pos < text.size();
       pos += g2c::pretrained::utf8_char_at(text, pos).length) {
    offsets.push_back(pos);
  }
  offsets.push_back(text.size());
  return offsets;
}

std::vector<std::string> chunk_texts(const std::vector<Chunk>& chunks) {
  std::vector<std::string> texts;
  texts.reserve(chunks.size());
  for (const auto& chunk : chunks) texts.push_back(chunk.text());
  return texts;
}

Chunk::Chunk(std::string text, std::string source, std::int64_t start, std::int64_t end,
             nlohmann::json metadata)
    : text_(std::move(text)),
      source_(std::move(source)),
      start_(start),
      end_(end),
      metadata_(std::move(metadata)) {
  if (text_.empty()) throw ValueError("Chunk: text must be non-empty; a chunk holds some text");
  if (start_ < 0) throw ValueError(fmt::format("Chunk: start must be >= 0, got {}", start_));
  const auto length = static_cast<std::int64_t>(character_offsets(text_).size()) - 1;
  if (end_ != start_ + length) {
    throw ValueError(fmt::format(
        "Chunk: end ({}) must equal start + the text's length in characters ({} + {} = {})", end_,
        start_, length, start_ + length));
  }
  if (!metadata_.is_object()) {
    throw ValueError(
        fmt::format("Chunk: metadata must be a JSON object, got {}", metadata_.dump()));
  }
}

std::ostream& operator<<(std::ostream& stream, const Chunk& chunk) {
  const auto shown = g2c::tokenizer::utf8_prefix(chunk.text(), 60);
  return stream << fmt::format("Chunk(source='{}', start={}, end={}, text={}{})", chunk.source(),
                               chunk.start(), chunk.end(), g2c::tokenizer::python_repr(shown),
                               shown.size() < chunk.text().size() ? "..." : "");
}

}  // namespace g2c::rag
