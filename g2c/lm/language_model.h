// Module 06 — what every language model of the course shares.
//
// A language model reads a context of token ids and scores every possible next token.
// Dimension legend: B batch, N context_length, V vocab_size.
//   context (B, N) int64 -> logits (B, V): one score per vocabulary entry for the token after the
//   context. A model with N = 1 (a bigram) also accepts context (B).
// The training loop, perplexity and sampling work with any LanguageModel.
#pragma once

#include <concepts>
#include <cstdint>
#include <string>

#include "g2c/core/torch.h"

#include "g2c/nn/module.h"

namespace g2c::lm {

class LanguageModelImpl : public g2c::nn::Module {
 public:
  LanguageModelImpl(std::string name, std::int64_t vocab_size, std::int64_t context_length);

  /// context (B, N) or, for N = 1, (B) -> (B, V) next-token scores. Softmax turns them into
  /// probabilities (log-probabilities are valid scores too: the counts model returns those).
  virtual torch::Tensor logits(const torch::Tensor& context) = 0;

  /// Checks a context and returns it as (B, N) int64 on the model's device. Accepts (B) when
  /// N = 1. ValueError for a wrong shape, a non-integer dtype or ids outside [0, V).
  torch::Tensor as_context(const torch::Tensor& context) const;

  /// Whether the model has anything for an optimizer to train (the counts model has not).
  bool trainable() const;

  const std::string& name() const { return name_; }

  std::int64_t vocab_size;
  std::int64_t context_length;

 private:
  std::string name_;
};

/// Any module holder of a language model (CountsBigramLM, NeuralBigramLM, MLPLanguageModel, ...).
template <typename Holder>
concept LanguageModelHolder = requires(Holder holder) {
  { *holder } -> std::convertible_to<LanguageModelImpl&>;
};

}  // namespace g2c::lm
