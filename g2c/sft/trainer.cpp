// Module 13 — your work: one supervised fine-tuning step.
#include "g2c/sft/trainer.h"

#include "g2c/core/errors.h"
#include "g2c/sft/loss.h"
#include "g2c/training/clip.h"

namespace g2c::sft {

g2c::pretraining::StepMetrics SFTTrainer::train_step() {
  // TODO: Module 10's train_step with an SFT batch and the masked loss, in the same order:
  // x, y, loss_mask = sample_batch(examples), (B, L-1) each on the device; this step's lr = lr(),
  // read before the counter moves, set on trainer.optimizer; zero the gradients; logits =
  // trainer.model->forward(x), (B, L-1, V); loss = masked_cross_entropy(logits, y, loss_mask);
  // backward; with trainer.options.grad_clip(), clip the global norm (clip_grad_norm_ returns the
  // norm before clipping; 0.0 without clipping); the optimizer's step; trainer.step += 1. Return
  // {loss, lr, grad_norm} as doubles.
  // Hints, one step at a time: scripts/hint.sh 13 SFTTrainer::train_step
  throw g2c::todo("SFTTrainer::train_step", "g2c/sft/trainer.cpp", "13");
}

}  // namespace g2c::sft
