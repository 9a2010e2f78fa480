// Module 09 — the transformer block: the unit a GPT stacks N times. Pre-norm, with a residual
// connection around each of its two sublayers:
//
//   x = x + attn(ln1(x))      attention: positions talk to each other      (B, T, D)
//   x = x + ffn(ln2(x))       feed-forward: each position thinks alone     (B, T, D)
//
// Dimension legend: B batch, T sequence length, D embedding_dim, H_h num_heads, H hidden_dim.
// Only each sublayer's *input* is normalized; the residual stream x itself flows through
// unnormalized, which is what lets gradients reach the first block of a deep stack. ln1 and ln2 are
// two layers with their own gamma and beta. (The 2017 paper's post-norm, x = ln(x + sublayer(x)),
// is the other order; the field moved to pre-norm because it trains stably at depth.)
#pragma once

#include <cstdint>
#include <ostream>

#include "g2c/core/torch.h"

#include "g2c/attention/multi_head.h"
#include "g2c/nn/module.h"
#include "g2c/transformer/ffn.h"
#include "g2c/transformer/layer_norm.h"

namespace g2c::transformer {

struct BlockOptions {
  BlockOptions(std::int64_t embedding_dim, std::int64_t num_heads)
      : embedding_dim_(embedding_dim), num_heads_(num_heads) {}
  TORCH_ARG(std::int64_t, embedding_dim);  // D
  TORCH_ARG(std::int64_t, num_heads);      // must divide D
  /// The feed-forward width; 0 means 4·D.
  TORCH_ARG(std::int64_t, hidden_dim) = 0;
  /// Passed to the attention: true for a language model (a position sees only the past).
  TORCH_ARG(bool, causal) = true;
};

class BlockImpl : public g2c::nn::Module {
 public:
  BlockImpl(std::int64_t embedding_dim, std::int64_t num_heads)
      : BlockImpl(BlockOptions(embedding_dim, num_heads)) {}
  /// ValueError for non-positive sizes or a num_heads that does not divide embedding_dim.
  explicit BlockImpl(const BlockOptions& options);

  /// Registers ln1, attn (module 08's MultiHeadAttention(D, num_heads, causal)), ln2, ffn, in that
  /// order: 2 + 8 + 2 + 4 = 16 parameter tensors.
  void reset();

  /// x (B, T, D) -> (B, T, D): x + attn(ln1(x)), then that + ffn(ln2(that)). With both sublayers'
  /// last projections zeroed the block is the identity.
  torch::Tensor forward(const torch::Tensor& x) override;

  /// One generation step: x (B, 1, D) is the newest position's residual stream. Attention appends
  /// its K/V to `cache` and reads the cached past; LayerNorm and the FFN work per position and need
  /// no cache. Equals the last row of forward() on the whole sequence.
  torch::Tensor forward_cached(const torch::Tensor& x, g2c::attention::LayerKVCache& cache);

  /// ValueError unless x is (B, T, D) with this block's D.
  void check_input(const torch::Tensor& x) const;

  void pretty_print(std::ostream& stream) const override;

  BlockOptions options;
  std::int64_t embedding_dim;
  std::int64_t num_heads;
  std::int64_t hidden_dim;
  bool causal;
  LayerNorm ln1{nullptr};
  g2c::attention::MultiHeadAttention attn{nullptr};
  LayerNorm ln2{nullptr};
  FeedForward ffn{nullptr};
};
TORCH_MODULE(Block);

}  // namespace g2c::transformer
