// Module 18 — the tool types' checks and printing (tool.h).
#include "g2c/tools/tool.h"

#include <fmt/format.h>

#include "g2c/core/errors.h"
#include "g2c/tokenizer/utf8.h"

namespace g2c::tools {

using g2c::tokenizer::python_repr;

Tool::Tool(std::string name, std::string description, nlohmann::json parameters, ToolFunction func)
    : name_(std::move(name)),
      description_(std::move(description)),
      parameters_(std::move(parameters)),
      func_(std::move(func)) {
  if (name_.empty()) {
    throw ValueError("Tool: name must be a non-empty string (the name the model calls it by)");
  }
  if (description_.empty()) {
    throw ValueError(fmt::format(
        "Tool {}: description must be a non-empty string (the model reads it to decide when to "
        "call the tool)",
        python_repr(name_)));
  }
  if (!parameters_.is_object()) {
    throw ValueError(fmt::format(
        "Tool {}: parameters must be a JSON object (JSON-schema-lite: {{\"type\": \"object\", "
        "\"properties\": {{...}}, \"required\": [...]}}), got {}",
        python_repr(name_), parameters_.dump()));
  }
  if (!func_) {
    throw ValueError(
        fmt::format("Tool {}: func must be callable, got an empty function", python_repr(name_)));
  }
}

std::ostream& operator<<(std::ostream& stream, const Tool& tool) {
  return stream << "Tool(name=" << python_repr(tool.name()) << ")";
}

ToolCall::ToolCall(std::string name, nlohmann::json arguments, std::string call_id)
    : name_(std::move(name)), arguments_(std::move(arguments)), call_id_(std::move(call_id)) {}

std::ostream& operator<<(std::ostream& stream, const ToolCall& call) {
  return stream << "ToolCall(name=" << python_repr(call.name())
                << ", arguments=" << call.arguments().dump()
                << ", call_id=" << python_repr(call.call_id()) << ")";
}

ToolResult::ToolResult(std::string call_id, std::string name, std::string output, bool is_error)
    : call_id_(std::move(call_id)),
      name_(std::move(name)),
      output_(std::move(output)),
      is_error_(is_error) {}

std::ostream& operator<<(std::ostream& stream, const ToolResult& result) {
  return stream << "ToolResult(name=" << python_repr(result.name())
                << ", call_id=" << python_repr(result.call_id())
                << ", is_error=" << (result.is_error() ? "True" : "False")
                << ", output=" << python_repr(result.output()) << ")";
}

}  // namespace g2c::tools
