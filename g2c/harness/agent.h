// Beyond module harness — HarnessAgent: module 19's ReAct loop rebuilt over the event log.
//
// The cycle is module 19's (prompt -> complete -> parse_react_step -> act); what changed is where
// the state lives. Every turn replays the log and renders its prompt through the context policy;
// every action goes through the ToolRunner (permissions, deduplication, crash window); failures
// go through classify_failure (transient ones retried under "<id>_retry<k>"); the stopping rules
// are Budgets. Step and repeat counts are rebuilt from the log whenever the loop starts, so a
// fresh process can take over a dead one's run — resume(), yours — without a second copy of the
// run's state anywhere, and without refreshing its budgets.
//
//   run(task)   log the task, then the loop          resume()   settle a crash's leftovers, the
//   loop the loop    per step: replay -> build_prompt -> complete -> log model_turn -> parse ->
//               final answer (log it, stop "final_answer") | unreadable (go on) |
//               an action (repeat check, call id "call_<tool_call events so far>", the runner,
//               retries) ... until max_steps ("max_steps"); every stop logs stopped {reason}
// Plain C++, no LibTorch.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "g2c/harness/context.h"
#include "g2c/harness/events.h"
#include "g2c/harness/runner.h"
#include "g2c/inference/backend.h"
#include "g2c/tools/registry.h"

namespace g2c::harness {

/// The end of a run. The log is the record; this is a view of it.
struct HarnessRunResult {
  std::optional<std::string> final_answer;
  std::string stopped_reason;  // "final_answer", "max_steps" or "repeat_budget"
  std::int64_t n_steps = 0;    // model turns over the whole logical run, resumes included
  std::vector<Event> events;
  Json metadata = Json::object();  // {"n_events"}
};

struct HarnessOptions {
  std::map<std::string, Permission> permissions = {};  // per tool; others: default_permission
  Permission default_permission = Permission::Allow;
  Budgets budgets = {};
  ContextPolicy context_policy = {};  // empty: compact_context
  double retry_wait = 0.0;            // seconds; the k-th retry of a call waits k times this
  std::int64_t max_new_tokens = 512;  // < budgets.model_context_tokens
  double temperature = 0.2;
};

class HarnessAgent {
 public:
  /// ValueError when max_new_tokens leaves no room in model_context_tokens (>=), or a budget is
  /// not positive (max_steps, context_tokens, model_context_tokens; retries and repeats >= 0).
  HarnessAgent(inference::Backend& backend, g2c::tools::ToolRegistry registry, EventLog log,
               HarnessOptions options = {});

  inference::Backend& backend() const { return *backend_; }
  const EventLog& log() const { return runner_.log(); }
  EventLog& log() { return runner_.log(); }
  const ToolRunner& runner() const { return runner_; }
  const HarnessOptions& options() const { return options_; }

  /// A fresh run: ValueError for an empty task, or a log that already holds events (one log is
  /// one run: resume() it, or give the agent a fresh log); logs the task, runs the loop.
  HarnessRunResult run(const std::string& task);

  /// Your work (g2c/harness/agent.cpp): continue a run whose process died. ValueError when the
  /// log holds no task (nothing to resume) or already a final answer (nothing left to do); every
  /// tool_call without a tool_result is submitted again through the runner with its own id, tool
  /// and arguments (the runner's ladder decides what that means: an unknown outcome, never a
  /// second run); then the same loop as run(), whose counts come from the log.
  HarnessRunResult resume();

  /// The prompt for the next step: module 19's system prompt for the registry's tools, the
  /// policy's lines, "Thought:". The trajectory gets min(context_tokens, max(1,
  /// model_context_tokens - max_new_tokens - estimate_tokens(system + "\n\nThought:"))) tokens;
  /// when the joined whole still overflows the window, the policy runs once more with the budget
  /// cut by the excess.
  std::string build_prompt(const std::vector<Event>& events) const;

 private:
  HarnessRunResult loop();
  HarnessRunResult finish(const std::string& reason, std::optional<std::string> final_answer);

  inference::Backend* backend_;
  ToolRunner runner_;
  HarnessOptions options_;
};

/// An action's identity for repeat counting: the tool and its arguments as JSON with sorted keys.
std::string action_identity(const std::string& tool, const Json& arguments);

}  // namespace g2c::harness
