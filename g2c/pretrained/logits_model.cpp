// SmolLM2 as generate_json's LogitsModel (with its KV cache), as a ScoringModel, and its
// vocabulary as pieces.
#include "g2c/pretrained/logits_model.h"

#include <algorithm>

#include <fmt/format.h>

#include "g2c/core/errors.h"
#include "g2c/core/shapes.h"
#include "g2c/pretrained/llama.h"
#include "g2c/pretrained/tokenizer.h"

namespace g2c::pretrained {

LlamaLogitsModel::LlamaLogitsModel(LlamaModelImpl& model)
    : model_(&model), cache_(model.empty_kv_cache(/*capacity=*/256)) {}

torch::Tensor LlamaLogitsModel::forward(const torch::Tensor& context) {
  if (context.dim() != 2 || context.size(0) != 1 || context.size(1) == 0) {
    throw ValueError(fmt::format("LlamaLogitsModel: expected a context (1, T) with T >= 1; got {}",
                                 g2c::describe_shape(context)));
  }
  const auto ids = context.to(torch::kCPU, torch::kLong).contiguous();
  const auto* first = ids.data_ptr<std::int64_t>();
  const std::vector<std::int64_t> wanted(first, first + ids.numel());
  // The cache serves a context that extends what it holds by at least one id; anything else (a
  // new prompt, a context cropped at the front) starts it again.
  const bool extends = wanted.size() > cached_ids_.size() &&
                       std::equal(cached_ids_.begin(), cached_ids_.end(), wanted.begin());
  if (!extends) {
    cache_.clear();
    cached_ids_.clear();
  }
  const auto fresh = static_cast<std::int64_t>(cached_ids_.size());
  const auto new_ids = context.narrow(/*dim=*/1, fresh, context.size(1) - fresh)
                           .to(model_->device(), torch::kLong);  // (1, T_new)
  const auto hidden = model_->hidden_states(new_ids, &cache_);   // (1, T_new, D)
  cached_ids_ = wanted;
  return model_->head(hidden.narrow(/*dim=*/1, hidden.size(1) - 1, 1));  // (1, 1, V)
}

std::int64_t LlamaLogitsModel::max_seq_len() const {
  return model_->options.max_seq_len();
}
std::int64_t LlamaLogitsModel::vocab_size() const {
  return model_->options.vocab_size();
}
torch::Device LlamaLogitsModel::device() const {
  return model_->device();
}

torch::Tensor LlamaScoringModel::forward(const torch::Tensor& context) {
  return model_->forward(context);  // (1, T, V)
}

torch::Tensor LlamaScoringModel::forward(const torch::Tensor& ids,
                                         g2c::transformer::KVCache& cache) {
  return model_->forward(ids, cache);  // (1, T_new, V)
}

g2c::transformer::KVCache LlamaScoringModel::empty_cache() const {
  return model_->empty_kv_cache(/*capacity=*/256);
}
std::int64_t LlamaScoringModel::max_seq_len() const {
  return model_->options.max_seq_len();
}
std::int64_t LlamaScoringModel::vocab_size() const {
  return model_->options.vocab_size();
}
torch::Device LlamaScoringModel::device() const {
  return model_->device();
}

LlamaEarlyExitModel::LlamaEarlyExitModel(LlamaModelImpl& model, std::int64_t num_blocks)
    : model_(&model), num_blocks_(num_blocks) {
  if (num_blocks < 1 || num_blocks > model.options.num_layers()) {
    throw ValueError(
        fmt::format("LlamaEarlyExitModel: num_blocks must be 1..{} (the model's blocks); got {}",
                    model.options.num_layers(), num_blocks));
  }
}

torch::Tensor LlamaEarlyExitModel::forward(const torch::Tensor& context) {
  return model_->head(model_->hidden_states(context, nullptr, num_blocks_));  // (1, T, V)
}

torch::Tensor LlamaEarlyExitModel::forward(const torch::Tensor& ids,
                                           g2c::transformer::KVCache& cache) {
  return model_->head(model_->hidden_states(ids, &cache, num_blocks_));  // (1, T_new, V)
}

g2c::transformer::KVCache LlamaEarlyExitModel::empty_cache() const {
  return g2c::transformer::KVCache::empty(num_blocks_, /*capacity=*/256);
}
std::int64_t LlamaEarlyExitModel::max_seq_len() const {
  return model_->options.max_seq_len();
}
std::int64_t LlamaEarlyExitModel::vocab_size() const {
  return model_->options.vocab_size();
}
torch::Device LlamaEarlyExitModel::device() const {
  return model_->device();
}

std::vector<std::string> vocab_pieces(const PretrainedTokenizer& tokenizer,
                                      std::int64_t vocab_size) {
  if (vocab_size < 0 || vocab_size > tokenizer.vocab_size()) {
    throw ValueError(fmt::format(
        "vocab_pieces: vocab_size must be 0..{} (the tokenizer's ids); got {}. Pass the model's "
        "vocab_size, which the tokenizer must cover",
        tokenizer.vocab_size(), vocab_size));
  }
  std::vector<std::string> pieces;
  pieces.reserve(static_cast<std::size_t>(vocab_size));
  for (std::int64_t id = 0; id < vocab_size; ++id) {
    pieces.push_back(tokenizer.is_special(id) ? std::string() : tokenizer.decode({id}));
  }
  return pieces;
}

}  // namespace g2c::pretrained
