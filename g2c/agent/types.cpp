// Module 19 — the agent's records (types.h).
#include "g2c/agent/types.h"

#include <fmt/format.h>

#include "g2c/tokenizer/utf8.h"

namespace g2c::agent {

using g2c::tokenizer::python_repr;

std::ostream& operator<<(std::ostream& stream, const Action& action) {
  return stream << "Action(tool=" << python_repr(action.tool())
                << ", arguments=" << action.arguments().dump() << ")";
}

AgentStep AgentStep::final(const inference::InferenceResult& inference, std::string thought,
                           std::string final_answer) {
  return {.completion = inference.completion,
          .thought = std::move(thought),
          .final_answer = std::move(final_answer),
          .inference = inference};
}

AgentStep AgentStep::act(const inference::InferenceResult& inference, std::string thought,
                         Action action, Observation observation) {
  return {.completion = inference.completion,
          .thought = std::move(thought),
          .action = std::move(action),
          .observation = std::move(observation),
          .inference = inference};
}

AgentStep AgentStep::stuck(const inference::InferenceResult& inference, std::string thought,
                           std::string parse_error) {
  return {.completion = inference.completion,
          .thought = std::move(thought),
          .parse_error = std::move(parse_error),
          .inference = inference};
}

Plan::Plan(std::string goal, std::vector<std::string> steps)
    : goal_(std::move(goal)), steps_(std::move(steps)) {
  if (goal_.empty()) throw AgentError("Plan: goal must be a non-empty string");
  for (std::size_t i = 0; i < steps_.size(); ++i) {
    if (steps_[i].empty()) {
      throw AgentError(fmt::format("Plan: steps[{}] must be a non-empty string", i));
    }
  }
}

std::ostream& operator<<(std::ostream& stream, const Plan& plan) {
  stream << "Plan(goal=" << python_repr(plan.goal()) << ", steps=[";
  for (std::size_t i = 0; i < plan.steps().size(); ++i) {
    stream << (i ? ", " : "") << python_repr(plan.steps()[i]);
  }
  return stream << "])";
}

}  // namespace g2c::agent
