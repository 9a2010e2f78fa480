// Module 16, implemented for you — a Llama-style model assembled from the course's pieces, and its
// weights read from a GGUF file: SmolLM2-135M-Instruct runs through the code you wrote.
//
// Dimension legend: B batch, T positions, D embedding_dim, V vocab_size, L num_layers.
//   h = E[ids]                                          (B, T, D)   token embedding, no positions
//   L times:  h = h + attention(rms_norm(h))            (B, T, D)   grouped_query_attention.h
//             h = h + swiglu(rms_norm(h))               (B, T, D)   swiglu.h
//   logits = rms_norm(h) @ Eᵀ                           (B, T, V)   the head tied to E
// Against the course's GPT (module 09): RMSNorm for LayerNorm, SwiGLU for the GELU MLP, rotary
// positions inside attention for learned absolute ones, key/value heads shared by groups of query
// heads, no biases anywhere — and the same pre-norm residual stream.
//
//   auto model = g2c::pretrained::load_llama(g2c::pretrained::pretrained_model_file(
//       "SmolLM2-135M-Instruct"));
//   auto cache = model->empty_kv_cache();
//   auto logits = model->forward(ids, cache);  // ids (1, T) int64 -> (1, T, V)
#pragma once

#include <cstdint>
#include <filesystem>
#include <optional>
#include <ostream>
#include <string>
#include <vector>

#include "g2c/core/torch.h"

#include "g2c/nn/module.h"
#include "g2c/pretrained/catalog.h"
#include "g2c/pretrained/gguf.h"
#include "g2c/pretrained/grouped_query_attention.h"
#include "g2c/pretrained/packed_weight.h"
#include "g2c/pretrained/rms_norm.h"
#include "g2c/pretrained/swiglu.h"
#include "g2c/transformer/kv_cache.h"

namespace g2c::pretrained {

struct LlamaOptions {
  TORCH_ARG(std::int64_t, vocab_size) = 49152;   // V
  TORCH_ARG(std::int64_t, embedding_dim) = 576;  // D
  TORCH_ARG(std::int64_t, num_layers) = 30;      // L
  TORCH_ARG(std::int64_t, num_heads) = 9;        // H
  TORCH_ARG(std::int64_t, num_kv_heads) = 3;     // G
  TORCH_ARG(std::int64_t, hidden_dim) = 1536;    // F, SwiGLU
  TORCH_ARG(std::int64_t, max_seq_len) = 8192;   // M, the context the model was trained for
  TORCH_ARG(double, rms_eps) = 1e-5;
  TORCH_ARG(double, rope_base) = 100000.0;

 public:
  /// The options a `llama` GGUF file states (llama.block_count, .embedding_length, …). ValueError
  /// naming the file when general.architecture is not "llama" or a size is missing or impossible.
  static LlamaOptions from_gguf(const GGUFFile& file);
  std::int64_t head_dim() const { return embedding_dim() / num_heads(); }
  /// Parameters of a model of these options with a tied head: 134,515,008 for SmolLM2-135M.
  std::int64_t num_parameters() const;
};

/// How load_llama holds the weights.
struct LoadOptions {
  /// false: every weight dequantized to float32 on load, the model you built computing with
  /// LibTorch's matmul (the lesson's path; any device). true: the fast path, the matrices kept in
  /// the file's blocks and multiplied by packed_weight.h's kernels (CPU only): about a fifth of
  /// the memory, and decoding about 3 times faster on one core. Norms, rotary positions, repeat_kv,
  /// attention and the cache are your code either way.
  TORCH_ARG(bool, packed) = false;
};

class LlamaBlockImpl : public g2c::nn::Module {
 public:
  explicit LlamaBlockImpl(const LlamaOptions& options);

  /// x (B, T, D) -> (B, T, D), positions from 0, no cache.
  torch::Tensor forward(const torch::Tensor& x) override;
  /// The same at positions cache.length() .., appending to `cache`.
  torch::Tensor forward(const torch::Tensor& x, g2c::attention::LayerKVCache& cache);
  /// The feed-forward half's product: ffn(x), or its packed fast path when the block holds one.
  torch::Tensor feed_forward(const torch::Tensor& x);

