// Module 19 — your work: read a plan out of the planning prompt's answer.
#include "g2c/agent/planner.h"
#include "g2c/agent/parser.h"
#include "g2c/core/errors.h"

namespace g2c::agent {

std::optional<Plan> extract_plan(std::string_view text, std::string_view user_message) {
  // TODO: ValueError for an empty user_message. goal = strip_whitespace(goal_line(text) or ""),
  // or strip_whitespace(user_message) when that is empty. Then walk numbered_lines(text): skip a
  // line whose body is empty, skip one whose number is not greater than the last number kept (a
  // list that restarts at 1), keep the others' bodies, and stop at five. No step kept ->
  // std::nullopt (the agent runs without a plan); otherwise Plan(goal, steps).
  // Hints, one step at a time: scripts/hint.sh 19 extract_plan
  throw g2c::todo("extract_plan", "g2c/agent/planner.cpp", "19");
}

}  // namespace g2c::agent
