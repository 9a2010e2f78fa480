// Small training helpers of module 03: linear regression, a 2-D classifier, an MNIST-shaped MLP,
// and epoch loops over in-memory batches.
#pragma once

#include <cstdint>
#include <utility>
#include <vector>

#include "g2c/core/torch.h"

#include "g2c/nn/linear.h"
#include "g2c/nn/losses.h"
#include "g2c/nn/module.h"
#include "g2c/nn/optim.h"
#include "g2c/nn/sequential.h"

namespace g2c::nn {

/// One minibatch: inputs (B, ...) and integer targets (B).
struct Batch {
  torch::Tensor inputs;
  torch::Tensor targets;
};

/// Fits Linear(in, out) to (x, y) with MSE and SGD on the full batch; returns the model and the
/// loss before every step. Example: y = 3x + 2 on x = linspace(-1, 1, 100) -> W ~ 3, b ~ 2.
std::pair<Linear, std::vector<double>> train_linear_regression(const torch::Tensor& x,
                                                               const torch::Tensor& y,
                                                               std::int64_t steps = 500,
                                                               double lr = 0.1);

/// Linear(2, hidden) -> ReLU -> Linear(hidden, 2).
Sequential build_2d_classifier(std::int64_t hidden = 16);

/// Fraction of rows whose argmax equals the target, in [0, 1].
double accuracy_from_logits(const torch::Tensor& logits, const torch::Tensor& targets);

/// Full-batch training with cross-entropy and SGD; returns the loss of every step.
std::vector<double> train_classifier(Module& model, const torch::Tensor& x, const torch::Tensor& y,
                                     std::int64_t steps = 1000, double lr = 0.1,
                                     double weight_decay = 0.0);

/// Linear(784, hidden) -> ReLU (or nothing when use_relu is false) -> Linear(hidden, 10).
Sequential build_mnist_mlp(std::int64_t hidden = 128, bool use_relu = true);

/// One pass over `batches` (inputs flattened to (B, features)); returns the batch-size-weighted
/// mean loss. ValueError("loader produced no examples") when there is nothing to train on.
double train_one_epoch(Module& model, const std::vector<Batch>& batches, Optimizer& optimizer,
                       const CrossEntropyLoss& loss);

/// Accuracy over all examples of `batches`, without gradients. Same ValueError when empty.
double evaluate_accuracy(Module& model, const std::vector<Batch>& batches);

}  // namespace g2c::nn
