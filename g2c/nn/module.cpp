#include "g2c/nn/module.h"

#include <fmt/format.h>

#include "g2c/core/errors.h"

namespace g2c::nn {

torch::Tensor Module::forward(const torch::Tensor& /*x*/) {
  throw NotImplementedError(fmt::format(
      "NotImplementedError: {} has no forward(); a subclass of g2c::nn::Module must define it",
      name()));
}

torch::Device Module::device() const {
  const auto params = parameters(/*recurse=*/true);
  return params.empty() ? torch::Device(torch::kCPU) : params.front().device();
}

void Module::move_gradients(const torch::TensorOptions& options) {
  for (auto& p : parameters(/*recurse=*/true)) {
    if (p.grad().defined()) p.mutable_grad() = p.grad().to(options);
  }
}

Module& Module::to(torch::Device device) {
  torch::nn::Module::to(device);
  move_gradients(torch::TensorOptions().device(device));
  return *this;
}

Module& Module::to(torch::Dtype dtype) {
  torch::nn::Module::to(dtype);
  move_gradients(torch::TensorOptions().dtype(dtype));
  return *this;
}

Module& Module::to(torch::Device device, torch::Dtype dtype) {
  torch::nn::Module::to(device, dtype);
  move_gradients(torch::TensorOptions().device(device).dtype(dtype));
  return *this;
}

}  // namespace g2c::nn
