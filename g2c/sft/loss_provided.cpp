#include <fmt/format.h>

#include "g2c/core/errors.h"
#include "g2c/core/shapes.h"
#include "g2c/sft/loss.h"

namespace g2c::sft {

void check_masked_cross_entropy(const torch::Tensor& logits, const torch::Tensor& targets,
                                const torch::Tensor& mask) {
  if (!logits.defined() || !targets.defined() || !mask.defined()) {
    throw ValueError(
        "masked_cross_entropy needs defined logits (B, T, V), targets (B, T) and mask (B, T)");
  }
  const bool logits_ok = logits.dim() == 3 && logits.is_floating_point();
  const bool targets_ok = targets.dim() == 2 && !targets.is_floating_point() &&
                          !targets.is_complex() && targets.scalar_type() != torch::kBool;
  if (!logits_ok || !targets_ok || logits.size(0) != targets.size(0) ||
      logits.size(1) != targets.size(1)) {
    throw ValueError(fmt::format(
        "masked_cross_entropy expects floating-point logits (B, T, V) and integer targets (B, T) "
        "with the same B and T, got logits {} {} and targets {} {}",
        describe_shape(logits, {"B", "T", "V"}), c10::toString(logits.scalar_type()),
        describe_shape(targets, {"B", "T"}), c10::toString(targets.scalar_type())));
  }
  if (!mask.sizes().equals(targets.sizes())) {
    throw ValueError(fmt::format(
        "masked_cross_entropy needs a mask shaped like the targets {}, got {}: one 0 or 1 per "
        "target",
        describe_shape(targets, {"B", "T"}), describe_shape(mask)));
  }
}

}  // namespace g2c::sft
