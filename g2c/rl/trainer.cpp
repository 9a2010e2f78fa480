// Beyond module rl — your work: one GRPO step.
#include "g2c/rl/trainer.h"
#include "g2c/core/errors.h"
#include "g2c/rl/grpo.h"

namespace g2c::rl {

GRPOStepMetrics GRPOTrainer::train_step() {
  // clang-format off
  // TODO: sample, verify, advantage, update — with FRESH samples, every step.
  //   task  = next_task()
  //   group = sample_group(model, *tokenizer, task.prompt, options.group_size(),
  //           SampleGroupOptions() with options' max_new_tokens, temperature and eos_id, and the
  //           trainer's generator)
  //   rewards    = torch::tensor of verifier(task, text) for each text           (K) float
  //   advantages = group_advantages(rewards)                                     (K)
  //   no advantage non-zero, or a completion empty (nothing to score): return
  //     {loss 0, mean_reward = rewards.mean(), kl NaN, sample_entropy NaN, skipped 1}
  //   P = group.prompt_ids.numel(); each row = cat(prompt_ids, completion).unsqueeze(0)
  //                                                                              (1, P + n_k)
  //   logp     = cat of completion_log_prob(model, row on model->device(), P)    (K), autograd
  //   ref_logp = the same with ref_model, under a torch::NoGradGuard             (K), constant
  //              (ref_logp and advantages moved to logp's device)
  //   d = ref_logp − logp.detach();  kl = mean(exp(d) − d − 1)                   the diagnostic
  //   sample_entropy = mean(−logp.detach() / n_k)
  //   loss = grpo_loss(logp, ref_logp, advantages, options.kl_coef())
  //   optimizer->zero_grad(); loss.backward(); optimizer->step(); step_count += 1
  //   return {loss, mean_reward, kl, sample_entropy, skipped 0}   (as doubles: item<double>())
  // clang-format on
  // Hints, one step at a time: scripts/hint.sh rl GRPOTrainer::train_step
  throw g2c::todo("GRPOTrainer::train_step", "g2c/rl/trainer.cpp", "rl");
}

}  // namespace g2c::rl
