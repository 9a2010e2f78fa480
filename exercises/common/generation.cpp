#include "exercises/common/generation.h"

#include <algorithm>
#include <set>
#include <tuple>

#include "g2c/lm/sampling.h"
#include "g2c/nn/device.h"

namespace g2c::exercises {

NextTokenViewImpl::NextTokenViewImpl(std::shared_ptr<g2c::nn::Module> model_,
                                     std::int64_t vocab_size, std::int64_t context_length)
    : LanguageModelImpl("NextTokenView", vocab_size, context_length), model(std::move(model_)) {
  register_module("model", model);
}

torch::Tensor NextTokenViewImpl::logits(const torch::Tensor& context) {
  const auto ids = as_context(context);              // (B, N) on the model's device
  return model->forward(ids).select(/*dim=*/1, -1);  // (B, N, V) -> (B, V)
}

std::vector<std::int64_t> continue_text(std::shared_ptr<g2c::nn::Module> model,
                                        std::int64_t vocab_size, std::int64_t context_length,
                                        const std::vector<std::int64_t>& prompt, std::int64_t count,
                                        at::Generator generator) {
  const auto device = g2c::nn::device_name(model->device());
  NextTokenView view(std::move(model), vocab_size, context_length);
  view->eval();
  const auto ids = g2c::lm::sample(*view, prompt, count, /*temperature=*/1.0, generator, device);
  return {ids.begin() + static_cast<std::ptrdiff_t>(prompt.size()), ids.end()};
}

double distinct_trigram_ratio(const std::vector<std::int64_t>& ids, std::size_t start) {
  std::set<std::tuple<std::int64_t, std::int64_t, std::int64_t>> seen;
  std::size_t total = 0;
  for (std::size_t i = std::max<std::size_t>(start, 2); i < ids.size(); ++i, ++total) {
    seen.insert({ids[i - 2], ids[i - 1], ids[i]});
  }
  return total == 0 ? 1.0 : static_cast<double>(seen.size()) / static_cast<double>(total);
}

}  // namespace g2c::exercises
