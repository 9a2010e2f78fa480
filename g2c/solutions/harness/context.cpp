// Reference solution for g2c/harness/context.cpp: the context policy.
#include <utility>

#include "g2c/harness/context.h"

namespace g2c::harness {

std::vector<std::string> compact_context(const std::vector<Event>& events,
                                         std::int64_t budget_tokens) {
  std::vector<std::string> task;  // the task line, or nothing when the log has none
  std::vector<std::string> types, lines;
  for (const auto& event : events) {
    auto line = render_event(event);
    if (line.empty()) continue;
    if (event.type == "task") {
      if (task.empty()) task.push_back(std::move(line));
      continue;
    }
    types.push_back(event.type);
    lines.push_back(std::move(line));
  }
  const auto whole = [&] {
    auto all = task;
    all.insert(all.end(), lines.begin(), lines.end());
    return all;
  };
  const auto fits = [&] { return estimated_tokens(whole()) <= budget_tokens; };
  if (fits()) return whole();

  // Old tool output first, oldest first; the newest line is what the model acts on.
  for (std::size_t i = 0; i + 1 < lines.size(); ++i) {
    if (types[i] != "tool_result") continue;
    lines[i] = shorten_line(lines[i]);
    if (fits()) return whole();
  }
  // Then whole lines, oldest first, down to the newest alone.
  while (lines.size() > 1 && !fits()) lines.erase(lines.begin());
  return whole();
}

}  // namespace g2c::harness
