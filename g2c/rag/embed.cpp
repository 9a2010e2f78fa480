// Module 17 — your work: a text as the counts of its hashed character n-grams, at unit length.
#include "g2c/rag/embed.h"
#include "g2c/core/errors.h"
#include "g2c/rag/chunk.h"
#include "g2c/rag/lowercase.h"

namespace g2c::rag {

torch::Tensor HashEmbedder::embed(const std::vector<std::string>& texts) {
  // TODO: counts = torch::zeros({texts.size(), dim()}, torch::kFloat32) (cast the size to
  // std::int64_t), and rows = counts.accessor<float, 2>() to write into it. For each text: lowered
  // = python_lower(text); offsets = character_offsets(lowered) (character i starts at byte
  // offsets[i]; there are offsets.size() - 1 characters). For each n from ngram_range().first to
  // ngram_range().second, for each start with start + n <= the character count: the n-gram is the
  // bytes [offsets[start], offsets[start + n]) of lowered; rows[row][bucket(ngram)] += 1. Return
  // l2_normalize_rows(counts).
  // Hints, one step at a time: scripts/hint.sh 17 HashEmbedder::embed
  throw g2c::todo("HashEmbedder::embed", "g2c/rag/embed.cpp", "17");
}

}  // namespace g2c::rag
