// Reference solution for g2c/specdec/verify.cpp: greedy and stochastic verification.
#include <algorithm>

#include "g2c/specdec/verify.h"

namespace g2c::specdec {

Verdict greedy_verify(const torch::Tensor& draft, const torch::Tensor& target_logits) {
  check_draft_block(draft, target_logits, "target_logits");
  const std::int64_t k = draft.size(0);
  const auto best = target_logits.argmax(-1).to(torch::kCPU, torch::kLong);  // (k + 1)
  const auto guess = draft.to(torch::kCPU, torch::kLong);
  std::int64_t n = 0;
  while (n < k && guess[n].item<std::int64_t>() == best[n].item<std::int64_t>()) ++n;
  return {n, best[n].item<std::int64_t>()};
}

Verdict speculative_verify(const torch::Tensor& draft, const torch::Tensor& target_probs,
                           const torch::Tensor& draft_probs,
                           std::optional<at::Generator> generator) {
  check_draft_block(draft, target_probs, "target_probs", draft_probs);
  const std::int64_t k = draft.size(0);
  const auto p_t = target_probs.to(torch::kCPU);  // (k + 1, V)
  const auto p_d = draft_probs.to(torch::kCPU);   // (k, V)
  for (std::int64_t i = 0; i < k; ++i) {
    const auto x = draft[i].item<std::int64_t>();
    const double ratio =
        p_t[i][x].item<double>() / std::max(p_d[i][x].item<double>(), EPS);  // p_t(x) / p_d(x)
    const double u = torch::rand({}, generator, p_t.options()).item<double>();
    if (u < std::min(1.0, ratio)) continue;  // accepted
    // Rejected: draw from the mass the target has and the drafter under-served.
    auto residual = (p_t[i] - p_d[i]).clamp_min(0.0);  // (V)
    if (residual.sum().item<double>() <= 0.0) residual = p_t[i];
    const auto next = torch::multinomial(residual / residual.sum(), 1, false, generator);
    return {i, next.item<std::int64_t>()};
  }
  const auto bonus = torch::multinomial(p_t[k], 1, false, generator);  // all accepted
  return {k, bonus.item<std::int64_t>()};
}

}  // namespace g2c::specdec
