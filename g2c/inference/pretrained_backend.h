// Module 16, implemented for you — a Backend over a pretrained model in this process:
// SmolLM2-135M-Instruct through the course's own Llama code (g2c/pretrained). Like Ollama's
// /api/generate, complete() puts the prompt into the model's chat template as a user turn (under
// its own system prompt, or `system`) and generates the assistant's reply until its end token;
// `raw` continues the prompt as plain text instead.
//
//   auto smol = g2c::inference::PretrainedBackend::load("SmolLM2-135M-Instruct");
//   smol.complete("What is the capital of France?", CompletionOptions().with_temperature(0))
//       .completion;  // "The capital of France is Paris."
//
// It is also a ChatBackend (module 18's native channel): chat_with_tools renders the conversation
// in the same template, with the tools described in the system turn. SmolLM2 was not trained with
// a tool-calling format of its own, so how it is asked for a call is a choice (ToolChoice): left
// to write what it likes (a call it writes as JSON is found by run_with_tools' rescue), or, on a
// user's turn, made to answer with a call decoded under module 18's JSON grammar
// (g2c/sampling/constrained.h), which always parses.
#pragma once

#include <filesystem>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "g2c/inference/backend.h"
#include "g2c/pretrained/generation.h"
#include "g2c/sampling/constrained.h"

namespace g2c::inference {

/// How chat_with_tools answers a user's turn when tools are offered.
enum class ToolChoice {
  Auto,      // the model writes what it likes: text, or a call written as JSON in its text
  Required,  // a call: a JSON object decoded under the grammar, returned as tool_calls
};

struct PretrainedBackendOptions {
  bool raw = false;                   // continue the prompt as text, no chat template
  std::optional<std::string> system;  // the system turn (default: the template's own)
  ToolChoice tool_choice = ToolChoice::Auto;

  PretrainedBackendOptions& with_raw(bool value) {
    raw = value;
    return *this;
  }
  PretrainedBackendOptions& with_system(std::optional<std::string> value) {
    system = std::move(value);
    return *this;
  }
  PretrainedBackendOptions& with_tool_choice(ToolChoice value) {
    tool_choice = value;
    return *this;
  }
};

class PretrainedBackend : public ChatBackend {
 public:
  /// ValueError for a null model.
  explicit PretrainedBackend(std::shared_ptr<g2c::pretrained::PretrainedModel> model,
                             PretrainedBackendOptions options = {});
  /// The model called `name`, its weights held as `load` says (packed by default: the fast
  /// path), with the LoRA adapter file `adapter` merged when given (load_pretrained_model).
  /// ValueError for an unknown name, a missing file or an adapter that does not fit.
  static PretrainedBackend load(
      const std::string& name = "SmolLM2-135M-Instruct",
      const g2c::pretrained::LoadOptions& load = g2c::pretrained::LoadOptions().packed(true),
      PretrainedBackendOptions options = {},
      const std::optional<std::filesystem::path>& adapter = {});

  /// name "pretrained", model_id the model's name, extra {"weights", "parameters", "context"}.
  const BackendInfo& info() const override { return info_; }

  /// The reply (or, raw, the continuation) to `prompt`, stopping at the model's end token. Token
  /// counts are the rendered prompt's and the reply's; metadata {"sampling", "template" ("chatml"
  /// or "raw"), "stopped" (the end token or a stop string was reached), "cancelled"
  /// (options.extras.keep_going said no)}. options.on_text sees the reply as it is generated;
  /// options.extras are all honoured (seed, stop, repetition window, min-p). Safe to call from
  /// several threads at once. ValueError for an empty prompt,
  /// max_new_tokens <= 0, or a prompt longer than the context leaves room for.
  InferenceResult complete(const std::string& prompt,
                           const CompletionOptions& options = {}) override;

  /// One chat turn. The messages ({"role", "content"}; an assistant's "tool_calls"; "tool"
  /// messages with "tool_name") are rendered in the chat template: the tools, when given, are
  /// listed in the system turn with how to call one (a JSON object {"name", "arguments"}), a
  /// call the assistant made is shown as that object (after its words, if any), and a tool's
  /// result (the tool named by "tool_name" or "name") as a user turn
  /// ("The calculator tool returned: 41\nAnswer my question with it."), since the template has
  /// no role for it. When tools are given,
  /// the last message is the user's and tool_choice is Required, the reply is a call decoded
  /// under the JSON grammar (masks memoised across calls; not streamed: it is a call, not words);
  /// otherwise it is free text, streamed to options.on_text as it is generated — and returned as
  /// a call when tools are offered and the whole reply is one such JSON object naming one of
  /// them (what a model fine-tuned to call tools writes; a call among words stays text). metadata
  /// {"sampling", "constrained", "stopped", "cancelled", "dropped_messages"}. ValueError for
  /// messages that are not a non-empty array of objects with string role and content,
  /// max_new_tokens <= 0, or a conversation longer than the context leaves room for (with
  /// options.extras.drop_oldest_to_fit, only once its system and last message alone are).
  ChatResult chat_with_tools(const nlohmann::json& messages, const nlohmann::json& tools,
                             const ChatOptions& options) override;

  g2c::pretrained::PretrainedModel& model() { return *model_; }
  const PretrainedBackendOptions& options() const { return options_; }

 private:
  std::shared_ptr<g2c::pretrained::PretrainedModel> model_;
  PretrainedBackendOptions options_;
  BackendInfo info_;
  // Constrained decoding's state, made at the first constrained call and kept: the vocabulary's
  // pieces, the grammar's masks by state, and inside a string argument the same masks less the
  // pieces that close the string and go on.
  // One constrained call at a time uses them (held by pointer: the backend stays movable).
  std::unique_ptr<std::mutex> constrained_mutex_ = std::make_unique<std::mutex>();
  std::vector<std::string> pieces_;
  g2c::sampling::MaskCache masks_;
  g2c::sampling::MaskCache string_masks_;
};

/// A conversation with tools as the chat template's turns, as chat_with_tools shows it to the
/// model (its doc says how each kind of message is shown): `system` (or the messages' own system
/// message) first, the tools described after it, a call as its JSON object, a tool's result as a
/// user turn. What a fine-tuning set of tool calls is rendered with (exercise 18b), so that the
/// model trains on what it will be shown. ValueError as chat_with_tools for malformed messages.
std::vector<g2c::pretrained::ChatMessage> render_tool_chat(
    const nlohmann::json& messages, const nlohmann::json& tools,
    const std::optional<std::string>& system = std::nullopt);

/// Module 11's GenerateOptions for these settings and extras: the temperature, top-k and top-p, the
/// repetition penalty (off when extras.repeat_last_n is 0), and a generator seeded with
/// extras.seed when there is one. The one conversion every course-side backend uses.
/// A chat call's four sampling settings as CompletionOptions::to_json writes them: what a
/// ChatResult's metadata records under "sampling".
nlohmann::json sampling_json(const ChatOptions& options);

g2c::sampling::GenerateOptions generate_options_of(double temperature,
                                                   std::optional<std::int64_t> top_k,
                                                   std::optional<double> top_p,
                                                   const GenerationExtras& extras);

}  // namespace g2c::inference
