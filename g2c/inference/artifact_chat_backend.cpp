#include "g2c/inference/artifact_chat_backend.h"

#include <chrono>
#include <optional>
#include <utility>
#include <vector>

#include <fmt/format.h>

#include "g2c/core/errors.h"
#include "g2c/inference/pretrained_backend.h"
#include "g2c/inference/stop_strings.h"
#include "g2c/sft/chat.h"
#include "g2c/tokenizer/utf8.h"

namespace g2c::inference {

namespace {

/// Thrown from a token callback to end a generation early (a stop string, keep_going said no);
/// caught in this file only.
struct EndEarly {};

/// Text pieces on their way to the caller: through the stop strings, counted, and ended when the
/// extras say so.
class ReplySink {
 public:
  ReplySink(const GenerationExtras& extras, const TextSink& on_text)
      : stops_(extras.stop), keep_going_(extras.keep_going), on_text_(on_text) {}
  /// Shows what may be shown; throws EndEarly at a stop string or when keep_going says no.
  void push(const std::string& piece) {
    show(stops_.push(piece));
    if (stops_.stopped()) throw EndEarly{};
    if (keep_going_ && !keep_going_()) {
      cancelled_ = true;
      throw EndEarly{};
    }
  }
  void finish(const std::string& tail) {
    if (!stops_.stopped()) show(stops_.push(tail));
    show(stops_.finish());
  }
  const std::string& text() const { return text_; }
  bool stopped() const { return stops_.stopped(); }
  bool cancelled() const { return cancelled_; }

 private:
  void show(const std::string& text) {
    if (text.empty()) return;
    text_ += text;
    if (on_text_) on_text_(text);
  }
  StopStrings stops_;
  const std::function<bool()>& keep_going_;
  const TextSink& on_text_;
  std::string text_;
  bool cancelled_ = false;
};

double milliseconds_since(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start)
      .count();
}

}  // namespace

ArtifactChatBackend::ArtifactChatBackend(std::string name, const std::filesystem::path& dir)
    : text_model_(g2c::sampling::load_text_model(dir.string())),
      info_("artifact", std::move(name), {{"context", text_model_.artifact.model->max_seq_len}}) {}

InferenceResult ArtifactChatBackend::complete(const std::string& prompt,
                                              const CompletionOptions& options) {
  if (prompt.empty()) throw ValueError("ArtifactChatBackend::complete: the prompt is empty");
  const auto& tokenizer = text_model_.tokenizer;
  const auto ids = tokenizer.encode(prompt);
  const auto context = context_length();
  if (options.max_new_tokens <= 0 || static_cast<std::int64_t>(ids.size()) >= context) {
    throw ValueError(fmt::format(
        "the prompt is {} tokens and {}'s context is {} (max_new_tokens {}): shorten the prompt",
        ids.size(), info_.model_id(), context, options.max_new_tokens));
  }
  auto sampling =
      generate_options_of(options.temperature, options.top_k, options.top_p, options.extras);
  std::optional<std::int64_t> end;
  try {
    end = g2c::sft::end_token_id(tokenizer);
    sampling.eos_id(end);
  } catch (const ValueError&) {
    // A tokenizer without <|end|> (a base model's): generate until the length.
  }
  torch::NoGradGuard no_grad;
  const auto start = std::chrono::steady_clock::now();
  ReplySink sink(options.extras, options.on_text);
  g2c::sampling::TextStream stream(tokenizer);
  bool ended = false;
  std::int64_t tokens = 0;
  try {
    g2c::sampling::generate_long_cached(
        *text_model_.artifact.model, torch::tensor(ids, torch::kLong),
        std::min(options.max_new_tokens, context - static_cast<std::int64_t>(ids.size())), sampling,
        [&](std::int64_t id) {
          if (end && id == *end) {
            ended = true;
            return;
          }
          ++tokens;
          sink.push(stream.push(id));
        });
    sink.finish(stream.finish());
  } catch (const EndEarly&) {
  }
  return InferenceResult(prompt, sink.text(), static_cast<std::int64_t>(ids.size()), tokens,
                         milliseconds_since(start), info_,
                         {{"sampling", options.to_json()},
                          {"template", "raw"},
                          {"stopped", ended || sink.stopped()},
                          {"cancelled", sink.cancelled()}});
}

ChatResult ArtifactChatBackend::chat_with_tools(const nlohmann::json& messages,
                                                const nlohmann::json& tools,
                                                const ChatOptions& options) {
  if (tools.is_array() && !tools.empty()) {
    throw ValueError(
        fmt::format("{} takes no tools (a course model has no tool-calling turn); "
                    "send tools to SmolLM2-135M-Instruct, or leave them out",
                    info_.model_id()));
  }
  if (options.max_new_tokens <= 0) {
    throw ValueError(
        fmt::format("ArtifactChatBackend::chat_with_tools: max_new_tokens must be "
                    "> 0, got {}",
                    options.max_new_tokens));
  }
  // Module 13's roles: system turns left out (its template has none), a tool's answer as a user's.
  std::vector<g2c::sft::Message> conversation;
  if (messages.is_array()) {
    for (const auto& message : messages) {
      const auto role = message.value("role", std::string());
      if (role == "system") continue;
      conversation.push_back(
          {role == "tool" ? "user" : role, message.value("content", std::string())});
    }
  }
  if (conversation.empty() || conversation.back().role != "user") {
    throw ValueError(fmt::format(
        "{} (a course model) answers a conversation that ends with a user turn", info_.model_id()));
  }
  const auto context = context_length();
  const auto max_new = std::min(options.max_new_tokens, context - 1);
  const auto& tokenizer = text_model_.tokenizer;
  const auto prompt_tokens = std::min<std::int64_t>(
      static_cast<std::int64_t>(
          tokenizer.encode(g2c::sft::ChatTemplate().generation_prompt(conversation)).size()),
      context - max_new);
  torch::NoGradGuard no_grad;
  const auto start = std::chrono::steady_clock::now();
  ReplySink sink(options.extras, options.on_text);
  bool ended = false;
  std::int64_t tokens = 0;
  try {
    const auto answer = g2c::sft::chat_reply(
        *text_model_.artifact.model, tokenizer, conversation,
        g2c::sft::ChatReplyOptions().max_new_tokens(max_new).sampling(
            generate_options_of(options.temperature, options.top_k, options.top_p, options.extras)),
        [&](const std::string& piece) { sink.push(piece); });
    ended = answer.stopped;
    tokens = static_cast<std::int64_t>(answer.ids.size());
    sink.finish("");
  } catch (const EndEarly&) {
    tokens = static_cast<std::int64_t>(tokenizer.encode(sink.text()).size());  // what was kept
  }
  return ChatResult(messages, sink.text(), nlohmann::json::array(), prompt_tokens, tokens,
                    milliseconds_since(start), info_,
                    {{"sampling", sampling_json(options)},
                     {"stopped", ended || sink.stopped()},
                     {"cancelled", sink.cancelled()}});
}

}  // namespace g2c::inference
