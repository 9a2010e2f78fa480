// Element-wise nonlinearities. None of them has parameters.
#pragma once

#include "g2c/core/torch.h"

#include "g2c/nn/module.h"

namespace g2c::nn {

/// max(x, 0). Example: [-1, 0, 2] -> [0, 0, 2].
class ReLUImpl : public Module {
 public:
  torch::Tensor forward(const torch::Tensor& x) override;
  void pretty_print(std::ostream& stream) const override { stream << "g2c::nn::ReLU()"; }
};
TORCH_MODULE(ReLU);

/// tanh(x), squashing into (-1, 1).
class TanhImpl : public Module {
 public:
  torch::Tensor forward(const torch::Tensor& x) override;
  void pretty_print(std::ostream& stream) const override { stream << "g2c::nn::Tanh()"; }
};
TORCH_MODULE(Tanh);

/// 1 / (1 + exp(-x)), squashing into (0, 1). Example: 0 -> 0.5.
class SigmoidImpl : public Module {
 public:
  torch::Tensor forward(const torch::Tensor& x) override;
  void pretty_print(std::ostream& stream) const override { stream << "g2c::nn::Sigmoid()"; }
};
TORCH_MODULE(Sigmoid);

}  // namespace g2c::nn
