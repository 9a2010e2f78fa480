// Module 08 — multi-head attention (and forward_cached, which reads a LayerKVCache).
//
// Dimension legend: B batch, T sequence length, D embedding_dim, H num_heads, d = D / H head_dim.
// Pipeline: x (B, T, D) -> Q, K, V                                   each (B, T, D)
//           split heads: view (B, T, H, d), transpose -> (B, H, T, d)
//           scores = Q Kᵀ / √d                                        (B, H, T, T)
//           causal mask (T, T) broadcast over B and H; softmax; @ V   (B, H, T, d)
//           merge heads: transpose -> (B, T, H, d), contiguous, view  (B, T, D)
//           out_proj                                                  (B, T, D)
#pragma once

#include <cstdint>

#include "g2c/core/torch.h"

#include "g2c/attention/layer_kv_cache.h"
#include "g2c/nn/linear.h"
#include "g2c/nn/module.h"

namespace g2c::attention {

struct MultiHeadAttentionOptions {
  MultiHeadAttentionOptions(std::int64_t embedding_dim, std::int64_t num_heads)
      : embedding_dim_(embedding_dim), num_heads_(num_heads) {}
  TORCH_ARG(std::int64_t, embedding_dim);
  TORCH_ARG(std::int64_t, num_heads);
  TORCH_ARG(bool, causal) = true;
};

class MultiHeadAttentionImpl : public g2c::nn::Module {
 public:
  MultiHeadAttentionImpl(std::int64_t embedding_dim, std::int64_t num_heads, bool causal = true)
      : MultiHeadAttentionImpl(MultiHeadAttentionOptions(embedding_dim, num_heads).causal(causal)) {
  }
  explicit MultiHeadAttentionImpl(const MultiHeadAttentionOptions& options);

  /// Registers q_proj, k_proj, v_proj, out_proj (each Linear(D, D)): the parameter count
  /// 4(D² + D) does not depend on H.
  void reset();

  /// x (B, T, D) -> (B, T, D). Built on attention_weights (one code path).
  torch::Tensor forward(const torch::Tensor& x) override;

  /// x (B, T, D) -> weights (B, H, T, T): one attention pattern per head, scaled by √head_dim.
  torch::Tensor attention_weights(const torch::Tensor& x);

  /// One generation step: x (B, 1, D) is the newest token. Appends its K/V to `cache` and attends
  /// over everything cached (no mask needed: the cache holds only the past). Equals the last row
  /// of forward() on the whole sequence. ValueError for a non-causal layer or more than one token.
  torch::Tensor forward_cached(const torch::Tensor& x, LayerKVCache& cache);

  /// Boolean (T, T), true = blocked (strictly above the diagonal), built on `device`, as in
  /// module 07. Example: causal_mask(T, x.device()).
  static torch::Tensor causal_mask(std::int64_t seq_len, torch::Device device);

  /// ValueError unless x is (B, T, D) with this layer's D.
  void check_input(const torch::Tensor& x) const;

  void pretty_print(std::ostream& stream) const override;

  MultiHeadAttentionOptions options;
  std::int64_t embedding_dim;
  std::int64_t num_heads;
  std::int64_t head_dim;
  bool causal;
  g2c::nn::Linear q_proj{nullptr};
  g2c::nn::Linear k_proj{nullptr};
  g2c::nn::Linear v_proj{nullptr};
  g2c::nn::Linear out_proj{nullptr};
};
TORCH_MODULE(MultiHeadAttention);

}  // namespace g2c::attention
