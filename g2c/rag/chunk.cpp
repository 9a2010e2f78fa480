// Module 17 — your work: cut a document into overlapping windows of characters.
#include <algorithm>

#include <fmt/format.h>

#include "g2c/core/errors.h"
#include "g2c/rag/chunk.h"

namespace g2c::rag {

std::vector<Chunk> chunk_text(std::string_view text, const ChunkOptions& options) {
  // TODO: Cut `text` into windows of chunk_size characters that slide by the stride
  // chunk_size - chunk_overlap, so neighbours share chunk_overlap characters: starts 0, stride,
  // 2·stride, …, each window ending at min(start + chunk_size, length); the last chunk is the
  // first that reaches the end (a short text is one chunk). Positions count characters, not
  // bytes, so no chunk splits a UTF-8 character: character_offsets(text) gives each character's
  // byte offset, then text.size(). Check first, each ValueError naming its setting: an empty
  // text, chunk_size <= 0, chunk_overlap < 0, chunk_overlap >= chunk_size.
  // Each chunk is Chunk(its text, options.source, start, end, options.metadata).
  // Hints, one step at a time: scripts/hint.sh 17 chunk_text
  throw g2c::todo("chunk_text", "g2c/rag/chunk.cpp", "17");
}

}  // namespace g2c::rag
