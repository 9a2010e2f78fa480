// Sequential: layers applied one after another.
#pragma once

#include <concepts>
#include <memory>
#include <vector>

#include "g2c/core/torch.h"

#include "g2c/nn/module.h"

namespace g2c::nn {

class SequentialImpl : public Module {
 public:
  SequentialImpl() = default;
  explicit SequentialImpl(std::vector<std::shared_ptr<Module>> layers);

  /// Sequential(Linear(2, 16), ReLU(), Linear(16, 2)): any g2c layers, in order.
  template <typename... Layers>
  requires(sizeof...(Layers) > 0 &&
           (std::derived_from<typename std::decay_t<Layers>::ContainedType, Module> &&
            ...)) explicit SequentialImpl(Layers&&... layers) {
    (push_back(layers.ptr()), ...);
  }

  /// Appends a layer, registered as submodule "0", "1", ... so parameters() lists the layers'
  /// parameters in order.
  void push_back(std::shared_ptr<Module> layer);

  /// Applies every layer in order: layer_n(... layer_1(layer_0(x))).
  torch::Tensor forward(const torch::Tensor& x) override;

  std::size_t size() const { return layers.size(); }
  void pretty_print(std::ostream& stream) const override { stream << "g2c::nn::Sequential"; }

  std::vector<std::shared_ptr<Module>> layers;
};
TORCH_MODULE(Sequential);

}  // namespace g2c::nn
