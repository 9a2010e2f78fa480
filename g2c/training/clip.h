// Module 03b — global-norm gradient clipping, the guardrail against a rare exploding step.
//
// All gradients are measured together, as one long vector:
//   total = √(Σ_p ‖grad_p‖²)
// and, only when total > max_norm, every gradient is multiplied by the same factor
// max_norm / (total + 1e-6). One shared scale keeps the direction of the whole update and
// shortens its length to (a hair under) max_norm. Call it after backward() and before step().
#pragma once

#include <vector>

#include "g2c/core/torch.h"

namespace g2c::training {

/// Clips the gradients of `params` in place to a global L2 norm of at most `max_norm` and returns
/// the norm measured *before* clipping. Parameters without a gradient are skipped (and keep
/// none); when none has one the result is 0.0. Below the threshold the gradients are left
/// bitwise unchanged. `max_norm` is not checked, as in the Python edition.
/// Example: grads [3] and [4], max_norm 1 -> returns 5.0, grads become [0.6] and [0.8].
double clip_grad_norm_(const std::vector<torch::Tensor>& params, double max_norm);

}  // namespace g2c::training
