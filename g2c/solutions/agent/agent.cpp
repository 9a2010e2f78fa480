// Module 19, reference: an answer ends the run, an action runs and is remembered (a repeat of the
// last action ends the run too), a step that could not be read goes back to the model or, when
// configured, ends the run.
#include "g2c/agent/agent.h"

namespace g2c::agent {

StepOutcome Agent::decide_step(const ParsedStep& parsed,
                               const inference::InferenceResult& inference,
                               const std::vector<AgentStep>& steps) const {
  if (parsed.final_answer()) {
    return {AgentStep::final(inference, parsed.thought(), *parsed.final_answer()), "final_answer",
            false};
  }
  if (const auto& action = parsed.action()) {
    auto step = AgentStep::act(inference, parsed.thought(), *action,
                               observe(registry(), *action, steps.size()));
    if (options().loop_detection && previous_action_key(steps) == action_key(*action)) {
      return {std::move(step), "duplicate_action"};
    }
    return {std::move(step)};
  }
  auto step =
      AgentStep::stuck(inference, parsed.thought(), parsed.parse_error().value_or("no parse"));
  if (options().halt_on_stuck) return {std::move(step), "no_progress", false};
  return {std::move(step)};
}

}  // namespace g2c::agent
