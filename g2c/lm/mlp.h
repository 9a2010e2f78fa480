// Module 06 — the MLP language model (Bengio et al., 2003): the last N tokens, each embedded,
// side by side into one hidden layer.
//
// Dimension legend: B batch, N context_length, D embedding_dim, H hidden_dim, V vocab_size.
//   context (B, N) -> embedding (B, N, D) -> flatten (B, N*D) -> tanh(hidden) (B, H)
//   -> output (B, V)
// Flattening keeps every token in its own slot of the hidden layer's input, so the model knows
// which token came first: [3, 7] and [7, 3] give different predictions.
#pragma once

#include <cstdint>

#include <torch/nn/modules/embedding.h>

#include "g2c/core/torch.h"

#include "g2c/lm/language_model.h"
#include "g2c/nn/linear.h"

namespace g2c::lm {

class MLPLanguageModelImpl : public LanguageModelImpl {
 public:
  MLPLanguageModelImpl(std::int64_t vocab_size, std::int64_t context_length,
                       std::int64_t embedding_dim, std::int64_t hidden_dim);

  /// context (B, N) -> logits (B, V).
  torch::Tensor forward(const torch::Tensor& context) override;

  /// The same as forward().
  torch::Tensor logits(const torch::Tensor& context) override { return forward(context); }

  void pretty_print(std::ostream& stream) const override;

  std::int64_t embedding_dim;
  std::int64_t hidden_dim;
  torch::nn::Embedding embedding{nullptr};  // weight (V, D)
  g2c::nn::Linear hidden{nullptr};          // (N*D) -> (H)
  g2c::nn::Linear output{nullptr};          // (H) -> (V)
};
TORCH_MODULE(MLPLanguageModel);

}  // namespace g2c::lm
