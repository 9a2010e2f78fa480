// Module 13 — reference solution for g2c/sft/trainer.cpp.
#include "g2c/sft/trainer.h"
#include "g2c/sft/loss.h"
#include "g2c/training/clip.h"

namespace g2c::sft {

g2c::pretraining::StepMetrics SFTTrainer::train_step() {
  const auto [x, y, loss_mask] = sample_batch(examples);  // (B, L - 1) each, on the device

  const double step_lr = lr();  // this step's rate: read before the counter moves
  trainer.optimizer->lr = step_lr;
  trainer.optimizer->zero_grad();

  const auto logits = trainer.model->forward(x);  // (B, L - 1, V)
  const auto loss = masked_cross_entropy(logits, y, loss_mask);
  loss.backward();

  double grad_norm = 0.0;
  if (const auto clip = trainer.options.grad_clip()) {
    grad_norm = g2c::training::clip_grad_norm_(trainer.model->parameters(), *clip);
  }
  trainer.optimizer->step();
  trainer.step += 1;
  return {loss.item<double>(), step_lr, grad_norm};
}

}  // namespace g2c::sft
