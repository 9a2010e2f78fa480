// Module 14 — reference solution for g2c/dpo/trainer.cpp.
#include "g2c/dpo/trainer.h"
#include "g2c/dpo/loss.h"
#include "g2c/training/clip.h"

namespace g2c::dpo {

DPOStepMetrics DPOTrainer::train_step() {
  const auto [cx, cy, cm, rx, ry, rm] = sample_batch(examples);  // (B, L - 1) each, on the device

  const double step_lr = lr();  // this step's rate: read before the counter moves
  trainer.optimizer->lr = step_lr;
  trainer.optimizer->zero_grad();

  // The policy's scores of both answers, with the graph the update needs: (B, L - 1, V) -> (B,).
  const auto policy_chosen = sequence_logprob(model().forward(cx), cy, cm);
  const auto policy_rejected = sequence_logprob(model().forward(rx), ry, rm);
  torch::Tensor ref_chosen;
  torch::Tensor ref_rejected;
  {
    torch::NoGradGuard no_grad;  // the reference is a fixed yardstick: no graph through it
    ref_chosen = sequence_logprob(ref_model().forward(cx), cy, cm);
    ref_rejected = sequence_logprob(ref_model().forward(rx), ry, rm);
  }

  const auto [loss, metrics] =
      dpo_loss(policy_chosen, policy_rejected, ref_chosen, ref_rejected, options.beta());
  loss.backward();

  double grad_norm = 0.0;
  if (const auto clip = trainer.options.grad_clip()) {
    grad_norm = g2c::training::clip_grad_norm_(model().parameters(), *clip);
  }
  trainer.optimizer->step();
  trainer.step += 1;
  return {loss.item<double>(),
          step_lr,
          grad_norm,
          metrics.chosen_reward.item<double>(),
          metrics.rejected_reward.item<double>(),
          metrics.reward_margin.item<double>(),
          metrics.accuracy.item<double>()};
}

}  // namespace g2c::dpo
