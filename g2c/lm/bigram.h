// Module 06 — bigram language models: the next token depends on the current token only.
//
// CountsBigramLM: count every (current, next) pair of the training ids in a (V, V) table, add
// `smoothing` to every cell, normalise each row: row c is P(next | current = c).
// NeuralBigramLM: the same question answered by gradient descent. A token's embedding (D) goes
// through Linear(D, V) to V scores; softmax of the scores is the model's P(next | current).
// Dimension legend: B batch, V vocab_size, D embedding_dim.
#pragma once

#include <cstdint>

#include <torch/nn/modules/embedding.h>

#include "g2c/core/torch.h"

#include "g2c/lm/language_model.h"
#include "g2c/nn/linear.h"

namespace g2c::lm {

class CountsBigramLMImpl : public LanguageModelImpl {
 public:
  explicit CountsBigramLMImpl(std::int64_t vocab_size, double smoothing = 1.0);

  /// ids (N) int64 -> adds 1 to counts[ids[i], ids[i + 1]] for every i < N - 1. Calls
  /// accumulate: fitting twice counts both corpora.
  void fit(const torch::Tensor& ids);

  /// context (B) or (B, 1) -> log-probabilities (B, V): log((counts[c] + s) / sum(counts[c] + s)).
  /// With smoothing 0 an unseen pair is log 0 = -inf; a context never seen at all has no evidence
  /// either way and gets the uniform log(1/V) instead of 0/0.
  torch::Tensor logits(const torch::Tensor& context) override;

  /// Calling the model is calling logits().
  torch::Tensor forward(const torch::Tensor& context) override { return logits(context); }

  /// ValueError unless ids is a 1-D integer tensor with values in [0, V).
  void check_ids(const torch::Tensor& ids) const;

  void pretty_print(std::ostream& stream) const override;

  double smoothing;
  torch::Tensor counts;  // (V, V) int64, a buffer: it moves with to() but is not trained
};
TORCH_MODULE(CountsBigramLM);

class NeuralBigramLMImpl : public LanguageModelImpl {
 public:
  NeuralBigramLMImpl(std::int64_t vocab_size, std::int64_t embedding_dim);

  /// context (B) or (B, 1) -> logits (B, V) = proj(embedding(current token)).
  torch::Tensor forward(const torch::Tensor& context) override;

  /// The same as forward().
  torch::Tensor logits(const torch::Tensor& context) override { return forward(context); }

  void pretty_print(std::ostream& stream) const override;

  std::int64_t embedding_dim;
  torch::nn::Embedding embedding{nullptr};  // weight (V, D), N(0, 1)
  g2c::nn::Linear proj{nullptr};            // (D) -> (V): W (D, V), b (V)
};
TORCH_MODULE(NeuralBigramLM);

}  // namespace g2c::lm
