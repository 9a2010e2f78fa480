// Module 16, implemented for you — one interface for every model: a Backend turns a prompt into an
// InferenceResult. Modules 17 (retrieval), 18 (tools), 19 (agents) and 20 (the assistant) are
// written against it and never ask which model is underneath: the course's own artifacts,
// SmolLM2-135M-Instruct in this process, or a model served over HTTP.
//
//   BackendInfo      who answered: the kind of backend ("local", "ollama", …), the model, extras
//   InferenceResult  one prompt's answer: the completion (without the prompt), the token counts on
//                    both sides, the wall-clock latency, the backend's info, free-form metadata
//   ChatResult       one chat turn's answer (a message and any tool calls), for /api/chat
//   Backend          info() and complete(prompt, options); temperature 0 is greedy (module 11)
//   TextSink         where a reply's text goes while it is generated (options.on_text), for a
//                    terminal that shows it word by word
//   ChatBackend      a Backend that also chats with tools (Ollama's /api/chat): module 18's
//                    native channel
//
// Every result carries its backend's info, so a file of timings stays attributable after the
// notebook that wrote it is gone. Plain C++, no LibTorch: the backends that need it derive from
// this.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <ostream>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

namespace g2c::inference {

/// A backend's identity: `name` the kind ("local", "ollama", "pretrained"), `model_id` the model
/// inside it ("ShakespeareLM-1M-SFT", "llama3.2:3b"), `extra` labels worth keeping with results (a
/// server's URL, a device, a quantization). Fixed once made: a backend is not renamed mid-run.
class BackendInfo {
 public:
  /// ValueError for an empty name or model_id, or an `extra` that is not a JSON object.
  BackendInfo(std::string name, std::string model_id,
              nlohmann::json extra = nlohmann::json::object());

  const std::string& name() const { return name_; }
  const std::string& model_id() const { return model_id_; }
  const nlohmann::json& extra() const { return extra_; }

  bool operator==(const BackendInfo& other) const = default;

 private:
  std::string name_;
  std::string model_id_;
  nlohmann::json extra_;
};

std::ostream& operator<<(std::ostream& stream, const BackendInfo& info);

/// One complete() call's answer. Token counts are nullopt when a backend cannot say (some servers
/// do not report them); latency_ms is the wall-clock time of the whole call, network included.
struct InferenceResult {
  /// ValueError for a negative latency_ms or a negative token count.
  InferenceResult(std::string prompt, std::string completion,
                  std::optional<std::int64_t> prompt_tokens,
                  std::optional<std::int64_t> completion_tokens, double latency_ms,
                  BackendInfo backend, nlohmann::json metadata = nlohmann::json::object());

  std::string prompt;
  std::string completion;  // the new text only, never the prompt
  std::optional<std::int64_t> prompt_tokens;
  std::optional<std::int64_t> completion_tokens;
  double latency_ms;
  BackendInfo backend;
  nlohmann::json metadata;  // the sampling settings, server timings, …

  /// completion_tokens / (latency_ms / 1000); nullopt without a positive count or latency.
  /// Example: 100 tokens in 500 ms -> 200.
  std::optional<double> tokens_per_second() const;
};

/// One chat call's answer: the messages sent, the reply's text, the tool calls it asked for (each
/// {"name", "arguments", "call_id"}), the counts, the latency and the backend.
struct ChatResult {
  /// ValueError for a negative latency_ms or token count, or messages / tool_calls that are not
  /// JSON arrays.
  ChatResult(nlohmann::json messages, std::string content, nlohmann::json tool_calls,
             std::optional<std::int64_t> prompt_tokens,
             std::optional<std::int64_t> completion_tokens, double latency_ms, BackendInfo backend,
             nlohmann::json metadata = nlohmann::json::object());

  nlohmann::json messages;  // [{"role": …, "content": …}, …]
  std::string content;
  nlohmann::json tool_calls;  // [] when the model answered in text
  std::optional<std::int64_t> prompt_tokens;
  std::optional<std::int64_t> completion_tokens;
  double latency_ms;
  BackendInfo backend;
  nlohmann::json metadata;
};

/// Where a reply's text goes while it is generated: each piece as soon as it is whole (a UTF-8
/// character is never split), in order; together the pieces are the reply's text. A terminal
/// prints them, so an answer appears word by word. A backend that cannot stream (a student's
/// complete, a course artifact, a schema-constrained tool call) never calls it: its text arrives
/// with the result only.
using TextSink = std::function<void(std::string_view piece)>;

/// What serving a model adds to the four sampling settings, Ollama's options by their names:
/// a seed, stop strings, the repetition penalty over a window, min-p, and a way to end a
/// generation early. Backends that cannot honour one ignore it (a fake, a student's complete);
/// PretrainedBackend and the course models' ArtifactChatBackend honour them all, and so g2c-serve
/// does.
struct GenerationExtras {
  std::optional<std::uint64_t> seed;  // nullopt: a fresh draw every call
  std::vector<std::string> stop;      // the text ends before the first of these (not included)
  double repeat_penalty = 1.0;        // module 11's CTRL penalty; 1: none (Ollama: 1.1)
  std::int64_t repeat_last_n = 64;    // the ids it looks back on; -1: all, 0: none (Ollama: 64)
  double min_p = 0.0;                 // drop tokens below min_p × the likeliest one's probability
  double frequency_penalty = 0.0;     // OpenAI's: minus this × a token's count in the window
  double presence_penalty = 0.0;      // OpenAI's: minus this once a token is in the window
  /// Prompt and reply together may take this many tokens (Ollama's num_ctx); nullopt: the model's
  /// whole context.
  std::optional<std::int64_t> context;
  /// A conversation longer than the context, as Ollama treats it: the oldest turns after the
  /// system message are left out, one at a time, until the rest fits (the last turn always
  /// stays; the result's metadata counts them as "dropped_messages"). false: a ValueError that
  /// says how long the conversation is.
  bool drop_oldest_to_fit = false;
  /// Asked as each token is drawn; false ends the generation there (a client that has gone).
  std::function<bool()> keep_going;

