// Module 05 — your work: cosine similarity, nearest neighbours, and reading GloVe vectors.
#include "g2c/embeddings/similarity.h"

#include "g2c/core/errors.h"

namespace g2c::embeddings {

torch::Tensor normalized(const torch::Tensor& v) {
  // TODO: divide v by its norm along the last dim, the norm clamped at 1e-12 (a zero vector stays
  // zero, no NaN).
  throw g2c::todo("normalized", "g2c/embeddings/similarity.cpp", "05");
}

Neighbours nearest_by_cosine(const torch::Tensor& query, const WordVectors& vectors,
                             const std::set<std::string>& exclude, std::int64_t top_k) {
  // TODO: ValueError for top_k < 1 or a vector of another size than the query; score every word
  // not in exclude by the dot product of the normalized vectors; stable sort descending; keep
  // top_k.
  throw g2c::todo("nearest_by_cosine", "g2c/embeddings/similarity.cpp", "05");
}

WordVectors load_glove_subset(const std::filesystem::path& path,
                              const std::set<std::string>& words) {
  // TODO: read "word v1 … vD" lines; keep the words in `words` as float32 (D) tensors, in file
  // order. ValueError naming the path if it cannot be opened, naming the line for a bad number or
  // a D that changes.
  throw g2c::todo("load_glove_subset", "g2c/embeddings/similarity.cpp", "05");
}

}  // namespace g2c::embeddings
