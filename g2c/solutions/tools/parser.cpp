// Module 18, reference: every <tool_call>…</tool_call> block in order, each ending at the first
// closing tag after it; malformed ones skipped.
#include "g2c/tools/parser.h"
#include "g2c/core/strip.h"

namespace g2c::tools {

namespace {

constexpr std::string_view kOpen = "<tool_call>";
constexpr std::string_view kClose = "</tool_call>";

}  // namespace

std::vector<ToolCall> parse_tool_calls(std::string_view text) {
  std::vector<ToolCall> calls;
  std::size_t index = 0;
  for (auto open = text.find(kOpen); open != std::string_view::npos;
       open = text.find(kOpen, open)) {
    const auto body_start = open + kOpen.size();
    const auto close = text.find(kClose, body_start);
    if (close == std::string_view::npos) break;  // an unfinished block is not a call
    const auto body = g2c::strip(text.substr(body_start, close - body_start));
    open = close + kClose.size();
    const auto block = index++;

    const auto value = nlohmann::json::parse(body, nullptr, false);
    if (!value.is_object()) continue;  // not JSON (discarded) or not an object
    const auto name = value.find("name");
    if (name == value.end() || !name->is_string() || name->get<std::string>().empty()) continue;
    auto arguments = value.value("arguments", nlohmann::json::object());
    if (!arguments.is_object()) continue;
    calls.emplace_back(name->get<std::string>(), std::move(arguments), new_call_id(block));
  }
  return calls;
}

}  // namespace g2c::tools
