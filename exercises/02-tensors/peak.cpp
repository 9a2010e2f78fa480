#include "exercises/02-tensors/peak.h"

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <thread>
#include <vector>

#if defined(__x86_64__)
#include <immintrin.h>
#elif defined(__aarch64__)
#include <arm_neon.h>
#endif

namespace g2c::exercises {

namespace {

// A kernel runs `iterations` rounds of acc[c] = acc[c] * m + add on kChains vector registers and
// returns the flops done (2 per lane per multiply-add); the accumulators' sum goes to *sink so that
// nothing is optimised away. Ten independent chains: a fused multiply-add takes about 4 cycles
// and a core starts up to two per cycle, so at least 8 must be in flight to keep both units busy
// (and more than 14 would not fit in 16 registers beside the two constants).
constexpr int kChains = 10;

using Kernel = std::int64_t (*)(std::int64_t iterations, double* sink);

// The body shared by every instruction set: V is the register type, SET1 broadcasts a scalar,
// MADD(acc, m, add) is acc * m + add, ADD adds two registers, STORE writes one to memory, LANES
// the scalars per register.
#define G2C_PEAK_BODY(V, SCALAR, SET1, MADD, ADD, STORE, LANES)                               \
  const V m = SET1(static_cast<SCALAR>(0.999999));                                            \
  const V add = SET1(static_cast<SCALAR>(1e-6));                                              \
  V acc[kChains];                                                                             \
  for (int c = 0; c < kChains; ++c) acc[c] = SET1(static_cast<SCALAR>(0.01 * (c + 1)));       \
  for (std::int64_t it = 0; it < iterations; ++it) {                                          \
    _Pragma("GCC unroll 10") for (int c = 0; c < kChains; ++c) acc[c] = MADD(acc[c], m, add); \
  }                                                                                           \
  V total = acc[0];                                                                           \
  for (int c = 1; c < kChains; ++c) total = ADD(total, acc[c]);                               \
  SCALAR lanes[LANES];                                                                        \
  STORE(lanes, total);                                                                        \
  double sum = 0.0;                                                                           \
  for (int l = 0; l < LANES; ++l) sum += static_cast<double>(lanes[l]);                       \
  *sink = sum;                                                                                \
  return iterations * kChains * LANES * 2;

#if defined(__x86_64__)
#define G2C_MADD_SSE_PS(a, m, c) _mm_add_ps(_mm_mul_ps(a, m), c)
#define G2C_MADD_SSE_PD(a, m, c) _mm_add_pd(_mm_mul_pd(a, m), c)

__attribute__((target("avx512f"))) std::int64_t avx512_f32(std::int64_t iterations, double* sink) {
  G2C_PEAK_BODY(__m512, float, _mm512_set1_ps, _mm512_fmadd_ps, _mm512_add_ps, _mm512_storeu_ps, 16)
}
__attribute__((target("avx512f"))) std::int64_t avx512_f64(std::int64_t iterations, double* sink) {
  G2C_PEAK_BODY(__m512d, double, _mm512_set1_pd, _mm512_fmadd_pd, _mm512_add_pd, _mm512_storeu_pd,
                8)
}
__attribute__((target("avx2,fma"))) std::int64_t avx2_f32(std::int64_t iterations, double* sink) {
  G2C_PEAK_BODY(__m256, float, _mm256_set1_ps, _mm256_fmadd_ps, _mm256_add_ps, _mm256_storeu_ps, 8)
}
__attribute__((target("avx2,fma"))) std::int64_t avx2_f64(std::int64_t iterations, double* sink){
    G2C_PEAK_BODY(__m256d, double, _mm256_set1_pd, _mm256_fmadd_pd, _mm256_add_pd, _mm256_storeu_pd,
                  4)} std::int64_t sse2_f32(std::int64_t iterations, double* sink){
    G2C_PEAK_BODY(__m128, float, _mm_set1_ps, G2C_MADD_SSE_PS, _mm_add_ps, _mm_storeu_ps,
                  4)} std::int64_t sse2_f64(std::int64_t iterations, double* sink){
    G2C_PEAK_BODY(__m128d, double, _mm_set1_pd, G2C_MADD_SSE_PD, _mm_add_pd, _mm_storeu_pd, 2)}

/// The widest kernel this CPU runs, and its name.
std::pair<Kernel, std::string> pick_kernel(bool fp64) {
  __builtin_cpu_init();
  if (__builtin_cpu_supports("avx512f")) {
    return {fp64 ? avx512_f64 : avx512_f32, "avx512f"};
  }
  if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma")) {
    return {fp64 ? avx2_f64 : avx2_f32, "avx2+fma"};
  }
  return {fp64 ? sse2_f64 : sse2_f32, "sse2"};
}
#elif defined(__aarch64__)
std::int64_t neon_f32(std::int64_t iterations, double* sink){
#define G2C_MADD_NEON_PS(a, m, c) vfmaq_f32(c, a, m)
    G2C_PEAK_BODY(float32x4_t, float, vdupq_n_f32, G2C_MADD_NEON_PS, vaddq_f32, vst1q_f32,
                  4)} std::int64_t neon_f64(std::int64_t iterations, double* sink){
#define G2C_MADD_NEON_PD(a, m, c) vfmaq_f64(c, a, m)
    G2C_PEAK_BODY(float64x2_t, double, vdupq_n_f64, G2C_MADD_NEON_PD, vaddq_f64, vst1q_f64,
                  2)} std::pair<Kernel, std::string> pick_kernel(bool fp64) {
  return {fp64 ? neon_f64 : neon_f32, "neon"};
}
#else
template <typename T>
std::int64_t scalar_kernel(std::int64_t iterations, double* sink) {
  T acc[kChains];
  for (int c = 0; c < kChains; ++c) acc[c] = static_cast<T>(0.01 * (c + 1));
  for (std::int64_t it = 0; it < iterations; ++it) {
    for (int c = 0; c < kChains; ++c)
      acc[c] = acc[c] * static_cast<T>(0.999999) + static_cast<T>(1e-6);
  }
  double sum = 0.0;
  for (int c = 0; c < kChains; ++c) sum += static_cast<double>(acc[c]);
  *sink = sum;
  return iterations * kChains * 2;
}
std::pair<Kernel, std::string> pick_kernel(bool fp64) {
  return {fp64 ? scalar_kernel<double> : scalar_kernel<float>, "scalar"};
}
#endif

double seconds_since(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

}  // namespace

PeakMeasurement measure_peak(int threads, bool fp64, double seconds) {
  threads = std::max(threads, 1);
  const auto [kernel, name] = pick_kernel(fp64);
  double sink = 0.0;
  // Calibrate on one thread: how many iterations fill `seconds`.
  std::int64_t iterations = 1 << 16;
  for (;;) {
    const auto start = std::chrono::steady_clock::now();
    kernel(iterations, &sink);
    const double elapsed = seconds_since(start);
    if (elapsed > 0.02 || iterations > (std::int64_t{1} << 40)) {
      iterations =
          std::max<std::int64_t>(1, static_cast<std::int64_t>(iterations * seconds / elapsed));
      break;
    }
    iterations *= 4;
  }
  // The best of three runs on `threads` threads at once.
  double best = 0.0;
  for (int run = 0; run < 3; ++run) {
    std::vector<double> sinks(static_cast<std::size_t>(threads));
    std::vector<std::int64_t> flops(static_cast<std::size_t>(threads));
    std::vector<std::thread> workers;
    const auto start = std::chrono::steady_clock::now();
    for (int t = 0; t < threads; ++t) {
      workers.emplace_back([&, t] { flops[t] = kernel(iterations, &sinks[t]); });
    }
    for (auto& worker : workers) worker.join();
    const double elapsed = seconds_since(start);
    double total = 0.0;
    for (const auto f : flops) total += static_cast<double>(f);
    best = std::max(best, total / elapsed / 1e9);
  }
  return {best, threads, name};
}

}  // namespace g2c::exercises
