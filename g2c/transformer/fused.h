// Module 09, implemented for you — the fast path: the same TransformerLM, computed with LibTorch's
// fused kernels instead of the lesson's step-by-step formulas.
//
// Dimension legend: B batch, T sequence length, D embedding_dim, H num_heads, d = D / H, V vocab.
// What changes, block by block (the parameters and the maths stay the same):
// clang-format off
//   LayerNorm   mean, var, (x - mean) / √(var + eps), γ·x̂ + β    ->  torch::layer_norm
//   attention   softmax(mask(Q Kᵀ / √d)) V, (B, H, T, T) stored  ->  at::scaled_dot_product_attention
//   Linear      x @ W + b                                        ->  torch::addmm on (B·T, D) rows
//   FFN         exact-erf GELU between the two Linears           ->  the same, through addmm
// clang-format on
// The fused attention never stores the (B, H, T, T) weights for the backward pass, and each fused
// LayerNorm is one kernel forward and one backward instead of six elementwise ones.
//
// Generation (forward_cached) takes the same path, one position at a time, so a cached step
// dispatches a fraction of the operators of a full forward; fused_forward_extend feeds several
// positions through the cache in one pass.
//
// The lesson's path is the default everywhere: an exercise runs the fast path only when asked
// (`10_pretrain --fused`). tests/framework/fused_checks.cpp proves both paths give the same logits
// and gradients, so the fast path is a speed-up, never a different model.
//
//   auto model = g2c::transformer::fused_transformer_lm(options);  // a TransformerLM like any
//   other auto logits = model->forward(ids);                              // (B, T, V), fused
//   kernels
#pragma once

#include <ostream>

#include "g2c/core/torch.h"

#include "g2c/transformer/transformer_lm.h"

namespace g2c::transformer {

/// A TransformerLM whose forward() and forward_cached() run the fused kernels. It registers exactly
/// the parameters of TransformerLMImpl, in the same order, so checkpoints, artifacts and optimizers
/// cannot tell the two apart.
class FusedTransformerLMImpl : public TransformerLMImpl {
 public:
  using TransformerLMImpl::TransformerLMImpl;

  /// ids (B, T) int64 -> logits (B, T, V), equal to TransformerLMImpl::forward up to rounding.
  /// The same ValueErrors for bad ids or T > max_seq_len.
  torch::Tensor forward(const torch::Tensor& ids) override;

  /// One generation step with the fused kernels: the same logits (B, 1, V) as
  /// TransformerLMImpl::forward_cached, and the same cache, with the same ValueErrors.
  torch::Tensor forward_cached(const torch::Tensor& ids, KVCache& cache) override;

  void pretty_print(std::ostream& stream) const override;
};

/// A TransformerLM handle holding a FusedTransformerLMImpl: anything that takes a TransformerLM
/// (the Trainer, save_model_artifact, generate) takes it.
/// Example: fused_transformer_lm(TransformerLMOptions(/*vocab_size=*/264, /*embedding_dim=*/128,
///          /*num_layers=*/4, /*num_heads=*/4, /*max_seq_len=*/128)).
TransformerLM fused_transformer_lm(const TransformerLMOptions& options);

/// The lesson's Block, computed with the fused kernels: x (B, T, D) -> (B, T, D).
torch::Tensor fused_block_forward(BlockImpl& block, const torch::Tensor& x);

/// Its generation step: x (B, 1, D) -> (B, 1, D), appending this position's keys and values to
/// `cache` and attending over everything cached (no mask: the cache holds only the past).
torch::Tensor fused_block_forward_cached(BlockImpl& block, const torch::Tensor& x,
                                         g2c::attention::LayerKVCache& cache);

/// Several positions at once through the cache: ids (B, T_new) take positions cache.length() ..
/// cache.length() + T_new - 1; every block appends their keys and values, and each new position
/// attends over the cached past and the new positions up to itself. Returns logits (B, T_new, V),
/// equal (up to rounding) to the last T_new rows of model.forward() on the whole sequence, and to
/// T_new calls of forward_cached. One pass scores a whole block of draft tokens: speculative
/// decoding's verification (g2c/specdec). Runs the fused kernels whatever `model`'s own forward
/// is. ValueError when ids is not (B, T_new) with T_new >= 1 in [0, V), the cache has another
/// number of layers, or the positions would pass max_seq_len.
torch::Tensor fused_forward_extend(TransformerLMImpl& model, const torch::Tensor& ids,
                                   KVCache& cache);

}  // namespace g2c::transformer
