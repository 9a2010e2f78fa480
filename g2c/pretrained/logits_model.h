// Modules 16 and 18: SmolLM2 as the model constrained decoding drives. generate_json (module 18)
// asks a LogitsModel for the next token's logits and needs each token's text as a piece; this is
// the pretrained model's side of both, beside the model it adapts. A LlamaLogitsModel keeps a KV
// cache, so a generation step feeds one new token, not the whole context. LlamaScoringModel and
// LlamaEarlyExitModel score every position, as speculative decoding's target and drafter.
//
//   auto smol = g2c::pretrained::load_pretrained_model("SmolLM2-135M-Instruct");
//   const auto pieces = g2c::pretrained::vocab_pieces(smol.tokenizer,
//                                                     smol.model->options.vocab_size());
//   g2c::pretrained::LlamaLogitsModel model(*smol.model);
//   const auto ids = g2c::sampling::generate_json(model, prompt, pieces, options);
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "g2c/core/torch.h"
#include "g2c/sampling/constrained.h"
#include "g2c/sampling/logits_model.h"
#include "g2c/transformer/kv_cache.h"

namespace g2c::pretrained {

class LlamaModelImpl;
class PretrainedTokenizer;

/// A Llama model (SmolLM2) as a LogitsModel, with its KV cache: a context that extends the last
/// one feeds only its new ids, so a generation step costs one token's forward pass, not the
/// whole context's. Any other context starts the cache again. forward returns the last
/// position only, (1, 1, V).
class LlamaLogitsModel : public g2c::sampling::LogitsModel {
 public:
  explicit LlamaLogitsModel(LlamaModelImpl& model);
  torch::Tensor forward(const torch::Tensor& context) override;
  std::int64_t max_seq_len() const override;
  std::int64_t vocab_size() const override;
  torch::Device device() const override;

 private:
  LlamaModelImpl* model_;
  g2c::transformer::KVCache cache_;
  std::vector<std::int64_t> cached_ids_;  // the ids whose keys and values cache_ holds
};

/// A Llama model (SmolLM2) scoring every position, dense or packed alike: forward(context (1, T))
/// is the model's forward, (1, T, V); the cached forward continues a KV cache of the caller's
/// (speculative decoding's verification pass, rolled back with KVCache::truncate).
class LlamaScoringModel : public g2c::sampling::CachedScoringModel {
 public:
  using g2c::sampling::CachedScoringModel::forward;
  explicit LlamaScoringModel(LlamaModelImpl& model) : model_(&model) {}
  torch::Tensor forward(const torch::Tensor& context) override;
  torch::Tensor forward(const torch::Tensor& ids, g2c::transformer::KVCache& cache) override;
  /// One empty layer cache per block, room for 256 positions made at the first append (doubled as
  /// needed): SmolLM2's whole 8,192 would reserve 377 MB.
  g2c::transformer::KVCache empty_cache() const override;
  std::int64_t max_seq_len() const override;
  std::int64_t vocab_size() const override;
  torch::Device device() const override;

 private:
  LlamaModelImpl* model_;
};

/// A Llama model's early exit: its first num_blocks blocks, then the final norm and the tied head,
/// no training — the model's own lower layers as speculative decoding's drafter (SmolLM2: N of
/// 30). Every position scored, with a cache of num_blocks layers. ValueError unless
/// 1 <= num_blocks <= the model's blocks. At num_blocks = all it is LlamaScoringModel.
class LlamaEarlyExitModel : public g2c::sampling::CachedScoringModel {
 public:
  using g2c::sampling::CachedScoringModel::forward;
  LlamaEarlyExitModel(LlamaModelImpl& model, std::int64_t num_blocks);
  torch::Tensor forward(const torch::Tensor& context) override;
  torch::Tensor forward(const torch::Tensor& ids, g2c::transformer::KVCache& cache) override;
  /// num_blocks empty layer caches, room for 256 positions at first (doubled as needed).
  g2c::transformer::KVCache empty_cache() const override;
  std::int64_t max_seq_len() const override;
  std::int64_t vocab_size() const override;
  torch::Device device() const override;
  std::int64_t num_blocks() const { return num_blocks_; }

 private:
  LlamaModelImpl* model_;
  std::int64_t num_blocks_;
};

/// SmolLM2's tokenizer as generate_json's pieces: each id's bytes (decode of the id alone, part of
/// a character for some byte tokens), and "" for the control tokens (<|im_start|>, <|im_end|>,
/// ...), which mark turns and are no text. ValueError for vocab_size outside
/// [0, tokenizer.vocab_size()].
std::vector<std::string> vocab_pieces(const PretrainedTokenizer& tokenizer,
                                      std::int64_t vocab_size);

}  // namespace g2c::pretrained
