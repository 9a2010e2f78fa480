// A trainer built on module 10's Trainer (module 13's SFTTrainer, module 14's DPOTrainer) holds one
// and passes it its recipe: the same options, and a "context" of max_seq_len - 1 inputs (examples
// of max_seq_len ids, shifted by one).
#pragma once

#include "g2c/pretraining/trainer.h"

namespace g2c::pretraining {

/// The held Trainer's options from a derived trainer's `options` (anything with the accessors
/// below, e.g. g2c::sft::SFTTrainerOptions).
template <typename DerivedOptions>
TrainerOptions core_trainer_options(const DerivedOptions& options) {
  return TrainerOptions(options.batch_size(), options.max_seq_len() - 1, options.max_steps(),
                        options.max_lr())
      .min_lr(options.min_lr())
      .warmup_steps(options.warmup_steps())
      .weight_decay(options.weight_decay())
      .grad_clip(options.grad_clip())
      .eval_every(options.eval_every())
      .eval_iters(options.eval_iters())
      .log_every(options.log_every())
      .generator(options.generator())
      .device(options.device())
      .optimizer(options.optimizer())
      .fused_kernels(options.fused_kernels());
}

}  // namespace g2c::pretraining
