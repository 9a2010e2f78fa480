// Module 05 — your work: learned and sinusoidal positional embeddings.
#include "g2c/embeddings/positional.h"

#include "g2c/core/errors.h"

namespace g2c::embeddings {

torch::Tensor LearnedPositionalEmbeddingImpl::forward(std::int64_t seq_len) {
  // TODO: One learned row per position: a sequence of length T uses the first T rows of weight, (T,
  // D) — a view, so gradients reach the table. A length the table does not cover is refused
  // (check_seq_len).
  // Hints, one step at a time: scripts/hint.sh 05 LearnedPositionalEmbedding::forward
  throw g2c::todo("LearnedPositionalEmbedding::forward", "g2c/embeddings/positional.cpp", "05");
}

torch::Tensor SinusoidalPositionalEmbeddingImpl::build_table(std::int64_t max_seq_len,
                                                             std::int64_t embedding_dim) {
  // TODO: The fixed (M, D) table of the original Transformer: for the column pair (2i, 2i + 1), sin
  // and cos of pos · 10000^(-2i/D), from fast to slow frequencies. Compute in float64 (sines of
  // large angles lose digits in float32), return float32. Operations: arange, pow, a broadcast
  // product (M, 1) × (D/2), sin, cos, writing into every other column.
  // Hints, one step at a time: scripts/hint.sh 05 SinusoidalPositionalEmbedding::build_table
  throw g2c::todo("SinusoidalPositionalEmbedding::build_table", "g2c/embeddings/positional.cpp",
                  "05");
}

torch::Tensor SinusoidalPositionalEmbeddingImpl::forward(std::int64_t seq_len) {
  // TODO: The table is built once; a forward pass reads its first T rows, (T, D), after refusing a
  // length it does not cover (check_seq_len).
  // Hints, one step at a time: scripts/hint.sh 05 SinusoidalPositionalEmbedding::forward
  throw g2c::todo("SinusoidalPositionalEmbedding::forward", "g2c/embeddings/positional.cpp", "05");
}

}  // namespace g2c::embeddings
