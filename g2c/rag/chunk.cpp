// Module 17 — your work: cut a document into overlapping windows of characters.
#include <algorithm>

#include <fmt/format.h>

#include "g2c/core/errors.h"
#include "g2c/rag/chunk.h"

namespace g2c::rag {

std::vector<Chunk> chunk_text(std::string_view text, const ChunkOptions& options) {
  // TODO: ValueError for an empty text, options.chunk_size <= 0, options.chunk_overlap < 0 and
  // chunk_overlap >= chunk_size (each message names the setting). Positions are characters:
  // offsets = character_offsets(text) maps character i to its byte offsets[i], and the text has
  // offsets.size() - 1 characters. From start = 0, stepping by stride = chunk_size - chunk_overlap:
  // end = min(start + chunk_size, length); the chunk's text is the bytes
  // [offsets[start], offsets[end]); make Chunk(text, options.source, start, end, options.metadata);
  // stop after the chunk whose end is the text's length.
  // Hints, one step at a time: scripts/hint.sh 17 chunk_text
  throw g2c::todo("chunk_text", "g2c/rag/chunk.cpp", "17");
}

}  // namespace g2c::rag
