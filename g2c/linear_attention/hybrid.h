// Beyond module linear_attention, implemented for you — module 09's block and language model with
// each layer's attention chosen by a pattern: "full" (module 08's causal MultiHeadAttention) or
// "linear" (LinearAttention). ["full"] × N is module 09's TransformerLM, parameter for parameter;
// ["linear", "linear", "linear", "full"] is the 3:1 hybrid of the lesson.
//
// Dimension legend: B batch, T positions, D embedding_dim, V vocab_size, H num_heads, d head_dim.
//   HybridBlock:          x + attn(ln1(x)), then that + ffn(ln2(that))                 (B, T, D)
//   HybridTransformerLM:  token_embed(ids) + pos_embed(T) -> blocks -> ln_final -> tied head
// The parameter names are TransformerLM's (token_embed, pos_embed, blocks.<l>.ln1/attn/ln2/ffn,
// ln_final, head); a linear layer adds blocks.<l>.attn.gamma_logit (H).
//
// Decoding one token at a time (forward_step) keeps, per layer, what that layer needs of the past:
// a full layer its KV cache (2·T·D numbers, growing with every token), a linear layer its state
// (H·d² + H·d numbers, whatever T is). HybridState::bytes() is that bill.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <ostream>
#include <string>
#include <vector>

#include "g2c/attention/layer_kv_cache.h"
#include "g2c/attention/multi_head.h"
#include "g2c/core/torch.h"
#include "g2c/embeddings/positional.h"
#include "g2c/embeddings/token_embedding.h"
#include "g2c/linear_attention/attention.h"
#include "g2c/nn/module.h"
#include "g2c/transformer/ffn.h"
#include "g2c/transformer/layer_norm.h"
#include "g2c/transformer/transformer_lm.h"

namespace g2c::linear_attention {

/// The pattern's two words.
inline const std::vector<std::string>& layer_kinds() {
  static const std::vector<std::string> kinds{"linear", "full"};
  return kinds;
}

class HybridBlockImpl : public g2c::nn::Module {
 public:
  /// Registers ln1, attn (kind "full": MultiHeadAttention(D, H, causal); "linear":
  /// LinearAttention(D, H)), ln2, ffn (FeedForward(D, hidden_dim); 0 means 4·D). ValueError for
  /// any other kind, naming the two.
  HybridBlockImpl(std::int64_t embedding_dim, std::int64_t num_heads, const std::string& kind,
                  std::int64_t hidden_dim = 0);

  /// x (B, T, D) -> (B, T, D). ValueError unless x is (B, T, D) with this block's D.
  torch::Tensor forward(const torch::Tensor& x) override;

  /// One token, x (B, 1, D) -> (B, 1, D): a full layer appends to `cache` and attends over it, a
  /// linear layer steps `state` (started when empty). The other argument is left alone.
  torch::Tensor forward_step(const torch::Tensor& x, g2c::attention::LayerKVCache& cache,
                             std::optional<LinearAttentionState>& state);

  void pretty_print(std::ostream& stream) const override;

  std::int64_t embedding_dim;
  std::int64_t num_heads;
  std::string kind;
  g2c::transformer::LayerNorm ln1{nullptr};
  std::shared_ptr<torch::nn::Module> attn;  // registered as "attn": one of the two below
  g2c::attention::MultiHeadAttention full_attn{nullptr};  // kind "full", else empty
  LinearAttention linear_attn{nullptr};                   // kind "linear", else empty
  g2c::transformer::LayerNorm ln2{nullptr};
  g2c::transformer::FeedForward ffn{nullptr};
};
TORCH_MODULE(HybridBlock);

/// What forward_step carries from token to token: per layer, a KV cache (full layers) or a
/// recurrent state (linear layers, empty until the first token); the next token's position.
struct HybridState {
  std::vector<g2c::attention::LayerKVCache> caches;         // one per layer; used by full ones
  std::vector<std::optional<LinearAttentionState>> states;  // one per layer; used by linear ones
  std::int64_t position = 0;                                // tokens seen so far

  /// Bytes of what the layers hold now: every full layer's cached K and V, every linear layer's S
  /// and z.
  std::int64_t bytes() const;
};

class HybridTransformerLMImpl : public g2c::nn::Module {
 public:
  /// ValueError for an empty pattern, an entry other than "linear" or "full" (naming it and its
  /// position), non-positive sizes, or a num_heads that does not divide embedding_dim.
  HybridTransformerLMImpl(std::int64_t vocab_size, std::int64_t embedding_dim,
                          std::vector<std::string> layer_pattern, std::int64_t num_heads,
                          std::int64_t max_seq_len, std::int64_t hidden_dim = 0);

  /// ids (B, T) int64 -> logits (B, T, V). ValueError for T > max_seq_len, ids that are not 2-D or
  /// outside [0, V).
  torch::Tensor forward(const torch::Tensor& ids) override;

  /// An empty decoding state: one empty cache (room for max_seq_len positions) and one empty
  /// recurrent state per layer.
  HybridState empty_state() const;

  /// One decoding step: ids (B, 1), the newest token of each sequence, at position state.position;
  /// returns logits (B, 1, V), equal to the last row of forward() on the whole sequence so far,
  /// and advances the state. ValueError for ids not (B, 1), a state of another model, or a
  /// sequence already max_seq_len long.
  torch::Tensor forward_step(const torch::Tensor& ids, HybridState& state);

  /// Every parameter.
  std::int64_t parameter_count() const;

  void pretty_print(std::ostream& stream) const override;

  std::int64_t vocab_size;
  std::int64_t embedding_dim;
  std::vector<std::string> layer_pattern;
  std::int64_t num_layers;
  std::int64_t num_heads;
  std::int64_t max_seq_len;
  std::int64_t hidden_dim;
  g2c::embeddings::TokenEmbedding token_embed{nullptr};            // weight (V, D), also the head
  g2c::embeddings::LearnedPositionalEmbedding pos_embed{nullptr};  // weight (max_seq_len, D)
  std::vector<HybridBlock> blocks;  // registered as the children "blocks.0", "blocks.1", …
  g2c::transformer::LayerNorm ln_final{nullptr};
  g2c::transformer::HeadBias head{nullptr};
  torch::Tensor head_bias;  // (V): the same tensor as head->bias
};
TORCH_MODULE(HybridTransformerLM);

}  // namespace g2c::linear_attention
