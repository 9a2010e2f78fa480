// Beyond module harness — the provided half of agent.h: construction, run, the prompt, the loop.
#include <algorithm>
#include <chrono>
#include <thread>
#include <utility>

#include <fmt/format.h>

#include "g2c/agent/parser.h"
#include "g2c/agent/prompts.h"
#include "g2c/core/errors.h"
#include "g2c/harness/agent.h"
#include "g2c/harness/failures.h"

namespace g2c::harness {

namespace {

void check_options(const HarnessOptions& options) {
  const auto& b = options.budgets;
  const auto positive = [](const char* name, std::int64_t value) {
    if (value <= 0) throw ValueError(fmt::format("Budgets.{} must be > 0, got {}", name, value));
  };
  positive("max_steps", b.max_steps);
  positive("context_tokens", b.context_tokens);
  positive("model_context_tokens", b.model_context_tokens);
  if (b.max_retries < 0 || b.max_repeats < 0) {
    throw ValueError(fmt::format("Budgets.max_retries and max_repeats must be >= 0, got {} and {}",
                                 b.max_retries, b.max_repeats));
  }
  if (options.max_new_tokens <= 0) {
    throw ValueError(fmt::format("max_new_tokens must be > 0, got {}", options.max_new_tokens));
  }
  if (options.max_new_tokens >= b.model_context_tokens) {
    throw ValueError(fmt::format(
        "max_new_tokens ({}) must leave room in model_context_tokens ({}) for the instructions "
        "and the trajectory: lower max_new_tokens or raise model_context_tokens",
        options.max_new_tokens, b.model_context_tokens));
  }
  if (options.retry_wait < 0) {
    throw ValueError(fmt::format("retry_wait must be >= 0 seconds, got {}", options.retry_wait));
  }
}

std::string join_prompt(const std::string& system, const std::vector<std::string>& segments) {
  std::string prompt = system;
  for (const auto& segment : segments) prompt += "\n\n" + segment;
  return prompt + "\n\nThought:";
}

bool is_retry_id(const std::optional<std::string>& call_id) {
  return call_id && call_id->find("_retry") != std::string::npos;
}

}  // namespace

std::string action_identity(const std::string& tool, const Json& arguments) {
  return tool + "\n" + arguments.dump(-1, ' ', false, Json::error_handler_t::replace);
}

HarnessAgent::HarnessAgent(inference::Backend& backend, g2c::tools::ToolRegistry registry,
                           EventLog log, HarnessOptions options)
    : backend_(&backend),
      runner_(std::move(registry), std::move(log), options.permissions, options.default_permission),
      options_(std::move(options)) {
  check_options(options_);
  if (!options_.context_policy) options_.context_policy = compact_context;
}

HarnessRunResult HarnessAgent::run(const std::string& task) {
  if (task.empty()) throw ValueError("HarnessAgent::run needs a non-empty task");
  if (!log().replay().empty()) {
    throw ValueError(
        fmt::format("the log {} already holds a run: resume() it, or give the agent a fresh log",
                    log().path().string()));
  }
  log().append("task", {{"content", task}});
  return loop();
}

std::string HarnessAgent::build_prompt(const std::vector<Event>& events) const {
  const auto& budgets = options_.budgets;
  const std::string system = g2c::agent::render_system_prompt(runner_.registry().tools());
  // The window holds the reply too: reserve it, and charge the system part, before the
  // trajectory gets its share. context_tokens still caps it, for runs that want compaction.
  std::int64_t trajectory_budget =
      std::min(budgets.context_tokens,
               std::max<std::int64_t>(1, budgets.model_context_tokens - options_.max_new_tokens -
                                             estimate_tokens(system + "\n\nThought:")));
  auto prompt = join_prompt(system, options_.context_policy(events, trajectory_budget));
  // The separators make the whole a little more than the sum of its parts: one tightening pass.
  const auto excess =
      estimate_tokens(prompt) + options_.max_new_tokens - budgets.model_context_tokens;
  if (excess > 0 && trajectory_budget > 1) {
    trajectory_budget = std::max<std::int64_t>(1, trajectory_budget - excess);
    prompt = join_prompt(system, options_.context_policy(events, trajectory_budget));
  }
  return prompt;
}

HarnessRunResult HarnessAgent::finish(const std::string& reason,
                                      std::optional<std::string> final_answer) {
  log().append("stopped", {{"reason", reason}});
  HarnessRunResult result;
  result.final_answer = std::move(final_answer);
  result.stopped_reason = reason;
  result.events = log().replay();
  result.n_steps = std::count_if(result.events.begin(), result.events.end(),
                                 [](const Event& e) { return e.type == "model_turn"; });
  result.metadata = {{"n_events", result.events.size()}};
  return result;
}

HarnessRunResult HarnessAgent::loop() {
  const auto& budgets = options_.budgets;
  auto events = log().replay();
  const auto used_steps = std::count_if(events.begin(), events.end(),
                                        [](const Event& e) { return e.type == "model_turn"; });
  // The repeat count as the log left it: the model's own calls, newest first; a retry the
  // harness made is not the model choosing the same action again.
  std::vector<std::string> actions;
  for (const auto& event : events) {
    if (event.type == "tool_call" && !is_retry_id(event.call_id)) {
      actions.push_back(action_identity(event.payload.value("tool", std::string()),
                                        event.payload.value("arguments", Json::object())));
    }
  }
  std::optional<std::string> last_action;
  std::int64_t repeats = 0;
  if (!actions.empty()) {
    last_action = actions.back();
    for (auto it = actions.rbegin() + 1; it != actions.rend() && *it == *last_action; ++it) {
      ++repeats;
    }
  }

  const auto sampling = inference::CompletionOptions()
                            .with_max_new_tokens(options_.max_new_tokens)
                            .with_temperature(options_.temperature);
  for (auto step = used_steps; step < budgets.max_steps; ++step) {
    events = log().replay();
    const auto prompt = build_prompt(events);
    const auto inference = backend_->complete(prompt, sampling);
    log().append("model_turn", {{"completion", inference.completion}});
    const auto parsed = g2c::agent::parse_react_step(inference.completion);
    if (parsed.final_answer()) {
      log().append("final_answer", {{"content", *parsed.final_answer()}});
      return finish("final_answer", parsed.final_answer());
    }
    if (!parsed.action()) continue;  // unreadable: the model sees its own turn and tries again

    const auto& action = *parsed.action();
    const auto identity = action_identity(action.tool(), action.arguments());
    if (identity == last_action) {
      if (++repeats >= budgets.max_repeats) return finish("repeat_budget", std::nullopt);
    } else {
      repeats = 0;
      last_action = identity;
    }

    // Only a model_turn was appended since `events` was read: its tool_call count still holds.
    const auto issued = std::count_if(events.begin(), events.end(),
                                      [](const Event& e) { return e.type == "tool_call"; });
    const g2c::tools::ToolCall call(action.tool(), action.arguments(),
                                    fmt::format("call_{}", issued));
    auto result = runner_.execute(call);
    for (std::int64_t retries = 1; result.is_error() && retries <= budgets.max_retries; ++retries) {
      if (!classify_failure(result).retry) break;
      if (options_.retry_wait > 0) {
        std::this_thread::sleep_for(
            std::chrono::duration<double>(options_.retry_wait * static_cast<double>(retries)));
      }
      result = runner_.execute(g2c::tools::ToolCall(
          call.name(), call.arguments(), fmt::format("{}_retry{}", call.call_id(), retries)));
    }
  }
  return finish("max_steps", std::nullopt);
}

}  // namespace g2c::harness
