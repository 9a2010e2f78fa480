// Module 16 — grouped-query attention (GQA) with rotary positions and the KV cache: the attention
// of Llama-style models, built from modules 05 (RoPE), 07 (scaled dot-product attention) and 08
// (the per-layer KV cache).
//
// Dimension legend: B batch, T new positions, S = start + T positions attended to (start = what
// the cache held before), D embedding_dim, H query heads, G key/value heads (H divisible by G),
// d = D / H head_dim, n_rep = H / G query heads per key/value head. SmolLM2: D 576, H 9, G 3, d 64.
//   q = x @ Wq -> (B, H, T, d);  k = x @ Wk, v = x @ Wv -> (B, G, T, d)
//   q, k rotated at positions start .. start+T-1 (module 05's tables and rotate_half)
//   cache.append(k, v)                    the cache stores G heads, not H: H/G times less memory
//   k, v = repeat_kv(cache.k, n_rep), …   (B, G, S, d) -> (B, H, S, d)
//   out  = softmax(q kᵀ / √d, causal) v   (B, H, T, d)   module 07's function
//   y    = merge heads (B, T, H·d) @ Wo   (B, T, D)
// Multi-head attention (module 08) is the case G = H, multi-query attention the case G = 1.
//
// Rotary convention: "split halves" (dim i pairs with dim i + d/2), module 05's. A GGUF file
// written by llama.cpp's converter stores Wq and Wk with each head's rows permuted for the
// interleaved convention (dim 2i pairs with 2i + 1); load_llama (llama.h) puts them back.
#pragma once

#include <cstdint>
#include <optional>
#include <ostream>

#include "g2c/core/torch.h"

#include "g2c/attention/layer_kv_cache.h"
#include "g2c/nn/module.h"
#include "g2c/pretrained/packed_weight.h"

namespace g2c::pretrained {

/// x (B, G, S, d) -> (B, G·n_rep, S, d): key/value head g repeated n_rep times in a row, so that
/// query head h reads key/value head h / n_rep. n_rep == 1 returns x itself.
/// Example: heads [a, b] with n_rep 2 -> [a, a, b, b] (not [a, b, a, b]).
torch::Tensor repeat_kv(const torch::Tensor& x, std::int64_t n_rep);

/// Boolean (T, start + T), true = blocked: the query at position start + i may look at every key
/// up to and including its own position. start = 0 gives module 07's square causal mask.
torch::Tensor causal_mask_from(std::int64_t start, std::int64_t seq_len, torch::Device device);

struct GroupedQueryAttentionOptions {
  GroupedQueryAttentionOptions(std::int64_t embedding_dim, std::int64_t num_heads,
                               std::int64_t num_kv_heads)
      : embedding_dim_(embedding_dim), num_heads_(num_heads), num_kv_heads_(num_kv_heads) {}
  TORCH_ARG(std::int64_t, embedding_dim);       // D
  TORCH_ARG(std::int64_t, num_heads);           // H, query heads
  TORCH_ARG(std::int64_t, num_kv_heads);        // G, key/value heads; H % G == 0
  TORCH_ARG(std::int64_t, max_seq_len) = 2048;  // M, rows of the rotary tables
  TORCH_ARG(double, rope_base) = 10000.0;       // SmolLM2: 100000
};

class GroupedQueryAttentionImpl : public g2c::nn::Module {
 public:
  /// Registers Wq, Wk, Wv, Wo (drawn like module 03's Linear) and the rotary tables `cos`, `sin`
  /// (M, d) as buffers. ValueError for sizes that do not divide (D % H, H % G, odd d).
  explicit GroupedQueryAttentionImpl(const GroupedQueryAttentionOptions& options);

  /// x (B, T, D) -> (B, T, D), causal, positions from 0, no cache.
  torch::Tensor forward(const torch::Tensor& x) override;
  /// x (B, T, D) at positions start .. start + T - 1, start = cache.length(); appends this call's
  /// keys and values to `cache` (G heads) and attends over all of it. ValueError when the
  /// positions would pass M.
  torch::Tensor forward(const torch::Tensor& x, g2c::attention::LayerKVCache& cache);

  /// x (B, H or G, T, d) rotated as positions start .. start + T - 1.
  torch::Tensor rotate(const torch::Tensor& x, std::int64_t start) const;

  /// Uses `cos` and `sin` (M, d) instead of this layer's own tables: a model's blocks share one
  /// pair, which at SmolLM2's 8192 positions saves 4 MB per block.
  void share_rotary_tables(const torch::Tensor& cos_table, const torch::Tensor& sin_table);

  void pretty_print(std::ostream& stream) const override;

  GroupedQueryAttentionOptions options;
  std::int64_t head_dim;  // d
  torch::Tensor Wq;       // (D, H·d)
  torch::Tensor Wk;       // (D, G·d)
  torch::Tensor Wv;       // (D, G·d)
  torch::Tensor Wo;       // (H·d, D)
  torch::Tensor cos;      // (M, d), a buffer, module 05's build_cos_sin(M, d, rope_base)
  torch::Tensor sin;      // (M, d)

  /// The fast path (load_llama with LoadOptions().packed(true)): the four projections kept in the
  /// file's blocks (packed_weight.h), Wq and Wk already un-permuted; Wq..Wo are then empty.
  struct PackedProjections {
    PackedWeight q, k, v, o;  // (H·d, D), (G·d, D), (G·d, D), (D, H·d) as the file stores them
  };
  std::optional<PackedProjections> packed;

 private:
  torch::Tensor attend(const torch::Tensor& x, g2c::attention::LayerKVCache* cache);
};
TORCH_MODULE(GroupedQueryAttention);

}  // namespace g2c::pretrained
