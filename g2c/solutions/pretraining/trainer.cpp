// Module 10 — reference solution for g2c/pretraining/trainer.cpp.
#include "g2c/pretraining/trainer.h"
#include "g2c/pretraining/data.h"
#include "g2c/pretraining/loss.h"
#include "g2c/training/clip.h"

namespace g2c::pretraining {

StepMetrics Trainer::train_step(const TokenSource& train_ids) {
  const auto batch =
      get_lm_batch(train_ids, options.batch_size(), options.context_length(), options.generator());
  const auto x = batch.x.to(device);  // (B, T)
  const auto y = batch.y.to(device);  // (B, T)

  const double step_lr = lr();  // this step's rate: read before the counter moves
  optimizer->lr = step_lr;
  optimizer->zero_grad();

  const auto loss = lm_cross_entropy(model->forward(x), y);  // (B, T, V) -> scalar
  loss.backward();

  double grad_norm = 0.0;
  if (options.grad_clip()) {
    grad_norm = g2c::training::clip_grad_norm_(model->parameters(), *options.grad_clip());
  }
  optimizer->step();
  step += 1;
  return {loss.item<double>(), step_lr, grad_norm};
}

}  // namespace g2c::pretraining
