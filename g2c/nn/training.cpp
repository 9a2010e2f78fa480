// Module 03 — your work: the training helpers.
#include "g2c/nn/training.h"
#include "g2c/core/errors.h"
#include "g2c/nn/activations.h"

namespace g2c::nn {

std::pair<Linear, std::vector<double>> train_linear_regression(const torch::Tensor& x,
                                                               const torch::Tensor& y,
                                                               std::int64_t steps, double lr) {
  // TODO: The smallest complete training loop: fit a Linear(in, out) (sizes from x and y) to (x, y)
  // with the mean squared error and SGD at lr, on the full batch, for `steps` steps; record each
  // step's loss before its update. The four moves of a step: forward and loss, clear the gradients,
  // backward, update. Return the model and the losses.
  // Hints, one step at a time: scripts/hint.sh 03 train_linear_regression
  throw g2c::todo("train_linear_regression", "g2c/nn/training.cpp", "03");
}

Sequential build_2d_classifier(std::int64_t hidden) {
  // TODO: A network for points in the plane: 2 inputs, a hidden layer of `hidden` units followed by
  // a ReLU (what lets the decision boundary bend), 2 output logits — built from module 03's layers
  // in a Sequential.
  // Hints, one step at a time: scripts/hint.sh 03 build_2d_classifier
  throw g2c::todo("build_2d_classifier", "g2c/nn/training.cpp", "03");
}

double accuracy_from_logits(const torch::Tensor& logits, const torch::Tensor& targets) {
  // TODO: The prediction of each row is its largest logit; accuracy is the fraction of rows whose
  // prediction equals the target, a double in [0, 1].
  // Hints, one step at a time: scripts/hint.sh 03 accuracy_from_logits
  throw g2c::todo("accuracy_from_logits", "g2c/nn/training.cpp", "03");
}

std::vector<double> train_classifier(Module& model, const torch::Tensor& x, const torch::Tensor& y,
                                     std::int64_t steps, double lr, double weight_decay) {
  // TODO: Full-batch training for classification: cross-entropy of model(x) (B, C) against y (B),
  // SGD with lr and weight_decay, `steps` steps, each step's loss recorded before its update.
  // Hints, one step at a time: scripts/hint.sh 03 train_classifier
  throw g2c::todo("train_classifier", "g2c/nn/training.cpp", "03");
}

Sequential build_mnist_mlp(std::int64_t hidden, bool use_relu) {
  // TODO: The MNIST network: 784 inputs (a flattened 28×28 image), a hidden layer of `hidden`
  // units, a ReLU only when use_relu (without it the network is one linear map in disguise), 10
  // logits.
  // Hints, one step at a time: scripts/hint.sh 03 build_mnist_mlp
  throw g2c::todo("build_mnist_mlp", "g2c/nn/training.cpp", "03");
}

double train_one_epoch(Module& model, const std::vector<Batch>& batches, Optimizer& optimizer,
                       const CrossEntropyLoss& loss) {
  // TODO: One pass over the batches, one update each; inputs (B, …) flattened to (B, features).
  // Return the mean loss per example: each batch's mean loss weighted by its size, so that a short
  // last batch counts less. No examples at all is a ValueError("loader produced no examples").
  // Hints, one step at a time: scripts/hint.sh 03 train_one_epoch
  throw g2c::todo("train_one_epoch", "g2c/nn/training.cpp", "03");
}

double evaluate_accuracy(Module& model, const std::vector<Batch>& batches) {
  // TODO: Correct predictions over all examples of all batches divided by the number of examples
  // (not the mean of per-batch accuracies), with autograd off. The same ValueError as
  // train_one_epoch when there are no examples.
  // Hints, one step at a time: scripts/hint.sh 03 evaluate_accuracy
  throw g2c::todo("evaluate_accuracy", "g2c/nn/training.cpp", "03");
}

}  // namespace g2c::nn
