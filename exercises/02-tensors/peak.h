// This machine's measured arithmetic peak: how many floating-point operations per second its CPU
// cores can do at best, the ceiling every matmul rung is compared with.
#pragma once

#include <string>

namespace g2c::exercises {

struct PeakMeasurement {
  double gflops = 0.0;  // billions of floating-point operations per second, all threads together
  int threads = 1;
  std::string kernel;  // the instructions measured: "avx2+fma", "avx512f", "neon", "sse2"
};

/// Runs chains of independent fused multiply-adds (a * m + c, 2 flops each) in the widest vector
/// registers this CPU has, on `threads` threads at once for about `seconds`, and returns the rate.
/// No memory traffic, no dependencies a core must wait for: an upper bound that real kernels, a
/// matmul included, can approach but not pass. `fp64` measures doubles (half the lanes per
/// register, so about half the rate of floats).
PeakMeasurement measure_peak(int threads, bool fp64, double seconds = 0.3);

}  // namespace g2c::exercises
