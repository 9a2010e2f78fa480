// Module 16 — reference solution for g2c/inference/benchmark.cpp.
#include <numeric>

#include "g2c/core/errors.h"
#include "g2c/inference/benchmark.h"

namespace g2c::inference {

BenchmarkResult benchmark(Backend& backend, const std::vector<std::string>& prompts,
                          const CompletionOptions& options, const nlohmann::json& metadata) {
  if (prompts.empty()) throw ValueError("benchmark needs at least one prompt");
  BenchmarkResult result{backend.info()};
  for (const auto& prompt : prompts) result.results.push_back(backend.complete(prompt, options));

  bool all_counted = true;
  std::int64_t tokens = 0;
  for (const auto& one : result.results) {
    result.per_request_latency_ms.push_back(one.latency_ms);
    result.per_request_tokens_per_second.push_back(one.tokens_per_second());
    all_counted = all_counted && one.completion_tokens.has_value();
    tokens += one.completion_tokens.value_or(0);
  }
  const auto& latencies = result.per_request_latency_ms;
  result.n = static_cast<std::int64_t>(result.results.size());
  result.latency_ms_total = std::accumulate(latencies.begin(), latencies.end(), 0.0);
  result.latency_ms_mean = result.latency_ms_total / static_cast<double>(result.n);
  result.latency_ms_p50 = percentile(latencies, 50);
  result.latency_ms_p90 = percentile(latencies, 90);
  if (all_counted) {
    result.completion_tokens_total = tokens;
    const double seconds = result.latency_ms_total / 1000.0;
    if (seconds > 0) result.tokens_per_second_overall = static_cast<double>(tokens) / seconds;
  }
  result.metadata = metadata;
  return result;
}

}  // namespace g2c::inference
