// Module 05 — positions: attention is blind to order, so each position gets a vector too.
//
// Dimension legend: T sequence length (seq_len), M max_seq_len, D embedding_dim.
//   LearnedPositionalEmbedding:    weight (M, D) is a parameter, learned like token embeddings.
//   SinusoidalPositionalEmbedding: weight (M, D) is a fixed buffer (moves with to(), never
//     trained): PE[pos, i] = sin(pos · ω_i) for even i, PE[pos, i] = cos(pos · ω_{i-1}) for odd i,
//     with ω_i = 1 / 10000^(i / D) for i = 0, 2, 4, ...
// Both: forward(T) -> the first T rows (T, D), to be added to token embeddings (B, T, D).
#pragma once

#include <cstdint>
#include <ostream>

#include "g2c/core/torch.h"

#include "g2c/nn/module.h"

namespace g2c::embeddings {

struct PositionalEmbeddingOptions {
  PositionalEmbeddingOptions(std::int64_t max_seq_len, std::int64_t embedding_dim)
      : max_seq_len_(max_seq_len), embedding_dim_(embedding_dim) {}
  TORCH_ARG(std::int64_t, max_seq_len);    // M, the longest sequence the table covers
  TORCH_ARG(std::int64_t, embedding_dim);  // D
};

/// ValueError("seq_len S exceeds max_seq_len M") when seq_len > max_seq_len, and a ValueError for
/// seq_len < 1. Shared by both tables and by RotaryEmbedding.
void check_seq_len(std::int64_t seq_len, std::int64_t max_seq_len);

class LearnedPositionalEmbeddingImpl : public g2c::nn::Module {
 public:
  LearnedPositionalEmbeddingImpl(std::int64_t max_seq_len, std::int64_t embedding_dim)
      : LearnedPositionalEmbeddingImpl(PositionalEmbeddingOptions(max_seq_len, embedding_dim)) {}
  explicit LearnedPositionalEmbeddingImpl(const PositionalEmbeddingOptions& options);

  /// Registers the one parameter, `weight` (M, D), and initialises it.
  void reset();
  /// weight ~ Uniform(-1/√D, 1/√D), as for TokenEmbedding.
  void reset_parameters();

  /// seq_len T -> weight[:T], shape (T, D). Example: forward(10) with M = 128 -> rows 0..9.
  torch::Tensor forward(std::int64_t seq_len);

  void pretty_print(std::ostream& stream) const override;

  PositionalEmbeddingOptions options;
  std::int64_t max_seq_len;
  std::int64_t embedding_dim;
  torch::Tensor weight;  // (M, D), a parameter
};
TORCH_MODULE(LearnedPositionalEmbedding);

class SinusoidalPositionalEmbeddingImpl : public g2c::nn::Module {
 public:
  SinusoidalPositionalEmbeddingImpl(std::int64_t max_seq_len, std::int64_t embedding_dim)
      : SinusoidalPositionalEmbeddingImpl(PositionalEmbeddingOptions(max_seq_len, embedding_dim)) {}
  /// ValueError("embedding_dim must be even for sinusoidal encoding") for an odd D, checked
  /// before the table is built.
  explicit SinusoidalPositionalEmbeddingImpl(const PositionalEmbeddingOptions& options);

  /// Registers the buffer `weight` = build_table(M, D). No parameters.
  void reset();

  /// The (M, D) float32 table. Example for D = 2: row pos = [sin(pos), cos(pos)]; row 0 of any
  /// table is [0, 1, 0, 1, ...].
  static torch::Tensor build_table(std::int64_t max_seq_len, std::int64_t embedding_dim);

  /// seq_len T -> weight[:T], shape (T, D).
  torch::Tensor forward(std::int64_t seq_len);

  void pretty_print(std::ostream& stream) const override;

  PositionalEmbeddingOptions options;
  std::int64_t max_seq_len;
  std::int64_t embedding_dim;
  torch::Tensor weight;  // (M, D), a buffer: moves with to(), never trained
};
TORCH_MODULE(SinusoidalPositionalEmbedding);

}  // namespace g2c::embeddings
