// Beyond module rl — your work: the advantage, the completion's log-probability and the loss.
#include "g2c/rl/grpo.h"
#include "g2c/core/errors.h"

namespace g2c::rl {

torch::Tensor group_advantages(const torch::Tensor& rewards) {
  // TODO: the group is the baseline. rewards (K), one per completion of the same prompt.
  //   mean = rewards.mean();  std = the POPULATION standard deviation (divide by K: unbiased
  //   false), the group's own spread
  //   std < DEGENERATE_STD: return zeros like rewards   (every attempt scored the same)
  //   otherwise return (rewards − mean) / std           (K)   zero mean, unit spread
  // Hints, one step at a time: scripts/hint.sh rl group_advantages
  throw g2c::todo("group_advantages", "g2c/rl/grpo.cpp", "rl");
}

torch::Tensor completion_log_prob(g2c::sampling::ScoringModel& model, const torch::Tensor& ids,
                                  std::int64_t prompt_len) {
  // TODO: score the completion, never the prompt. check_completion_ids(ids, prompt_len) first.
  //   logits    = model(ids[:, :-1])                  (B, T−1, V)  position j predicts ids[:, j+1]
  //   log_probs = log_softmax(logits, −1)             (B, T−1, V)
  //   token_lp  = log_probs gathered at ids[:, 1:]    (B, T−1)     log p of each actual next id
  //   the completion ids[:, prompt_len:] are predicted at j = prompt_len − 1 … T − 2:
  //   return token_lp[:, prompt_len − 1:].sum(−1)     (B)
  // Operations: narrow, torch::log_softmax, gather, squeeze, sum.
  // Hints, one step at a time: scripts/hint.sh rl completion_log_prob
  throw g2c::todo("completion_log_prob", "g2c/rl/grpo.cpp", "rl");
}

torch::Tensor grpo_loss(const torch::Tensor& logp, const torch::Tensor& ref_logp,
                        const torch::Tensor& advantages, double kl_coef) {
  // TODO: the policy gradient and the leash. check_grpo_inputs(logp, ref_logp, advantages) first.
  //   pg = −mean(advantages.detach() · logp)            up where A > 0, down where A < 0
  //   d  = ref_logp.detach() − logp                     (K)
  //   kl = mean(exp(d) − d − 1)                         ≥ 0, and 0 exactly at the reference
  //   return pg + kl_coef · kl                          a scalar
  // Hints, one step at a time: scripts/hint.sh rl grpo_loss
  throw g2c::todo("grpo_loss", "g2c/rl/grpo.cpp", "rl");
}

}  // namespace g2c::rl
