// Module 03 — your work: the training helpers.
#include "g2c/nn/training.h"
#include "g2c/core/errors.h"
#include "g2c/nn/activations.h"

namespace g2c::nn {

std::pair<Linear, std::vector<double>> train_linear_regression(const torch::Tensor& x,
                                                               const torch::Tensor& y,
                                                               std::int64_t steps, double lr) {
  // TODO: make Linear(x.size(1), y.size(1)), then `steps` times: loss = MSE(model(x), y), record
  // loss.item<double>(), zero_grad, backward, SGD step. Return {model, losses}.
  throw g2c::todo("train_linear_regression", "g2c/nn/training.cpp", "03");
}

Sequential build_2d_classifier(std::int64_t hidden) {
  // TODO: return Sequential(Linear(2, hidden), ReLU(), Linear(hidden, 2)).
  throw g2c::todo("build_2d_classifier", "g2c/nn/training.cpp", "03");
}

double accuracy_from_logits(const torch::Tensor& logits, const torch::Tensor& targets) {
  // TODO: argmax over the class dimension, compare with targets, return the mean as a double.
  throw g2c::todo("accuracy_from_logits", "g2c/nn/training.cpp", "03");
}

std::vector<double> train_classifier(Module& model, const torch::Tensor& x, const torch::Tensor& y,
                                     std::int64_t steps, double lr, double weight_decay) {
  // TODO: SGD(model.parameters(), lr, weight_decay) and CrossEntropyLoss; `steps` full-batch
  // steps, recording each loss.
  throw g2c::todo("train_classifier", "g2c/nn/training.cpp", "03");
}

Sequential build_mnist_mlp(std::int64_t hidden, bool use_relu) {
  // TODO: Linear(784, hidden), then ReLU() only if use_relu, then Linear(hidden, 10).
  throw g2c::todo("build_mnist_mlp", "g2c/nn/training.cpp", "03");
}

double train_one_epoch(Module& model, const std::vector<Batch>& batches, Optimizer& optimizer,
                       const CrossEntropyLoss& loss) {
  // TODO: for each batch: flatten inputs to (B, -1), forward, loss, zero_grad, backward, step;
  // return sum(loss * B) / sum(B). Throw ValueError("loader produced no examples") if empty.
  throw g2c::todo("train_one_epoch", "g2c/nn/training.cpp", "03");
}

double evaluate_accuracy(Module& model, const std::vector<Batch>& batches) {
  // TODO: under torch::NoGradGuard, count correct argmax predictions over every batch and divide
  // by the number of examples. Throw ValueError("loader produced no examples") if there are none.
  throw g2c::todo("evaluate_accuracy", "g2c/nn/training.cpp", "03");
}

}  // namespace g2c::nn
