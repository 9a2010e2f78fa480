// Module 16 — timing a backend over a suite of prompts. One call is one noisy number (a cold first
// call, a short prompt whose fixed overhead dominates); a suite of similar prompts gives the
// steady state: mean, median (p50) and tail (p90) latency, and tokens per second per request and
// overall.
//
//   auto result = g2c::inference::benchmark(backend, {"KING:", "ROMEO:", "JULIET:"},
//                                           CompletionOptions().with_max_new_tokens(64));
//   result.latency_ms_p50, result.tokens_per_second_overall, …
#pragma once

#include <cstdint>
#include <optional>
#include <ostream>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "g2c/inference/backend.h"

namespace g2c::inference {

/// What benchmark() measured. Calls run one after the other, so latency_ms_total is also the time
/// the suite took.
struct BenchmarkResult {
  /// An empty record for `backend`, filled in by benchmark().
  explicit BenchmarkResult(BackendInfo backend_) : backend(std::move(backend_)) {}

  BackendInfo backend;
  std::int64_t n = 0;  // prompts run, == results.size()
  double latency_ms_total = 0;
  double latency_ms_mean = 0;
  double latency_ms_p50 = 0;
  double latency_ms_p90 = 0;
  /// Σ completion_tokens; nullopt when any request did not report its count.
  std::optional<std::int64_t> completion_tokens_total;
  /// completion_tokens_total / (latency_ms_total / 1000); nullopt with it, or for a zero total.
  std::optional<double> tokens_per_second_overall;
  std::vector<double> per_request_latency_ms;                        // in prompt order
  std::vector<std::optional<double>> per_request_tokens_per_second;  // each result's
  std::vector<InferenceResult> results;                              // in prompt order
  nlohmann::json metadata = nlohmann::json::object();                // the caller's, copied
};

/// One line: "BenchmarkResult(backend='local'/'ShakespeareLM-1M', n=3, latency_ms_mean=12.00,
/// …, tokens_per_second_overall=500.00)", with "—" for a missing count or throughput.
std::ostream& operator<<(std::ostream& stream, const BenchmarkResult& result);

/// The pct-th percentile of `values` (pct in [1, 99]), interpolated between the two nearest ranks
/// ("inclusive" quantiles: the smallest value is the 0th percentile, the largest the 100th); a
/// single value is every percentile. ValueError for no values. Example: percentile({1, 2, 3, 4},
/// 50) == 2.5.
double percentile(const std::vector<double>& values, double pct);

/// Runs backend.complete(prompt, options) for each prompt, in order, and aggregates the results
/// as BenchmarkResult describes; `metadata` is copied into the result. ValueError for no prompts.
/// Module 16's student function (g2c/inference/benchmark.cpp).
BenchmarkResult benchmark(
    Backend& backend, const std::vector<std::string>& prompts,
    const CompletionOptions& options = CompletionOptions().with_max_new_tokens(64),
    const nlohmann::json& metadata = nlohmann::json::object());

}  // namespace g2c::inference
