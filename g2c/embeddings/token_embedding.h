// Module 05 — token embeddings: a learnable lookup table from token ids to vectors.
//
// Dimension legend: B batch, T sequence length, V vocab_size, D embedding_dim.
// weight (V, D); ids (...) int64 -> weight[ids] (..., D). Row i is the vector of token i; the
// lookup is a gather, so the gradient of a row is the sum of the gradients where that id was used.
#pragma once

#include <cstdint>
#include <ostream>

#include "g2c/core/torch.h"

#include "g2c/nn/module.h"

namespace g2c::embeddings {

struct TokenEmbeddingOptions {
  TokenEmbeddingOptions(std::int64_t vocab_size, std::int64_t embedding_dim)
      : vocab_size_(vocab_size), embedding_dim_(embedding_dim) {}
  TORCH_ARG(std::int64_t, vocab_size);     // V, rows of the table
  TORCH_ARG(std::int64_t, embedding_dim);  // D, length of each vector
};

/// ValueError unless `ids` is a defined integer tensor (any shape) whose values lie in
/// [0, upper_bound). `what` names the argument and `upper_bound` what it is ("vocab_size=100") in
/// the message. Example: check_ids(torch::tensor({3, 100}), "ids", 100, "vocab_size") throws
/// "ids must lie in [0, vocab_size=100), got values from 3 to 100".
void check_ids(const torch::Tensor& ids, const char* what, std::int64_t upper_bound,
               const char* bound_name);

class TokenEmbeddingImpl : public g2c::nn::Module {
 public:
  TokenEmbeddingImpl(std::int64_t vocab_size, std::int64_t embedding_dim)
      : TokenEmbeddingImpl(TokenEmbeddingOptions(vocab_size, embedding_dim)) {}
  explicit TokenEmbeddingImpl(const TokenEmbeddingOptions& options);

  /// Registers the one parameter, `weight` (V, D), and initialises it.
  void reset();
  /// weight ~ Uniform(-1/√D, 1/√D). subtle: the bound uses D, not V, so the vectors' scale does
  /// not depend on the vocabulary size.
  void reset_parameters();

  /// ids (...) int64 -> weight[ids], shape ids.shape + (D). Example: ids (4, 8) -> (4, 8, D);
  /// ids [3, 5, 7] -> rows 3, 5 and 7 of weight, shape (3, D).
  torch::Tensor forward(const torch::Tensor& ids) override;

  /// check_ids with this table's V: integer dtype, values in [0, V).
  void check_input(const torch::Tensor& ids) const;

  void pretty_print(std::ostream& stream) const override;

  TokenEmbeddingOptions options;
  std::int64_t vocab_size;
  std::int64_t embedding_dim;
  torch::Tensor weight;  // (V, D)
};
TORCH_MODULE(TokenEmbedding);

}  // namespace g2c::embeddings
