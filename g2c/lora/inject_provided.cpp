#include <algorithm>
#include <functional>
#include <memory>
#include <set>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "g2c/core/errors.h"
#include "g2c/lora/inject.h"

namespace g2c::lora {

namespace {

using Visitor =
    std::function<void(torch::nn::Module& parent, const std::string& name,
                       const std::string& dotted, const std::shared_ptr<torch::nn::Module>& child)>;

/// Calls `visit` for every child of the tree, each before its own children (named_modules()'s
/// order), with its parent, its own name and its dotted path. Walks children rather than calling
/// named_modules(), which needs the root to live in a shared_ptr.
void walk(torch::nn::Module& parent, const std::string& prefix, const Visitor& visit) {
  for (const auto& item : parent.named_children()) {
    const std::string dotted = prefix.empty() ? item.key() : prefix + "." + item.key();
    visit(parent, item.key(), dotted, item.value());
    walk(*item.value(), dotted, visit);
  }
}

/// One layer to replace, found before anything is changed.
struct Target {
  g2c::nn::Module* parent;
  std::string name;    // "q_proj"
  std::string dotted;  // "blocks.0.attn.q_proj"
  g2c::nn::Linear layer;
};

}  // namespace

std::vector<std::string> inject_lora(g2c::nn::Module& model,
                                     const std::vector<std::string>& targets, std::int64_t rank,
                                     std::optional<double> alpha) {
  if (rank < 1) {
    throw ValueError(fmt::format("inject_lora needs rank >= 1, got rank={}", rank));
  }
  const std::set<std::string> wanted(targets.begin(), targets.end());
  std::vector<Target> found;
  std::set<std::string> linear_names;  // every Linear child's own name, for the error message
  std::set<std::string> already_lora;  // targets that are LoRA layers already
  std::vector<std::string> not_replaceable;
  walk(model, "",
       [&](torch::nn::Module& parent, const std::string& name, const std::string& dotted,
           const std::shared_ptr<torch::nn::Module>& child) {
         auto linear = std::dynamic_pointer_cast<g2c::nn::LinearImpl>(child);
         if (!linear) return;
         linear_names.insert(name);
         if (wanted.count(name) == 0) return;
         if (std::dynamic_pointer_cast<LoRALinearImpl>(child)) {
           already_lora.insert(name);
           return;
         }
         auto* owner = dynamic_cast<g2c::nn::Module*>(&parent);
         if (owner == nullptr || !owner->is_replaceable(name)) {
           not_replaceable.push_back(dotted);
           return;
         }
         found.push_back({owner, name, dotted, g2c::nn::Linear(linear)});
       });

  if (!not_replaceable.empty()) {
    throw ValueError(fmt::format(
        "inject_lora cannot replace {}: {} registered with register_module, so the parent's field "
        "(what its forward calls) could not follow the registry. Register it in the parent's "
        "constructor with register_layer(\"<name>\", <field>, g2c::nn::Linear(...)) "
        "(g2c/nn/module.h)",
        fmt::join(not_replaceable, ", "), not_replaceable.size() == 1 ? "it was" : "they were"));
  }
  if (found.empty()) {
    std::string why;
    if (!already_lora.empty()) {
      why = fmt::format(" Every layer named {} already is a LoRALinear: inject once.",
                        fmt::join(already_lora, ", "));
    }
    throw ValueError(fmt::format(
        "inject_lora matched no g2c::nn::Linear children named {}.{} The model's Linear layers "
        "are named {} (a target is that last name, matched at every depth).",
        std::vector<std::string>(wanted.begin(), wanted.end()), why,
        linear_names.empty() ? "(none: the model has no Linear layer)"
                             : fmt::format("{}", fmt::join(linear_names, ", "))));
  }

  std::vector<std::string> replaced;
  for (auto& target : found) {
    LoRALinear lora(target.layer, LoRALinearOptions(rank).alpha(alpha));
    target.parent->replace_layer(target.name, lora.ptr());
    replaced.push_back(target.dotted);
  }
  return replaced;
}

std::vector<LoRALinearImpl*> lora_layers(torch::nn::Module& model) {
  std::vector<LoRALinearImpl*> layers;
  if (auto* root = dynamic_cast<LoRALinearImpl*>(&model)) layers.push_back(root);
  walk(model, "",
       [&](torch::nn::Module&, const std::string&, const std::string&,
           const std::shared_ptr<torch::nn::Module>& child) {
         if (auto* lora = dynamic_cast<LoRALinearImpl*>(child.get())) layers.push_back(lora);
       });
  return layers;
}

ParameterCount count_parameters(const torch::nn::Module& model) {
  ParameterCount count;
  for (const auto& p : model.parameters()) {
    count.total += p.numel();
    if (p.requires_grad()) count.trainable += p.numel();
  }
  return count;
}

}  // namespace g2c::lora
