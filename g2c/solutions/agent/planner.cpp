// Module 19, reference: the goal line or the task itself, then the numbered steps in increasing
// order, empty ones dropped, five at most; no step, no plan.
#include "g2c/agent/planner.h"
#include "g2c/agent/parser.h"
#include "g2c/core/errors.h"

namespace g2c::agent {

std::optional<Plan> extract_plan(std::string_view text, std::string_view user_message) {
  if (user_message.empty()) throw ValueError("extract_plan: user_message must be non-empty");
  std::string goal = strip_whitespace(goal_line(text).value_or(""));
  if (goal.empty()) goal = strip_whitespace(user_message);
  std::vector<std::string> steps;
  std::optional<std::int64_t> last;
  for (const auto& line : numbered_lines(text)) {
    if (line.body.empty()) continue;
    if (last && line.number <= *last) continue;  // the list restarted or went backwards
    last = line.number;
    steps.push_back(line.body);
    if (steps.size() == 5) break;  // the prompt asked for five at most
  }
  if (steps.empty()) return std::nullopt;
  return Plan(goal, steps);
}

}  // namespace g2c::agent
