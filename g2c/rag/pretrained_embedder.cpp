// Module 17, provided: SmolLM2's mean-pooled final states as an Embedder.
#include <fmt/format.h>

#include "g2c/core/errors.h"
#include "g2c/rag/pretrained_embedder.h"

namespace g2c::rag {

PretrainedEmbedder::PretrainedEmbedder(std::shared_ptr<g2c::pretrained::PretrainedModel> model,
                                       std::int64_t batch)
    : model_(std::move(model)), batch_(batch) {
  if (!model_) throw ValueError("PretrainedEmbedder requires a model (got a null pointer)");
  if (batch_ <= 0)
    throw ValueError(fmt::format("PretrainedEmbedder: batch must be > 0, got {}", batch_));
}

std::int64_t PretrainedEmbedder::dim() const {
  return model_->model->options.embedding_dim();
}

torch::Tensor PretrainedEmbedder::embed(const std::vector<std::string>& texts) {
  std::vector<std::vector<std::int64_t>> ids;
  ids.reserve(texts.size());
  for (const auto& text : texts) ids.push_back(model_->tokenizer.encode(text));
  return g2c::pretrained::mean_pooled_embeddings(*model_, ids, batch_);
}

nlohmann::json PretrainedEmbedder::spec() const {
  return {{"kind", "pretrained"}, {"model", model_->name}, {"dim", dim()}, {"pooling", "mean"}};
}

std::string PretrainedEmbedder::describe() const {
  return fmt::format("PretrainedEmbedder(model='{}', dim={}, batch={})", model_->name, dim(),
                     batch_);
}

}  // namespace g2c::rag
