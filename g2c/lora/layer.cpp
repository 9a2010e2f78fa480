// Module 13b — your work: LoRA's forward pass, and merging the delta into the weight and back.
#include "g2c/lora/layer.h"
#include "g2c/core/errors.h"

namespace g2c::lora {

torch::Tensor LoRALinearImpl::forward(const torch::Tensor& x) {
  // TODO: y = x W + b + scaling · (x A) B. The first part is the frozen base layer: your module-03
  // Linear's forward on this layer (it checks x too), (…, in) -> (…, out). When merged, the delta
  // already lives inside W: return the base output alone, adding it again would double it.
  // Otherwise compute the delta as two skinny products, (x A) first, (…, in) @ (in, r) -> (…, r),
  // then @ B (r, out) -> (…, out): forming A B (in, out) on every call would pay the full-size cost
  // LoRA exists to avoid. Scale it by `scaling` and add. Operations: the base class's forward, two
  // matrix products, a multiplication, an addition.
  // Hints, one step at a time: scripts/hint.sh 13b LoRALinear::forward
  throw g2c::todo("LoRALinear::forward", "g2c/lora/layer.cpp", "13b");
}

void LoRALinearImpl::merge() {
  // TODO: fold the delta into the weight in place, W += scaling · A B (in, out), and set `merged`.
  // The course's W is (in, out), the same orientation as A B (in, r) @ (r, out): no transpose.
  // Merging twice must not add the delta twice: on a merged layer do nothing. W is a parameter
  // that may require grad, and an in-place change of one is an autograd error: switch autograd off
  // around it. Operations: a guard, a matrix product, an in-place addition.
  // Hints, one step at a time: scripts/hint.sh 13b LoRALinear::merge
  throw g2c::todo("LoRALinear::merge", "g2c/lora/layer.cpp", "13b");
}

void LoRALinearImpl::unmerge() {
  // TODO: the mirror of merge: W −= scaling · A B, with autograd off, then clear `merged`; only on
  // a merged layer (on an unmerged one, do nothing — subtracting a delta that was never added
  // would corrupt the pretrained weight). Operations: a guard, a matrix product, an in-place
  // subtraction.
  // Hints, one step at a time: scripts/hint.sh 13b LoRALinear::unmerge
  throw g2c::todo("LoRALinear::unmerge", "g2c/lora/layer.cpp", "13b");
}

}  // namespace g2c::lora
