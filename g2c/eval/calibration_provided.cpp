// Module 15 — calibration (provided part): binning and the checks.
#include "g2c/eval/calibration.h"

#include <algorithm>
#include <cmath>

#include <fmt/format.h>

#include "g2c/core/errors.h"

namespace g2c::eval {

std::int64_t calibration_bin(double confidence, std::int64_t n_bins) {
  const auto bin = static_cast<std::int64_t>(std::floor(confidence * static_cast<double>(n_bins)));
  return std::clamp<std::int64_t>(bin, 0, n_bins - 1);
}

void check_calibration_inputs(const std::vector<double>& confidences,
                              const std::vector<bool>& correct, std::int64_t n_bins) {
  if (confidences.size() != correct.size()) {
    throw ValueError(fmt::format(
        "calibration: confidences and correct must have one entry per example, got {} and {}",
        confidences.size(), correct.size()));
  }
  if (confidences.empty()) {
    throw ValueError("calibration is undefined for no examples: pass at least one");
  }
  if (n_bins < 1) {
    throw ValueError(fmt::format("calibration: n_bins must be at least 1, got {}", n_bins));
  }
  for (std::size_t i = 0; i < confidences.size(); ++i) {
    if (!(confidences[i] >= 0.0 && confidences[i] <= 1.0)) {
      throw ValueError(
          fmt::format("calibration: confidence {} of example {} is not a probability in [0, 1]",
                      confidences[i], i));
    }
  }
}

}  // namespace g2c::eval
