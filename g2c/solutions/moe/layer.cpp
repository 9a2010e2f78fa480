// Beyond module moe — reference solution for g2c/moe/layer.cpp: the lesson's loop over experts.
#include "g2c/moe/layer.h"
#include "g2c/core/errors.h"

namespace g2c::moe {

torch::Tensor MoEFeedForwardImpl::forward(const torch::Tensor& x) {
  const auto flat = x.reshape({-1, embedding_dim});  // (N, D)
  const auto [weights, indices] = router(flat);      // (N, k) each
  last_indices = indices;
  auto out = torch::zeros_like(flat);
  for (std::int64_t e = 0; e < num_experts; ++e) {
    const auto chose = indices == e;  // (N, k): at most one true per row
    const auto rows = chose.any(/*dim=*/-1).nonzero().squeeze(1);  // (M) tokens routed to e
    if (rows.numel() == 0) continue;
    const auto weight = (weights * chose).sum(/*dim=*/-1).index_select(0, rows);  // (M)
    const auto y = experts[e](flat.index_select(0, rows));                        // (M, D)
    out = out.index_add(0, rows, y * weight.unsqueeze(-1));  // (N, D), e's tokens only
  }
  return out.reshape(x.sizes());
}

torch::Tensor MoEFeedForwardImpl::load_balancing_loss() {
  if (!router->last_probs.defined() || !last_indices.defined()) {
    throw g2c::RuntimeError("run forward() before load_balancing_loss()");
  }
  const auto counts =
      torch::bincount(last_indices.flatten(), /*weights=*/{}, /*minlength=*/num_experts);
  const auto f = counts.to(router->last_probs.dtype()) / static_cast<double>(last_indices.numel());
  const auto P = router->last_probs.mean(/*dim=*/0);  // (E), attached to the gate
  return static_cast<double>(num_experts) * (f * P).sum();
}

}  // namespace g2c::moe
