// Module 06 — measuring a language model: perplexity.
//
// Perplexity = exp(mean next-token cross-entropy). A model that spreads its bets evenly over V
// tokens scores V; a model that is always sure and right scores 1. Read it as "how many tokens
// the model is hesitating between, on average".
#pragma once

#include <cstdint>
#include <string>

#include "g2c/core/torch.h"

#include "g2c/lm/language_model.h"

namespace g2c::lm {

/// exp of the mean cross-entropy over every window of `ids` in order (starts 0, 1, ...,
/// n - N - 1), evaluated `batch_size` windows at a time without gradients, each batch weighted by
/// its size. The model is moved to `device` ("auto": CUDA, else MPS, else CPU) and stays there.
/// ValueError when ids is shorter than context_length + 1 or batch_size < 1.
double perplexity(LanguageModelImpl& model, const torch::Tensor& ids, std::int64_t batch_size = 256,
                  const std::string& device = "auto");

template <LanguageModelHolder Model>
double perplexity(Model& model, const torch::Tensor& ids, std::int64_t batch_size = 256,
                  const std::string& device = "auto") {
  return perplexity(*model, ids, batch_size, device);
}

}  // namespace g2c::lm
