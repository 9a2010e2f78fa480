// Module 05 — your work: rotary position embeddings (split-halves convention).
#include "g2c/embeddings/rotary.h"

#include "g2c/core/errors.h"

namespace g2c::embeddings {

std::pair<torch::Tensor, torch::Tensor> RotaryEmbeddingImpl::build_cos_sin(
    std::int64_t max_seq_len, std::int64_t embedding_dim, double base) {
  // TODO: inverse frequencies 1/base^(arange(0, D, 2)/D); outer product with positions 0..M-1
  // (M, D/2); concatenate two copies (M, D); return {cos, sin} of it, float32.
  throw g2c::todo("RotaryEmbedding::build_cos_sin", "g2c/embeddings/rotary.cpp", "05");
}

torch::Tensor RotaryEmbeddingImpl::forward(const torch::Tensor& x) {
  // TODO: check_input(x); with T = x.size(-2), return x·cos[:T] + rotate_half(x)·sin[:T]
  // (tables in x's dtype), shape (..., T, D).
  throw g2c::todo("RotaryEmbedding::forward", "g2c/embeddings/rotary.cpp", "05");
}

}  // namespace g2c::embeddings
