// Module 18 — reading tool calls out of a model's text, and writing their results back.
//
// In the text format the model asks for a tool by writing a block in its answer:
//
//   Let me compute that.
//   <tool_call>{"name": "calculator", "arguments": {"expression": "13 + 28"}}</tool_call>
//
// parse_tool_calls finds every such block, in order, and keeps the well-formed ones: a body that
// is a JSON object with a non-empty string "name" and an object "arguments" (absent means {}).
// A malformed block is skipped, never an exception: models write half-finished blocks now and
// then, and a run that crashed on one would lose the whole conversation; skipping reads as "no
// call this turn", from which the loop recovers. Each call gets an id, new_call_id(i) for the
// i-th block of the text, so results can be matched to calls when one turn makes several.
//
// format_tool_results writes the results for the next prompt:
//
//   <tool_result name="calculator" id="call_0_1a2b3c4d">
//   41
//   </tool_result>
//
// and <tool_error …> for a failed call, so that the model reads an error as a signal to try again.
// rescue_tool_call serves the native channel (loop.h): a model asked for structured tool calls
// that wrote the call's JSON in its text instead. Plain C++, no LibTorch. parse_tool_calls is
// yours (g2c/tools/parser.cpp); the rest is provided.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "g2c/tools/tool.h"

namespace g2c::tools {

/// Your work. The well-formed <tool_call>…</tool_call> blocks of `text`, in order. Each block ends
/// at the first "</tool_call>" after its "<tool_call>" (so two blocks never merge into one); its
/// body, with surrounding whitespace trimmed, must parse as JSON (nlohmann::json::parse(body,
/// nullptr, false) gives a discarded value instead of throwing) and be an object with a non-empty
/// string "name" and, when present, an object "arguments"; anything else is skipped. The i-th
/// block (counting skipped ones) gets call id new_call_id(i). Text without blocks gives {}.
/// Example: parse_tool_calls("<tool_call>{\"name\": \"ping\"}</tool_call>") -> one call "ping"
/// with arguments {}.
std::vector<ToolCall> parse_tool_calls(std::string_view text);
/// The Python edition refuses None with a TypeError; here a null pointer does not compile.
std::vector<ToolCall> parse_tool_calls(std::nullptr_t) = delete;

/// "call_<index>_<8 hex digits>", e.g. "call_0_9f3a61c2": unique within one parse by the index,
/// and within this process by the hex part (inference::fresh_call_id's).
std::string new_call_id(std::size_t index);

/// The results as blocks for the next prompt, separated by a blank line: <tool_result name="…"
/// id="…">, the output on its own lines, </tool_result> (<tool_error …> for a failed call). ""
/// for no results.
std::string format_tool_results(const std::vector<ToolResult>& results);

/// The first JSON object in `content` shaped like a tool call — a non-empty string "name" and an
/// object "arguments" or "parameters" (Llama 3.2 writes the latter) — as a ToolCall with id
/// new_call_id(0); nullopt when there is none. Prose before it and a ```json fence around it are
/// fine. Used when a model answered the native channel with the call written out as text.
/// Example: rescue_tool_call("I will compute it. {\"name\": \"calculator\", \"parameters\":
/// {\"expression\": \"7\"}}") -> calculator with {"expression": "7"}.
std::optional<ToolCall> rescue_tool_call(std::string_view content);

}  // namespace g2c::tools
