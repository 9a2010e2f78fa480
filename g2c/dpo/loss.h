// Module 14 — the DPO loss, from the log-probabilities of whole answers.
//
// An answer's score is the log-probability the model gives all of its tokens together, the sum
// over the answer's positions (a sum, not a mean: log p(answer) = Σ_t log p(token_t | before)):
//   logp[b] = Σ_t mask[b, t] · log_softmax(logits[b, t])[targets[b, t]]    (B, T, V) -> (B,)
// DPO compares how much more the policy π likes each answer than the frozen reference does:
//   chosen_reward   = β · (π_chosen − ref_chosen)
//   rejected_reward = β · (π_rejected − ref_rejected)
//   loss = mean over the batch of −log σ(chosen_reward − rejected_reward)
// With π equal to the reference every reward is 0 and the loss is −log σ(0) = ln 2 ≈ 0.6931: the
// value every DPO run starts from. It falls as the policy prefers the chosen answers more than the
// reference did, and rises above ln 2 when it prefers the rejected ones.
#pragma once

#include "g2c/core/torch.h"

namespace g2c::dpo {

/// Σ over the positions where mask != 0 of log p(targets[b, t]), one sum per example: (B,), in the
/// logits' dtype, differentiable in the logits; 0 for an example whose mask is all zero. The mask
/// may be integer or floating point. ValueError (check_sequence_logprob) unless logits is
/// (B, T, V) floating point, targets (B, T) integer and mask (B, T).
/// Example: uniform logits over V = 8, T = 5, all-one mask -> −5 · ln 8 for every example.
/// (The Python edition's name. Module 11's sequence_log_prob scores one sequence through a model,
/// module 15's continuation_logprob scores text; this one sums a masked batch of logits.)
torch::Tensor sequence_logprob(const torch::Tensor& logits, const torch::Tensor& targets,
                               const torch::Tensor& mask);

/// The entry checks of sequence_logprob, naming the shapes it got.
void check_sequence_logprob(const torch::Tensor& logits, const torch::Tensor& targets,
                            const torch::Tensor& mask);

/// What dpo_loss reports besides the loss: 0-dim tensors, batch means, detached (for logging).
struct DPOMetrics {
  torch::Tensor chosen_reward;    // mean β · (π_chosen − ref_chosen)
  torch::Tensor rejected_reward;  // mean β · (π_rejected − ref_rejected)
  torch::Tensor reward_margin;    // mean (chosen_reward − rejected_reward); > 0: chosen preferred
  torch::Tensor accuracy;         // fraction of examples with chosen_reward > rejected_reward
};

/// `auto [loss, metrics] = dpo_loss(...)`.
struct DPOLoss {
  torch::Tensor loss;  // 0-dim, differentiable in the policy's log-probabilities
  DPOMetrics metrics;
};

/// The mean DPO loss −log σ(β · ((π_chosen − π_rejected) − (ref_chosen − ref_rejected))) over the
/// batch, and its metrics. Every argument is (B,) (sequence_logprob's output); the reference's are
/// expected without gradient. ValueError (check_dpo_loss) unless the four are 1-D of one shape,
/// floating point, and beta > 0.
/// Example: π = ref everywhere -> loss ln 2, every reward 0, accuracy 0.
DPOLoss dpo_loss(const torch::Tensor& policy_chosen_logp, const torch::Tensor& policy_rejected_logp,
                 const torch::Tensor& ref_chosen_logp, const torch::Tensor& ref_rejected_logp,
                 double beta);

/// The entry checks of dpo_loss.
void check_dpo_loss(const torch::Tensor& policy_chosen_logp,
                    const torch::Tensor& policy_rejected_logp, const torch::Tensor& ref_chosen_logp,
                    const torch::Tensor& ref_rejected_logp, double beta);

}  // namespace g2c::dpo
