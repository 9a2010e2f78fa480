// Module 19 — your work: the agent's policy for one step.
#include "g2c/agent/agent.h"
#include "g2c/core/errors.h"

namespace g2c::agent {

StepOutcome Agent::decide_step(const ParsedStep& parsed,
                               const inference::InferenceResult& inference,
                               const std::vector<AgentStep>& steps) const {
  // TODO: three cases, in this order (agent.h says each in full):
  //   a final answer -> StepOutcome{AgentStep::final(...), "final_answer", false};
  //   an action      -> observe it, AgentStep::act(...), and stop with "duplicate_action" when
  //                     loop detection is on and it repeats previous_action_key(steps);
  //   neither        -> AgentStep::stuck(...) with the parse error (or "no parse"); stop with
  //                     "no_progress", not remembered, when options().halt_on_stuck is set.
  // Return the decision; the driver records the step and acts on it, so leave `steps` alone.
  // Hints, one step at a time: scripts/hint.sh 19 Agent::decide_step
  throw g2c::todo("Agent::decide_step", "g2c/agent/agent.cpp", "19");
}

}  // namespace g2c::agent
