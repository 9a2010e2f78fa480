// Module 07 — single-head causal self-attention, the hinge of the course.
//
// Dimension legend: B batch, T sequence length, D embedding_dim.
// Pipeline: x (B, T, D) -> Q, K, V = q_proj(x), k_proj(x), v_proj(x)        each (B, T, D)
//           scores = Q Kᵀ / √D                                               (B, T, T)
//           causal: -inf above the diagonal, *before* the softmax
//           weights = softmax over the keys (last dim)                       (B, T, T)
//           out_proj(weights @ V)                                            (B, T, D)
#pragma once

#include <cstdint>

#include "g2c/core/torch.h"

#include "g2c/nn/linear.h"
#include "g2c/nn/module.h"

namespace g2c::attention {

struct SelfAttentionOptions {
  explicit SelfAttentionOptions(std::int64_t embedding_dim) : embedding_dim_(embedding_dim) {}
  TORCH_ARG(std::int64_t, embedding_dim);
  /// true: a position sees only itself and the past (a language model); false: every position.
  TORCH_ARG(bool, causal) = true;
};

class SelfAttentionImpl : public g2c::nn::Module {
 public:
  explicit SelfAttentionImpl(std::int64_t embedding_dim, bool causal = true)
      : SelfAttentionImpl(SelfAttentionOptions(embedding_dim).causal(causal)) {}
  explicit SelfAttentionImpl(const SelfAttentionOptions& options);

  /// Registers q_proj, k_proj, v_proj, out_proj (each Linear(D, D): W then b), in that order.
  void reset();

  /// x (B, T, D) -> (B, T, D): every position becomes a weighted mix of the value vectors of the
  /// positions it may see. Built on attention_weights, so the heatmaps show what forward uses.
  torch::Tensor forward(const torch::Tensor& x) override;

  /// x (B, T, D) -> weights (B, T, T): row i is where position i looks; rows sum to 1; with
  /// causal = true everything above the diagonal is 0.
  torch::Tensor attention_weights(const torch::Tensor& x);

  /// Boolean (T, T), true = blocked (strictly above the diagonal), built on `device` (no
  /// default: pass x.device(), or the mask stays on the CPU while x is on a GPU).
  /// Example: causal_mask(3, x.device()) -> [[F, T, T], [F, F, T], [F, F, F]].
  static torch::Tensor causal_mask(std::int64_t seq_len, torch::Device device);

  /// ValueError unless x is (B, T, D) with this layer's D.
  void check_input(const torch::Tensor& x) const;

  void pretty_print(std::ostream& stream) const override;

  SelfAttentionOptions options;
  std::int64_t embedding_dim;
  bool causal;
  g2c::nn::Linear q_proj{nullptr};
  g2c::nn::Linear k_proj{nullptr};
  g2c::nn::Linear v_proj{nullptr};
  g2c::nn::Linear out_proj{nullptr};
};
TORCH_MODULE(SelfAttention);

}  // namespace g2c::attention
