// Module 06 — reference solution for g2c/lm/sampling.cpp.
#include "g2c/lm/sampling.h"

#include "g2c/nn/device.h"

namespace g2c::lm {

std::vector<std::int64_t> sample(LanguageModelImpl& model,
                                 const std::vector<std::int64_t>& prompt_ids,
                                 std::int64_t num_tokens, double temperature,
                                 std::optional<at::Generator> generator,
                                 const std::string& device) {
  check_sample_arguments(model, prompt_ids, num_tokens, temperature);
  model.to(g2c::nn::resolve_device(device));
  torch::NoGradGuard no_grad;

  auto ids = prompt_ids;
  const auto n = model.context_length;
  for (std::int64_t i = 0; i < num_tokens; ++i) {
    const std::vector<std::int64_t> last(ids.end() - n, ids.end());
    const auto context = torch::tensor(last, torch::kLong).unsqueeze(0);        // (1, N)
    const auto logits = model.logits(context).to(torch::kCPU, torch::kDouble);  // (1, V)
    const auto probabilities = torch::softmax(logits / temperature, -1);
    // Drawn on the CPU with the caller's generator: the same seed gives the same text anywhere.
    ids.push_back(torch::multinomial(probabilities, 1, false, generator).item<std::int64_t>());
  }
  return ids;
}

}  // namespace g2c::lm
