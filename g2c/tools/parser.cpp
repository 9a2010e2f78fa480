// Module 18 — your work: find the tool calls in a model's text.
#include "g2c/tools/parser.h"
#include "g2c/core/errors.h"
#include "g2c/core/strip.h"

namespace g2c::tools {

std::vector<ToolCall> parse_tool_calls(std::string_view text) {
  // TODO: walk the text with find(): each "<tool_call>" opens a block that ends at the first
  // "</tool_call>" after it (an opening tag with no closing tag ends the search). For the i-th
  // block (i counts every block, skipped ones too):
  //   - body = g2c::strip(the text between the tags): whitespace trimmed from both ends;
  //   - value = nlohmann::json::parse(body, nullptr, false) (a discarded value, not an exception,
  //     when the body is not JSON); skip the block unless value.is_object();
  //   - name = value["name"]: skip unless it is a non-empty string;
  //   - arguments = value.value("arguments", nlohmann::json::object()): skip unless an object;
  //   - keep ToolCall(name, arguments, new_call_id(i)).
  // Never throw on a malformed block: skipping it is how the loop survives a model's slip.
  // Hints, one step at a time: scripts/hint.sh 18 parse_tool_calls
  throw g2c::todo("parse_tool_calls", "g2c/tools/parser.cpp", "18");
}

}  // namespace g2c::tools
