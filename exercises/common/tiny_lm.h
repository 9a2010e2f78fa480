// The tiny attention-only language model of the module 07 and 08 exercises:
// token embedding + learned positions -> one attention layer -> Linear to the vocabulary.
// The layer is module 07's SelfAttention (num_heads = 0) or module 08's MultiHeadAttention.
//
// Dimension legend: B batch, T context length, D embedding_dim, V vocab_size, H heads.
#pragma once

#include <cstdint>
#include <vector>

#include <torch/torch.h>

#include "g2c/attention/multi_head.h"
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
  /// 0: module 07's single-head SelfAttention; H >= 1: module 08's MultiHeadAttention with H heads.
  TORCH_ARG(std::int64_t, num_heads) = 0;
};

class TinyAttentionLMImpl : public g2c::nn::Module {
 public:
  explicit TinyAttentionLMImpl(const TinyAttentionLMOptions& options);

  /// ids (B, T) int64 with T <= context_length -> logits (B, T, V).
  torch::Tensor forward(const torch::Tensor& ids) override;

  /// ids (B, T) -> token + position embeddings (B, T, D): what the attention layer sees.
  torch::Tensor embed(const torch::Tensor& ids);

  /// ids (B, T) -> the attention layer's weights: (B, T, T), or (B, H, T, T) with heads.
  torch::Tensor attention_weights(const torch::Tensor& ids);

  /// Mean next-token cross-entropy over every position except the last: logits[:, :-1] against
  /// ids[:, 1:]. (Without the causal mask, position t can read token t + 1: the cheat.)
  torch::Tensor next_token_loss(const torch::Tensor& ids);

  /// Samples `count` tokens after `prompt`, feeding at most the last context_length tokens.
  std::vector<std::int64_t> generate(std::vector<std::int64_t> prompt, std::int64_t count,
                                     at::Generator& generator);

  TinyAttentionLMOptions options;
  torch::Tensor token_embedding;     // (V, D)
  torch::Tensor position_embedding;  // (T, D)
  std::shared_ptr<g2c::nn::Module> attention;
  g2c::nn::Linear head{nullptr};  // (D) -> (V)
};
TORCH_MODULE(TinyAttentionLM);

}  // namespace g2c::exercises

namespace g2c::exercises {

/// `batch` windows of `length` consecutive tokens of `stream` at random offsets: (B, T) int64.
torch::Tensor sample_windows(const torch::Tensor& stream, std::int64_t batch, std::int64_t length,
                             at::Generator& generator);

}  // namespace g2c::exercises
