// Module 06 — generating text one token at a time.
//
// Each step feeds the last N tokens, turns the logits into probabilities with
// softmax(logits / temperature) and draws the next token from them. Temperature < 1 sharpens the
// distribution (safer, more repetitive), > 1 flattens it (more surprising, more mistakes).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "g2c/core/torch.h"

#include "g2c/lm/language_model.h"

namespace g2c::lm {

/// prompt + `num_tokens` sampled tokens. The model is moved to `device`; the draws use
/// `generator` (a CPU generator: the same seed gives the same text on every device).
/// ValueError when the prompt is shorter than the model's context, temperature <= 0, or
/// num_tokens < 0.
std::vector<std::int64_t> sample(LanguageModelImpl& model,
                                 const std::vector<std::int64_t>& prompt_ids,
                                 std::int64_t num_tokens, double temperature = 1.0,
                                 std::optional<at::Generator> generator = std::nullopt,
                                 const std::string& device = "auto");

template <LanguageModelHolder Model>
std::vector<std::int64_t> sample(Model& model, const std::vector<std::int64_t>& prompt_ids,
                                 std::int64_t num_tokens, double temperature = 1.0,
                                 std::optional<at::Generator> generator = std::nullopt,
                                 const std::string& device = "auto") {
  return sample(*model, prompt_ids, num_tokens, temperature, std::move(generator), device);
}

/// ValueError unless the sampling arguments make sense for this model (see sample()).
void check_sample_arguments(const LanguageModelImpl& model,
                            const std::vector<std::int64_t>& prompt_ids, std::int64_t num_tokens,
                            double temperature);

}  // namespace g2c::lm
