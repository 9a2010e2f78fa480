// Timing helpers: waiting for the device before reading the clock, and medians of repeated
// timings (the middle of several runs is robust to the one run that shared its core with something
// else, which a mean is not).
#pragma once

#include <algorithm>
#include <vector>

#include <torch/torch.h>

namespace g2c::exercises {

/// Waits until `device` has finished the work queued on it (CUDA and MPS run asynchronously), so
/// that a clock read after it times the work itself; nothing on the CPU.
inline void synchronize(const torch::Device& device) {
  if (device.is_cuda()) torch::cuda::synchronize();
  if (device.is_mps()) torch::mps::synchronize();
}

/// The median of `values` (the mean of the two middle ones for an even count); `values` must not
/// be empty. Example: median({3.0, 1.0, 2.0, 10.0}) == 2.5.
inline double median(std::vector<double> values) {
  std::sort(values.begin(), values.end());
  const auto n = values.size();
  return n % 2 ? values[n / 2] : 0.5 * (values[n / 2 - 1] + values[n / 2]);
}

}  // namespace g2c::exercises