  RMSNorm attention_norm{nullptr};
  GroupedQueryAttention attention{nullptr};
  RMSNorm ffn_norm{nullptr};
  SwiGLU ffn{nullptr};
};
TORCH_MODULE(LlamaBlock);

class LlamaModelImpl : public g2c::nn::Module {
 public:
  /// Random weights of the right shapes (tests, and the exercises that swap a piece); a real model
  /// comes from load_llama.
  explicit LlamaModelImpl(const LlamaOptions& options);

  /// ids (B, T) int64 -> logits (B, T, V), positions from 0.
  torch::Tensor forward(const torch::Tensor& ids) override;
  /// The same at positions cache.length() .. (a prompt into an empty cache, then one token per
  /// step), appending every block's keys and values to `cache`.
  torch::Tensor forward(const torch::Tensor& ids, g2c::transformer::KVCache& cache);
  /// The final normalized hidden states (B, T, D), before the head (what /api/embed pools).
  /// num_blocks runs only the first that many blocks before the final norm (an early exit, as
  /// speculative decoding's drafter); the cache, if any, then holds that many layers.
  torch::Tensor hidden_states(const torch::Tensor& ids, g2c::transformer::KVCache* cache = nullptr,
                              std::optional<std::int64_t> num_blocks = std::nullopt);
  /// h (…, D) -> logits (…, V): the head tied to the token embedding, h @ Eᵀ. Generation applies
  /// it to the last position only: a prompt's other logits would cost T - 1 products with the
  /// (V, D) embedding and be thrown away.
  torch::Tensor head(const torch::Tensor& h) const;

  /// One empty layer cache per block, with room for `capacity` positions (default M).
  g2c::transformer::KVCache empty_kv_cache(std::int64_t capacity = 0) const;

  /// ValueError unless ids is (B, T) int64 with every id in [0, V) and the positions fit in M.
  void check_ids(const torch::Tensor& ids, std::int64_t start) const;

  void pretty_print(std::ostream& stream) const override;

  /// Whether the weights are packed (LoadOptions::packed): CPU only, dense tensors empty.
  bool packed() const { return packed_embedding.has_value(); }

  LlamaOptions options;
  torch::Tensor token_embedding;  // (V, D); the head reads it transposed
  /// On the fast path, the token embedding (V, D) in the file's blocks: lookup decodes its rows,
  /// the tied head multiplies by it; token_embedding is then empty.
  std::optional<PackedWeight> packed_embedding;
  torch::nn::ModuleList blocks;
  RMSNorm final_norm{nullptr};
  std::vector<LlamaBlock> block_list;  // the same blocks, typed
};
TORCH_MODULE(LlamaModel);

/// What load_llama did, for the exercises and the tools.
struct LoadReport {
  double seconds = 0.0;           // open, dequantize (or pack), un-permute
  std::int64_t tensors = 0;       // 272 for SmolLM2
  std::int64_t file_bytes = 0;    // the GGUF file's size
  std::int64_t weight_bytes = 0;  // the weights held in memory: float32, or blocks when packed
};

/// The model of a `llama` GGUF file, its weights dequantized to float32 (F32, F16, Q8_0, Q4_0,
/// Q4_1) or, with options.packed(), kept in their blocks; Wq and Wk put back into the split-halves
/// rotary convention, no gradients. Every tensor is checked against the options' shapes before the
/// model is built: ValueError naming the file and the tensor for a missing one or a wrong shape,
/// nothing half-loaded.
LlamaModel load_llama(const GGUFFile& file, LoadReport* report = nullptr,
                      const LoadOptions& options = {});
LlamaModel load_llama(const std::filesystem::path& path, LoadReport* report = nullptr,
                      const LoadOptions& options = {});

/// llama.cpp's converter permutes the rows of Wq and Wk (out, in) head by head for the interleaved
/// rotary convention: within each head, row 2i + p of the file is row p·d/2 + i of the original.
/// Returns the original (out, in) rows. `heads` is H for Wq and G for Wk.
torch::Tensor unpermute_rotary_rows(const torch::Tensor& weight, std::int64_t heads);

}  // namespace g2c::pretrained
