// Reference solution for g2c/rl/grpo.cpp: the advantage, the completion's log-probability and the
// loss.
#include "g2c/rl/grpo.h"

namespace g2c::rl {

torch::Tensor group_advantages(const torch::Tensor& rewards) {
  const auto mean = rewards.mean();
  const auto spread = rewards.std(/*unbiased=*/false);  // the population std: divide by K
  if (spread.item<double>() < DEGENERATE_STD) return torch::zeros_like(rewards);
  return (rewards - mean) / spread;  // (K)
}

torch::Tensor completion_log_prob(g2c::sampling::ScoringModel& model, const torch::Tensor& ids,
                                  std::int64_t prompt_len) {
  check_completion_ids(ids, prompt_len);
  const std::int64_t T = ids.size(1);
  const auto logits = model(ids.narrow(1, 0, T - 1));             // (B, T-1, V)
  const auto log_probs = torch::log_softmax(logits, /*dim=*/-1);  // (B, T-1, V)
  const auto targets = ids.narrow(1, 1, T - 1);  // (B, T-1): position j -> ids[j+1]
  const auto token_lp = log_probs.gather(-1, targets.unsqueeze(-1)).squeeze(-1);  // (B, T-1)
  // The completion ids[:, prompt_len:] are predicted at positions prompt_len-1 ... T-2.
  return token_lp.narrow(1, prompt_len - 1, T - prompt_len).sum(-1);  // (B)
}

torch::Tensor grpo_loss(const torch::Tensor& logp, const torch::Tensor& ref_logp,
                        const torch::Tensor& advantages, double kl_coef) {
  check_grpo_inputs(logp, ref_logp, advantages);
  const auto pg = -(advantages.detach() * logp).mean();  // the policy gradient's surrogate
  const auto d = ref_logp.detach() - logp;               // (K)
  const auto kl = (d.exp() - d - 1.0).mean();            // k3: >= 0, 0 at the reference
  return pg + kl_coef * kl;
}

}  // namespace g2c::rl
