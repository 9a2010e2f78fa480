// Module 05 — your work: looking up token vectors.
#include "g2c/embeddings/token_embedding.h"

#include "g2c/core/errors.h"

namespace g2c::embeddings {

torch::Tensor TokenEmbeddingImpl::forward(const torch::Tensor& ids) {
  // TODO: check_input(ids), then return weight[ids]: one row per id, shape ids.shape + (D).
  throw g2c::todo("TokenEmbedding::forward", "g2c/embeddings/token_embedding.cpp", "05");
}

}  // namespace g2c::embeddings
