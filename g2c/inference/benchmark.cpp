// Module 16 — your work: a backend timed over a suite of prompts.
#include "g2c/inference/benchmark.h"
#include "g2c/core/errors.h"

namespace g2c::inference {

BenchmarkResult benchmark(Backend& backend, const std::vector<std::string>& prompts,
                          const CompletionOptions& options, const nlohmann::json& metadata) {
  // TODO: no prompts -> ValueError. Call backend.complete(prompt, options) for each prompt, in
  // order, keeping every InferenceResult. Then fill a BenchmarkResult: the backend's info, n, the
  // latencies (total, mean, percentile(latencies, 50) and (…, 90), the list in order), the
  // completion tokens' total and the overall tokens per second (both nullopt as soon as one result
  // has no completion_tokens), each result's tokens_per_second(), the results, and a copy of
  // `metadata`.
  // Hints, one step at a time: scripts/hint.sh 16 benchmark
  throw g2c::todo("benchmark", "g2c/inference/benchmark.cpp", "16");
}

}  // namespace g2c::inference
