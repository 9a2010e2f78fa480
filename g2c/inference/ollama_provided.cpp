#include <algorithm>
#include <cctype>
#include <chrono>

#include <fmt/format.h>

#include "g2c/core/errors.h"
#include "g2c/inference/ollama.h"

namespace g2c::inference {

namespace {

nlohmann::json with_base_url(const std::string& base_url, const nlohmann::json& extra) {
  if (!extra.is_object()) throw ValueError("OllamaBackend: extra must be a JSON object");
  nlohmann::json merged = {{"base_url", base_url}};
  merged.update(extra);
  return merged;
}

// The server's nanoseconds as milliseconds, null when it did not say.
nlohmann::json milliseconds(const nlohmann::json& data, const char* key) {
  return data.contains(key) && data[key].is_number() ? nlohmann::json(data[key].get<double>() / 1e6)
                                                     : nlohmann::json();
}

std::optional<std::int64_t> count(const nlohmann::json& data, const char* key) {
  if (!data.contains(key) || !data[key].is_number_integer()) return std::nullopt;
  return data[key].get<std::int64_t>();
}

}  // namespace

bool is_thinking_model(const std::string& model_id) {
  std::string lower = model_id;
  std::transform(lower.begin(), lower.end(), lower.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  for (const char* prefix : {"qwen3", "deepseek-r1", "deepseek-r2"}) {
    if (lower.rfind(prefix, 0) == 0) return true;
  }
  return false;
}

OllamaBackend::OllamaBackend(std::string model_id, OllamaOptions options)
    : model_id_(std::move(model_id)),
      base_url_(without_trailing_slashes(options.base_url)),
      timeout_(options.timeout),
      transport_(std::move(options.transport)),
      info_(options.name.empty() ? "ollama" : options.name, model_id_.empty() ? "?" : model_id_,
            with_base_url(base_url_, options.extra)) {
  if (model_id_.empty()) throw ValueError("OllamaBackend needs a non-empty model_id");
  if (base_url_.empty()) throw ValueError("OllamaBackend needs a non-empty base_url");
  if (!(timeout_ > 0)) {
    throw ValueError(fmt::format("OllamaBackend: timeout must be > 0 seconds, got {}", timeout_));
  }
  if (!transport_) throw ValueError("OllamaBackend needs an HTTP transport, got an empty one");
}

ChatResult OllamaBackend::chat_with_tools(const nlohmann::json& messages,
                                          const nlohmann::json& tools, const ChatOptions& options) {
  if (!messages.is_array() || messages.empty()) {
    throw ValueError("chat_with_tools: messages must be a non-empty JSON array of messages");
  }
  if (options.max_new_tokens <= 0) {
    throw ValueError(fmt::format("chat_with_tools: max_new_tokens must be positive, got {}",
                                 options.max_new_tokens));
  }
  nlohmann::json sampling = {{"num_predict", options.max_new_tokens},
                             {"temperature", options.temperature}};
  if (options.top_k) sampling["top_k"] = *options.top_k;
  if (options.top_p) sampling["top_p"] = *options.top_p;
  nlohmann::json body = {
      {"model", model_id_}, {"messages", messages}, {"stream", false}, {"options", sampling}};
  const bool has_tools = tools.is_array() && !tools.empty();
  if (has_tools) body["tools"] = tools;
  if (options.think) body["think"] = *options.think;

  const auto url = base_url_ + "/api/chat";
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
  if (!data.is_object() || !data.contains("message") || !data["message"].is_object()) {
    throw OllamaError(fmt::format("Ollama chat response missing 'message' field: {}",
                                  response.body.substr(0, 200)));
  }
  const auto& message = data["message"];
  const std::string content =
      message.contains("content") && message["content"].is_string() ? message["content"] : "";
  nlohmann::json calls = nlohmann::json::array();
  if (message.contains("tool_calls") && message["tool_calls"].is_array()) {
    for (const auto& raw : message["tool_calls"]) {
      const auto function = raw.is_object() ? raw.value("function", nlohmann::json::object())
                                            : nlohmann::json::object();
      const auto name = function.value("name", nlohmann::json());
      if (!name.is_string() || name.get<std::string>().empty()) continue;  // malformed: skipped
      auto arguments = function.value("arguments", nlohmann::json::object());
      if (arguments.is_string()) {
        arguments = nlohmann::json::parse(arguments.get<std::string>(), nullptr, false);
      }
      if (!arguments.is_object()) arguments = nlohmann::json::object();
      const auto id = raw.value("id", nlohmann::json());
      calls.push_back(
          {{"name", name},
           {"arguments", arguments},
           {"call_id", id.is_string() && !id.get<std::string>().empty() ? id.get<std::string>()
                                                                        : fresh_call_id()}});
    }
  }
  nlohmann::json settings = {{"max_new_tokens", options.max_new_tokens},
                             {"temperature", options.temperature},
                             {"top_k", options.top_k ? nlohmann::json(*options.top_k) : nullptr},
                             {"top_p", options.top_p ? nlohmann::json(*options.top_p) : nullptr},
                             {"think", options.think ? nlohmann::json(*options.think) : nullptr}};
  return ChatResult(messages, content, calls, count(data, "prompt_eval_count"),
                    count(data, "eval_count"), latency_ms, info_,
                    {{"sampling", settings},
                     {"server_total_duration_ms", milliseconds(data, "total_duration")},
                     {"server_eval_duration_ms", milliseconds(data, "eval_duration")},
                     {"n_tools_offered", has_tools ? tools.size() : 0}});
}

std::ostream& operator<<(std::ostream& stream, const OllamaBackend& backend) {
  return stream << fmt::format("OllamaBackend(model_id='{}', base_url='{}')",
                               backend.info().model_id(), backend.base_url());
}

}  // namespace g2c::inference
