// Module 19 — the agent: a model that works a task out over several steps, using tools, until it
// can answer.
//
//   prompt = system (the ReAct format, the tools) [+ Plan] + "Question: <task>" + scratchpad
//            + "Thought:"
//   step 1: complete -> "Thought: I need the size.\nAction: read_file\nAction Input: {...}"
//           decide: an action -> run it, observe "1,210,368", remember the step, go on
//   step 2: complete -> "Action: calculator\nAction Input: {\"expression\": \"2 * 1210368\"}"
//           decide: an action -> "2420736", remember, go on
//   step 3: complete -> "Thought: I know it.\nFinal Answer: 2,420,736"
//           decide: a final answer -> stop ("final_answer")
//
// The run is split in two. The driver (run, provided) owns the mechanics: the optional planning
// call, at most max_steps backend calls, prompt -> complete -> parse_react_step, recording each
// step and honouring what the policy says. The policy (decide_step, yours) owns the behaviour:
// given one parsed step it decides what the step means — an answer, an action to run, a repeat of
// the last action, a step that could not be read — and returns a StepOutcome: the step to record,
// whether to remember it in the scratchpad, whether to stop. A run stops for one of four reasons:
//   final_answer       the model answered
//   duplicate_action   the same action (tool and arguments) as the last action step
//                      (loop_detection; steps that could not be read in between do not count)
//   no_progress        a step that could not be read, with halt_on_stuck set (by default the
//                      parse error goes back to the model as an observation instead)
//   max_steps          the safety net
// Nothing the model writes makes run throw: unknown tools, bad arguments and failing tools come
// back from module 18's dispatch_tool_call as error observations. Plain C++, no LibTorch.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <ostream>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "g2c/agent/memory.h"
#include "g2c/agent/parser.h"
#include "g2c/agent/planner.h"
#include "g2c/agent/prompts.h"
#include "g2c/agent/types.h"
#include "g2c/inference/backend.h"
#include "g2c/tools/registry.h"

namespace g2c::agent {

/// The agent's settings, by the Python edition's keyword names. The sampling settings go to every
/// backend call: near-greedy, since a consistent format matters more than variety.
struct AgentOptions {
  std::int64_t max_steps = 8;  // backend calls in the loop at most, > 0
  bool plan = true;            // one planning call first (a failed plan: run without one)
  bool loop_detection = true;  // stop on the same action twice in a row
  bool halt_on_stuck = false;  // stop on a step that could not be read
  std::optional<std::int64_t> scratchpad_max_chars = std::nullopt;  // > 0; nullopt: no cap
  inference::CompletionOptions sampling =
      inference::CompletionOptions().with_max_new_tokens(512).with_temperature(0.2);
  /// Each step as soon as it is recorded (an action's observation in): a terminal shows the tools
  /// at work while the run goes on. Empty: nobody watches. (sampling.on_text shows each step's
  /// text while it is generated; the plan is neither.)
  std::function<void(const AgentStep&)> on_step = {};
};

/// AgentError for max_steps <= 0 or a scratchpad_max_chars <= 0, naming `who` ("Agent").
void check_agent_options(const AgentOptions& options, std::string_view who);

/// An action's identity for loop detection: the tool and its arguments as JSON with sorted keys
/// (nlohmann's objects are sorted), so the same arguments in another order are the same action.
std::pair<std::string, std::string> action_key(const Action& action);

/// The key of the latest step in `steps` that acted, skipping steps that could not be read (an
/// "A, stuck, A" run is still a repeat); nullopt when none acted.
std::optional<std::pair<std::string, std::string>> previous_action_key(
    const std::vector<AgentStep>& steps);

/// Runs `action` through module 18's dispatch_tool_call (call id "call_<step_index>") and wraps
/// the result as an Observation. For an unknown tool the message also lists the registered names
/// and says that operators and other inputs go inside the Action Input, so the model can correct
/// itself next step.
Observation observe(const g2c::tools::ToolRegistry& registry, const Action& action,
                    std::size_t step_index);

/// A run's metadata: {"n_steps", "n_tool_calls" (steps that acted), "tools_available",
/// "backend_name", "backend_model_id", "had_plan"}.
nlohmann::json agent_run_metadata(const std::vector<AgentStep>& steps,
                                  const g2c::tools::ToolRegistry& registry,
                                  const inference::BackendInfo& backend, bool had_plan);

/// The planning phase as both agents run it: nullopt when options.plan is off, and when planning
/// fails for any reason other than unwritten course code (a backend error, no plan in the answer):
/// a failed plan is never fatal, the loop runs without one.
std::optional<Plan> plan_phase(inference::Backend& backend, std::string_view user_message,
                               const g2c::tools::ToolRegistry& registry,
                               const AgentOptions& options);

/// The ReAct agent. Holds the backend by reference (it must outlive the agent) and a copy of the
/// registry. run keeps no state between calls: one agent can drive many runs.
class Agent {
 public:
  /// AgentError as check_agent_options says.
  Agent(inference::Backend& backend, g2c::tools::ToolRegistry registry, AgentOptions options = {});

