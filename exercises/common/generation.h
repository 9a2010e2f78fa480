// Text from a model that maps ids (B, T) to logits (B, T, V), through module 06's sample().
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include <torch/torch.h>

#include "g2c/lm/language_model.h"
#include "g2c/nn/module.h"

namespace g2c::exercises {

/// Module 06's language-model interface over a sequence model: logits(context (B, N)) = the
/// model's logits at the last position, (B, V). The wrapped model is a submodule, so to() moves
/// it. Example: NextTokenView(tiny_lm, /*vocab_size=*/2048, /*context_length=*/31).
class NextTokenViewImpl : public g2c::lm::LanguageModelImpl {
 public:
  NextTokenViewImpl(std::shared_ptr<g2c::nn::Module> model, std::int64_t vocab_size,
                    std::int64_t context_length);

  /// context (B, N) -> (B, V): the prediction for the token after the context.
  torch::Tensor logits(const torch::Tensor& context) override;
  torch::Tensor forward(const torch::Tensor& context) override { return logits(context); }

  std::shared_ptr<g2c::nn::Module> model;
};
TORCH_MODULE(NextTokenView);

/// `count` tokens sampled after `prompt` by module 06's sample() (temperature 1, draws from
/// `generator`), each from the last `context_length` tokens; returns only the new tokens.
/// ValueError when the prompt is shorter than context_length.
std::vector<std::int64_t> continue_text(std::shared_ptr<g2c::nn::Module> model,
                                        std::int64_t vocab_size, std::int64_t context_length,
                                        const std::vector<std::int64_t>& prompt, std::int64_t count,
                                        at::Generator generator);

/// Share of distinct token trigrams among the trigrams that end at or after `start` (the first
/// generated token): 1 when the text never repeats itself, low when it loops; 1 when there is no
/// such trigram. Example: [1, 2, 3, 1, 2, 3, 1, 2, 3] -> 3 distinct of 7 = 0.43.
double distinct_trigram_ratio(const std::vector<std::int64_t>& ids, std::size_t start = 0);

}  // namespace g2c::exercises
