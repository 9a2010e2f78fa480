// Module 19 — the agent's prompts (prompts.h).
#include "g2c/agent/prompts.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "g2c/core/errors.h"

namespace g2c::agent {

const std::string_view DEFAULT_AGENT_SYSTEM =
    "You solve tasks one step at a time, using tools when they help.\n"
    "\n"
    "Tools:\n"
    "{tools_block}\n"
    "\n"
    "Write every step in exactly this form:\n"
    "\n"
    "Thought: <one sentence about what to do next>\n"
    "Action: <one of {tool_names}>\n"
    "Action Input: <the tool's arguments as one JSON object on one line>\n"
    "\n"
    "Then stop. The tool runs and its result is added as:\n"
    "\n"
    "Observation: <the tool's output>\n"
    "\n"
    "Repeat Thought / Action / Action Input as often as you need. When you can answer, write:\n"
    "\n"
    "Thought: I now know the final answer.\n"
    "Final Answer: <the answer to the task>\n"
    "\n"
    "Rules: one Action per step; only the tools listed above; an Observation that starts with "
    "[error] means the call failed, so change the call; no Action once you write the Final "
    "Answer.\n";

const std::string_view DEFAULT_PLANNING_PROMPT =
    "Plan how to solve a task with the tools below before solving it.\n"
    "\n"
    "Tools:\n"
    "{tools_block}\n"
    "\n"
    "Task: {user_message}\n"
    "\n"
    "Answer in exactly this form and with nothing else:\n"
    "\n"
    "Goal: <the task in one sentence>\n"
    "1. <first step>\n"
    "2. <second step>\n"
    "\n"
    "Use one to five steps, each one short sentence.\n";

namespace {

std::string tools_block(const std::vector<g2c::tools::Tool>& tools) {
  if (tools.empty()) return "  (no tools registered)";
  std::vector<std::string> lines;
  for (const auto& tool : tools) lines.push_back("  - " + tool.name() + ": " + tool.description());
  return fmt::format("{}", fmt::join(lines, "\n"));
}

}  // namespace

std::string render_system_prompt(const std::vector<g2c::tools::Tool>& tools) {
  std::vector<std::string> names;
  for (const auto& tool : tools) names.push_back(tool.name());
  return fmt::format(
      fmt::runtime(DEFAULT_AGENT_SYSTEM), fmt::arg("tools_block", tools_block(tools)),
      fmt::arg("tool_names",
               names.empty() ? std::string("(none)") : fmt::format("{}", fmt::join(names, ", "))));
}

std::string render_planning_prompt(std::string_view user_message,
                                   const std::vector<g2c::tools::Tool>& tools) {
  if (user_message.empty()) {
    throw ValueError("render_planning_prompt: user_message must be a non-empty string");
  }
  return fmt::format(fmt::runtime(DEFAULT_PLANNING_PROMPT),
                     fmt::arg("tools_block", tools_block(tools)),
                     fmt::arg("user_message", user_message));
}

std::string render_plan_block(std::string_view goal, const std::vector<std::string>& steps) {
  std::string block = fmt::format("Plan:\nGoal: {}", goal);
  for (std::size_t i = 0; i < steps.size(); ++i) block += fmt::format("\n{}. {}", i + 1, steps[i]);
  return block;
}

}  // namespace g2c::agent
