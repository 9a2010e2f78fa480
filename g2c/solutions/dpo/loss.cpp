// Module 14 — reference solution for g2c/dpo/loss.cpp.
#include "g2c/dpo/loss.h"

namespace g2c::dpo {

torch::Tensor sequence_logprob(const torch::Tensor& logits, const torch::Tensor& targets,
                               const torch::Tensor& mask) {
  check_sequence_logprob(logits, targets, mask);
  const auto log_probs = torch::log_softmax(logits, -1);                        // (B, T, V)
  const auto picked = log_probs.gather(-1, targets.unsqueeze(-1)).squeeze(-1);  // (B, T)
  return (picked * mask.to(picked.scalar_type())).sum(-1);                      // (B,)
}

DPOLoss dpo_loss(const torch::Tensor& policy_chosen_logp, const torch::Tensor& policy_rejected_logp,
                 const torch::Tensor& ref_chosen_logp, const torch::Tensor& ref_rejected_logp,
                 double beta) {
  check_dpo_loss(policy_chosen_logp, policy_rejected_logp, ref_chosen_logp, ref_rejected_logp,
                 beta);
  const auto chosen_reward = beta * (policy_chosen_logp - ref_chosen_logp);        // (B,)
  const auto rejected_reward = beta * (policy_rejected_logp - ref_rejected_logp);  // (B,)
  const auto margin = chosen_reward - rejected_reward;                             // (B,)
  const auto loss = -torch::log_sigmoid(margin).mean();
  DPOMetrics metrics{
      chosen_reward.mean().detach(), rejected_reward.mean().detach(), margin.mean().detach(),
      (chosen_reward > rejected_reward).to(chosen_reward.scalar_type()).mean().detach()};
  return {loss, metrics};
}

}  // namespace g2c::dpo
