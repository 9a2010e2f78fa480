// Module 10 — your work: one training step.
#include "g2c/pretraining/trainer.h"
#include "g2c/core/errors.h"
#include "g2c/pretraining/data.h"
#include "g2c/pretraining/loss.h"
#include "g2c/training/clip.h"

namespace g2c::pretraining {

StepMetrics Trainer::train_step(const TokenSource& train_ids) {
  // TODO: One optimization step, in the lesson's order: a fresh batch from the trainer's generator
  // on the model's device; this step's learning rate (lr(), read before the step counter moves)
  // written to the optimizer; clear the gradients; lm_cross_entropy of the model's logits;
  // backward; clip the global norm when grad_clip is set (between backward and the update); the
  // update; step += 1. Return the loss, the rate used and the norm before clipping (0 without
  // clipping). Operations: get_lm_batch, clip_grad_norm_.
  // Hints, one step at a time: scripts/hint.sh 10 Trainer::train_step
  throw g2c::todo("Trainer::train_step", "g2c/pretraining/trainer.cpp", "10");
}

}  // namespace g2c::pretraining
