// Module 16 — your work: a backend timed over a suite of prompts.
#include "g2c/inference/benchmark.h"
#include "g2c/core/errors.h"

namespace g2c::inference {

BenchmarkResult benchmark(Backend& backend, const std::vector<std::string>& prompts,
                          const CompletionOptions& options, const nlohmann::json& metadata) {
  // TODO: Time `backend` over a suite of prompts: one call is a noisy number, a suite gives the
  // steady state. No prompts -> ValueError. Run backend.complete(prompt, options) for each prompt,
  // one after the other, keeping every InferenceResult, then fill BenchmarkResult{backend.info()}
  // as benchmark.h documents each field: the per-request lists in prompt order (latency_ms, and
  // each result's tokens_per_second()), n, the latencies' total and mean, p50 and p90 from
  // percentile(), and the totals: Σ completion_tokens and the overall tokens per second (that sum
  // over the total seconds), both nullopt when any result lacks completion_tokens (unknown rather
  // than wrong), the throughput also when the total latency is 0. metadata: a copy of the caller's.
  // Hints, one step at a time: scripts/hint.sh 16 benchmark
  throw g2c::todo("benchmark", "g2c/inference/benchmark.cpp", "16");
}

}  // namespace g2c::inference
