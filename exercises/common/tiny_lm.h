// The tiny attention-only language model of the module 07 and 08 exercises, built from the
// course's own pieces, so that a bug in any of them shows here as it does in the Python edition:
//
//   ids (B, T) -> token_embedding (module 05 TokenEmbedding)                     (B, T, D)
//              +  position_embedding(T) (module 05 LearnedPositionalEmbedding)   (T, D)
//              -> attention (module 07 SelfAttention, or module 08 MultiHeadAttention)
//              -> head (module 03 Linear(D, V))                                  (B, T, V)
//
// Dimension legend: B batch, T context length, D embedding_dim, V vocab_size, H heads.
#pragma once

#include <cstdint>
#include <ostream>

#include <torch/torch.h>

#include "g2c/attention/multi_head.h"
#include "g2c/attention/self_attention.h"
#include "g2c/embeddings/positional.h"
#include "g2c/embeddings/token_embedding.h"
#include "g2c/nn/linear.h"
#include "g2c/nn/module.h"

namespace g2c::exercises {

struct TinyAttentionLMOptions {
  TinyAttentionLMOptions(std::int64_t vocab_size, std::int64_t context_length,
                         std::int64_t embedding_dim)
      : vocab_size_(vocab_size), context_length_(context_length), embedding_dim_(embedding_dim) {}
  TORCH_ARG(std::int64_t, vocab_size);      // V
  TORCH_ARG(std::int64_t, context_length);  // the longest T (rows of the position table)
  TORCH_ARG(std::int64_t, embedding_dim);   // D
  TORCH_ARG(bool, causal) = true;
  /// 0: module 07's single-head SelfAttention; H >= 1: module 08's MultiHeadAttention, H heads.
  TORCH_ARG(std::int64_t, num_heads) = 0;
};

class TinyAttentionLMImpl : public g2c::nn::Module {
 public:
  explicit TinyAttentionLMImpl(const TinyAttentionLMOptions& options);

  /// Registers token_embedding, position_embedding, attention and head, in that order (the
  /// order of the Python edition's probe; each initialises itself as its module specifies).
  void reset();

  /// ids (B, T) int64 with T <= context_length -> logits (B, T, V). Example: a model with V = 8,
  /// context 4 maps ids (2, 3) to logits (2, 3, 8).
  torch::Tensor forward(const torch::Tensor& ids) override;

  /// ids (B, T) -> token + position embeddings (B, T, D): what the attention layer reads.
  torch::Tensor embed(const torch::Tensor& ids);

  /// ids (B, T) -> the attention layer's weights: (B, T, T), or (B, H, T, T) with heads.
  torch::Tensor attention_weights(const torch::Tensor& ids);

  /// Switches the attention layer's mask on (true) or off, keeping every weight.
  void set_causal(bool causal);
  bool causal() const;

  /// ValueError unless ids is a (B, T) integer tensor with 1 <= T <= context_length.
  void check_ids(const torch::Tensor& ids) const;

  void pretty_print(std::ostream& stream) const override;

  TinyAttentionLMOptions options;
  g2c::embeddings::TokenEmbedding token_embedding{nullptr};                 // weight (V, D)
  g2c::embeddings::LearnedPositionalEmbedding position_embedding{nullptr};  // weight (T, D)
  // Exactly one of the two is set, by options.num_heads().
  g2c::attention::SelfAttention self_attention{nullptr};
  g2c::attention::MultiHeadAttention multi_head_attention{nullptr};
  g2c::nn::Linear head{nullptr};  // (D) -> (V)
};
TORCH_MODULE(TinyAttentionLM);

}  // namespace g2c::exercises
