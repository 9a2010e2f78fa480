// Module 05 — your work: looking up token vectors.
#include "g2c/embeddings/token_embedding.h"

#include "g2c/core/errors.h"

namespace g2c::embeddings {

torch::Tensor TokenEmbeddingImpl::forward(const torch::Tensor& ids) {
  // TODO: A lookup table: row v of weight (V, D) is the vector of token v, so ids of any shape
  // become ids.shape + (D). The same as one-hot vectors times the table, without building them.
  // Check the ids first (check_input). Operations: indexing with an int64 tensor.
  // Hints, one step at a time: scripts/hint.sh 05 TokenEmbedding::forward
  throw g2c::todo("TokenEmbedding::forward", "g2c/embeddings/token_embedding.cpp", "05");
}

}  // namespace g2c::embeddings
