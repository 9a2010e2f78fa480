// A trainer built on module 10's Trainer (module 13's SFTTrainer, module 14's DPOTrainer) holds one
// and passes it its recipe: the same options, and a "context" of max_seq_len - 1 inputs (examples
// of max_seq_len ids, shifted by one).
#pragma once

#include <fmt/format.h>

#include "g2c/core/errors.h"
#include "g2c/pretraining/trainer.h"

namespace g2c::pretraining {

/// The checks every such trainer makes of its own options (the Python edition's): ValueError for
/// batch_size <= 0, and for max_seq_len <= 1, which would leave nothing after the shift by one.
template <typename DerivedOptions>
void check_core_options(const DerivedOptions& options) {
  if (options.batch_size() <= 0) {
    throw ValueError(fmt::format("batch_size must be positive, got {}", options.batch_size()));
  }
  if (options.max_seq_len() <= 1) {
    throw ValueError(
        fmt::format("max_seq_len must be > 1 so that the shift by one leaves something, got {}",
                    options.max_seq_len()));
  }
}

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
