// Module 03b — reference solution for g2c/training/schedule.cpp.
#include "g2c/training/schedule.h"

#include <cmath>
#include <numbers>

namespace g2c::training {

double cosine_with_warmup(std::int64_t step, std::int64_t warmup_steps, std::int64_t max_steps,
                          double max_lr, double min_lr) {
  if (warmup_steps > 0 && step < warmup_steps) {
    // Linear ramp that reaches max_lr on the last warmup step.
    return max_lr * static_cast<double>(step + 1) / static_cast<double>(warmup_steps);
  }
  if (step >= max_steps) return min_lr;
  // Here warmup_steps <= step < max_steps, so the denominator is positive.
  const double progress =
      static_cast<double>(step - warmup_steps) / static_cast<double>(max_steps - warmup_steps);
  const double coefficient = 0.5 * (1.0 + std::cos(std::numbers::pi * progress));  // 1 -> 0
  return min_lr + coefficient * (max_lr - min_lr);
}

}  // namespace g2c::training
