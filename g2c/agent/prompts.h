// Module 19 — the agent's prompts: the ReAct system prompt, the planning prompt, and the plan as
// the main prompt shows it. Provided.
//
// The system prompt fixes the format the parser reads (Thought / Action / Action Input, then the
// runtime's Observation, and Final Answer to finish) and lists the tools; the planning prompt asks
// once, before the loop, for "Goal:" and a numbered list of one to five steps (extract_plan reads
// it). Plain C++, no LibTorch.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "g2c/tools/tool.h"

namespace g2c::agent {

/// The system prompt's template: {tools_block} is the tool list, {tool_names} their names.
extern const std::string_view DEFAULT_AGENT_SYSTEM;

/// The planning prompt's template: {tools_block}, then {user_message}.
extern const std::string_view DEFAULT_PLANNING_PROMPT;

/// DEFAULT_AGENT_SYSTEM with the tools filled in ("  - name: description" per tool, or "  (no
/// tools registered)"; the names comma-separated, or "(none)").
std::string render_system_prompt(const std::vector<g2c::tools::Tool>& tools);

/// DEFAULT_PLANNING_PROMPT with the tools and the task filled in. ValueError for an empty task.
std::string render_planning_prompt(std::string_view user_message,
                                   const std::vector<g2c::tools::Tool>& tools);

/// "Plan:\nGoal: <goal>\n1. <step>\n2. <step>" (no numbered lines without steps).
std::string render_plan_block(std::string_view goal, const std::vector<std::string>& steps);

}  // namespace g2c::agent
