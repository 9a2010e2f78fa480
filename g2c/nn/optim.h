// Optimizers written by hand: plain SGD with weight decay, and AdamW (module 03b).
#pragma once

#include <cstdint>
#include <utility>
#include <vector>

#include <torch/torch.h>

namespace g2c::nn {

class Optimizer {
 public:
  explicit Optimizer(std::vector<torch::Tensor> params);
  virtual ~Optimizer() = default;

  /// Sets every existing gradient to zero in place; parameters without a gradient are skipped.
  void zero_grad();
  /// One update of every parameter that has a gradient.
  virtual void step() = 0;

  const std::vector<torch::Tensor>& params() const { return params_; }

 protected:
  std::vector<torch::Tensor> params_;
};

/// p -= lr * (grad + weight_decay * p), outside autograd.
/// Example: p = [1, 2, 3], grad = [0.1, 0.2, 0.3], lr = 0.5 -> [0.95, 1.9, 2.85].
class SGD : public Optimizer {
 public:
  SGD(std::vector<torch::Tensor> params, double lr, double weight_decay = 0.0);
  void step() override;

  double lr;
  double weight_decay;
};

/// Adam with decoupled weight decay (Loshchilov & Hutter), matching torch::optim::AdamW step for
/// step. Per parameter: step t, first moment m and second moment v (both start at zero).
class AdamW : public Optimizer {
 public:
  AdamW(std::vector<torch::Tensor> params, double lr,
        std::pair<double, double> betas = {0.9, 0.999}, double eps = 1e-8,
        double weight_decay = 0.01);
  void step() override;

  double lr;
  std::pair<double, double> betas;
  double eps;
  double weight_decay;
  std::vector<std::int64_t> steps;        // t per parameter
  std::vector<torch::Tensor> exp_avg;     // m, like the parameter
  std::vector<torch::Tensor> exp_avg_sq;  // v, like the parameter
};

}  // namespace g2c::nn
