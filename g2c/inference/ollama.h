// Module 16 — a Backend over a model server that speaks Ollama's protocol: Ollama itself (which
// runs llama.cpp), or this course's own g2c-serve. complete() is one JSON request:
//
//   POST {base_url}/api/generate
//   {"model": "llama3.2:3b", "prompt": "…", "stream": false,
//    "options": {"num_predict": 128, "temperature": 1.0, "top_k": 40, "top_p": 0.9}}
//   -> {"response": "…", "done": true, "prompt_eval_count": 12, "eval_count": 24,
//       "total_duration": 1500000000, "eval_duration": 1300000000}      (durations in ns)
//
// and chat_with_tools() the same over /api/chat with messages and tool specs. Everything that can
// go wrong on the way — no server, an HTTP error status, an answer that is not JSON or lacks its
// field — becomes one OllamaError (its message names the URL, or the field that is missing), so
// a caller has one thing to catch. The constructor, info() and chat_with_tools() are provided;
// complete() is yours.
#pragma once

#include <cstdint>
#include <optional>
#include <ostream>
#include <stdexcept>
#include <string>

#include <nlohmann/json.hpp>

#include "g2c/inference/backend.h"
#include "g2c/inference/http.h"

namespace g2c::inference {

/// Where Ollama listens unless told otherwise (g2c-serve listens there too).
inline constexpr const char* DEFAULT_OLLAMA_URL = "http://localhost:11434";

/// Whether `model_id` names a model that thinks aloud by default (<think>…</think> before its
/// answer: qwen3, deepseek-r1, deepseek-r2, in any case), so a caller with a small token budget
/// can send think=false. Example: is_thinking_model("QWEN3:4B") == true.
bool is_thinking_model(const std::string& model_id);

/// Any failure between the request and a usable answer. The NetworkError that caused one (no
/// server) is nested inside it (std::rethrow_if_nested).
class OllamaError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

struct OllamaOptions {
  std::string base_url = DEFAULT_OLLAMA_URL;        // a trailing "/" is dropped
  double timeout = 120.0;                           // seconds, per request
  HttpTransport transport = http_send;              // tests give a fake one
  std::string name = "ollama";                      // the backend's kind
  nlohmann::json extra = nlohmann::json::object();  // merged after {"base_url": …}

  OllamaOptions& with_base_url(std::string value) {
    base_url = std::move(value);
    return *this;
  }
  OllamaOptions& with_timeout(double value) {
    timeout = value;
    return *this;
  }
  OllamaOptions& with_transport(HttpTransport value) {
    transport = std::move(value);
    return *this;
  }
  OllamaOptions& with_name(std::string value) {
    name = std::move(value);
    return *this;
  }
  OllamaOptions& with_extra(nlohmann::json value) {
    extra = std::move(value);
    return *this;
  }
};

class OllamaBackend : public ChatBackend {
 public:
  /// ValueError for an empty model_id or base_url, a timeout <= 0, or no transport.
  explicit OllamaBackend(std::string model_id = "llama3.2:3b", OllamaOptions options = {});

  /// name "ollama" (or options.name), model_id, extra {"base_url", …options.extra}.
  const BackendInfo& info() const override { return info_; }
  const std::string& base_url() const { return base_url_; }
  double timeout() const { return timeout_; }

  /// POST {base_url}/api/generate with {"model", "prompt", "stream": false, "options":
  /// {"num_predict", "temperature", and "top_k" / "top_p" only when set}} and the header
  /// Content-Type: application/json; the result's completion is the answer's "response", its
  /// counts "prompt_eval_count" and "eval_count" (nullopt when absent), its latency the wall
  /// clock around the call, its metadata {"sampling", "server_total_duration_ms",
  /// "server_eval_duration_ms"} (the server's nanoseconds / 1e6, null when absent). ValueError
  /// for an empty prompt or max_new_tokens <= 0; OllamaError for no server ("Could not reach
  /// Ollama at <url>"), a status outside 2xx (with the status), a non-JSON answer or one without
  /// "response". Module 16's student function (g2c/inference/ollama.cpp).
  InferenceResult complete(const std::string& prompt,
                           const CompletionOptions& options = {}) override;

  /// POST {base_url}/api/chat with the messages, the tool specs (left out when null or empty) and
  /// think (when set). The reply's tool calls come back flat, {"name", "arguments" (an object,
  /// parsed when the server sent a JSON string), "call_id" (the server's "id", or a fresh
  /// "call_…")}; calls without a name are skipped. With options.on_text the request asks for a
  /// stream ("stream": true) and each line's content goes to the sink as it arrives; the result is
  /// the same as without (pieces joined, tool calls gathered, the done line's counts). ValueError
  /// for messages that are not a non-empty array or max_new_tokens <= 0; OllamaError as for
  /// complete, for an answer without "message", and for a streamed line that is not JSON or
  /// carries an "error".
  ChatResult chat_with_tools(const nlohmann::json& messages, const nlohmann::json& tools = nullptr,
                             const ChatOptions& options = {}) override;

 private:
  std::string model_id_;
  std::string base_url_;
  double timeout_;
  HttpTransport transport_;
  BackendInfo info_;
};

/// "OllamaBackend(model_id='llama3.2:3b', base_url='http://localhost:11434')".
std::ostream& operator<<(std::ostream& stream, const OllamaBackend& backend);

}  // namespace g2c::inference
