// Beyond module moe, implemented for you — module 09's block and language model with the
// feed-forward replaced by a mixture of experts.
//
// Dimension legend: B batch, T positions, D embedding_dim, V vocab_size, E num_experts, k top_k.
//   MoEBlock:          x + attn(ln1(x)), then that + moe_ffn(ln2(that))           (B, T, D)
//   MoETransformerLM:  token_embed(ids) + pos_embed(T) -> MoE blocks -> ln_final -> tied head
// The parameter names are TransformerLM's (token_embed, pos_embed, blocks.<l>.ln1/attn/ln2,
// ln_final, head), with blocks.<l>.moe_ffn.experts.<e>.fc1/fc2 and blocks.<l>.moe_ffn.router.gate
// in place of blocks.<l>.ffn.
#pragma once

#include <cstdint>
#include <ostream>
#include <vector>

#include "g2c/attention/multi_head.h"
#include "g2c/core/torch.h"
#include "g2c/embeddings/positional.h"
#include "g2c/embeddings/token_embedding.h"
#include "g2c/moe/layer.h"
#include "g2c/nn/module.h"
#include "g2c/transformer/layer_norm.h"
#include "g2c/transformer/transformer_lm.h"

namespace g2c::moe {

class MoEBlockImpl : public g2c::nn::Module {
 public:
  /// Registers ln1, attn (module 08's MultiHeadAttention(D, num_heads, causal)), ln2 and moe_ffn
  /// (MoEFeedForward(D, E, k, hidden_dim); with sorted_dispatch, the same layer on the fast path of
  /// g2c/moe/sorted_dispatch.h). ValueError for the sizes those refuse.
  MoEBlockImpl(std::int64_t embedding_dim, std::int64_t num_heads, std::int64_t num_experts,
               std::int64_t top_k, std::int64_t hidden_dim = 0, bool causal = true,
               bool sorted_dispatch = false);

  /// x (B, T, D) -> (B, T, D). ValueError unless x is (B, T, D) with this block's D.
  torch::Tensor forward(const torch::Tensor& x) override;

  std::int64_t embedding_dim;
  g2c::transformer::LayerNorm ln1{nullptr};
  g2c::attention::MultiHeadAttention attn{nullptr};
  g2c::transformer::LayerNorm ln2{nullptr};
  MoEFeedForward moe_ffn{nullptr};
};
TORCH_MODULE(MoEBlock);

class MoETransformerLMImpl : public g2c::nn::Module {
 public:
  /// ValueError for non-positive sizes, a num_heads that does not divide embedding_dim, or a
  /// top_k outside [1, num_experts]. sorted_dispatch: every block's mixture on the fast path
  /// (g2c/moe/sorted_dispatch.h), the same model computed faster.
  MoETransformerLMImpl(std::int64_t vocab_size, std::int64_t embedding_dim, std::int64_t num_layers,
                       std::int64_t num_heads, std::int64_t max_seq_len, std::int64_t num_experts,
                       std::int64_t top_k, std::int64_t hidden_dim = 0,
                       bool sorted_dispatch = false);

  /// ids (B, T) int64 -> logits (B, T, V). ValueError for T > max_seq_len, ids that are not 2-D or
  /// outside [0, V).
  torch::Tensor forward(const torch::Tensor& ids) override;

  /// The mean over blocks of each MoE layer's load_balancing_loss() for the last forward.
  /// g2c::RuntimeError before any forward.
  torch::Tensor load_balancing_loss();

  /// Every parameter, each expert's included.
  std::int64_t total_parameter_count() const;
  /// What one token uses: total − L · (E − k) · one expert's parameters.
  std::int64_t active_parameter_count() const;

  void pretty_print(std::ostream& stream) const override;

  std::int64_t vocab_size;
  std::int64_t embedding_dim;
  std::int64_t num_layers;
  std::int64_t num_heads;
  std::int64_t max_seq_len;
  std::int64_t num_experts;
  std::int64_t top_k;
  std::int64_t hidden_dim;
  g2c::embeddings::TokenEmbedding token_embed{nullptr};            // weight (V, D), also the head
  g2c::embeddings::LearnedPositionalEmbedding pos_embed{nullptr};  // weight (max_seq_len, D)
  std::vector<MoEBlock> blocks;  // registered as the children "blocks.0", "blocks.1", …
  g2c::transformer::LayerNorm ln_final{nullptr};
  g2c::transformer::HeadBias head{nullptr};
  torch::Tensor head_bias;  // (V): the same tensor as head->bias
};
TORCH_MODULE(MoETransformerLM);

}  // namespace g2c::moe