  /// Ollama's defaults: the repetition penalty 1.1 over the last 64 tokens. What g2c-serve
  /// applies to a request in Ollama's protocol that does not say otherwise, and what
  /// g2c-assistant uses (greedy decoding without it repeats a sentence until the token limit).
  static GenerationExtras ollama_defaults() {
    GenerationExtras extras;
    extras.repeat_penalty = 1.1;
    extras.repeat_last_n = 64;
    return extras;
  }
};

/// The sampling settings every backend understands (module 11's, by the names Ollama uses in
/// `options`: num_predict is max_new_tokens). temperature 0 is greedy decoding.
struct CompletionOptions {
  std::int64_t max_new_tokens = 128;  // an upper bound: a backend may stop sooner (end token)
  double temperature = 1.0;
  std::optional<std::int64_t> top_k;  // nullopt: no top-k
  std::optional<double> top_p;        // nullopt: no nucleus
  TextSink on_text;                   // empty: the text arrives with the result only
  GenerationExtras extras;            // serving's settings (not part of to_json)

  CompletionOptions& with_max_new_tokens(std::int64_t value) {
    max_new_tokens = value;
    return *this;
  }
  CompletionOptions& with_temperature(double value) {
    temperature = value;
    return *this;
  }
  CompletionOptions& with_top_k(std::optional<std::int64_t> value) {
    top_k = value;
    return *this;
  }
  CompletionOptions& with_top_p(std::optional<double> value) {
    top_p = value;
    return *this;
  }
  CompletionOptions& with_on_text(TextSink sink) {
    on_text = std::move(sink);
    return *this;
  }
  /// {"max_new_tokens", "temperature", "top_k", "top_p"} (null for an unset one): what a result's
  /// metadata records under "sampling".
  nlohmann::json to_json() const;
};

/// The interface. A backend's info is cheap and never changes; complete() answers one prompt,
/// synchronously. Anything backend-specific (an end token, a server URL) belongs to the concrete
/// backend's constructor, not to complete().
class Backend {
 public:
  virtual ~Backend() = default;
  virtual const BackendInfo& info() const = 0;
  /// The prompt's completion. ValueError for an empty prompt or options.max_new_tokens <= 0.
  virtual InferenceResult complete(const std::string& prompt,
                                   const CompletionOptions& options = {}) = 0;
};

/// chat_with_tools' settings: near-greedy by default, the right default for choosing a tool.
struct ChatOptions {
  std::int64_t max_new_tokens = 1024;
  double temperature = 0.2;
  std::optional<std::int64_t> top_k;
  std::optional<double> top_p;
  std::optional<bool> think;  // sent only when set: the server decides otherwise
  TextSink on_text;           // the reply's text while it comes; empty: with the result only
  GenerationExtras extras;    // as CompletionOptions'

  ChatOptions& with_max_new_tokens(std::int64_t value) {
    max_new_tokens = value;
    return *this;
  }
  ChatOptions& with_temperature(double value) {
    temperature = value;
    return *this;
  }
  ChatOptions& with_think(std::optional<bool> value) {
    think = value;
    return *this;
  }
  ChatOptions& with_on_text(TextSink sink) {
    on_text = std::move(sink);
    return *this;
  }
  /// The same sampling settings (text sink and extras too) as `sampling`, and `think`: how a loop
  /// written for complete() calls chat_with_tools.
  static ChatOptions from_sampling(const CompletionOptions& sampling,
                                   std::optional<bool> think = std::nullopt);
};

/// Whether `name` is a tool name as Ollama's and OpenAI's tool specs accept it: 1 to 64 ASCII
/// letters, digits, '_' or '-'. Examples: "calculator", "read_file" -> true; "", "a b" -> false.
bool is_valid_tool_name(std::string_view name);

/// An id for a tool call a model made without one: "call_" and 8 hex digits, unique in this
/// process. Example: "call_5f0c2a91".
std::string fresh_call_id();

/// A backend that also holds a conversation with tools, as Ollama's /api/chat does: the messages
/// so far ({"role", "content"} objects; "tool" messages carry a tool's answer), the tools as
/// Ollama's function specs, and a reply whose tool_calls the model asked for (each {"name",
/// "arguments" (an object), "call_id"}). Module 18's run_with_tools uses this channel when a
/// backend offers it (a dynamic_cast finds out) and the text format otherwise.
class ChatBackend : public Backend {
 public:
  /// ValueError for messages that are not a non-empty array or options.max_new_tokens <= 0.
  virtual ChatResult chat_with_tools(const nlohmann::json& messages, const nlohmann::json& tools,
                                     const ChatOptions& options) = 0;
};

}  // namespace g2c::inference
