// Module 19 — the native agent (native.h).
#include "g2c/agent/native.h"

#include <fmt/format.h>

#include "g2c/core/errors.h"
#include "g2c/tools/parser.h"
#include "g2c/tools/schema.h"

namespace g2c::agent {

const std::string_view NATIVE_DEFAULT_AGENT_SYSTEM =
    "You are a careful agent that solves tasks step by step with tools. When the question needs a "
    "computation, a file or facts you do not have, call one of the provided tools: one call per "
    "turn, then wait for its result and decide what to do next. When you know enough to answer, "
    "reply in plain text; the final answer needs no tool call.\n"
    "\n"
    "As soon as a tool result holds what the user asked for, your next reply MUST be that plain-"
    "text answer. Do not call another tool to check, convert or reformat a value you already have.";

namespace {

/// The call a reply asked for, if any: the first structured call, else one rescued from the text.
/// `rescued` is set when the call came from the text.
std::optional<Action> requested_action(const inference::ChatResult& reply, bool& rescued) {
  rescued = false;
  if (!reply.tool_calls.empty()) {
    const auto& call = reply.tool_calls.front();
    return Action(call.value("name", std::string()),
                  call.value("arguments", nlohmann::json::object()));
  }
  if (reply.content.empty()) return std::nullopt;
  if (auto call = g2c::tools::rescue_tool_call(reply.content)) {
    rescued = true;
    return Action(call->name(), call->arguments());
  }
  return std::nullopt;
}

}  // namespace

nlohmann::json history_to_messages(std::string_view system, std::string_view user_message,
                                   const std::optional<Plan>& plan,
                                   const std::vector<AgentStep>& steps) {
  std::string full_system(system);
  if (plan) full_system += "\n\n" + render_plan_block(plan->goal(), plan->steps());
  auto messages = nlohmann::json::array({{{"role", "system"}, {"content", full_system}},
                                         {{"role", "user"}, {"content", user_message}}});
  for (std::size_t i = 0; i < steps.size(); ++i) {
    const auto& step = steps[i];
    if (!step.action) continue;  // an answer or an unreadable step: nothing to carry forward
    const auto call_id = fmt::format("call_{}", i);
    messages.push_back(
        {{"role", "assistant"},
         {"content", step.thought},
         {"tool_calls",
          {{{"id", call_id},
            {"type", "function"},
            {"function",
             {{"name", step.action->tool()}, {"arguments", step.action->arguments()}}}}}}});
    if (step.observation) {
      // "tool_name" is the field Ollama reads, "name" and "tool_call_id" OpenAI's.
      messages.push_back({{"role", "tool"},
                          {"tool_call_id", call_id},
                          {"name", step.action->tool()},
                          {"tool_name", step.action->tool()},
                          {"content", step.observation->output()}});
    }
  }
  return messages;
}

NativeAgent::NativeAgent(inference::Backend& backend, g2c::tools::ToolRegistry registry,
                         NativeAgentOptions options)
    : backend_(&backend),
      chat_(dynamic_cast<inference::ChatBackend*>(&backend)),
      registry_(std::move(registry)),
      options_(std::move(options)),
      system_(options_.system.value_or(std::string(NATIVE_DEFAULT_AGENT_SYSTEM))) {
  if (chat_ == nullptr) {
    throw AgentError(fmt::format(
        "NativeAgent requires a backend that supports chat_with_tools (an "
        "inference::ChatBackend), but {} does not; use Agent (ReAct text) with it instead, or "
        "an Ollama, g2c-serve or pretrained backend",
        backend.info().name()));
  }
  check_agent_options(options_, "NativeAgent");
}

AgentRunResult NativeAgent::run(std::string_view user_message) const {
  if (user_message.empty()) {
    throw ValueError(
        "NativeAgent::run: user_message must be a non-empty string (the task to work on)");
  }
  AgentRunResult result{std::string(user_message),
                        plan_phase(*backend_, user_message, registry_, options_),
                        std::nullopt,
                        {},
                        "max_steps"};
  const auto specs = g2c::tools::render_tools_for_ollama(registry_.tools());
  const auto chat = inference::ChatOptions::from_sampling(options_.sampling, options_.think);

  std::int64_t rescued_calls = 0;
  const auto record = [&](AgentStep step) {
    result.steps.push_back(std::move(step));
    if (options_.on_step) options_.on_step(result.steps.back());
  };
  for (std::int64_t i = 0; i < options_.max_steps; ++i) {
    const auto messages = history_to_messages(system_, user_message, result.plan, result.steps);
    const auto reply = chat_->chat_with_tools(messages, specs, chat);
    // The reply as an InferenceResult, so the step records look like the ReAct agent's: the
    // messages sent stand for the prompt, the reply's text for the completion.
    const inference::InferenceResult inference(
        messages.dump(), reply.content, reply.prompt_tokens, reply.completion_tokens,
        reply.latency_ms, reply.backend,
        {{"channel", "native"},
         {"chat", {{"content", reply.content}, {"tool_calls", reply.tool_calls}}}});
    bool rescued = false;
    const auto action = requested_action(reply, rescued);
    rescued_calls += rescued ? 1 : 0;

    if (!action && !reply.content.empty()) {
      record(AgentStep::final(inference, "", reply.content));
      result.final_answer = reply.content;
      result.stopped_reason = "final_answer";
      break;
    }
    if (!action) {
      record(AgentStep::stuck(inference, "", "empty response (no content, no tool_calls)"));
      if (options_.halt_on_stuck) {
        result.stopped_reason = "no_progress";
        break;
      }
      continue;
    }
    const bool repeated =
        options_.loop_detection && previous_action_key(result.steps) == action_key(*action);
    // Any text beside a call is the model's thought.
    record(AgentStep::act(inference, reply.content, *action,
                          observe(registry_, *action, result.steps.size())));
    if (repeated) {
      result.stopped_reason = "duplicate_action";
      break;
    }
  }
  result.metadata =
      agent_run_metadata(result.steps, registry_, backend_->info(), result.plan.has_value());
  result.metadata["channel"] = "native";
  result.metadata["n_rescued_calls"] = rescued_calls;
  return result;
}

std::ostream& operator<<(std::ostream& stream, const NativeAgent& agent) {
  return write_agent_repr(stream, "NativeAgent", agent.backend().info(), agent.registry(),
                          agent.options().max_steps);
}

}  // namespace g2c::agent
