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

void Module::replace_layer(const std::string& name,
                           const std::shared_ptr<torch::nn::Module>& layer) {
  const auto reseat = reseat_.find(name);
  if (reseat == reseat_.end()) {
    throw ValueError(fmt::format(
        "{} has no replaceable layer '{}': only children registered with "
        "register_layer(\"{}\", field, layer) can be replaced (their field is swapped too), and "
        "this one was {}",
        this->name(), name, name,
        named_children().contains(name) ? "registered with register_module" : "never registered"));
  }
  if (!layer || !reseat->second(layer)) {
    throw ValueError(
        fmt::format("{}: the replacement for '{}' is {}, which its field cannot hold; "
                    "replace a layer with one of the same class or a subclass of it",
                    this->name(), name, layer ? layer->name() : "a null pointer"));
  }
  replace_module(name, layer);
}

}  // namespace g2c::nn
