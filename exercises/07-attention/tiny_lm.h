// The tiny attention-only language model of module 07's strip-mask experiment:
// token embedding + learned positions -> one SelfAttention -> Linear to the vocabulary.
//
// Dimension legend: B batch, T context length, D embedding_dim, V vocab_size.
#pragma once

#include <cstdint>
#include <vector>

#include <torch/torch.h>

#include "g2c/attention/self_attention.h"
#include "g2c/nn/linear.h"
#include "g2c/nn/module.h"

namespace g2c::exercises {

struct TinyAttentionLMOptions {
  TinyAttentionLMOptions(std::int64_t vocab_size, std::int64_t context_length,
                         std::int64_t embedding_dim)
      : vocab_size_(vocab_size), context_length_(context_length), embedding_dim_(embedding_dim) {}
  TORCH_ARG(std::int64_t, vocab_size);
  TORCH_ARG(std::int64_t, context_length);
  TORCH_ARG(std::int64_t, embedding_dim);
  TORCH_ARG(bool, causal) = true;
};

class TinyAttentionLMImpl : public g2c::nn::Module {
 public:
  explicit TinyAttentionLMImpl(const TinyAttentionLMOptions& options);

  /// ids (B, T) int64 with T <= context_length -> logits (B, T, V).
  torch::Tensor forward(const torch::Tensor& ids) override;

  /// Mean next-token cross-entropy over every position except the last: logits[:, :-1] against
  /// ids[:, 1:]. (Without the causal mask, position t can read token t + 1: the cheat.)
  torch::Tensor next_token_loss(const torch::Tensor& ids);

  /// Samples `count` tokens after `prompt`, feeding at most the last context_length tokens.
  std::vector<std::int64_t> generate(std::vector<std::int64_t> prompt, std::int64_t count,
                                     at::Generator& generator);

  TinyAttentionLMOptions options;
  torch::Tensor token_embedding;     // (V, D)
  torch::Tensor position_embedding;  // (T, D)
  g2c::attention::SelfAttention attention{nullptr};
  g2c::nn::Linear head{nullptr};  // (D) -> (V)
};
TORCH_MODULE(TinyAttentionLM);

}  // namespace g2c::exercises
