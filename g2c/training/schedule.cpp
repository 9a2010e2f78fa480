// Module 03b — your work: linear warmup, then cosine decay.
#include "g2c/training/schedule.h"

#include <cmath>
#include <numbers>

#include "g2c/core/errors.h"

namespace g2c::training {

double cosine_with_warmup(std::int64_t step, std::int64_t warmup_steps, std::int64_t max_steps,
                          double max_lr, double min_lr) {
  // TODO: (1) warmup_steps > 0 and step < warmup_steps -> max_lr * (step + 1) / warmup_steps
  // (compute in double); (2) step >= max_steps -> min_lr; (3) otherwise
  // progress = double(step - warmup_steps) / double(max_steps - warmup_steps) and
  // lr = min_lr + 0.5 * (1 + std::cos(std::numbers::pi * progress)) * (max_lr - min_lr).
  throw g2c::todo("cosine_with_warmup", "g2c/training/schedule.cpp", "03b");
}

}  // namespace g2c::training
