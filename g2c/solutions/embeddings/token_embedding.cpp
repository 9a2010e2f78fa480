// Module 05 — reference solution for g2c/embeddings/token_embedding.cpp.
#include "g2c/embeddings/token_embedding.h"

namespace g2c::embeddings {

torch::Tensor TokenEmbeddingImpl::forward(const torch::Tensor& ids) {
  check_input(ids);
  return weight.index({ids.to(torch::kLong)});  // (V, D)[ids] -> ids.shape + (D)
}

}  // namespace g2c::embeddings
