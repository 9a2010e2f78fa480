// Module 19 — reading one ReAct step out of a model's completion.
//
//   Thought: I need to compute this
//   Action: calculator
//   Action Input: {"expression": "2+2"}
//
// parse_react_step turns such text into a ParsedStep: the thought, and either an Action or a Final
// Answer — or, when neither can be read, a parse_error saying why, which the loop shows the model
// instead of crashing. Models wobble, so the reading is forgiving: markers in any case, spaces
// around the colon, prose before the markers, the JSON in a ```json fence or over several lines, a
// trailing period after the tool name. And strict where it matters: a Final Answer wins over an
// Action written beside it, an empty Final Answer is no answer, the Action Input must be a JSON
// object.
//
// Finding the markers is provided (react_field): Thought, Action and Action Input count only at
// the start of a line, so "Thought: I could take Action: calculator" is a thought, not an action;
// a Final Answer counts anywhere ("I think it is 4. Final Answer: 4"). The decisions are yours.
// Plain C++, no LibTorch.
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>

#include "g2c/agent/types.h"

namespace g2c::agent {

enum class ReactMarker { Thought, Action, ActionInput, FinalAnswer };

/// The text after the first `marker` in `text` (case-insensitive, spaces allowed before the colon,
/// "**" decorations skipped), untrimmed; nullopt when the marker is absent.
///   Thought      from the first line starting with "Thought:" up to the next line that starts
///                with a marker (Action, Action Input, Final Answer, Observation), or the end
///   Action       the rest of the first line starting with "Action:" (may be blank)
///   ActionInput  from the first line starting with "Action Input:" up to the next line that starts
///                with a marker, or the end (so a JSON body may span lines)
///   FinalAnswer  everything after the first "Final Answer:" anywhere in the text
/// Example: react_field("Thought: use calc\nAction: calculator", ReactMarker::Action) ->
/// " calculator".
std::optional<std::string> react_field(std::string_view text, ReactMarker marker);

/// `text` without a surrounding ``` fence (its language tag included) and surrounding whitespace.
/// Example: "```json\n{\"a\": 1}\n```" -> "{\"a\": 1}".
std::string strip_code_fences(std::string_view text);

/// `text` without leading and trailing whitespace (spaces, tabs, newlines): Python's str.strip().
std::string strip_whitespace(std::string_view text);

/// Your work. The step `text` describes:
///   1. thought = strip_whitespace(react_field Thought), "" when absent;
///   2. a Final Answer whose stripped text is non-empty wins: ParsedStep(thought, nullopt, answer,
///      nullopt), whatever else is there;
///   3. otherwise Action and Action Input: neither -> parse_error "no Action, Action Input, or
///      Final Answer found"; only the input -> "Action Input present but Action missing"; only the
///      action -> "Action 'calculator' found but no Action Input";
///   4. the tool name is the Action stripped of whitespace and then of trailing ".,;:" characters;
///      empty -> "Action name is empty";
///   5. the arguments are strip_code_fences(Action Input) parsed as JSON: not JSON -> "Action Input
///      is not valid JSON: " and the parser's message (nlohmann::json::parse_error's what()); not
///      an object -> "Action Input must be a JSON object, got list";
///   6. ParsedStep(thought, Action(tool, arguments), nullopt, nullopt).
/// Example: parse_react_step("Final Answer: 42") -> thought "", final answer "42".
ParsedStep parse_react_step(std::string_view text);
/// The Python edition refuses a non-string with a TypeError; here it does not compile.
ParsedStep parse_react_step(std::nullptr_t) = delete;

}  // namespace g2c::agent
