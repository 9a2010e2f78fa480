#include <fmt/format.h>

#include "g2c/core/errors.h"
#include "g2c/inference/local.h"
#include "g2c/transformer/transformer_lm.h"

namespace g2c::inference {

torch::Tensor generate_with_transformer(g2c::nn::Module& model, const torch::Tensor& prompt_ids,
                                        std::int64_t max_new_tokens,
                                        const g2c::sampling::GenerateOptions& options) {
  auto* transformer = dynamic_cast<g2c::transformer::TransformerLMImpl*>(&model);
  if (transformer == nullptr) {
    throw ValueError(
        "LocalTransformerBackend generates with module 11's generate(), which needs a "
        "TransformerLM; give LocalBackendOptions().with_generate(...) for another model");
  }
  return g2c::sampling::generate(*transformer, prompt_ids, max_new_tokens, options);
}

std::optional<std::int64_t> TextTokenizerCodec::special_id(std::string_view token) const {
  const auto* bpe = tokenizer_.bpe();
  if (bpe == nullptr) return std::nullopt;
  const auto found = bpe->special_to_id().find(std::string(token));
  if (found == bpe->special_to_id().end()) return std::nullopt;
  const auto id = static_cast<std::int64_t>(found->second);
  return id < tokenizer_.size() ? std::optional(id) : std::nullopt;
}

LocalTransformerBackend::LocalTransformerBackend(std::shared_ptr<g2c::nn::Module> model,
                                                 std::shared_ptr<const TextCodec> tokenizer,
                                                 LocalBackendOptions options)
    : model_(std::move(model)),
      tokenizer_(std::move(tokenizer)),
      eos_id_(options.eos_id),
      generate_(std::move(options.generate)),
      info_(options.name, options.model_id, std::move(options.extra)) {
  if (model_ == nullptr) throw ValueError("LocalTransformerBackend needs a model, got none");
  if (tokenizer_ == nullptr) {
    throw ValueError("LocalTransformerBackend needs a tokenizer, got none");
  }
  if (!generate_) {
    throw ValueError("LocalTransformerBackend needs a generate function, got an empty one");
  }
}

std::ostream& operator<<(std::ostream& stream, const LocalTransformerBackend& backend) {
  return stream << fmt::format("LocalTransformerBackend(name='{}', model_id='{}')",
                               backend.info().name(), backend.info().model_id());
}

}  // namespace g2c::inference
