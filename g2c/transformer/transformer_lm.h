// Module 09 — TransformerLM: a GPT-style decoder-only language model built from the course's own
// pieces (module 05's embeddings, module 08's attention inside module 09's blocks).
//
// Dimension legend: B batch, T sequence length (≤ max_seq_len), D embedding_dim, V vocab_size,
// L num_layers.
//   ids (B, T) int64
//   x = token_embed(ids) + pos_embed(T)            (B, T, D) + (T, D), broadcast over B
//   x = blocks[0](x) … blocks[L-1](x)              (B, T, D)
//   x = ln_final(x)                                (B, T, D)
//   logits = x · token_embed.weightᵀ + head_bias   (B, T, D) @ (D, V) -> (B, T, V)
// Tied embeddings: there is no separate output matrix. The unembedding *is* the token table,
// transposed, so logit v measures how well the final stream aligns with the row that put token v
// in; that saves V·D parameters. The logits at position t predict the token at t + 1.
#pragma once

#include <cstdint>
#include <ostream>
#include <vector>

#include "g2c/core/torch.h"

#include "g2c/embeddings/positional.h"
#include "g2c/embeddings/token_embedding.h"
#include "g2c/nn/module.h"
#include "g2c/transformer/block.h"
#include "g2c/transformer/kv_cache.h"
#include "g2c/transformer/layer_norm.h"

namespace g2c::transformer {

struct TransformerLMOptions {
  TransformerLMOptions(std::int64_t vocab_size, std::int64_t embedding_dim, std::int64_t num_layers,
                       std::int64_t num_heads, std::int64_t max_seq_len)
      : vocab_size_(vocab_size),
        embedding_dim_(embedding_dim),
        num_layers_(num_layers),
        num_heads_(num_heads),
        max_seq_len_(max_seq_len) {}
  TORCH_ARG(std::int64_t, vocab_size);     // V
  TORCH_ARG(std::int64_t, embedding_dim);  // D, the width of the residual stream
  TORCH_ARG(std::int64_t, num_layers);     // L blocks, >= 0
  TORCH_ARG(std::int64_t, num_heads);      // per block; must divide D
  TORCH_ARG(std::int64_t, max_seq_len);    // rows of the learned position table
  /// The feed-forward width; 0 means 4·D.
  TORCH_ARG(std::int64_t, hidden_dim) = 0;
};

/// The number of parameters of a TransformerLM, in closed form:
/// V·D + max_seq_len·D + L·(4(D² + D) + 2·D·H + H + D + 4·D) + 2·D + V, with H the feed-forward
/// width (12·D² + 13·D per block when H = 4·D). Example: (V 100, D 32, L 2, H_heads 4, T 32) ->
/// 29,796. An untied head would add V·D.
std::int64_t parameter_count(const TransformerLMOptions& options);

/// The output bias (V), alone in a child module: torch::nn::Module lists a module's own parameters
/// before its children's, so a bias registered on TransformerLM itself would come first. Here it
/// comes last, where the Python edition (and every checkpoint) has it.
class HeadBiasImpl : public torch::nn::Module {
 public:
  explicit HeadBiasImpl(std::int64_t vocab_size);
  /// Registers `bias` = zeros(V).
  void reset();
  void pretty_print(std::ostream& stream) const override;

