// Module 06 — reference solution for g2c/lm/bigram.cpp.
#include "g2c/lm/bigram.h"

#include <cmath>

namespace g2c::lm {

void CountsBigramLMImpl::fit(const torch::Tensor& ids) {
  check_ids(ids);
  if (ids.size(0) < 2) {
    return;  // no pair to count
  }
  const auto tokens = ids.to(counts.device(), torch::kLong);
  const auto current = tokens.slice(0, 0, -1);  // (N - 1)
  const auto next = tokens.slice(0, 1);         // (N - 1)
  counts.index_put_({current, next}, torch::ones_like(current), /*accumulate=*/true);
}

torch::Tensor CountsBigramLMImpl::logits(const torch::Tensor& context) {
  const auto current = as_context(context).select(1, 0);                     // (B)
  const auto rows = counts.index({current}).to(torch::kDouble) + smoothing;  // (B, V)
  const auto totals = rows.sum(1, /*keepdim=*/true);                         // (B, 1)
  // A row with nothing counted and no smoothing would be 0/0: no evidence, so uniform.
  const auto probabilities =
      torch::where(totals > 0, rows / totals.clamp_min(1e-300),
                   torch::full_like(rows, 1.0 / static_cast<double>(vocab_size)));
  return probabilities.log().to(torch::kFloat);  // log 0 = -inf for unseen pairs
}

torch::Tensor NeuralBigramLMImpl::forward(const torch::Tensor& context) {
  const auto current = as_context(context).select(1, 0);  // (B)
  return proj(embedding(current));                        // (B) -> (B, D) -> (B, V)
}

}  // namespace g2c::lm
