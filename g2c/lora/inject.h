// Module 13b — putting LoRA layers into a model, and freezing everything else.
//
// A model addresses its Linear layers by name ("blocks.1.attn.q_proj"), and LoRA practice adapts a
// named subset (classically the attention projections q_proj and v_proj) and freezes the rest.
// Two functions, two separate decisions:
//   inject_lora               the tree surgery: every Linear child whose own name is a target
//                             (wherever it sits in the tree) becomes a LoRALinear wrapping it.
//                             Implemented for you.
//   mark_only_lora_trainable  the freeze: requires_grad off everywhere but on every LoRA A and B.
//                             Your work: requires_grad is the valve on module 01's gradient flow,
//                             and LoRA's memory savings follow entirely from what it lets through.
// Injecting without freezing trains the whole model with an adapter bolted on: the loss goes down
// either way, and only the parameter counts tell the truth.
//
// Example, on a TransformerLM with 4 blocks:
//   auto replaced = g2c::lora::inject_lora(*model, {"q_proj", "v_proj"}, /*rank=*/4);
//   // {"blocks.0.attn.q_proj", "blocks.0.attn.v_proj", …, "blocks.3.attn.v_proj"}: 8 layers
//   auto [trainable, total] = g2c::lora::mark_only_lora_trainable(*model);
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "g2c/core/torch.h"

#include "g2c/lora/layer.h"
#include "g2c/nn/module.h"

namespace g2c::lora {

/// Parameter counts, in numbers of scalars: `auto [trainable, total] = count_parameters(model)`.
struct ParameterCount {
  std::int64_t trainable = 0;  // in parameters with requires_grad
  std::int64_t total = 0;      // in all parameters
  bool operator==(const ParameterCount&) const = default;
};

/// Replaces every g2c::nn::Linear child named one of `targets` (the child's own name, e.g.
/// "q_proj", matched at every depth) by a LoRALinear(child, rank, alpha) wrapping it, and returns
/// the dotted names of the replaced layers in tree order. A layer that already is a LoRALinear is
/// not a target, so a second injection of the same names matches nothing and fails. Checks
/// everything before it changes anything: ValueError when nothing matches (naming the targets and
/// the model's Linear layers), for rank < 1, or when a matching layer was registered with
/// register_module rather than Module::register_layer (its parent's field could not follow).
std::vector<std::string> inject_lora(g2c::nn::Module& model,
                                     const std::vector<std::string>& targets, std::int64_t rank,
                                     std::optional<double> alpha = std::nullopt);

/// Every LoRA layer of the tree, the model itself included, in tree order.
std::vector<LoRALinearImpl*> lora_layers(torch::nn::Module& model);

/// {trainable, total}: how many scalars the parameters with requires_grad hold, and all of them.
ParameterCount count_parameters(const torch::nn::Module& model);

/// Freezes the model except its adapters: afterwards exactly the lora_A and lora_B of every LoRA
/// layer have requires_grad, every other parameter (the wrapped W and b included) has not.
/// Returns count_parameters(model), so the caller sees the ratio the moment the freeze lands.
/// Example: two blocks with LoRA rank 4 on q_proj 8->8 and v_proj 8->4 -> {trainable 224, total …}.
ParameterCount mark_only_lora_trainable(torch::nn::Module& model);

}  // namespace g2c::lora
