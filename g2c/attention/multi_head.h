// Module 08 — multi-head attention (and forward_cached, which reads a LayerKVCache).
//
// Dimension legend: B batch, T sequence length, D embedding_dim, H num_heads, d = D / H head_dim.
// Pipeline: x (B, T, D) -> Q, K, V                                   each (B, T, D)
//           split heads: view (B, T, H, d), transpose -> (B, H, T, d)
//           scores = Q Kᵀ / √d                                        (B, H, T, T)
//           causal mask (T, T) broadcast over B and H; softmax; @ V   (B, H, T, d)
//           merge heads: transpose -> (B, T, H, d), contiguous, view  (B, T, D)
//           out_proj                                                  (B, T, D)
//
// The variants other courses teach are provided beside the lesson, in
// multi_head_variants_provided.cpp (their masks in g2c/attention/masks.h), and never call the
// student's forward(x) or attention_weights(x): a caller-supplied mask, cross-attention (T_q
// queries from one sequence, T_k keys from another), dropout on the attention weights, and
// nanoGPT's packed QKV projection.
#pragma once

#include <cstdint>
#include <utility>

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
  /// Probability of zeroing each attention weight (the survivors scaled by 1 / (1 - p)) in
  /// training mode, in the provided masked and cross-attention forwards only; identity in eval()
  /// and in the lesson's forward(x). In [0, 1).
  TORCH_ARG(double, dropout) = 0.0;
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

  // The variants other courses teach (multi_head_variants_provided.cpp). A mask is boolean,
  // true = blocked, or 0/1 with 0 = blocked (converted once, g2c/attention/masks.h), shaped
  // (T_q, T_k), (B, T_q, T_k), (B, 1, T_q, T_k) or (B, 1, 1, T_k), broadcast over the heads; pass
  // {} for none. Q, K and V come from pack_qkv() (nanoGPT's layout), out_proj from its parameters:
  // these paths never call the student's code, except a projection that is a Linear subclass
  // (module 13b's LoRALinear), which runs its own forward. A query whose every key is blocked
  // gets zero weights and a zero mix, so its output is out_proj's bias, never NaN.
  // options.dropout applies to the weights in training mode.
  //
  // subtle: they are not overloads of forward. LibTorch's ModuleHolder finds forward by its
  // address (&Impl::forward); with two of them `attention(x)` would no longer compile.

  /// Self-attention with a caller's mask: x (B, T, D) -> (B, T, D). The mask is combined with the
  /// causal mask when the layer is causal. With mask {} it computes forward(x) in the packed
  /// layout. Example: attention->forward_masked(x, padding_mask(lengths, x.size(1))).
  torch::Tensor forward_masked(const torch::Tensor& x, const torch::Tensor& mask);

  /// Cross-attention: queries from x_q (B, T_q, D), keys and values from x_kv (B, T_k, D) ->
  /// (B, T_q, D); never causal (the two sequences' positions do not line up), whatever `causal`
  /// says. `mask` (T_q, T_k)-broadcastable, or {}. Example: forward_cross(decoder_x, encoder_out).
  torch::Tensor forward_cross(const torch::Tensor& x_q, const torch::Tensor& x_kv,
                              const torch::Tensor& mask = {});

  /// The weights forward_masked(x, mask) mixes V with: (B, H, T, T). In training mode with
  /// dropout > 0, after a fresh dropout draw (zeros, survivors scaled by 1 / (1 - p)).
  torch::Tensor attention_weights_masked(const torch::Tensor& x, const torch::Tensor& mask);

  /// The weights of forward_cross(x_q, x_kv, mask): (B, H, T_q, T_k), dropout as above.
  torch::Tensor attention_weights_cross(const torch::Tensor& x_q, const torch::Tensor& x_kv,
                                        const torch::Tensor& mask = {});

  /// nanoGPT's c_attn, built from the three projections: {W (D, 3D) = [W_q | W_k | W_v],
  /// b (3D) = [b_q | b_k | b_v]}, so x @ W + b split in three along the last dim is Q, K, V.
  /// Differentiable (a cat of the parameters, gradients reach q_proj, k_proj and v_proj), a copy.
  /// nanoGPT's c_attn.weight is (3D, D): the transpose of W.
  std::pair<torch::Tensor, torch::Tensor> pack_qkv() const;

  /// The inverse: copies a packed W (D, 3D) and b (3D) into q_proj, k_proj and v_proj.
  /// ValueError for other shapes.
  void load_packed_qkv(const torch::Tensor& W, const torch::Tensor& b);

  MultiHeadAttentionOptions options;
  std::int64_t embedding_dim;
  std::int64_t num_heads;
  std::int64_t head_dim;
  bool causal;
  g2c::nn::Linear q_proj{nullptr};
  g2c::nn::Linear k_proj{nullptr};
  g2c::nn::Linear v_proj{nullptr};
  g2c::nn::Linear out_proj{nullptr};

 private:
  /// The one path of the variants: x_q (B, T_q, D), x_kv (B, T_k, D) (the same tensor for
  /// self-attention: one packed projection), `blocked` fitted by fit_mask or undefined ->
  /// {output (B, T_q, D), weights (B, H, T_q, T_k)}.
  std::pair<torch::Tensor, torch::Tensor> attend(const torch::Tensor& x_q,
                                                 const torch::Tensor& x_kv,
                                                 const torch::Tensor& blocked);
};
TORCH_MODULE(MultiHeadAttention);

}  // namespace g2c::attention
