// Beyond module specdec — a multi-token-prediction head: the model drafts for itself.
//
// Dimension legend: B batch, T sequence length, D embedding_dim, V vocab_size.
// A separate drafter is a second model to load. An MTP head is a small add-on to the model that
// predicts one step FURTHER: from the trunk's hidden state at t and the embedding of the token at
// t + 1 it predicts the token at t + 2. At decode time the base's own next token is certain and the
// head's guess at the one after is a draft of length 1, verified by the next pass.
//   e = base.token_embed(next_ids)                      (B, T', D)
//   h = combine(cat(hidden, e))                         (B, T', 2D) -> (B, T', D)
//   h = ln(block(h))                                    one causal module 09 Block, a LayerNorm
//   logits = h · base.token_embed.weightᵀ + head_bias   (B, T', V)   the base's tied unembedding
// Training alignment (where every first implementation slips):
//   ids      x0  x1  x2  x3  x4                  (B, T)
//   hidden   h0  h1  h2  h3  h4                  (B, T, D)
//   head in  (h0, x1) (h1, x2) (h2, x3) (h3, x4) head(hidden[:, :-1], ids[:, 1:])  (B, T-1, V)
//   targets  x2       x3       x4       —        row t -> ids[:, t + 2]; the last row has none
// The base stays frozen by omission: the head holds it but does not register it, so parameters()
// and any optimizer built on them never reach it (module 13b's LoRAModel does the same).
#pragma once

#include <cstdint>
#include <optional>
#include <ostream>
#include <utility>

#include "g2c/core/torch.h"
#include "g2c/nn/linear.h"
#include "g2c/nn/module.h"
#include "g2c/specdec/generate.h"
#include "g2c/transformer/block.h"
#include "g2c/transformer/layer_norm.h"
#include "g2c/transformer/transformer_lm.h"

namespace g2c::specdec {

/// The base's final hidden states: ids (B, T) -> (B, T, D), after ln_final (module 09's
/// TransformerLMImpl::hidden_states), without autograd. ValueError for T > max_seq_len.
torch::Tensor hidden_states(g2c::transformer::TransformerLMImpl& model, const torch::Tensor& ids);

class MTPHeadImpl : public g2c::nn::Module {
 public:
  /// Holds `base` (not registered) and registers combine = Linear(2D, D), block = one causal Block
  /// (the base's heads and feed-forward width), ln = LayerNorm(D), head_bias = zeros(V).
  explicit MTPHeadImpl(g2c::transformer::TransformerLM base);

  /// hidden (B, T', D) from hidden_states, next_ids (B, T') the token one after each hidden
  /// position -> logits (B, T', V): row t predicts the token two after hidden[:, t]. ValueError
  /// unless the shapes agree with each other and with the base.
  torch::Tensor forward(const torch::Tensor& hidden, const torch::Tensor& next_ids);

  /// The checks of forward.
  void check_inputs(const torch::Tensor& hidden, const torch::Tensor& next_ids) const;

  void pretty_print(std::ostream& stream) const override;

  g2c::transformer::TransformerLM base;  // frozen: held, not registered
  g2c::nn::Linear combine{nullptr};      // W (2D, D)
  g2c::transformer::Block block{nullptr};
  g2c::transformer::LayerNorm ln{nullptr};
  torch::Tensor head_bias;  // (V)
};
TORCH_MODULE(MTPHead);

/// The head's cross-entropy: mtp_logits (B, T−1, V) from head(hidden[:, :-1], ids[:, 1:]), ids
/// (B, T). Drops the last row (no target two ahead), targets ids[:, 2:] -> the scalar mean over
/// B·(T−2) positions. ValueError unless the shapes line up that way and T >= 3.
torch::Tensor mtp_loss(const torch::Tensor& mtp_logits, const torch::Tensor& ids);

/// The shapes mtp_loss needs (its first line).
void check_mtp_loss_inputs(const torch::Tensor& mtp_logits, const torch::Tensor& ids);

/// Self-speculation's draft from ONE trunk pass over the last max_seq_len ids of ctx_ids (T):
/// {next1, next2}, next1 the base's greedy token (certain), next2 the head's guess at the one
/// after (the draft the next pass verifies). No autograd.
std::pair<std::int64_t, std::int64_t> mtp_propose(g2c::transformer::TransformerLMImpl& base,
                                                  MTPHeadImpl& head, const torch::Tensor& ctx_ids);

/// Self-speculation with the head, greedy, k 1: the model drafts for itself. The first pass gives
/// the base's token and the head's draft after it; then each base pass over the context and the
/// draft d verifies it and drafts again from the same hidden states:
///   hidden = base.hidden_states(ids ++ [d])          (1, T + 1, D), ids cropped to max_seq_len − 1
///   rows   = the tied head on the last two positions  (2, V): d's check and the bonus
///   {n, next} = greedy_verify([d], rows)              emit d when accepted, then next
///   d' = argmax head(hidden of next's predecessor, next)   the next draft, no extra trunk pass
/// One trunk pass per one or two tokens; the ids are module 11's greedy generate's inside the
/// window. ValueError for a prompt check_prompt_ids refuses or max_new_tokens < 0. No autograd.
SpeculativeResult mtp_generate(g2c::transformer::TransformerLMImpl& base, MTPHeadImpl& head,
                               const torch::Tensor& prompt_ids, std::int64_t max_new_tokens,
                               std::optional<std::int64_t> eos_id = std::nullopt);

}  // namespace g2c::specdec
