#include <fmt/format.h>

#include "g2c/core/errors.h"
#include "g2c/core/shapes.h"
#include "g2c/nn/losses.h"

namespace g2c::nn {

torch::Tensor MSELoss::forward(const torch::Tensor& prediction, const torch::Tensor& target) const {
  if (prediction.sizes() != target.sizes()) {
    throw ValueError(fmt::format("MSELoss: prediction {} and target {} must have the same shape",
                                 describe_shape(prediction), describe_shape(target)));
  }
  return (prediction - target).pow(2).mean();
}

void check_cross_entropy_inputs(const torch::Tensor& logits, const torch::Tensor& targets) {
  check_shape(logits, "CrossEntropyLoss logits", {"B", "C"}, {});
  check_shape(targets, "CrossEntropyLoss targets", {"B"}, {logits.size(0)});
  if (torch::isFloatingType(targets.scalar_type())) {
    throw ValueError("CrossEntropyLoss targets must be integer class ids (torch::kLong), got " +
                     std::string(c10::toString(targets.scalar_type())));
  }
}

}  // namespace g2c::nn
