// Module 05 — your work: learned and sinusoidal positional embeddings.
#include "g2c/embeddings/positional.h"

#include "g2c/core/errors.h"

namespace g2c::embeddings {

torch::Tensor LearnedPositionalEmbeddingImpl::forward(std::int64_t seq_len) {
  // TODO: check_seq_len(seq_len, max_seq_len), then return the first seq_len rows of weight (T, D).
  throw g2c::todo("LearnedPositionalEmbedding::forward", "g2c/embeddings/positional.cpp", "05");
}

torch::Tensor SinusoidalPositionalEmbeddingImpl::build_table(std::int64_t max_seq_len,
                                                             std::int64_t embedding_dim) {
  // TODO: an (M, D) float32 table: frequency 1/10000^(i/D) for i = 0, 2, 4, …; even columns
  // sin(pos · frequency), odd columns cos(pos · frequency).
  throw g2c::todo("SinusoidalPositionalEmbedding::build_table", "g2c/embeddings/positional.cpp",
                  "05");
}

torch::Tensor SinusoidalPositionalEmbeddingImpl::forward(std::int64_t seq_len) {
  // TODO: check_seq_len(seq_len, max_seq_len), then return the first seq_len rows of the table.
  throw g2c::todo("SinusoidalPositionalEmbedding::forward", "g2c/embeddings/positional.cpp", "05");
}

}  // namespace g2c::embeddings
