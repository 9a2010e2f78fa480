// What result files and artifact manifests record of a module 10 Trainer's recipe: one place, so
// every program that trains through the Trainer writes the same keys.
#pragma once

#include <nlohmann/json.hpp>

#include "g2c/pretraining/trainer.h"

namespace g2c::exercises {

/// {batch_size, context_length, max_steps, optimizer, fused_kernels, max_lr, min_lr,
/// warmup_steps, weight_decay, grad_clip (null when unset), eval_every, eval_iters, log_every}.
/// A program adds its own keys (its preset's) to the object it gets.
inline nlohmann::json trainer_options_json(const g2c::pretraining::TrainerOptions& o) {
  return {{"batch_size", o.batch_size()},
          {"context_length", o.context_length()},
          {"max_steps", o.max_steps()},
          {"optimizer", o.optimizer()},
          {"fused_kernels", o.fused_kernels()},
          {"max_lr", o.max_lr()},
          {"min_lr", o.min_lr()},
          {"warmup_steps", o.warmup_steps()},
          {"weight_decay", o.weight_decay()},
          {"grad_clip", o.grad_clip() ? nlohmann::json(*o.grad_clip()) : nlohmann::json(nullptr)},
          {"eval_every", o.eval_every()},
          {"eval_iters", o.eval_iters()},
          {"log_every", o.log_every()}};
}

}  // namespace g2c::exercises