  std::int64_t vocab_size;
  torch::Tensor bias;  // (V)
};
TORCH_MODULE(HeadBias);

/// What the course's other decoder-only models (g2c/moe, g2c/linear_attention) do around their
/// blocks, as TransformerLM does. embed_sequence: the input checks (ids 2-D, in [0, V), T ≤
/// max_seq_len; `model` names the caller in the messages), then token_embed(ids) + pos_embed(T):
/// (B, T, D). tied_logits: ln_final(x) · token_embed.weightᵀ + head_bias: (B, T, D) -> (B, T, V).
torch::Tensor embed_sequence(const torch::Tensor& ids, g2c::embeddings::TokenEmbedding& token_embed,
                             g2c::embeddings::LearnedPositionalEmbedding& pos_embed,
                             const char* model);
torch::Tensor tied_logits(const torch::Tensor& x, LayerNorm& ln_final,
                          const g2c::embeddings::TokenEmbedding& token_embed,
                          const torch::Tensor& head_bias);

class TransformerLMImpl : public g2c::nn::Module {
 public:
  TransformerLMImpl(std::int64_t vocab_size, std::int64_t embedding_dim, std::int64_t num_layers,
                    std::int64_t num_heads, std::int64_t max_seq_len, std::int64_t hidden_dim = 0)
      : TransformerLMImpl(
            TransformerLMOptions(vocab_size, embedding_dim, num_layers, num_heads, max_seq_len)
                .hidden_dim(hidden_dim)) {}
  /// ValueError for non-positive sizes, a negative num_layers or a num_heads that does not divide
  /// embedding_dim. num_layers 0 is a model of embeddings, ln_final and the tied head alone, no
  /// mixing between positions (the multimodal lesson uses it to show the splice touches only the
  /// placeholders).
  explicit TransformerLMImpl(const TransformerLMOptions& options);

  /// Registers token_embed (V, D), pos_embed (max_seq_len, D), the L causal blocks, ln_final and
  /// the head's bias, in that order: 16·L + 5 parameter tensors (37 for L = 2).
  void reset();

  /// ids (B, T) int64 -> logits (B, T, V). ValueError for T > max_seq_len (the position table has
  /// no row for it), for ids that are not 2-D, or ids outside [0, V).
  /// Example: ids (3, 5) with V = 12 -> (3, 5, 12).
  torch::Tensor forward(const torch::Tensor& ids) override;

  /// The residual stream after ln_final, before the tied head: ids (B, T) -> (B, T, D), what
  /// forward() multiplies by token_embed.weightᵀ (a multi-token-prediction head reads it). The
  /// same ValueErrors as forward().
  torch::Tensor hidden_states(const torch::Tensor& ids);

  /// One empty layer cache per block, for forward_cached, each with room for max_seq_len positions.
  /// ValueError for a model without blocks (nothing to cache).
  KVCache empty_kv_cache() const;

  /// One generation step. ids (B, 1) is the newest token of each sequence; `cache` holds the keys
  /// and values of everything before it and grows by one position in every layer. The position is
  /// read from the cache (cache.length()), so the token gets position row `length`, not row 0.
  /// Returns logits (B, 1, V), equal to the last row of forward() on the whole sequence so far.
  /// ValueError when ids is not (B, 1), the cache has another number of layers, or it already holds
  /// max_seq_len positions (no rolling window).
  /// Example: auto cache = model->empty_kv_cache(); for each token t: logits = forward_cached(t,
  /// cache).
  virtual torch::Tensor forward_cached(const torch::Tensor& ids, KVCache& cache);

  /// The checks of forward_cached (ids (B, 1) in [0, V), a cache with one layer per block and a
  /// free position); returns the position the new token takes: cache.length().
  std::int64_t check_cached_step(const torch::Tensor& ids, const KVCache& cache) const;

  /// ValueError unless ids is a 2-D (B, T) integer tensor with values in [0, V).
  void check_input(const torch::Tensor& ids) const;

  void pretty_print(std::ostream& stream) const override;

  TransformerLMOptions options;
  std::int64_t vocab_size;
  std::int64_t embedding_dim;
  std::int64_t num_layers;
  std::int64_t num_heads;
  std::int64_t max_seq_len;
  std::int64_t hidden_dim;
  g2c::embeddings::TokenEmbedding token_embed{nullptr};            // weight (V, D), also the head
  g2c::embeddings::LearnedPositionalEmbedding pos_embed{nullptr};  // weight (max_seq_len, D)
  std::vector<Block> blocks;  // registered as the children "blocks.0", "blocks.1", …
  LayerNorm ln_final{nullptr};
  HeadBias head{nullptr};
  torch::Tensor head_bias;  // (V): the same tensor as head->bias
};
TORCH_MODULE(TransformerLM);

}  // namespace g2c::transformer
