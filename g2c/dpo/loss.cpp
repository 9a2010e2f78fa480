// Module 14 — your work: an answer's log-probability and the DPO loss.
#include "g2c/dpo/loss.h"

#include "g2c/core/errors.h"

namespace g2c::dpo {

torch::Tensor sequence_logprob(const torch::Tensor& logits, const torch::Tensor& targets,
                               const torch::Tensor& mask) {
  // TODO: The log-probability of each example's masked targets, summed: (B, T, V) -> (B,).
  // log_probs = log_softmax over the vocabulary (stable, unlike log of softmax); pick each
  // position's target, (B, T, V) -> (B, T); multiply by the mask as the log-probs' dtype (the
  // mask may arrive as int64) and sum over T. A sum, not a mean: log p(answer) is the sum of its
  // tokens' log-probabilities. Check the arguments first (check_sequence_logprob).
  // Operations: torch::log_softmax, gather, unsqueeze, squeeze, to(dtype), sum.
  // Hints, one step at a time: scripts/hint.sh 14 sequence_logprob
  throw g2c::todo("sequence_logprob", "g2c/dpo/loss.cpp", "14");
}

DPOLoss dpo_loss(const torch::Tensor& policy_chosen_logp, const torch::Tensor& policy_rejected_logp,
                 const torch::Tensor& ref_chosen_logp, const torch::Tensor& ref_rejected_logp,
                 double beta) {
  // TODO: The implicit rewards, (B,) each: chosen_reward = beta · (policy_chosen − ref_chosen),
  // rejected_reward = beta · (policy_rejected − ref_rejected). The loss is the batch mean of
  // −log σ(chosen_reward − rejected_reward) — the same as −log σ(β((π_c − π_r) − (ref_c − ref_r)))
  // — computed with log_sigmoid (stable where log(sigmoid(z)) underflows). Metrics, each a 0-dim
  // batch mean, detached: chosen_reward, rejected_reward, reward_margin (chosen − rejected) and
  // accuracy (the fraction with chosen_reward > rejected_reward, as a float). Check the arguments
  // first (check_dpo_loss).
  // Operations: arithmetic on tensors, torch::log_sigmoid, mean, detach, gt, to(dtype).
  // Hints, one step at a time: scripts/hint.sh 14 dpo_loss
  throw g2c::todo("dpo_loss", "g2c/dpo/loss.cpp", "14");
}

}  // namespace g2c::dpo
