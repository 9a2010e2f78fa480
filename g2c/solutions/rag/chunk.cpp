// Module 17, reference: a window of chunk_size characters sliding by chunk_size - chunk_overlap.
#include <algorithm>

#include <fmt/format.h>

#include "g2c/core/errors.h"
#include "g2c/rag/chunk.h"

namespace g2c::rag {

std::vector<Chunk> chunk_text(std::string_view text, const ChunkOptions& options) {
  if (text.empty()) throw ValueError("chunk_text: text must be non-empty");
  if (options.chunk_size <= 0) {
    throw ValueError(fmt::format("chunk_text: chunk_size must be > 0, got {}", options.chunk_size));
  }
  if (options.chunk_overlap < 0) {
    throw ValueError(
        fmt::format("chunk_text: chunk_overlap must be >= 0, got {}", options.chunk_overlap));
  }
  if (options.chunk_overlap >= options.chunk_size) {
    throw ValueError(fmt::format("chunk_text: chunk_overlap ({}) must be < chunk_size ({})",
                                 options.chunk_overlap, options.chunk_size));
  }
  const auto offsets = character_offsets(text);
  const auto length = static_cast<std::int64_t>(offsets.size()) - 1;  // in characters
  const auto stride = options.chunk_size - options.chunk_overlap;

  std::vector<Chunk> chunks;
  for (std::int64_t start = 0;; start += stride) {
    const auto end = std::min(start + options.chunk_size, length);
    const auto first = offsets[static_cast<std::size_t>(start)];
    const auto last = offsets[static_cast<std::size_t>(end)];
    chunks.emplace_back(std::string(text.substr(first, last - first)), options.source, start, end,
                        options.metadata);
    if (end == length) break;  // the window reached the end: one more stride would be a repeat
  }
  return chunks;
}

}  // namespace g2c::rag
