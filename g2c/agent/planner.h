// Module 19 — the optional plan: one backend call before the loop asks for a goal and a numbered
// list of steps, and extract_plan reads the answer.
//
//   Goal: add the two models' parameters
//   1. read the model notes
//   2. add the two counts
//
// Models wobble here too: the goal line may be missing (the task itself is the goal then), the
// numbers may be written "1)" or "1 -", a list may restart at 1 or run past the five steps asked
// for. A plan that cannot be read is no plan (nullopt), and the agent runs without one — never an
// error. The line-level reading is provided (goal_line, numbered_lines); the decisions are yours.
// Plain C++, no LibTorch.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "g2c/agent/types.h"
#include "g2c/inference/backend.h"
#include "g2c/tools/registry.h"

namespace g2c::agent {

/// The text after "Goal:" (any case, spaces before the colon allowed) on the first line holding
/// it, up to the end of that line, untrimmed; nullopt without one.
std::optional<std::string> goal_line(std::string_view text);

/// A line "<number><. or ) or ->< text>" of a numbered list.
struct NumberedLine {
  std::int64_t number;
  std::string body;  // the text after the separator, stripped (may be empty)
};

/// Every numbered line of `text`, in order: optional spaces, digits, optional spaces, one of
/// '.', ')', '-', then the body. Example: "Goal: g\n1. read\n2) sum" -> {1, "read"}, {2, "sum"}.
std::vector<NumberedLine> numbered_lines(std::string_view text);

/// Your work. The plan `text` describes, or nullopt when it lists no step:
///   - the goal is goal_line(text) stripped, or user_message stripped when there is none (or it
///     is blank);
///   - the steps are the numbered lines' bodies, in order, skipping empty ones and any whose
///     number is not greater than the last one kept (a list that restarts), at most five.
/// ValueError for an empty user_message. Example: extract_plan("1. step one\n2. step two",
/// "the task") -> Plan("the task", {"step one", "step two"}).
std::optional<Plan> extract_plan(std::string_view text, std::string_view user_message);
/// A null pointer for either text does not compile (the Python edition's TypeError).
std::optional<Plan> extract_plan(std::nullptr_t, std::string_view) = delete;

/// make_plan's settings: near-greedy, and room for five one-sentence steps.
struct PlanOptions {
  std::int64_t max_new_tokens = 256;
  double temperature = 0.2;
};

/// The planning phase: render_planning_prompt with the registry's tools, one backend.complete, and
/// extract_plan on the completion. nullopt when the answer holds no plan. ValueError for an empty
/// user_message.
std::optional<Plan> make_plan(inference::Backend& backend, std::string_view user_message,
                              const g2c::tools::ToolRegistry& registry,
                              const PlanOptions& options = {});

}  // namespace g2c::agent
