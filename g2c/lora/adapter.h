// Module 13b, implemented for you — what a LoRA run carries away, and how a trainer sees it.
//
// The adapter. A LoRA run's lasting output is its A and B matrices alone: a few kilobytes beside a
// base model of megabytes (gigabytes at scale). lora_state_dict() takes exactly those, keyed by the
// model's own dotted parameter names ("blocks.0.attn.q_proj.lora_A"), so an adapter trained on one
// copy of a base model loads into any other copy injected with the same targets and rank.
// Loading is strict: the same set of names and the same shapes, or nothing is changed. Loading
// the intersection would "work" and behave wrong.
//
// The adapter file (save_lora_adapter) is an archive (g2c/core/archive.h, what PyTorch's
// torch.save writes) holding one dict:
//   format "g2c.lora_adapter", version 1,
//   layers   [{name, in_features, out_features, rank, alpha}, …]   one per LoRA layer
//   names    ["blocks.0.attn.q_proj.lora_A", …]                     parallel to tensors
//   tensors  [A (in, r), B (r, out), …]                              CPU copies
//   info     whatever JSON the caller passed (base model, targets, steps, metrics)
// Python reads it with torch.load(path, weights_only=True): dict(zip(d["names"], d["tensors"]))
// is a state dict.
//
// The trainer's view. An optimizer built from model->parameters() keeps state for every tensor it
// is given (AdamW: m and v), frozen or not: two full copies of a frozen model, exactly the memory
// LoRA exists to save. LoRAModel passes forward through and lists only what training can move
// (module 10's Trainer, which SFTTrainer holds, makes the same choice itself: its optimizer gets
// only the parameters that require gradients; 13b_lora measures both optimizers' state).
// LibTorch's parameters() is not virtual, so the view has names of its own for that list
// (trainable_parameters) rather than an override.
//
// Example:
//   g2c::lora::inject_lora(*model, {"q_proj", "v_proj"}, /*rank=*/4);
//   g2c::lora::mark_only_lora_trainable(*model);
//   g2c::lora::LoRAModel view(model);
//   torch::optim::AdamW optimizer(view.trainable_parameters(), …);   // the adapters only
//   …train…
//   g2c::lora::save_lora_adapter("artifacts/adapters/speaker/adapter.pt", *model,
//                                {{"base_artifact", "ShakespeareLM-1M"}});
#pragma once

#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>
#include "g2c/core/torch.h"

#include "g2c/nn/module.h"

namespace g2c::lora {

/// Adapter tensors by the model's dotted parameter names, in the model's order.
using LoRAState = torch::OrderedDict<std::string, torch::Tensor>;

/// Every lora_A and lora_B of the model, detached CPU copies, by their dotted names.
/// Example: two blocks with LoRA on q_proj and v_proj -> 8 tensors, "blocks.0.q_proj.lora_A", …
LoRAState lora_state_dict(const torch::nn::Module& model);

/// Copies `state` into the model's adapters, in place, on their device and dtype. ValueError, with
/// nothing changed, unless `state` names exactly the model's adapter tensors (the message lists
/// missing and unexpected names: a model injected with other targets) with the same shapes (a
/// model injected with another rank, or a base of another width).
void load_lora_state_dict(torch::nn::Module& model, const LoRAState& state);

/// Writes the model's adapters, their layers' sizes, ranks and alphas, and `info` to one file at
/// `path` (parent folders created), atomically: readers see the old file or the whole new one.
/// ValueError when the model has no LoRA layer.
void save_lora_adapter(const std::filesystem::path& path, const torch::nn::Module& model,
                       const nlohmann::json& info = nlohmann::json::object());

/// What load_lora_adapter() read besides the tensors.
struct LoadedAdapter {
  nlohmann::json info;  // the info the file was saved with
};

/// Loads an adapter file into a model injected the same way. Checks everything before it changes
/// anything. ValueError for a missing, damaged or cut-short file, a file that is not an adapter,
/// or one that does not fit the model: other layers, another rank or width, another alpha (the
/// delta would be scaled differently from how it was trained).
LoadedAdapter load_lora_adapter(const std::filesystem::path& path, torch::nn::Module& model);

/// The trainer's view of a LoRA-injected model: forward() goes straight through, and
/// trainable_parameters() lists only the parameters with requires_grad.
class LoRAModel {
 public:
  /// ValueError for a null model.
  explicit LoRAModel(std::shared_ptr<g2c::nn::Module> model);
  template <class Impl>
  explicit LoRAModel(const torch::nn::ModuleHolder<Impl>& model)
      : LoRAModel(std::static_pointer_cast<g2c::nn::Module>(model.ptr())) {}

  /// The wrapped model's forward.
  torch::Tensor forward(const torch::Tensor& x) { return model_->forward(x); }
  torch::Tensor operator()(const torch::Tensor& x) { return forward(x); }

  /// The parameters with requires_grad, in the model's order: what an optimizer should be given.
  std::vector<torch::Tensor> trainable_parameters() const;
  /// The same with their dotted names.
  torch::OrderedDict<std::string, torch::Tensor> named_trainable_parameters() const;

  /// Moves the whole model (frozen parameters too); returns this view.
  LoRAModel& to(torch::Device device);
  /// Training mode on or off for the whole model; returns this view.
  LoRAModel& train(bool on = true);

  /// The wrapped model.
  g2c::nn::Module& model() const { return *model_; }
  const std::shared_ptr<g2c::nn::Module>& ptr() const { return model_; }

 private:
  std::shared_ptr<g2c::nn::Module> model_;
};

}  // namespace g2c::lora
