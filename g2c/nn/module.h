// g2c::nn::Module: the base of every course layer.
//
// A thin layer over torch::nn::Module (so parameters(), named_parameters(), torch::save and
// torch::optim keep working) that adds what the course's Module promises:
//   - calling a module calls forward(x);
//   - device() is the device of the first parameter, CPU for a module without parameters;
//   - to(device) moves parameters, buffers *and existing gradients* in place and returns the
//   module.
// Every layer takes one tensor and returns one, so Sequential can chain any of them.
#pragma once

#include "g2c/core/torch.h"

namespace g2c::nn {

class Module : public torch::nn::Module {
 public:
  using torch::nn::Module::Module;
  ~Module() override = default;

  /// The layer's computation. The base class has none to offer.
  virtual torch::Tensor forward(const torch::Tensor& x);

  torch::Tensor operator()(const torch::Tensor& x) { return forward(x); }

  /// Device of the first parameter; CPU when there are no parameters.
  torch::Device device() const;

  /// Moves parameters, buffers and gradients; returns this module so calls can chain.
  Module& to(torch::Device device);
  Module& to(torch::Dtype dtype);
  Module& to(torch::Device device, torch::Dtype dtype);

 private:
  void move_gradients(const torch::TensorOptions& options);
};

}  // namespace g2c::nn
