// Module 05 — your work: rotary position embeddings (split-halves convention).
#include "g2c/embeddings/rotary.h"

#include "g2c/core/errors.h"

namespace g2c::embeddings {

std::pair<torch::Tensor, torch::Tensor> RotaryEmbeddingImpl::build_cos_sin(
    std::int64_t max_seq_len, std::int64_t embedding_dim, double base) {
  // TODO: RoPE's angles: position · θ_i with θ_i = base^(-2i/D), one frequency per feature pair. In
  // the rotate-half layout feature i pairs with i + D/2, so the (M, D/2) angle table is written
  // twice side by side, (M, D). Return {cos, sin} of it, computed in float64, stored as float32.
  // Operations: arange, pow, an outer product, cat, cos, sin.
  // Hints, one step at a time: scripts/hint.sh 05 RotaryEmbedding::build_cos_sin
  throw g2c::todo("RotaryEmbedding::build_cos_sin", "g2c/embeddings/rotary.cpp", "05");
}

torch::Tensor RotaryEmbeddingImpl::forward(const torch::Tensor& x) {
  // TODO: Rotate each feature pair by its position's angle: x · cos + rotate_half(x) · sin
  // (rotate_half is provided), using the first T = x.size(-2) rows of the tables in x's dtype,
  // broadcast over the leading dimensions: (…, T, D) -> (…, T, D). Check x first (check_input).
  // Hints, one step at a time: scripts/hint.sh 05 RotaryEmbedding::forward
  throw g2c::todo("RotaryEmbedding::forward", "g2c/embeddings/rotary.cpp", "05");
}

}  // namespace g2c::embeddings
