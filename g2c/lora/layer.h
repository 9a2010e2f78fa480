// Module 13b — LoRA: a trainable low-rank delta beside a frozen Linear layer.
//
// Full fine-tuning moves every weight, and AdamW keeps two more tensors (m and v) per weight: the
// optimizer alone costs twice the model. LoRA (Hu et al., 2021) freezes the pretrained W and
// trains a low-rank correction beside it:
//   y = x W + b                          frozen: exactly the pretrained layer        (…, out)
//     + scaling · (x A) B                trainable: the delta, scaling = alpha / r   (…, out)
// Dimension legend: in, out the layer's sizes, r the rank (4–16 in practice).
//   A (in, r), B (r, out): A B has W's shape (in, out) but costs r·(in + out) parameters instead
//   of in·out. At rank 4 on a 128-wide projection that is 1 024 instead of 16 384.
// A starts random (Uniform(−1/√in, 1/√in), module 03's Linear init) and B at zero, so A B = 0 and
// the wrapped layer computes bit for bit what the frozen one did until training moves B. Only one
// of the two may start at zero: dL/dA flows through B, so with both zero neither would ever move.
//
// The C++ design. LoRALinearImpl *is a* g2c::nn::LinearImpl: a parent's `g2c::nn::Linear q_proj`
// field can hold one (inject_lora swaps it in with Module::replace_layer, g2c/nn/module.h), and the
// parent's unchanged `q_proj(x)` reaches LoRA's forward through the virtual call. It registers the
// base layer's own W and b tensors (the same objects, not copies) under the same names "W" and
// "b", then lora_A and lora_B: after injection every parameter name of the model is what it was,
// the adapter's names are added beside them, and merge() changes the pretrained weight in place.
// Freezing is not done here: that is mark_only_lora_trainable (g2c/lora/inject.h), a separate
// decision on purpose.
//
// Example:
//   g2c::nn::Linear base(8, 4);
//   g2c::lora::LoRALinear lora(base, g2c::lora::LoRALinearOptions(/*rank=*/2).alpha(4.0));
//   lora->W.is_same(base->W);     // true: wrapped, not copied
//   auto y = lora(x);             // (…, 8) -> (…, 4): base(x) + 2 · (x A) B
//   lora->merge();                // W += 2 · A B; forward is one Linear again
#pragma once

#include <cstdint>
#include <optional>
#include <ostream>

#include "g2c/core/torch.h"

#include "g2c/nn/linear.h"

namespace g2c::lora {

struct LoRALinearOptions {
  /* implicit */ LoRALinearOptions(std::int64_t rank) : rank_(rank) {}
  /// r, the width of the bottleneck: A (in, r), B (r, out). At least 1.
  TORCH_ARG(std::int64_t, rank);
  /// The numerator of scaling = alpha / rank; unset means alpha = rank, so scaling = 1 (the least
  /// surprising choice at course scale).
  TORCH_ARG(std::optional<double>, alpha) = std::nullopt;
};

class LoRALinearImpl : public g2c::nn::LinearImpl {
 public:
  /// Wraps `base`, sharing its W and b. ValueError for an empty handle, a base that already is a
  /// LoRALinear, or rank < 1.
  LoRALinearImpl(const g2c::nn::Linear& base, const LoRALinearOptions& options);
  LoRALinearImpl(const g2c::nn::Linear& base, std::int64_t rank,
                 std::optional<double> alpha = std::nullopt)
      : LoRALinearImpl(base, LoRALinearOptions(rank).alpha(alpha)) {}

  /// Registers lora_A (in, r) then lora_B (r, out), after the shared W and b.
  void reset();
  /// A ~ Uniform(−1/√in, 1/√in), B = 0: the delta starts at exactly zero.
  void reset_parameters();

  /// x (…, in) -> (…, out): the base layer's x W + b plus scaling · (x A) B, or the base layer
  /// alone once merged (the delta then lives inside W).
  /// Example: B = 0 -> exactly the base layer's output.
  torch::Tensor forward(const torch::Tensor& x) override;

  /// Folds the delta into the base weight, W += scaling · A B, so forward costs one Linear (the
  /// deployment trick). Calling it on a merged layer does nothing.
  void merge();
  /// The inverse, W −= scaling · A B, on a merged layer only; on an unmerged one it does nothing.
  void unmerge();

  void pretty_print(std::ostream& stream) const override;

  LoRALinearOptions lora_options;
  std::int64_t rank;
  double alpha;
  double scaling;        // alpha / rank
  bool merged = false;   // whether W currently holds the delta
  torch::Tensor lora_A;  // (in, r)
  torch::Tensor lora_B;  // (r, out)
};
TORCH_MODULE(LoRALinear);

}  // namespace g2c::lora
