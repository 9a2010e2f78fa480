// Beyond module harness — the context window as a policy over the event log.
//
// With the log as the source of truth the prompt stops being a buffer that grows until it
// overflows and becomes a rendering decision: given everything that happened and a token budget,
// what does the model most need to see now? Two things are never given up:
//
//   always kept, verbatim                      safe to shorten
//   the task line (nothing else restates it)   old tool output (the workspace still holds it)
//   the newest line (what the model acts on)
//
// render_event (provided) turns one event into one prompt line; compact_context is yours
// (g2c/harness/context.cpp). Plain C++, no LibTorch.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "g2c/harness/events.h"

namespace g2c::harness {

/// How many characters of an old tool result survive compaction, and what marks the cut.
inline constexpr std::size_t COMPACT_KEEP_CHARS = 80;
inline constexpr const char* COMPACT_SUFFIX = " …[compacted]";

/// One event as one prompt line. Only what the model should see is rendered:
///   task -> "Task: <content>"              model_turn -> "Thought: <completion>"
///   tool_call -> "Action: <tool>  Input: <arguments as compact JSON>"
///   tool_result -> "Observation: " + "[error] " when it failed + <output>
///   final_answer -> "Final Answer: <content>"
/// Anything else (approval, stopped, a type of your own) -> "" (not rendered).
std::string render_event(const Event& event);

/// Old tool output shortened for compaction: its first COMPACT_KEEP_CHARS characters (code points,
/// never half a UTF-8 character) + COMPACT_SUFFIX; a line no longer than that is returned as is.
std::string shorten_line(const std::string& line);

/// The sum of estimate_tokens over the lines: what compaction holds under the budget.
std::int64_t estimated_tokens(const std::vector<std::string>& lines);

/// Your work: the log rendered into prompt lines (oldest first) under `budget_tokens`, in
/// estimate_tokens units. Three guarantees, which the course tests pin:
///   1. the task line is always there, first and verbatim, however tight the budget;
///   2. the newest line is always there, verbatim: compaction eats the middle, not the end;
///   3. the sum of estimate_tokens of the lines is <= budget_tokens, unless the task line and the
///      newest line alone exceed it (then those two are returned: 1 and 2 outrank 3).
/// How: render every event and drop the empty renders; if everything fits, return it all. If not,
/// walk the other lines oldest first, skipping the newest, shortening each tool_result line
/// (shorten_line) and stopping as soon as the whole fits; then drop whole lines, oldest first,
/// until it fits or only the newest is left. Order is kept throughout.
std::vector<std::string> compact_context(const std::vector<Event>& events,
                                         std::int64_t budget_tokens);

/// What a harness uses to build its prompt: compact_context, or any policy of the same shape
/// (the exercise's naive drop-oldest, a test's spy).
using ContextPolicy =
    std::function<std::vector<std::string>(const std::vector<Event>& events, std::int64_t budget)>;

}  // namespace g2c::harness
