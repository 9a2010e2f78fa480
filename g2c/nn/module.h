// g2c::nn::Module: the base of every course layer.
//
// A thin layer over torch::nn::Module (so parameters(), named_parameters(), torch::save and
// torch::optim keep working) that adds what the course's Module promises:
//   - calling a module calls forward(x);
//   - device() is the device of the first parameter, CPU for a module without parameters;
//   - to(device) moves parameters, buffers *and existing gradients* in place and returns the
//   module.
// Every layer takes one tensor and returns one, so Sequential can chain any of them.
//
// Replaceable layers. A LibTorch parent holds each child twice: in the registry (what
// parameters(), to() and named_modules() walk) and in the C++ field its forward() calls
// (`q_proj(x)`). Python's setattr swaps both at once; here register_layer() registers a child and
// remembers its field, so that replace_layer() can later swap both. Module 13b's inject_lora puts
// LoRA layers in place of Linear ones this way, and the parent's forward() is none the wiser.
#pragma once

#include <functional>
#include <map>
#include <memory>
#include <string>
#include <utility>

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

  /// Registers `layer` as the child `name`, stores it in `member` (the field forward() calls) and
  /// remembers that field, so that replace_layer(name, ...) can swap the layer later. Returns
  /// `member`. Example, in a constructor:
  ///   register_layer("q_proj", q_proj, g2c::nn::Linear(D, D));
  /// subtle: the field is remembered by its address, which is why modules live behind their
  /// handle's shared_ptr (TORCH_MODULE) and are never copied.
  template <class Holder>
  Holder& register_layer(const std::string& name, Holder& member, Holder layer) {
    member = Holder(register_module(name, layer.ptr()));
    reseat_[name] = [&member](const std::shared_ptr<torch::nn::Module>& replacement) {
      auto typed = std::dynamic_pointer_cast<typename Holder::ContainedType>(replacement);
      if (!typed) return false;
      member = Holder(std::move(typed));
      return true;
    };
    return member;
  }

  /// Puts `layer` in place of the child `name`: in the registry, at the same position (so the
  /// parameters keep their order and names), and in the field register_layer() remembered.
  /// ValueError when `name` was not registered by register_layer() or `layer` is not of the
  /// field's type (a subclass is: a LoRALinear fits a Linear field).
  void replace_layer(const std::string& name, const std::shared_ptr<torch::nn::Module>& layer);

  /// Whether replace_layer(name, ...) can swap that child (it was registered by register_layer).
  bool is_replaceable(const std::string& name) const { return reseat_.count(name) > 0; }

 private:
  void move_gradients(const torch::TensorOptions& options);

  // For each child registered by register_layer: stores a replacement in its field, or returns
  // false when the replacement's type does not fit the field.
  std::map<std::string, std::function<bool(const std::shared_ptr<torch::nn::Module>&)>> reseat_;
};

}  // namespace g2c::nn
