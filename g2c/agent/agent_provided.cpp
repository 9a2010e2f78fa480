// Module 19 — the provided half of agent.h: the agent's construction, the driver (run), the
// prompt, and the helpers its policy and the native agent share.
#include <algorithm>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "g2c/agent/agent.h"
#include "g2c/core/errors.h"
#include "g2c/tokenizer/utf8.h"
#include "g2c/tools/loop.h"

namespace g2c::agent {

void check_agent_options(const AgentOptions& options, std::string_view who) {
  if (options.max_steps <= 0) {
    throw AgentError(fmt::format("{}: max_steps must be > 0, got {}", who, options.max_steps));
  }
  if (options.scratchpad_max_chars && *options.scratchpad_max_chars <= 0) {
    throw AgentError(fmt::format("{}: scratchpad_max_chars must be > 0 or unset, got {}", who,
                                 *options.scratchpad_max_chars));
  }
}

std::pair<std::string, std::string> action_key(const Action& action) {
  return {action.tool(), action.arguments().dump()};
}

std::optional<std::pair<std::string, std::string>> previous_action_key(
    const std::vector<AgentStep>& steps) {
  for (auto step = steps.rbegin(); step != steps.rend(); ++step) {
    if (step->action) return action_key(*step->action);
  }
  return std::nullopt;
}

Observation observe(const g2c::tools::ToolRegistry& registry, const Action& action,
                    std::size_t step_index) {
  const g2c::tools::ToolCall call(action.tool(), action.arguments(),
                                  fmt::format("call_{}", step_index));
  const auto result = g2c::tools::dispatch_tool_call(registry, call);
  std::string output = result.output();
  if (result.is_error() && !registry.contains(action.tool())) {
    const auto names = registry.names();
    output += fmt::format(
        " Use Action with one of the registered tool names: {}. Put operators or other inputs "
        "inside the Action Input JSON.",
        names.empty() ? std::string("(none)") : fmt::format("{}", fmt::join(names, ", ")));
  }
  return Observation(std::move(output), result.is_error());
}

nlohmann::json agent_run_metadata(const std::vector<AgentStep>& steps,
                                  const g2c::tools::ToolRegistry& registry,
                                  const inference::BackendInfo& backend, bool had_plan) {
  std::size_t tool_calls = 0;
  for (const auto& step : steps) tool_calls += step.action ? 1 : 0;
  return {{"n_steps", steps.size()},
          {"n_tool_calls", tool_calls},
          {"tools_available", registry.names()},
          {"backend_name", backend.name()},
          {"backend_model_id", backend.model_id()},
          {"had_plan", had_plan}};
}

std::optional<Plan> plan_phase(inference::Backend& backend, std::string_view user_message,
                               const g2c::tools::ToolRegistry& registry,
                               const AgentOptions& options) {
  if (!options.plan) return std::nullopt;
  try {
    return make_plan(backend, user_message, registry,
                     {std::min<std::int64_t>(options.sampling.max_new_tokens, 256),
                      options.sampling.temperature});
  } catch (const NotImplementedError&) {
    throw;  // extract_plan not written yet: say so rather than quietly run without a plan
  } catch (const std::exception&) {
    return std::nullopt;
  }
}

Agent::Agent(inference::Backend& backend, g2c::tools::ToolRegistry registry, AgentOptions options)
    : backend_(&backend), registry_(std::move(registry)), options_(std::move(options)) {
  check_agent_options(options_, "Agent");
}

std::string Agent::prompt(std::string_view user_message, const std::optional<Plan>& plan,
                          const Scratchpad& scratchpad) const {
  std::string text = render_system_prompt(registry_.tools());
  if (plan) text += "\n\n" + render_plan_block(plan->goal(), plan->steps());
  text += fmt::format("\n\nQuestion: {}", user_message);
  if (auto history = scratchpad.render(); !history.empty()) text += "\n\n" + history;
  return text + "\n\nThought:";
}

AgentRunResult Agent::run(std::string_view user_message) const {
  if (user_message.empty()) {
    throw ValueError("Agent::run: user_message must be a non-empty string (the task to work on)");
  }
  AgentRunResult result{std::string(user_message),
                        plan_phase(*backend_, user_message, registry_, options_),
                        std::nullopt,
                        {},
                        "max_steps"};
  Scratchpad scratchpad(options_.scratchpad_max_chars);
  for (std::int64_t i = 0; i < options_.max_steps; ++i) {
    const auto inference =
        backend_->complete(prompt(user_message, result.plan, scratchpad), options_.sampling);
    const auto parsed = parse_react_step(inference.completion);
    auto outcome = decide_step(parsed, inference, result.steps);
    if (outcome.remember) scratchpad.append(outcome.step);
    result.steps.push_back(std::move(outcome.step));
    if (options_.on_step) options_.on_step(result.steps.back());
    if (outcome.stop_reason) {
      result.stopped_reason = *outcome.stop_reason;
      result.final_answer = result.steps.back().final_answer;
      break;
    }
  }
  result.metadata =
      agent_run_metadata(result.steps, registry_, backend_->info(), result.plan.has_value());
  return result;
}

std::ostream& write_agent_repr(std::ostream& stream, std::string_view kind,
                               const inference::BackendInfo& backend,
                               const g2c::tools::ToolRegistry& registry, std::int64_t max_steps) {
  stream << kind << "(backend=" << backend.name() << ", tools=[";
  const auto names = registry.names();
  for (std::size_t i = 0; i < names.size(); ++i) {
    stream << (i ? ", " : "") << g2c::tokenizer::python_repr(names[i]);
  }
  return stream << "], max_steps=" << max_steps << ")";
}

std::ostream& operator<<(std::ostream& stream, const Agent& agent) {
  return write_agent_repr(stream, "Agent", agent.backend().info(), agent.registry(),
                          agent.max_steps());
}

}  // namespace g2c::agent
