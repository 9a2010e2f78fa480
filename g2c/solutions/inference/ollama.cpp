// Module 16 — reference solution for g2c/inference/ollama.cpp.
#include <chrono>

#include <fmt/format.h>

#include "g2c/core/errors.h"
#include "g2c/inference/ollama.h"

namespace g2c::inference {

InferenceResult OllamaBackend::complete(const std::string& prompt,
                                        const CompletionOptions& options) {
  if (prompt.empty()) throw ValueError("OllamaBackend::complete: the prompt is empty");
  if (options.max_new_tokens <= 0) {
    throw ValueError(fmt::format("OllamaBackend::complete: max_new_tokens must be > 0, got {}",
                                 options.max_new_tokens));
  }
  nlohmann::json sampling = {{"num_predict", options.max_new_tokens},
                             {"temperature", options.temperature}};
  if (options.top_k) sampling["top_k"] = *options.top_k;  // absent: the server's default
  if (options.top_p) sampling["top_p"] = *options.top_p;
  const nlohmann::json body = {
      {"model", model_id_}, {"prompt", prompt}, {"stream", false}, {"options", sampling}};
  const auto url = base_url_ + "/api/generate";

  const auto start = std::chrono::steady_clock::now();
  HttpResponse response;
  try {
    response = transport_(
        HttpRequest{"POST", url, {{"Content-Type", "application/json"}}, body.dump()}, timeout_);
  } catch (const NetworkError& error) {
    std::throw_with_nested(
        OllamaError(fmt::format("Could not reach Ollama at {}: {}", url, error.what())));
  }
  const double latency_ms =
      std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
  if (response.status < 200 || response.status >= 300) {
    throw OllamaError(fmt::format("Ollama HTTP error {} at {}: {}", response.status, url,
                                  response.body.substr(0, 200)));
  }
  const auto data = nlohmann::json::parse(response.body, nullptr, /*allow_exceptions=*/false);
  if (data.is_discarded()) throw OllamaError("Ollama returned a non-JSON response from " + url);
  if (!data.is_object() || !data.contains("response") || !data["response"].is_string()) {
    throw OllamaError(
        fmt::format("Ollama response missing 'response' field: {}", response.body.substr(0, 200)));
  }
  const auto count = [&](const char* key) -> std::optional<std::int64_t> {
    if (!data.contains(key) || !data[key].is_number_integer()) return std::nullopt;
    return data[key].get<std::int64_t>();
  };
  const auto milliseconds = [&](const char* key) {
    return data.contains(key) && data[key].is_number()
               ? nlohmann::json(data[key].get<double>() / 1e6)  // the server counts nanoseconds
               : nlohmann::json();
  };
  return InferenceResult(prompt, data["response"].get<std::string>(), count("prompt_eval_count"),
                         count("eval_count"), latency_ms, info_,
                         {{"sampling", options.to_json()},
                          {"server_total_duration_ms", milliseconds("total_duration")},
                          {"server_eval_duration_ms", milliseconds("eval_duration")}});
}

}  // namespace g2c::inference
