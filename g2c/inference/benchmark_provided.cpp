#include <algorithm>
#include <cmath>

#include <fmt/format.h>

#include "g2c/core/errors.h"
#include "g2c/inference/benchmark.h"

namespace g2c::inference {

double percentile(const std::vector<double>& values, double pct) {
  if (values.empty()) throw ValueError("percentile: no values");
  if (values.size() == 1) return values.front();
  std::vector<double> sorted = values;
  std::sort(sorted.begin(), sorted.end());
  // Rank pct/100 · (n - 1) between the smallest (0) and the largest (n - 1), interpolated.
  const double clamped = std::clamp(pct, 1.0, 99.0);
  const double rank = clamped / 100.0 * static_cast<double>(sorted.size() - 1);
  const auto below = static_cast<std::size_t>(std::floor(rank));
  const auto above = std::min(below + 1, sorted.size() - 1);
  const double fraction = rank - static_cast<double>(below);
  return sorted[below] + fraction * (sorted[above] - sorted[below]);
}

std::ostream& operator<<(std::ostream& stream, const BenchmarkResult& result) {
  const std::string tokens =
      result.completion_tokens_total ? std::to_string(*result.completion_tokens_total) : "—";
  const std::string throughput = result.tokens_per_second_overall
                                     ? fmt::format("{:.2f}", *result.tokens_per_second_overall)
                                     : "—";
  return stream << fmt::format(
             "BenchmarkResult(backend='{}'/'{}', n={}, latency_ms_mean={:.2f}, "
             "latency_ms_p50={:.2f}, latency_ms_p90={:.2f}, completion_tokens_total={}, "
             "tokens_per_second_overall={})",
             result.backend.name(), result.backend.model_id(), result.n, result.latency_ms_mean,
             result.latency_ms_p50, result.latency_ms_p90, tokens, throughput);
}

}  // namespace g2c::inference
