// Module 03 — reference solution for g2c/nn/training.cpp.
#include "g2c/nn/training.h"
#include "g2c/core/errors.h"
#include "g2c/nn/activations.h"

namespace g2c::nn {

std::pair<Linear, std::vector<double>> train_linear_regression(const torch::Tensor& x,
                                                               const torch::Tensor& y,
                                                               std::int64_t steps, double lr) {
  Linear model(x.size(1), y.size(1));
  SGD optimizer(model->parameters(), lr);
  MSELoss mse;
  std::vector<double> losses;
  losses.reserve(static_cast<std::size_t>(steps));
  for (std::int64_t step = 0; step < steps; ++step) {
    auto loss = mse(model(x), y);
    losses.push_back(loss.item<double>());
    optimizer.zero_grad();
    loss.backward();
    optimizer.step();
  }
  return {model, losses};
}

Sequential build_2d_classifier(std::int64_t hidden) {
  return Sequential(Linear(2, hidden), ReLU(), Linear(hidden, 2));
}

double accuracy_from_logits(const torch::Tensor& logits, const torch::Tensor& targets) {
  return logits.argmax(/*dim=*/-1).eq(targets).to(torch::kDouble).mean().item<double>();
}

std::vector<double> train_classifier(Module& model, const torch::Tensor& x, const torch::Tensor& y,
                                     std::int64_t steps, double lr, double weight_decay) {
  SGD optimizer(model.parameters(), lr, weight_decay);
  CrossEntropyLoss cross_entropy;
  std::vector<double> losses;
  losses.reserve(static_cast<std::size_t>(steps));
  for (std::int64_t step = 0; step < steps; ++step) {
    auto loss = cross_entropy(model(x), y);
    losses.push_back(loss.item<double>());
    optimizer.zero_grad();
    loss.backward();
    optimizer.step();
  }
  return losses;
}

Sequential build_mnist_mlp(std::int64_t hidden, bool use_relu) {
  Sequential model;
  model->push_back(Linear(784, hidden).ptr());
  if (use_relu) model->push_back(ReLU().ptr());
  model->push_back(Linear(hidden, 10).ptr());
  return model;
}

double train_one_epoch(Module& model, const std::vector<Batch>& batches, Optimizer& optimizer,
                       const CrossEntropyLoss& loss) {
  double total_loss = 0.0;
  std::int64_t examples = 0;
  for (const auto& batch : batches) {
    const auto inputs = batch.inputs.reshape({batch.inputs.size(0), -1});  // (B, features)
    auto batch_loss = loss(model(inputs), batch.targets);
    optimizer.zero_grad();
    batch_loss.backward();
    optimizer.step();
    total_loss += batch_loss.item<double>() * static_cast<double>(inputs.size(0));
    examples += inputs.size(0);
  }
  if (examples == 0) throw ValueError("loader produced no examples");
  return total_loss / static_cast<double>(examples);
}

double evaluate_accuracy(Module& model, const std::vector<Batch>& batches) {
  torch::NoGradGuard no_grad;
  std::int64_t correct = 0;
  std::int64_t examples = 0;
  for (const auto& batch : batches) {
    const auto inputs = batch.inputs.reshape({batch.inputs.size(0), -1});
    correct += model(inputs).argmax(/*dim=*/-1).eq(batch.targets).sum().item<std::int64_t>();
    examples += inputs.size(0);
  }
  if (examples == 0) throw ValueError("loader produced no examples");
  return static_cast<double>(correct) / static_cast<double>(examples);
}

}  // namespace g2c::nn
