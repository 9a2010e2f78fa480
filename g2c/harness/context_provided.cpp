// Beyond module harness — the provided half of context.h: rendering one event.
#include <string>

#include "g2c/harness/context.h"
#include "g2c/tokenizer/utf8.h"

namespace g2c::harness {

namespace {

/// A payload's string field, or its JSON text when it holds something else (a log written by
/// hand, a number where text was expected): the prompt shows what is there instead of failing.
std::string text_of(const Json& payload, const char* key) {
  if (!payload.contains(key)) return "";
  const auto& value = payload.at(key);
  return value.is_string() ? value.get<std::string>()
                           : value.dump(-1, ' ', false, Json::error_handler_t::replace);
}

}  // namespace

std::string render_event(const Event& event) {
  const auto& p = event.payload;
  if (event.type == "task") return "Task: " + text_of(p, "content");
  if (event.type == "model_turn") return "Thought: " + text_of(p, "completion");
  if (event.type == "tool_call") {
    const Json arguments = p.contains("arguments") ? p.at("arguments") : Json::object();
    return "Action: " + text_of(p, "tool") +
           "  Input: " + arguments.dump(-1, ' ', false, Json::error_handler_t::replace);
  }
  if (event.type == "tool_result") {
    const bool is_error =
        p.contains("is_error") && p.at("is_error").is_boolean() && p.at("is_error").get<bool>();
    return std::string("Observation: ") + (is_error ? "[error] " : "") + text_of(p, "output");
  }
  if (event.type == "final_answer") return "Final Answer: " + text_of(p, "content");
  return "";
}

std::string shorten_line(const std::string& line) {
  if (g2c::tokenizer::utf8_length(line) <= COMPACT_KEEP_CHARS) return line;
  return std::string(g2c::tokenizer::utf8_prefix(line, COMPACT_KEEP_CHARS)) + COMPACT_SUFFIX;
}

std::int64_t estimated_tokens(const std::vector<std::string>& lines) {
  std::int64_t total = 0;
  for (const auto& line : lines) total += estimate_tokens(line);
  return total;
}

}  // namespace g2c::harness
