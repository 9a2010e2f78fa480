#include "g2c/moe/sorted_dispatch.h"

#include <memory>

namespace g2c::moe {

torch::Tensor SortedMoEFeedForwardImpl::forward(const torch::Tensor& x) {
  const auto flat = x.reshape({-1, embedding_dim});  // (N, D)
  const auto [weights, indices] = router(flat);      // (N, k) each
  last_indices = indices;
  const std::int64_t tokens = flat.size(0);
  const auto long_options = torch::TensorOptions().dtype(torch::kLong).device(flat.device());
  // One row per assignment, then expert by expert.
  const auto expert_of = indices.flatten();                                            // (N·k)
  const auto token_of = torch::arange(tokens, long_options).repeat_interleave(top_k);  // (N·k)
  const auto order = torch::argsort(expert_of, /*stable=*/true);
  const auto sorted_tokens = token_of.index_select(0, order);
  const auto sorted_weights = weights.flatten().index_select(0, order);
  const auto counts =
      torch::bincount(expert_of, /*weights=*/{}, /*minlength=*/num_experts).to(torch::kCPU);
  const auto* count = counts.data_ptr<std::int64_t>();

  const auto xs = flat.index_select(0, sorted_tokens);  // (N·k, D), one gather
  std::vector<torch::Tensor> outputs;
  std::int64_t start = 0;
  for (std::int64_t e = 0; e < num_experts; ++e) {
    if (count[e] == 0) continue;  // no token chose e: it does no work, and gets no gradient
    outputs.push_back(experts[e](xs.narrow(0, start, count[e])));  // (count_e, D)
    start += count[e];
  }
  const auto ys = torch::cat(outputs) * sorted_weights.unsqueeze(-1);                 // (N·k, D)
  return torch::zeros_like(flat).index_add(0, sorted_tokens, ys).reshape(x.sizes());  // one scatter
}

MoEFeedForward sorted_moe_feed_forward(std::int64_t embedding_dim, std::int64_t num_experts,
                                       std::int64_t top_k, std::int64_t hidden_dim) {
  const std::shared_ptr<MoEFeedForwardImpl> layer =
      std::make_shared<SortedMoEFeedForwardImpl>(embedding_dim, num_experts, top_k, hidden_dim);
  return MoEFeedForward(layer);
}

}  // namespace g2c::moe
