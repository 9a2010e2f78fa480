// Module 16 — your work: one prompt through a server that speaks Ollama's protocol.
#include <chrono>

#include <fmt/format.h>

#include "g2c/core/errors.h"
#include "g2c/inference/ollama.h"

namespace g2c::inference {

InferenceResult OllamaBackend::complete(const std::string& prompt,
                                        const CompletionOptions& options) {
  // TODO: an empty prompt or options.max_new_tokens <= 0 -> ValueError. The body: {"model":
  // model_id_, "prompt", "stream": false, "options": {"num_predict", "temperature", plus "top_k"
  // and "top_p" only when set}}. Send HttpRequest{"POST", base_url_ + "/api/generate",
  // {{"Content-Type", "application/json"}}, body.dump()} with transport_(request, timeout_),
  // timing it with std::chrono::steady_clock. Wrap every failure in OllamaError: a NetworkError
  // ("Could not reach Ollama at <url>", nested with std::throw_with_nested), a status outside
  // 200-299 (say the status), a body that is not JSON, an answer without "response". Then
  // InferenceResult(prompt, data["response"], "prompt_eval_count", "eval_count" (nullopt when
  // missing), latency_ms, info_, {"sampling": options.to_json(), "server_total_duration_ms" and
  // "server_eval_duration_ms": the nanoseconds / 1e6, or null}).
  // Hints, one step at a time: scripts/hint.sh 16 OllamaBackend::complete
  throw g2c::todo("OllamaBackend::complete", "g2c/inference/ollama.cpp", "16");
}

}  // namespace g2c::inference
