// Module 17 — your work: a text as the counts of its hashed character n-grams, at unit length.
#include "g2c/rag/embed.h"
#include "g2c/core/errors.h"
#include "g2c/rag/chunk.h"
#include "g2c/rag/lowercase.h"

namespace g2c::rag {

torch::Tensor HashEmbedder::embed(const std::vector<std::string>& texts) {
  // TODO: Each text becomes the counts of its character n-grams hashed into dim() buckets,
  // scaled to unit length so that the store's dot product is a cosine: N texts -> (N, dim())
  // float32, steps 1-5 of embed.h. Lowercase first (python_lower); then, for each n of
  // ngram_range() (inclusive), every run of n characters (code points, located with
  // character_offsets, never bytes) adds 1 to its row at bucket(ngram). A text shorter than n has
  // no n-grams of that size, an empty text leaves its row zero. Finish with l2_normalize_rows.
  // Operations: torch::zeros, accessor<float, 2>, the helpers named above.
  // Hints, one step at a time: scripts/hint.sh 17 HashEmbedder::embed
  throw g2c::todo("HashEmbedder::embed", "g2c/rag/embed.cpp", "17");
}

}  // namespace g2c::rag
