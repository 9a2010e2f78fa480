// Helpers shared by the model files of g2c/pretrained; not part of the course's interface.
#pragma once

#include <cmath>
#include <cstdint>

#include "g2c/core/torch.h"

namespace g2c::pretrained::internal {

/// A fresh (in, out) weight drawn as module 03's Linear draws its W: U(-1/√in, 1/√in). Only the
/// randomly initialised models of tests and exercises use it; load_llama overwrites every value.
inline torch::Tensor linear_weight(std::int64_t in, std::int64_t out) {
  const double bound = 1.0 / std::sqrt(static_cast<double>(in));
  return torch::empty({in, out}).uniform_(-bound, bound);
}

}  // namespace g2c::pretrained::internal
