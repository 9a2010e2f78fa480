// Module 03, implemented for you — the fast path of the cross-entropy: the course's loss, computed
// by LibTorch's log_softmax and nll_loss kernels instead of the lesson's max-shift, exp, sum, log
// and gather.
//
// Dimension legend: B rows (examples), C classes.
// The lesson's CrossEntropyLoss::forward runs five elementwise passes over the (B, C) logits and
// keeps each intermediate for the backward pass; log_softmax does the shift and the log-sum-exp in
// one pass forward and one backward. With a vocabulary of thousands that difference dominates a
// small language model's step. The exercises use it only when asked (`07_strip_mask --fused`); a
// check in tests/framework/nn_oracles.cpp proves it equals the course's loss.
#pragma once

#include "g2c/core/torch.h"

namespace g2c::nn {

/// Mean over rows of log Σ_j exp(logits_ij) - logits_i,target: logits (B, C), targets (B) in
/// [0, C) -> scalar. The same ValueErrors as CrossEntropyLoss for bad shapes.
/// Example: fused_cross_entropy(torch::zeros({2, 4}), torch::tensor({0, 3})) -> ln 4 = 1.386.
torch::Tensor fused_cross_entropy(const torch::Tensor& logits, const torch::Tensor& targets);

}  // namespace g2c::nn
