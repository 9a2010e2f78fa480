// Module 03b — your work: linear warmup, then cosine decay.
#include "g2c/training/schedule.h"

#include <cmath>
#include <numbers>

#include "g2c/core/errors.h"

namespace g2c::training {

double cosine_with_warmup(std::int64_t step, std::int64_t warmup_steps, std::int64_t max_steps,
                          double max_lr, double min_lr) {
  // TODO: The learning rate at `step`: a linear warmup max_lr · (step + 1) / warmup_steps while
  // step < warmup_steps; min_lr from max_steps on; in between a cosine from max_lr down to min_lr,
  //   lr = min_lr + ½ (1 + cos(π · progress)) (max_lr - min_lr),
  // with progress = (step - warmup_steps) / (max_steps - warmup_steps). Compute in double.
  // Hints, one step at a time: scripts/hint.sh 03b cosine_with_warmup
  throw g2c::todo("cosine_with_warmup", "g2c/training/schedule.cpp", "03b");
}

}  // namespace g2c::training
