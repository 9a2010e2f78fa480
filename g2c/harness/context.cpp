// Beyond module harness — your work: what the model sees under a token budget.
#include "g2c/harness/context.h"
#include "g2c/core/errors.h"

namespace g2c::harness {

std::vector<std::string> compact_context(const std::vector<Event>& events,
                                         std::int64_t budget_tokens) {
  // clang-format off
  // TODO: render, then shorten old tool output, then drop old lines — never the task, never the
  // newest line.
  //   task_line = render_event of the first "task" event (none: no task line)
  //   others    = (type, render_event(e)) of every other event whose render is not empty
  //   lines     = the others' texts;  whole = [task_line] + lines
  //   estimated_tokens(whole) <= budget_tokens: return whole
  //   for i in 0 .. lines.size() - 2 (the newest, lines.back(), is never shortened):
  //     others[i] is a "tool_result": lines[i] = shorten_line(lines[i])
  //     whole fits now: return it
  //   while lines.size() > 1 and the whole does not fit: drop lines.front()
  //   return [task_line] + lines
  // clang-format on
  // Hints, one step at a time: scripts/hint.sh harness compact_context
  throw g2c::todo("compact_context", "g2c/harness/context.cpp", "harness");
}

}  // namespace g2c::harness