  inference::Backend& backend() const { return *backend_; }
  const g2c::tools::ToolRegistry& registry() const { return registry_; }
  const AgentOptions& options() const { return options_; }
  std::int64_t max_steps() const { return options_.max_steps; }

  /// One task, start to finish: the planning phase, then the loop (see the top of this file).
  /// ValueError for an empty user_message; nothing the model writes makes it throw.
  AgentRunResult run(std::string_view user_message) const;
  /// The Python edition refuses a non-string with a ValueError; here it does not compile.
  AgentRunResult run(std::nullptr_t) const = delete;

  /// Your work: the policy for one step. `parsed` is what parse_react_step read from
  /// `inference.completion`; `steps` are the steps recorded so far (not this one), for loop
  /// detection only. Decide, in this order:
  ///   1. a final answer: the step is AgentStep::final(inference, thought, answer); stop with
  ///      "final_answer" and do not remember it (nothing will read it);
  ///   2. an action: run it (observe(registry(), action, steps.size())), the step is
  ///      AgentStep::act(...); with options().loop_detection and previous_action_key(steps) equal
  ///      to action_key(action), stop with "duplicate_action" (the step is still remembered);
  ///      otherwise go on;
  ///   3. neither: the step is AgentStep::stuck(inference, thought, parse_error or "no parse");
  ///      with options().halt_on_stuck stop with "no_progress" and do not remember it; otherwise
  ///      go on and remember it (the parse error reaches the model as an observation).
  /// Return a value; never change `steps` or the scratchpad — the driver records what you decide.
  StepOutcome decide_step(const ParsedStep& parsed, const inference::InferenceResult& inference,
                          const std::vector<AgentStep>& steps) const;

 private:
  /// The loop's prompt: render_system_prompt(tools), the plan block (when there is a plan),
  /// "Question: <task>", the scratchpad (when not empty), joined by blank lines, then
  /// "\n\nThought:" — the nudge into the format (without it models often begin with prose).
  std::string prompt(std::string_view user_message, const std::optional<Plan>& plan,
                     const Scratchpad& scratchpad) const;

  inference::Backend* backend_;
  g2c::tools::ToolRegistry registry_;
  AgentOptions options_;
};

/// "Agent(backend=fake, tools=['echo'], max_steps=8)".
std::ostream& operator<<(std::ostream& stream, const Agent& agent);

/// "<kind>(backend=<name>, tools=['a', 'b'], max_steps=<n>)": how either agent prints.
std::ostream& write_agent_repr(std::ostream& stream, std::string_view kind,
                               const inference::BackendInfo& backend,
                               const g2c::tools::ToolRegistry& registry, std::int64_t max_steps);

}  // namespace g2c::agent
