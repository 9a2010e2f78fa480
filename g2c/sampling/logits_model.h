// Models as the decoding loops see them: logits for a context, whatever computes them.
//
// Dimension legend: T context length, T_new new positions, V vocab_size.
//   LogitsModel         context (1, T) -> (1, T', V), the last row scoring the next token
//                       (module 18's generate_json; T' may be 1)
//   ScoringModel        context (1, T) -> (1, T, V), every row: row t scores the token after
//                       context[t] (speculative decoding verifies a block of draft tokens with one
//                       pass, RL scores a completion's every token)
//   CachedScoringModel  the same, continued from a KV cache: ids (1, T_new) at positions
//                       cache.length() .. -> (1, T_new, V); KVCache::truncate rolls rejected
//                       positions back (g2c/specdec's cached fast path)
// Adapters: TransformerLogitsModel (module 09's TransformerLM, cached), ForwardScoringModel<Impl>
// (any course model with forward, max_seq_len and vocab_size: the hybrid and MoE models), and
// SmolLM2's in g2c/pretrained/logits_model.h. A test's fake implements the interface directly.
#pragma once

#include <cstdint>

#include "g2c/core/torch.h"
#include "g2c/transformer/kv_cache.h"
#include "g2c/transformer/transformer_lm.h"

namespace g2c::sampling {

/// A model as generate_json() sees it: logits for a context, the longest context it takes, its
/// vocabulary size and its device. Module 11's generate() takes a TransformerLM; this interface
/// lets the same loop drive the course's model, SmolLM2 and a test's fake.
class LogitsModel {
 public:
  virtual ~LogitsModel() = default;
  /// context (1, T) int64 on device(), 1 <= T <= max_seq_len() -> logits (1, T', V) on any
  /// device, whose last position scores the token after the context. T' is T, or 1 for a model
  /// that computes the last position only.
  virtual torch::Tensor forward(const torch::Tensor& context) = 0;
  virtual std::int64_t max_seq_len() const = 0;
  virtual std::int64_t vocab_size() const = 0;
  virtual torch::Device device() const = 0;
  torch::Tensor operator()(const torch::Tensor& context) { return forward(context); }
};

/// A LogitsModel that scores every position: forward(context (1, T)) returns (1, T, V), row t the
/// logits of the token after context[t], as a language model's training forward does.
class ScoringModel : public LogitsModel {};

/// A ScoringModel that also continues from a KV cache of its own layout.
class CachedScoringModel : public ScoringModel {
 public:
  using ScoringModel::forward;
  /// An empty cache for one sequence, with room for max_seq_len() positions.
  virtual g2c::transformer::KVCache empty_cache() const = 0;
  /// ids (1, T_new) on device() at positions cache.length() .. cache.length() + T_new - 1 ->
  /// logits (1, T_new, V), appending their keys and values to `cache`; equal (up to rounding) to
  /// the last T_new rows of forward() on the whole sequence. ValueError past max_seq_len().
  virtual torch::Tensor forward(const torch::Tensor& ids, g2c::transformer::KVCache& cache) = 0;
};

/// Module 09's TransformerLM: forward is the model's own forward (the lesson's, or the fused one
/// of a FusedTransformerLM); the cached forward is the fused kernels' fused_forward_extend, one
/// pass for a whole block of new positions.
class TransformerLogitsModel : public CachedScoringModel {
 public:
  using CachedScoringModel::forward;
  explicit TransformerLogitsModel(g2c::transformer::TransformerLMImpl& model) : model_(&model) {}
  torch::Tensor forward(const torch::Tensor& context) override { return model_->forward(context); }
  torch::Tensor forward(const torch::Tensor& ids, g2c::transformer::KVCache& cache) override;
  g2c::transformer::KVCache empty_cache() const override { return model_->empty_kv_cache(); }
  std::int64_t max_seq_len() const override { return model_->max_seq_len; }
  std::int64_t vocab_size() const override { return model_->vocab_size; }
  torch::Device device() const override { return model_->device(); }

 private:
  g2c::transformer::TransformerLMImpl* model_;
};

/// Any course model (a g2c::nn::Module) whose forward takes ids (B, T) to logits (B, T, V) and
/// which has max_seq_len and vocab_size members (g2c::linear_attention::HybridTransformerLMImpl,
/// g2c::moe::MoETransformerLMImpl): a ScoringModel without a cache.
/// Example: ForwardScoringModel<g2c::moe::MoETransformerLMImpl> scorer(*moe_model).
template <typename ModelImpl>
class ForwardScoringModel : public ScoringModel {
 public:
  explicit ForwardScoringModel(ModelImpl& model) : model_(&model) {}
  torch::Tensor forward(const torch::Tensor& context) override { return model_->forward(context); }
  std::int64_t max_seq_len() const override { return model_->max_seq_len; }
  std::int64_t vocab_size() const override { return model_->vocab_size; }
  torch::Device device() const override { return model_->device(); }

 private:
  ModelImpl* model_;
};

}  // namespace g2c::sampling
