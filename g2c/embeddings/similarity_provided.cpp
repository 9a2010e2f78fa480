#include <fmt/format.h>

#include "g2c/core/errors.h"
#include "g2c/embeddings/similarity.h"

namespace g2c::embeddings {

const torch::Tensor& vector_of(const WordVectors& vectors, const std::string& word) {
  for (const auto& [name, vector] : vectors) {
    if (name == word) return vector;
  }
  throw ValueError(
      fmt::format("'{}' has no vector (the table holds {} words)", word, vectors.size()));
}

Neighbours analogy(const std::string& a, const std::string& b, const std::string& c,
                   const WordVectors& vectors, std::int64_t top_k) {
  const auto query = vector_of(vectors, a) - vector_of(vectors, b) + vector_of(vectors, c);  // (D)
  return nearest_by_cosine(query, vectors, {a, b, c}, top_k);
}

}  // namespace g2c::embeddings
