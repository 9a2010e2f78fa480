// Module 10 — your work: one training step.
#include "g2c/pretraining/trainer.h"
#include "g2c/core/errors.h"
#include "g2c/pretraining/data.h"
#include "g2c/pretraining/loss.h"
#include "g2c/training/clip.h"

namespace g2c::pretraining {

StepMetrics Trainer::train_step(const torch::Tensor& train_ids) {
  // TODO: one optimization step, in exactly this order.
  // 1. A fresh batch from the trainer's generator, moved to the model's device (the corpus may
  //    stay on the CPU):
  //    const auto batch = get_lm_batch(train_ids, options.batch_size(), options.context_length(),
  //                                     options.generator());
  //    const auto x = batch.x.to(device);
  //    const auto y = batch.y.to(device);
  // 2. The learning rate of THIS step — read it before the counter moves — written onto the
  //    optimizer, which otherwise keeps max_lr forever:
  //    const double step_lr = lr();
  //    optimizer->lr = step_lr;
  // 3. optimizer->zero_grad();  — backward() adds into .grad; without this, steps pile up.
  // 4. const auto loss = lm_cross_entropy(model->forward(x), y);   // (B, T, V) logits -> scalar
  // 5. loss.backward();
  // 6. Clip *before* the update (after it, the step has already used the raw gradients):
  //    double grad_norm = 0.0;
  //    if (options.grad_clip()) {
  //      grad_norm = g2c::training::clip_grad_norm_(model->parameters(), *options.grad_clip());
  //    }
  // 7. optimizer->step();
  // 8. step += 1;  — last, so lr() and step agree for the whole step.
  // 9. return {loss.item<double>(), step_lr, grad_norm};
  throw g2c::todo("Trainer::train_step", "g2c/pretraining/trainer.cpp", "10");
}

}  // namespace g2c::pretraining
