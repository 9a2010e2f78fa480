// Helpers shared by the model files of g2c/pretrained; not part of the course's interface.
#pragma once

#include <cmath>
#include <cstdint>
#include <vector>

#include "g2c/core/torch.h"

namespace g2c::pretrained::internal {

/// While one is alive on this thread, the model files' random weights are left uninitialised:
/// load_llama replaces every one of them, so drawing 540 MB of numbers first would only cost time
/// and, until each is replaced, resident memory.
class SkipInitialization {
 public:
  SkipInitialization() : previous_(active()) { active() = true; }
  ~SkipInitialization() { active() = previous_; }
  SkipInitialization(const SkipInitialization&) = delete;
  SkipInitialization& operator=(const SkipInitialization&) = delete;
  static bool& active() {
    thread_local bool skipping = false;
    return skipping;
  }

 private:
  bool previous_;
};

/// A fresh (in, out) weight drawn as module 03's Linear draws its W: U(-1/√in, 1/√in). Only the
/// randomly initialised models of tests and exercises use it; load_llama overwrites every value.
inline torch::Tensor linear_weight(std::int64_t in, std::int64_t out) {
  if (SkipInitialization::active()) return torch::empty({in, out});
  const double bound = 1.0 / std::sqrt(static_cast<double>(in));
  return torch::empty({in, out}).uniform_(-bound, bound);
}

/// A fresh (rows, cols) weight drawn from N(0, std²): the token embedding.
inline torch::Tensor normal_weight(std::int64_t rows, std::int64_t cols, double std) {
  if (SkipInitialization::active()) return torch::empty({rows, cols});
  return torch::randn({rows, cols}) * std;
}

}  // namespace g2c::pretrained::internal
