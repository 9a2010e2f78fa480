// Module 19 — the agent's records: what the model asked for, what came back, one step, one run.
//
// A ReAct agent writes, at every step, a Thought and either an Action (a tool and its arguments)
// or a Final Answer; the runtime runs the action and shows the model an Observation:
//
//   Thought: I need the parameter count first.
//   Action: read_file
//   Action Input: {"path": "notes/model.md"}
//   Observation: ShakespeareLM-1M has 1,210,368 parameters.
//   Thought: I now know the final answer.
//   Final Answer: 2,420,736
//
//   Action        the tool and its arguments as the model wrote them (validated when dispatched)
//   Observation   the tool's output as text, or the error the model should read (is_error)
//   ParsedStep    what parse_react_step read out of one completion
//   AgentStep     one step: the completion, what was parsed, what was observed, the backend's
//                 answer
//   Plan          an optional plan made before the loop: a goal and up to five steps
//   StepOutcome   what the agent's policy decided about one step: record it, remember it, stop?
//   AgentRunResult  a whole run: the plan, the steps, the final answer, why it stopped
//
// The model's mistakes are data, never exceptions: a step that cannot be parsed carries its
// parse_error, a tool that fails an error Observation, and the loop goes on. AgentError is only
// for misuse of these types by code (a Plan with an empty step). Plain C++, no LibTorch; provided.
#pragma once

#include <optional>
#include <ostream>
#include <stdexcept>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "g2c/inference/backend.h"

namespace g2c::agent {

/// A record built against its contract (an empty plan goal or step); never thrown for what a
/// model writes.
class AgentError : public std::runtime_error {
 public:
  explicit AgentError(const std::string& message) : std::runtime_error(message) {}
};

/// A tool invocation read from the model's completion: fixed once made (a record of what the
/// model asked for at one step). `arguments` is the model's JSON object, not yet validated.
class Action {
 public:
  Action(std::string tool, nlohmann::json arguments)
      : tool_(std::move(tool)), arguments_(std::move(arguments)) {}
  const std::string& tool() const { return tool_; }
  const nlohmann::json& arguments() const { return arguments_; }
  bool operator==(const Action& other) const = default;

 private:
  std::string tool_;
  nlohmann::json arguments_;
};

/// "Action(tool='calculator', arguments={"expression":"2+2"})".
std::ostream& operator<<(std::ostream& stream, const Action& action);

/// What running an Action gave: the tool's output as text, or (is_error) the error message, shown
/// to the model with an "[error]" prefix so that it reads as a signal to change course.
class Observation {
 public:
  explicit Observation(std::string output, bool is_error = false)
      : output_(std::move(output)), is_error_(is_error) {}
  const std::string& output() const { return output_; }
  bool is_error() const { return is_error_; }
  bool operator==(const Observation& other) const = default;

 private:
  std::string output_;
  bool is_error_;
};

/// What parse_react_step read. Invariants: a final answer means no action; neither means a
/// parse_error saying why (the loop's "stuck step").
class ParsedStep {
 public:
  ParsedStep(std::string thought, std::optional<Action> action,
             std::optional<std::string> final_answer, std::optional<std::string> parse_error)
      : thought_(std::move(thought)),
        action_(std::move(action)),
        final_answer_(std::move(final_answer)),
        parse_error_(std::move(parse_error)) {}
  const std::string& thought() const { return thought_; }  // "" when the model wrote none
  const std::optional<Action>& action() const { return action_; }
  const std::optional<std::string>& final_answer() const { return final_answer_; }
  const std::optional<std::string>& parse_error() const { return parse_error_; }
  bool operator==(const ParsedStep& other) const = default;

 private:
  std::string thought_;
  std::optional<Action> action_;
  std::optional<std::string> final_answer_;
  std::optional<std::string> parse_error_;
};

/// One iteration of think → act → observe. On a well-formed step exactly one of `action` and
/// `final_answer` is set; `observation` is set when an action ran; `parse_error` when nothing
/// usable was read. `inference` carries the backend's token counts and latency.
struct AgentStep {
  std::string completion;
  std::string thought;
  std::optional<Action> action = std::nullopt;
  std::optional<Observation> observation = std::nullopt;
  std::optional<std::string> final_answer = std::nullopt;
  std::optional<std::string> parse_error = std::nullopt;
  inference::InferenceResult inference;

  /// The three shapes a step can have, the completion taken from `inference`:
  /// a step that answered,
  static AgentStep final(const inference::InferenceResult& inference, std::string thought,
                         std::string final_answer);
  /// a step that ran an action and saw what it gave,
  static AgentStep act(const inference::InferenceResult& inference, std::string thought,
                       Action action, Observation observation);
  /// and a step with neither ("stuck"), which says why.
  static AgentStep stuck(const inference::InferenceResult& inference, std::string thought,
                         std::string parse_error);
};

/// What the agent's policy (Agent::decide_step) made of one step: the step to record, whether
/// the run stops here and why ("final_answer", "duplicate_action", "no_progress"; nullopt: go on),
/// and whether the step goes into the scratchpad (pointless when the run is ending).
struct StepOutcome {
  AgentStep step;
  std::optional<std::string> stop_reason = std::nullopt;
  bool remember = true;
};

/// A plan: a one-line goal and its steps (each a short sentence), spliced into the prompt as a
/// target. A value: replace it with another Plan to change it.
class Plan {
 public:
  /// AgentError for an empty goal or an empty step (its index named).
  explicit Plan(std::string goal, std::vector<std::string> steps = {});
  const std::string& goal() const { return goal_; }
  const std::vector<std::string>& steps() const { return steps_; }
  bool operator==(const Plan& other) const = default;

 private:
  std::string goal_;
  std::vector<std::string> steps_;
};

/// "Plan(goal='solve', steps=['read X', 'sum Y'])".
std::ostream& operator<<(std::ostream& stream, const Plan& plan);

/// A whole run. `stopped_reason`: "final_answer", "max_steps", "no_progress" (a step with
/// neither action nor answer) or "duplicate_action" (the same action twice in a row).
struct AgentRunResult {
  std::string user_message;
  std::optional<Plan> plan;
  std::optional<std::string> final_answer;
  std::vector<AgentStep> steps;
  std::string stopped_reason;
  nlohmann::json metadata = nlohmann::json::object();
};

}  // namespace g2c::agent
