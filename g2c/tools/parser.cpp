// Module 18 — your work: find the tool calls in a model's text.
#include "g2c/tools/parser.h"
#include "g2c/core/errors.h"
#include "g2c/core/strip.h"

namespace g2c::tools {

std::vector<ToolCall> parse_tool_calls(std::string_view text) {
  // TODO: The well-formed <tool_call>…</tool_call> blocks of `text`, in order (parser.h). Find
  // the tags with find(): a block ends at the FIRST "</tool_call>" after its opening tag (so two
  // calls never merge), the search for the next block goes on after that closing tag, and an
  // opening tag without a closing one ends the search. A block's body, trimmed with g2c::strip,
  // must parse as JSON (nlohmann::json::parse(body, nullptr, false) returns a discarded value
  // instead of throwing) and be an object with a non-empty string "name" and an object
  // "arguments" ({} when absent). Skip any other block and never throw: a model's slip must not
  // end the run. Block i, skipped ones counted, gets the id new_call_id(i).
  // Hints, one step at a time: scripts/hint.sh 18 parse_tool_calls
  throw g2c::todo("parse_tool_calls", "g2c/tools/parser.cpp", "18");
}

}  // namespace g2c::tools
