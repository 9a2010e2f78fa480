// Module 18 — checking a call's arguments against its tool's schema, and describing tools to the
// model.
//
// A model's arguments are untrusted input: it may leave out a required one, invent one the tool
// does not take, or write "12" where a number belongs. validate_arguments is the gate between what
// the model wrote and what the tool receives. It implements a small, strict corner of JSON Schema
// (the corner tool-calling prompts use): an object whose properties are strings, numbers,
// integers or booleans; every required key present; no key the schema does not name.
//
//   schema {"type": "object", "properties": {"x": {"type": "integer"}}, "required": ["x"]}
//   {"x": 3}        -> {"x": 3}
//   {}              -> ToolError "missing required arguments: ['x']"
//   {"x": 3, "y":1} -> ToolError "unknown arguments: ['y']"
//   {"x": 3.5}      -> ToolError "argument 'x': expected integer, got float"
//   {"x": true}     -> ToolError "argument 'x': expected integer, got bool"
//
// JSON has one number type on the wire, but 3 and 3.5 parse differently (nlohmann's
// is_number_integer and is_number_float), and true is not a number: an "integer" is an integer
// number and never a boolean, a "number" either kind of number and never a boolean.
//
// The renderers are provided: render_tools_for_prompt writes the tool list for the text format's
// prompt; tool_to_ollama_spec / render_tools_for_ollama write the same tools as the function specs
// of Ollama's /api/chat (the native channel). Plain C++, no LibTorch. validate_arguments is yours
// (g2c/tools/schema.cpp).
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "g2c/tools/tool.h"

namespace g2c::tools {

/// Your work. `arguments` checked against tool.parameters() and returned as a copy (no types
/// converted). ToolError, with a message the model can act on, when:
///   - arguments is not a JSON object ("arguments must be a JSON object, got list");
///   - the schema's "type" is not "object" ("schema must be of type object");
///   - keys of "required" are missing (all of them, in "required"'s order, in one message:
///     "missing required arguments: ['a', 'b']");
///   - a key is not in "properties" ("unknown arguments: ['junk']");
///   - a property's "type" (default "string") is not one of string/number/integer/boolean
///     ("unknown type tag 'widget' for argument 'v'");
///   - a value does not have its property's type ("argument 'text': expected string, got int");
///     python_type_name gives the "got" part.
nlohmann::json validate_arguments(const Tool& tool, const nlohmann::json& arguments);

/// The type of a JSON value as Python names what json.loads returns: "str", "int", "float",
/// "bool", "dict", "list", "NoneType". For error messages. Example: python_type_name(true) ==
/// "bool".
std::string python_type_name(const nlohmann::json& value);

/// The system prompt of the text format: how to call a tool (<tool_call>{"name": …, "arguments":
/// {…}}</tool_call>), to stop after a call and wait for its result, and to answer in plain text
/// once there is enough to answer with. (It names no result tag, so a prompt holds one only where
/// a result really came back.)
inline constexpr std::string_view DEFAULT_SYSTEM =
    "You are a helpful assistant that can use tools. To use one, write a <tool_call> block "
    "holding one JSON object, {\"name\": \"<tool>\", \"arguments\": {...}}, whose arguments "
    "match that tool's parameters exactly, then stop and wait for the result, which comes back "
    "in the next turn (an error says what to fix). When you know enough to answer, answer in "
    "plain text with no <tool_call> block.";

/// The tool list for a text-format prompt: "Tools available:", then per tool "- name:
/// description" and its parameters as indented JSON, then the call format. No tools gives
/// "Tools available: (none)" and the call format. Example for the calculator:
///   Tools available:
///   - calculator: Evaluate an arithmetic expression. ...
///     parameters:
///     {
///       "properties": { ... },
///       ...
///     }
///
///   Call format: <tool_call>{"name": "<tool>", "arguments": {...}}</tool_call>
std::string render_tools_for_prompt(const std::vector<Tool>& tools);

/// One tool as Ollama's /api/chat takes it: {"type": "function", "function": {"name",
/// "description", "parameters"}}; the parameters are a copy, so changing the spec leaves the tool
/// as it was.
nlohmann::json tool_to_ollama_spec(const Tool& tool);

/// The tools as a JSON array of tool_to_ollama_spec, in order; [] for none.
nlohmann::json render_tools_for_ollama(const std::vector<Tool>& tools);

}  // namespace g2c::tools
