// Reference solution for g2c/specdec/mtp.cpp: the MTP head's forward and its loss.
#include "g2c/specdec/mtp.h"

namespace g2c::specdec {

torch::Tensor MTPHeadImpl::forward(const torch::Tensor& hidden, const torch::Tensor& next_ids) {
  check_inputs(hidden, next_ids);
  const auto e = base->token_embed(next_ids);             // (B, T', D)
  auto h = combine(torch::cat({hidden, e}, /*dim=*/-1));  // (B, T', 2D) -> (B, T', D)
  h = ln(block(h));                                       // (B, T', D)
  // The base's tied unembedding: (B, T', D) @ (D, V) -> (B, T', V).
  return torch::matmul(h, base->token_embed->weight.t()) + head_bias;
}

torch::Tensor mtp_loss(const torch::Tensor& mtp_logits, const torch::Tensor& ids) {
  check_mtp_loss_inputs(mtp_logits, ids);
  const std::int64_t rows = mtp_logits.size(1) - 1;
  const auto logits = mtp_logits.narrow(1, 0, rows);  // (B, T-2, V): the last row has no target
  const auto targets = ids.narrow(1, 2, rows);        // (B, T-2): row t -> ids[:, t + 2]
  const auto log_probs = torch::log_softmax(logits, /*dim=*/-1);
  const auto picked = log_probs.gather(-1, targets.unsqueeze(-1)).squeeze(-1);  // (B, T-2)
  return -picked.mean();
}

}  // namespace g2c::specdec
