// Module 13b — reference solution for g2c/lora/inject.cpp.
#include "g2c/lora/inject.h"

namespace g2c::lora {

ParameterCount mark_only_lora_trainable(torch::nn::Module& model) {
  for (auto& p : model.parameters()) p.requires_grad_(false);  // freeze everything...
  for (auto* layer : lora_layers(model)) {                     // ...then the allowlist
    layer->lora_A.requires_grad_(true);
    layer->lora_B.requires_grad_(true);
  }
  return count_parameters(model);
}

}  // namespace g2c::lora
