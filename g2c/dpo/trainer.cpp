// Module 14 — your work: one DPO step.
#include "g2c/dpo/trainer.h"

#include "g2c/core/errors.h"
#include "g2c/dpo/loss.h"
#include "g2c/training/clip.h"

namespace g2c::dpo {

DPOStepMetrics DPOTrainer::train_step() {
  // TODO: Module 13's train_step with two models and the DPO loss, in the same order: the six
  // tensors of sample_batch(examples), (B, L-1) each on the device; this step's lr = lr(), read
  // before the counter moves, set on trainer.optimizer; zero the gradients; the policy's answer
  // log-probs, (B,) each: sequence_logprob(model().forward(chosen_x), chosen_y, chosen_mask) and
  // the same for rejected; the reference's two the same way through ref_model(), inside a
  // torch::NoGradGuard scope (it is frozen: no graph through it); dpo_loss(policy chosen, policy
  // rejected, ref chosen, ref rejected, options.beta()); backward; with
  // trainer.options.grad_clip(), clip the policy's global norm (0.0 without clipping); the
  // optimizer's step; trainer.step += 1. Return the loss, lr, grad_norm and the four metrics as
  // doubles (item<double>()). Hints, one step at a time: scripts/hint.sh 14 DPOTrainer::train_step
  throw g2c::todo("DPOTrainer::train_step", "g2c/dpo/trainer.cpp", "14");
}

}  // namespace g2c::dpo
