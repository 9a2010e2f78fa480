// Module 17, implemented for you — dense embeddings in this process: SmolLM2-135M-Instruct's final
// hidden states (module 16's LlamaModel::hidden_states) averaged over a text's tokens and scaled
// to unit length, 576 numbers per text. The same vectors g2c-serve's /api/embed returns, without
// the HTTP hop. A chat model's mean-pooled states are a weak embedding next to a trained embedding
// model (nomic-embed-text), but they know that "Madrid" and "capital of Spain" are related, which
// no character n-gram does; module 17's exercise measures how much that buys.
//
// Texts can go through the model `batch` at a time, padded at the end: under the causal mask a
// token never sees the padding after it, so each text's states are those it has alone (up to float
// rounding). One at a time is the default: on the course's 2-core CPU padding costs more than
// batching saves (1,500-character chunks: 1.1 chunks/s one by one, 0.8 eight at a time,
// 17_retrieval_bench --batch); on a GPU the batch pays.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "g2c/pretrained/generation.h"
#include "g2c/rag/embed.h"

namespace g2c::rag {

class PretrainedEmbedder : public Embedder {
 public:
  /// ValueError for a null model or batch <= 0. A text longer than the model's context is
  /// embedded from its first context-length tokens.
  explicit PretrainedEmbedder(std::shared_ptr<g2c::pretrained::PretrainedModel> model,
                              std::int64_t batch = 1);

  std::int64_t dim() const override;
  /// An empty text (no tokens) embeds to a zero row.
  torch::Tensor embed(const std::vector<std::string>& texts) override;
  nlohmann::json spec() const override;
  std::string describe() const override;

 private:
  std::shared_ptr<g2c::pretrained::PretrainedModel> model_;
  std::int64_t batch_;
};

}  // namespace g2c::rag
