// Module 03b — the learning-rate schedule of the course's pretraining run: linear warmup, then
// cosine decay to a floor.
//
//   lr:  max_lr/warmup ──ramp──► max_lr ──cosine──► min_lr ────────── (held)
//   step: 0                 warmup_steps         max_steps
//
// Pure arithmetic on the step counter: no state, no tensors.
#pragma once

#include <cstdint>

namespace g2c::training {

/// The learning rate for `step` (counted from 0):
///   warmup_steps > 0 and step < warmup_steps:  max_lr * (step + 1) / warmup_steps
///   step >= max_steps:                         min_lr, held forever
///   otherwise, with progress = (step - warmup_steps) / (max_steps - warmup_steps):
///                                              min_lr + ½ (1 + cos(π progress)) (max_lr - min_lr)
/// Example (warmup 10, max 110, max_lr 1e-3, min_lr 0): step 0 -> 1e-4, 9 -> 1e-3, 10 -> 1e-3,
/// 60 -> 5e-4, 110 -> 0, 999 -> 0. warmup_steps = 0 starts directly on the cosine (step 0 ->
/// max_lr).
///
/// subtle: the ramp ends *at* max_lr on step warmup_steps - 1 (nanoGPT's convention, never 0 at
/// step 0). Nothing is validated, as in the Python edition: a negative step gives lr <= max_lr
/// (<= 0 during a warmup), and max_steps <= warmup_steps jumps from the ramp straight to min_lr.
double cosine_with_warmup(std::int64_t step, std::int64_t warmup_steps, std::int64_t max_steps,
                          double max_lr, double min_lr = 0.0);

}  // namespace g2c::training
