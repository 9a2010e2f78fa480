// Module 20 — AssistantConfig's checks and its JSON (config.h).
#include "g2c/assistant/config.h"

#include <string_view>

#include <fmt/format.h>

namespace g2c::assistant {

namespace {

void check_positive(std::string_view field, std::int64_t value) {
  if (value <= 0) {
    throw AssistantError(fmt::format("AssistantConfig: {} must be > 0, got {}", field, value));
  }
}

void check_positive_or_unset(std::string_view field, const std::optional<std::int64_t>& value) {
  if (value && *value <= 0) {
    throw AssistantError(
        fmt::format("AssistantConfig: {} must be > 0 or unset (std::nullopt: no limit), got {}",
                    field, *value));
  }
}

}  // namespace

void AssistantConfig::validate() const {
  if (name.empty()) {
    throw AssistantError(
        "AssistantConfig: name must be a non-empty string (a label such as \"g2c-assistant\")");
  }
  check_positive("max_steps", max_steps);
  check_positive("max_new_tokens", max_new_tokens);
  if (!(temperature >= 0.0)) {  // NaN fails too
    throw AssistantError(fmt::format(
        "AssistantConfig: temperature must be >= 0 (0 is greedy), got {}", temperature));
  }
  check_positive("rag_k", rag_k);
  if (!(repeat_penalty > 0.0)) {
    throw AssistantError(fmt::format(
        "AssistantConfig: repeat_penalty must be > 0 (1 is none), got {}", repeat_penalty));
  }
  if (repeat_last_n < -1) {
    throw AssistantError(fmt::format(
        "AssistantConfig: repeat_last_n must be >= -1 (-1: every token), got {}", repeat_last_n));
  }
  check_positive_or_unset("max_history_messages", max_history_messages);
  check_positive_or_unset("scratchpad_max_chars", scratchpad_max_chars);
}

nlohmann::json AssistantConfig::to_json() const {
  const auto optional = [](const auto& value) {
    return value ? nlohmann::json(*value) : nlohmann::json(nullptr);
  };
  return {{"name", name},
          {"max_steps", max_steps},
          {"plan", plan},
          {"loop_detection", loop_detection},
          {"halt_on_stuck", halt_on_stuck},
          {"max_new_tokens", max_new_tokens},
          {"temperature", temperature},
          {"top_k", optional(top_k)},
          {"top_p", optional(top_p)},
          {"repeat_penalty", repeat_penalty},
          {"repeat_last_n", repeat_last_n},
          {"rag_enabled", rag_enabled},
          {"rag_k", rag_k},
          {"max_history_messages", optional(max_history_messages)},
          {"scratchpad_max_chars", optional(scratchpad_max_chars)},
          {"use_native", use_native}};
}

}  // namespace g2c::assistant
