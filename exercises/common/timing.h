// Timing helpers: waiting for the device before reading the clock, medians of repeated timings,
// of numbers or of a piece of work, and two pieces of work timed in alternation (the middle of
// several runs is robust to the one run that shared its core with something else, which a mean is
// not).
#pragma once

#include <algorithm>
#include <array>
#include <chrono>
#include <cstdint>
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

/// Median milliseconds of `body()` over `repeats` timed calls, after one untimed warm-up call
/// (first-touch allocations, kernel selection), each timed call fenced by synchronize(device).
/// Example: median_ms([&] { layer(x); }, 10, device).
template <typename Body>
double median_ms(Body&& body, int repeats, const torch::Device& device = torch::kCPU) {
  body();
  std::vector<double> times;
  for (int i = 0; i < repeats; ++i) {
    synchronize(device);
    const auto start = std::chrono::steady_clock::now();
    body();
    synchronize(device);
    times.push_back(
        std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start)
            .count());
  }
  return median(times);
}

/// Seconds of one call of `body()` on the CPU's clock (no device fence).
template <typename Body>
double seconds_of(Body&& body) {
  const auto start = std::chrono::steady_clock::now();
  body();
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

/// Seconds of `first()` and of `second()`, timed in alternation `repeats` times after one untimed
/// call of each, so that the machine's drift touches both alike: {median first, median second,
/// median of the per-round ratios first / second}. For CPU work (no device fence).
/// Example: const auto [spec, plain, ratio] = paired_seconds(run_spec, run_plain, 3).
template <typename First, typename Second>
std::array<double, 3> paired_seconds(First&& first, Second&& second, std::int64_t repeats) {
  first();
  second();
  std::vector<double> a, b, ratio;
  for (std::int64_t r = 0; r < repeats; ++r) {
    a.push_back(seconds_of(first));
    b.push_back(seconds_of(second));
    ratio.push_back(a.back() / b.back());
  }
  return {median(a), median(b), median(ratio)};
}

}  // namespace g2c::exercises
