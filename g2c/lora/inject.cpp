// Module 13b — your work: freeze the model, all but its LoRA adapters.
#include "g2c/lora/inject.h"
#include "g2c/core/errors.h"

namespace g2c::lora {

ParameterCount mark_only_lora_trainable(torch::nn::Module& model) {
  // TODO: afterwards exactly the lora_A and lora_B of every LoRA layer require grad, and nothing
  // else does, the wrapped W and b included. Freeze first, then unfreeze the allowlist: switch
  // requires_grad off on every parameter of the model, then back on for each LoRA layer's two
  // adapter matrices (lora_layers(model) lists the layers); whatever the model calls its other
  // weights, they end up frozen. A parameter with requires_grad off gets no gradient, and an
  // optimizer never moves it. Return count_parameters(model). Operations: two loops,
  // requires_grad_.
  // Hints, one step at a time: scripts/hint.sh 13b mark_only_lora_trainable
  throw g2c::todo("mark_only_lora_trainable", "g2c/lora/inject.cpp", "13b");
}

}  // namespace g2c::lora
