// Module 19 — your work: the agent's policy for one step.
#include "g2c/agent/agent.h"
#include "g2c/core/errors.h"

namespace g2c::agent {

StepOutcome Agent::decide_step(const ParsedStep& parsed,
                               const inference::InferenceResult& inference,
                               const std::vector<AgentStep>& steps) const {
  // TODO: Say what one parsed step means (agent.h's comment on decide_step has each case in full).
  // Three cases, in this order:
  //   a final answer -> AgentStep::final(...); stop with "final_answer";
  //   an action      -> run it (observe(registry(), action, steps.size())), AgentStep::act(...);
  //                     stop with "duplicate_action" when options().loop_detection is on and
  //                     action_key(action) equals previous_action_key(steps); else go on;
  //   neither        -> AgentStep::stuck(...) with the parse error (or "no parse"); stop with
  //                     "no_progress" only when options().halt_on_stuck is set, else go on.
  // Remember (StepOutcome::remember, true by default) is false for a final answer (nothing reads
  // it again) and for a no_progress stop; every other step is remembered, a duplicate included.
  // Return the decision; the driver records the step and acts on it, so leave `steps` alone.
  // Hints, one step at a time: scripts/hint.sh 19 Agent::decide_step
  throw g2c::todo("Agent::decide_step", "g2c/agent/agent.cpp", "19");
}

}  // namespace g2c::agent
