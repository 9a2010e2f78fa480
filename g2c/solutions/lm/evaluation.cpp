// Module 06 — reference solution for g2c/lm/evaluation.cpp.
#include "g2c/lm/evaluation.h"

#include <algorithm>
#include <cmath>

#include <fmt/format.h>

#include "g2c/core/errors.h"
#include "g2c/lm/batching.h"
#include "g2c/nn/device.h"
#include "g2c/nn/losses.h"

namespace g2c::lm {

double perplexity(LanguageModelImpl& model, const torch::Tensor& ids, std::int64_t batch_size,
                  const std::string& device) {
  check_stream(ids, model.context_length);
  if (batch_size < 1) {
    throw ValueError(fmt::format("perplexity needs batch_size >= 1, got {}", batch_size));
  }
  const auto target_device = g2c::nn::resolve_device(device);
  model.to(target_device);
  torch::NoGradGuard no_grad;

  const auto n = model.context_length;
  const auto tokens = ids.to(target_device, torch::kLong);
  const auto windows = tokens.size(0) - n;  // starts 0 .. len - N - 1
  const auto offsets = torch::arange(n + 1, tokens.options());
  double total = 0.0;  // sum of per-window cross-entropies, in double
  for (std::int64_t first = 0; first < windows; first += batch_size) {
    const auto count = std::min(batch_size, windows - first);
    const auto starts = torch::arange(first, first + count, tokens.options());
    const auto window = tokens.index({starts.unsqueeze(1) + offsets});  // (b, N + 1)
    const auto logits = model.logits(window.slice(1, 0, n));            // (b, V)
    // Module 03's loss, in double: the sum over a whole corpus must not lose the small terms.
    const auto loss = g2c::nn::CrossEntropyLoss()(logits.to(torch::kDouble), window.select(1, n));
    // Weight by the batch size: the last batch is usually smaller than the others.
    total += loss.item<double>() * static_cast<double>(count);
  }
  return std::exp(total / static_cast<double>(windows));
}

}  // namespace g2c::lm
