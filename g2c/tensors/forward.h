// Module 02 — the forward pass of a one-layer classifier: a linear map, then a numerically stable
// softmax, on raw tensors (no autograd needed here; module 03 makes the layer trainable).
//
// Dimension legend: B batch rows, I input features, O outputs (classes).
//   x (B, I) @ W (I, O) + b (O)  ->  logits (B, O)  ->  softmax along O  ->  probs (B, O)
// W is (in, out), so the product reads like the maths and the shape rule (B, I) @ (I, O) = (B, O)
// is visible; torch::nn::Linear stores the transpose, (out, in), and computes x @ W^T + b.
//
// Softmax: softmax(x)_i = exp(x_i) / sum_j exp(x_j). In float32, exp(x) overflows to inf for
// x > 88.7, and inf / inf is nan. Softmax is shift-invariant — softmax(x) = softmax(x - c) for
// any c — so subtracting each slice's maximum first gives the same probabilities with every
// exponent <= 0 (each exp in (0, 1], the largest exactly 1, the sum >= 1).
#pragma once

#include <cstdint>

#include "g2c/core/torch.h"

namespace g2c::tensors {

/// ValueError unless x is (B, I) — or (I) — W is (I, O) and b is (O), naming the three shapes.
void check_linear_inputs(const torch::Tensor& x, const torch::Tensor& W, const torch::Tensor& b);

/// y = x @ W + b: x (B, I), W (I, O), b (O) broadcast over the rows -> y (B, O).
/// Example: x = [[1, 2]], W = [[3, 4], [5, 6]], b = [0.5, -0.5] -> [[13.5, 15.5]].
torch::Tensor linear(const torch::Tensor& x, const torch::Tensor& W, const torch::Tensor& b);

/// Softmax along `dim` (negative counts from the end), computed stably: exp(x - max) / sum.
/// Same shape as x; every slice along `dim` is positive and sums to 1.
/// Example: softmax([[1000, 1001, 1002]]) -> [[0.0900, 0.2447, 0.6652]] (no overflow).
/// subtle: call it qualified, g2c::tensors::softmax(x, -1): argument-dependent lookup also finds
/// at::softmax(tensor, dim), and the unqualified call is ambiguous.
torch::Tensor softmax(const torch::Tensor& x, std::int64_t dim = -1);

/// The classifier's two outputs: logits (B, O) and their softmax probs (B, O).
struct ClassifierOutput {
  torch::Tensor logits;  // (B, O)
  torch::Tensor probs;   // (B, O), rows sum to 1
};

/// linear then softmax over the classes: {logits = x @ W + b, probs = softmax(logits, -1)}.
/// Example: x (4, 3), W (3, 5), b (5) -> logits (4, 5), probs (4, 5).
ClassifierOutput classifier_forward(const torch::Tensor& x, const torch::Tensor& W,
                                    const torch::Tensor& b);

}  // namespace g2c::tensors
