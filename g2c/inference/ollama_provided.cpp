#include <algorithm>
#include <cctype>
#include <chrono>
#include <optional>
#include <string_view>
#include <utility>

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

// A streamed /api/chat reply, one JSON object a line ({"message": {"content": piece, …}, "done":
// false}, …, then the done line with the counts): each piece goes to the sink as soon as its line
// is whole; the pieces, any tool calls and the done line's fields are gathered into the one
// object a reply without streaming would have been.
class ChatStream {
 public:
  explicit ChatStream(const TextSink& on_text) : on_text_(&on_text) {}

  // Bytes as the transport reads them; lines may arrive in pieces.
  void feed(std::string_view chunk) {
    fed_ += chunk.size();
    pending_ += chunk;
    for (auto end = pending_.find('\n'); end != std::string::npos; end = pending_.find('\n')) {
      const auto line = pending_.substr(0, end);
      pending_.erase(0, end + 1);
      take(line);
    }
  }

  // The reply as one object: what the transport did not hand to feed (all of it, for a transport
  // that cannot stream), the last line, then {"message": {"role", "content", "tool_calls"}} and
  // the done line's counts. OllamaError for a line that is not JSON, an error line, or no lines.
  nlohmann::json finish(const std::string& body, const std::string& url) {
    if (fed_ < body.size()) feed(std::string_view(body).substr(fed_));
    if (!pending_.empty()) take(std::exchange(pending_, ""));
    if (error_) throw OllamaError(fmt::format("Ollama error from {}: {}", url, *error_));
    if (bad_line_ || lines_ == 0) {
      throw OllamaError(fmt::format("Ollama returned a non-JSON response from {}: {}", url,
                                    bad_line_.value_or("(empty)")));
    }
    auto data = done_.is_object() ? done_ : nlohmann::json::object();
    data["message"] = {{"role", "assistant"}, {"content", content_}, {"tool_calls", calls_}};
    return data;
  }

 private:
  void take(const std::string& line) {
    if (line.find_first_not_of(" \t\r") == std::string::npos) return;
    ++lines_;
    const auto data = nlohmann::json::parse(line, nullptr, /*allow_exceptions=*/false);
    if (!data.is_object()) {
      if (!bad_line_) bad_line_ = line.substr(0, 200);
      return;
    }
    if (data.contains("error")) {
      if (!error_)
        error_ =
            data["error"].is_string() ? data["error"].get<std::string>() : data["error"].dump();
      return;
    }
    if (data.contains("message") && data["message"].is_object()) {
      const auto& message = data["message"];
      if (message.contains("content") && message["content"].is_string()) {
        const auto piece = message["content"].get<std::string>();
        content_ += piece;
        if (!piece.empty() && *on_text_) (*on_text_)(piece);
      }
      if (message.contains("tool_calls") && message["tool_calls"].is_array()) {
        for (const auto& call : message["tool_calls"]) calls_.push_back(call);
      }
    }
    if (data.value("done", false)) done_ = data;
  }

  const TextSink* on_text_;
  std::size_t fed_ = 0;
  std::string pending_;
  std::size_t lines_ = 0;
  std::string content_;
  nlohmann::json calls_ = nlohmann::json::array();
  nlohmann::json done_;
  std::optional<std::string> error_;
  std::optional<std::string> bad_line_;
};

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
  // Streamed only for a caller that watches the text: the reply is read line by line as it comes.
  const bool streamed = static_cast<bool>(options.on_text);
  nlohmann::json body = {
      {"model", model_id_}, {"messages", messages}, {"stream", streamed}, {"options", sampling}};
  const bool has_tools = tools.is_array() && !tools.empty();
  if (has_tools) body["tools"] = tools;
  if (options.think) body["think"] = *options.think;

  const auto url = base_url_ + "/api/chat";
  const auto start = std::chrono::steady_clock::now();
  HttpRequest request{"POST", url, {{"Content-Type", "application/json"}}, body.dump()};
  ChatStream stream(options.on_text);
  if (streamed) request.on_body = [&stream](std::string_view chunk) { stream.feed(chunk); };
  HttpResponse response;
  try {
    response = transport_(request, timeout_);
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
  const auto data = streamed
                        ? stream.finish(response.body, url)
                        : nlohmann::json::parse(response.body, nullptr, /*allow_exceptions=*/false);
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
