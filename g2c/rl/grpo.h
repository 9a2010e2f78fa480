// Beyond module rl — the three pieces of the (simplified) GRPO update.
//
// Dimension legend: K completions in a group, B rows, T tokens per row (prompt + completion),
// P prompt_len, V vocab_size.
// Sampling is not differentiable, but the REINFORCE identity does not need it to be:
//   ∇ E[reward] = E[ reward · ∇ log p(completion) ]
// so the update is an SFT step on the model's own completions, scaled by how good each was. GRPO
// takes the baseline from the group itself (no value network):
//   A_i  = (r_i − mean(r)) / std(r)                  group_advantages: population std; a group
//                                                    whose rewards are all equal teaches nothing
//   logp = Σ_t log p(ids[t] | ids[:t]), t >= P       completion_log_prob: the completion's tokens
//                                                    only (module 13's loss mask, one more time)
//   loss = −mean(A · logp) + β · mean(eᵈ − d − 1)    grpo_loss, d = ref_logp − logp: the k3
//                                                    estimate of KL(p_θ ‖ p_ref), ≥ 0 and 0 only
//                                                    at the reference — the leash
// A and ref_logp are constants: rewards have no graph, and the leash pulls the policy towards a
// fixed point, never the reference towards the policy. This is the group-relative REINFORCE core
// of GRPO: no old-policy ratio, no clipping, one pass per group. The KL estimate is taken on the
// summed log-probabilities (one per completion), so it grows with length; production recipes
// estimate it per token.
//
// completion_log_prob takes a ScoringModel (g2c/sampling/logits_model.h): a model that scores
// every position, the interface speculative decoding's target already uses, so the course's
// TransformerLM (through TransformerLogitsModel, the overload below), the hybrid and MoE models
// (ForwardScoringModel) and a test's table-lookup fake all fit without a template. Its forward is
// written for one row (1, T); completion_log_prob hands it the whole batch (B, T − 1), which those
// adapters and fakes pass straight to a forward that takes a batch. GRPOTrainer scores one row at
// a time, which every ScoringModel takes.
#pragma once

#include <cstdint>

#include "g2c/core/torch.h"
#include "g2c/sampling/logits_model.h"
#include "g2c/transformer/transformer_lm.h"

namespace g2c::rl {

/// Below this population standard deviation a group's rewards count as all equal (degenerate).
inline constexpr double DEGENERATE_STD = 1e-8;

/// One group's rewards (K) -> advantages (K): (r − mean(r)) / std(r) with the POPULATION standard
/// deviation (divide by K, not K − 1), so the advantages have zero mean and unit spread; all zeros
/// when std(r) < DEGENERATE_STD (every attempt scored the same: no signal, and no division by 0).
/// Example: [1, 0, 0, 1] -> [1, −1, −1, 1]; [1, 1, 1, 1] -> [0, 0, 0, 0].
torch::Tensor group_advantages(const torch::Tensor& rewards);

/// ValueError unless ids is a 2-D integer tensor (B, T) and 1 <= prompt_len < T (a token to
/// condition on and at least one completion token to score).
void check_completion_ids(const torch::Tensor& ids, std::int64_t prompt_len);

/// Each row's log-probability of its completion: ids (B, T) = prompt ++ completion, on the
/// model's device, the same prompt_len for every row -> (B), Σ log p(ids[b, t] | ids[b, :t]) over
/// t = prompt_len … T − 1 only. One forward over ids[:, :-1]; differentiable (with autograd on,
/// the gradient reaches the model's parameters). ValueError: check_completion_ids.
/// Example: a table model (logits after token a = table[a]), ids [[3, 1, 4, 1, 5]], prompt_len 2
/// -> [lp[1, 4] + lp[4, 1] + lp[1, 5]], lp = log_softmax(table).
torch::Tensor completion_log_prob(g2c::sampling::ScoringModel& model, const torch::Tensor& ids,
                                  std::int64_t prompt_len);

/// The same for module 09's TransformerLM.
inline torch::Tensor completion_log_prob(g2c::transformer::TransformerLM& model,
                                         const torch::Tensor& ids, std::int64_t prompt_len) {
  g2c::sampling::TransformerLogitsModel scorer(*model);
  return completion_log_prob(scorer, ids, prompt_len);
}

/// ValueError unless logp, ref_logp and advantages are three 1-D tensors of one length K >= 1
/// (a (K, 1) against a (K) would broadcast to (K, K) and average the wrong products).
void check_grpo_inputs(const torch::Tensor& logp, const torch::Tensor& ref_logp,
                       const torch::Tensor& advantages);

/// The loss of one group: logp (K) the policy's completion log-probabilities (with their graph),
/// ref_logp (K) the frozen reference's, advantages (K) -> the scalar
///   −mean(A · logp) + kl_coef · mean(eᵈ − d − 1),  d = ref_logp − logp,
/// with A and ref_logp detached. kl_coef 0 drops the leash. Minimising it raises the log-prob of
/// the completions with A > 0 and lowers those with A < 0. ValueError: check_grpo_inputs.
/// Example: logp [−1, −2, −3], A [1, 0, −1], kl_coef 0 -> −(−1 + 0 + 3) / 3 = −2/3.
torch::Tensor grpo_loss(const torch::Tensor& logp, const torch::Tensor& ref_logp,
                        const torch::Tensor& advantages, double kl_coef);

}  // namespace g2c::rl
