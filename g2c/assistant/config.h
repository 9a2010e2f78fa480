// Module 20 — the assistant's settings in one place, and its error type.
//
// Every knob that modules 16-19 took as a call's argument — the agent's loop limits, sampling,
// how many chunks to retrieve, how much history to show — lives in one AssistantConfig, so that
// swapping a config swaps the assistant's behaviour end to end, and a transcript saved with its
// config says how it was made:
//
//   AssistantConfig config{.max_steps = 4, .plan = false, .rag_k = 3};
//   config.validate();                 // AssistantConfig: rag_k must be > 0, got 0 ... on a typo
//   config.to_json()["max_steps"]      // 4: what /save writes beside the messages
//
// A plain struct with a default for every field, filled with designated initialisers as module
// 19's AgentOptions is. validate() checks it; Assistant's constructor calls validate(), so an
// invalid config never drives an assistant. Plain C++, no LibTorch; provided.
#pragma once

#include <cstdint>
#include <optional>
#include <stdexcept>
#include <string>

#include <nlohmann/json.hpp>

namespace g2c::assistant {

/// The assistant misused by code: a config out of range, an empty message, a retriever that
/// failed. Distinct from module 19's AgentError (the loop's own records): this is the integration
/// layer above the loop.
class AssistantError : public std::runtime_error {
 public:
  explicit AssistantError(const std::string& message) : std::runtime_error(message) {}
};

/// The capstone assistant's settings, by the Python edition's names.
struct AssistantConfig {
  std::string name = "g2c-assistant";  // a label for banners and transcripts, non-empty
  std::int64_t max_steps = 8;          // the agent's backend calls per turn at most, > 0
  bool plan = true;                    // one planning call before the loop
  bool loop_detection = true;          // stop on the same action twice in a row
  bool halt_on_stuck = false;          // stop on a step that could not be read
  std::int64_t max_new_tokens = 512;   // per backend call, > 0: a step or a final answer fits
  double temperature = 0.2;            // >= 0; near-greedy keeps the format and the tool choice
  std::optional<std::int64_t> top_k = std::nullopt;  // nullopt: no top-k
  std::optional<double> top_p = std::nullopt;        // nullopt: no nucleus
  // This edition's: module 11's repetition penalty over the last repeat_last_n tokens (Ollama's
  // names; -1: all). 1.0 is none, the Python edition's way; g2c-assistant uses Ollama's 1.1 over
  // 64, without which greedy decoding can repeat one sentence until the token limit.
  double repeat_penalty = 1.0;      // > 0
  std::int64_t repeat_last_n = 64;  // >= -1
  bool rag_enabled = true;  // retrieve before each turn (when the assistant has a retriever)
  std::int64_t rag_k = 5;   // chunks per retrieval, > 0
  // The messages of history each turn's prompt shows (the conversation keeps them all), > 0;
  // nullopt: all of them, as far as the model's context reaches.
  std::optional<std::int64_t> max_history_messages = 20;
  std::optional<std::int64_t> scratchpad_max_chars = std::nullopt;  // the agent's cap, > 0
  // Which agent runs a turn: the native agent (structured tool calls through chat_with_tools,
  // what tool-calling models are trained for) or, when false, the ReAct agent (text), which any
  // Backend can drive.
  bool use_native = true;

  /// Returns normally when every field is in range; AssistantError otherwise, naming the field,
  /// its bound and the value: "AssistantConfig: max_steps must be > 0, got 0"; an empty name:
  /// "AssistantConfig: name must be a non-empty string".
  void validate() const;

  /// Every field by name, unset optionals as null: what /config prints and /save writes.
  /// Example: AssistantConfig{}.to_json()["rag_k"] == 5, ["top_k"] is null.
  nlohmann::json to_json() const;
};

}  // namespace g2c::assistant
