// Module 18 — the provided half of parser.h: call ids, results for the prompt, and the native
// channel's rescue of a call written as text.
#include <sstream>

#include <fmt/format.h>

#include "g2c/tools/parser.h"

namespace g2c::tools {

std::string new_call_id(std::size_t index) {
  // inference::fresh_call_id is "call_" and 8 hex digits unique in this process: the index goes
  // between the two.
  return fmt::format("call_{}_{}", index, inference::fresh_call_id().substr(5));
}

std::string format_tool_results(const std::vector<ToolResult>& results) {
  std::ostringstream out;
  for (std::size_t i = 0; i < results.size(); ++i) {
    const auto& result = results[i];
    const char* tag = result.is_error() ? "tool_error" : "tool_result";
    if (i > 0) out << "\n\n";
    out << "<" << tag << " name=\"" << result.name() << "\" id=\"" << result.call_id() << "\">\n"
        << result.output() << "\n</" << tag << ">";
  }
  return out.str();
}

namespace {

/// The end (one past the closing brace) of the JSON object that starts at content[start] == '{',
/// found by counting braces outside strings; npos when it never closes.
std::size_t object_end(std::string_view content, std::size_t start) {
  int depth = 0;
  bool in_string = false;
  for (std::size_t i = start; i < content.size(); ++i) {
    const char c = content[i];
    if (in_string) {
      if (c == '\\') {
        ++i;  // whatever is escaped cannot close the string
      } else if (c == '"') {
        in_string = false;
      }
    } else if (c == '"') {
      in_string = true;
    } else if (c == '{') {
      ++depth;
    } else if (c == '}' && --depth == 0) {
      return i + 1;
    }
  }
  return std::string_view::npos;
}

}  // namespace

std::optional<ToolCall> rescue_tool_call(std::string_view content) {
  for (std::size_t start = content.find('{'); start != std::string_view::npos;
       start = content.find('{', start + 1)) {
    const auto end = object_end(content, start);
    if (end == std::string_view::npos) return std::nullopt;  // no later '{' can close either
    const auto value = nlohmann::json::parse(content.substr(start, end - start), nullptr, false);
    if (!value.is_object()) continue;
    const auto name = value.find("name");
    if (name == value.end() || !name->is_string() || name->get<std::string>().empty()) continue;
    for (const char* key : {"arguments", "parameters"}) {
      const auto arguments = value.find(key);
      if (arguments != value.end() && arguments->is_object()) {
        return ToolCall(name->get<std::string>(), *arguments, new_call_id(0));
      }
    }
  }
  return std::nullopt;
}

}  // namespace g2c::tools
