#include "g2c/pretraining/token_checks.h"

#include <fmt/format.h>

#include "g2c/core/errors.h"
#include "g2c/core/shapes.h"

namespace g2c::pretraining {

void check_token_logits(std::string_view function, const torch::Tensor& logits,
                        const torch::Tensor& targets) {
  if (!logits.defined() || !targets.defined()) {
    throw ValueError(fmt::format("{} needs defined logits (B, T, V) and targets (B, T)", function));
  }
  const bool logits_ok = logits.dim() == 3 && logits.is_floating_point();
  const bool targets_ok = targets.dim() == 2 && !targets.is_floating_point() &&
                          !targets.is_complex() && targets.scalar_type() != torch::kBool;
  if (!logits_ok || !targets_ok || logits.size(0) != targets.size(0) ||
      logits.size(1) != targets.size(1)) {
    throw ValueError(fmt::format(
        "{} expects floating-point logits (B, T, V) and integer targets (B, T) with the same B and "
        "T, got logits {} {} and targets {} {}",
        function, describe_shape(logits, {"B", "T", "V"}), c10::toString(logits.scalar_type()),
        describe_shape(targets, {"B", "T"}), c10::toString(targets.scalar_type())));
  }
}

void check_token_mask(std::string_view function, const torch::Tensor& targets,
                      const torch::Tensor& mask) {
  if (!mask.defined()) {
    throw ValueError(
        fmt::format("{} needs a defined mask (B, T), one 0 or 1 per target", function));
  }
  if (!mask.sizes().equals(targets.sizes())) {
    throw ValueError(
        fmt::format("{} needs a mask shaped like the targets {}, got {}: one 0 or 1 per target",
                    function, describe_shape(targets, {"B", "T"}), describe_shape(mask)));
  }
}

}  // namespace g2c::pretraining
