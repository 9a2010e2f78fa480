// Beyond module harness course tests: one for one with the Python edition's tests/test_harness.py,
// plus the additions listed in tests/course_tests.txt. The test tagged [clean] passes on the
// scaffold: the event log is provided.
//
// Suggested order: classify_failure (classify_*, g2c/harness/failures.cpp), compact_context
// (compact_*: the task survives, the newest lines stay verbatim, the budget holds;
// g2c/harness/context.cpp), ToolRunner::execute (runner_*: identity check, dedupe, crash window,
// permissions, then the call with its intent logged first; g2c/harness/runner.cpp), and
// HarnessAgent::resume (crash_drill_*, resume_*: kill the agent mid-task, resume from the log,
// finish, and leave the sandbox as an uncrashed run leaves it; g2c/harness/agent.cpp).
//
// Everything runs against a scripted backend and tools that misbehave on purpose: no model, no
// network. The loop tests also need module 18's dispatch_tool_call and module 19's
// parse_react_step (yours, or `-DG2C_SOLUTIONS=18-19,harness`).
#include <algorithm>
#include <filesystem>
#include <fstream>
#include <optional>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "g2c/core/errors.h"
#include "g2c/harness/agent.h"
#include "g2c/harness/context.h"
#include "g2c/harness/events.h"
#include "g2c/harness/failures.h"
#include "g2c/harness/runner.h"
#include "g2c/inference/backend.h"
#include "g2c/tools/tools.h"
#include "g2c_test.h"
#include "temp_dir.h"

using Catch::Matchers::Contains;
using g2c::harness::Budgets;
using g2c::harness::classify_failure;
using g2c::harness::compact_context;
using g2c::harness::estimate_tokens;
using g2c::harness::Event;
using g2c::harness::EventLog;
using g2c::harness::HarnessAgent;
using g2c::harness::HarnessOptions;
using g2c::harness::Permission;
using g2c::harness::ToolRunner;
using g2c::harness::UNKNOWN_OUTCOME_STATUS;
using g2c::testing::TempDir;
using g2c::tools::Tool;
using g2c::tools::ToolCall;
using g2c::tools::ToolError;
using g2c::tools::ToolRegistry;
using g2c::tools::ToolResult;
using Json = nlohmann::json;
namespace fs = std::filesystem;

namespace {

/// The process dying on cue: what the scripted backend throws after `crash_after` calls.
struct Crash : std::runtime_error {
  Crash() : std::runtime_error("injected crash") {}
};

/// Replays a fixed list of completions, every prompt kept; optionally dies on cue.
class ScriptedBackend : public g2c::inference::Backend {
 public:
  explicit ScriptedBackend(std::vector<std::string> completions,
                           std::optional<int> crash_after = std::nullopt)
      : completions_(std::move(completions)),
        crash_after_(crash_after),
        info_("fake", "scripted") {}
  const g2c::inference::BackendInfo& info() const override { return info_; }
  g2c::inference::InferenceResult complete(const std::string& prompt,
                                           const g2c::inference::CompletionOptions&) override {
    if (crash_after_ && calls >= *crash_after_) throw Crash();
    if (calls >= static_cast<int>(completions_.size())) {
      throw std::logic_error(
          "ScriptedBackend exhausted: the run went on where it should have "
          "stopped (a final answer, a budget)");
    }
    prompts.push_back(prompt);
    return g2c::inference::InferenceResult(prompt, completions_[calls++], std::nullopt,
                                           std::nullopt, 1.0, info_);
  }
  int calls = 0;
  std::vector<std::string> prompts;

 private:
  std::vector<std::string> completions_;
  std::optional<int> crash_after_;
  g2c::inference::BackendInfo info_;
};

/// What the sandbox's tools count: runs of append_line and flaky, and how many of flaky's first
/// calls fail.
struct Counters {
  int append_calls = 0;
  int flaky_calls = 0;
  int flaky_fail_first = 0;
};

std::string read_text(const fs::path& path) {
  std::ifstream file(path, std::ios::binary);
  std::ostringstream text;
  text << file.rdbuf();
  return text.str();
}

/// append_line appends its text to <sandbox>/notes.txt (a side effect a crash can duplicate);
/// flaky fails with "connection timed out" for its first flaky_fail_first calls.
ToolRegistry sandbox_registry(const fs::path& sandbox, Counters& counters) {
  const Json schema = {{"type", "object"},
                       {"properties", {{"text", {{"type", "string"}, {"description", "payload"}}}}},
                       {"required", {"text"}}};
  const auto notes = sandbox / "notes.txt";
  Tool append_line("append_line", "Append a line to notes.txt", schema,
                   [notes, &counters](const Json& arguments) -> Json {
                     ++counters.append_calls;
                     const auto text = arguments.at("text").get<std::string>();
                     std::ofstream(notes, std::ios::app) << text << "\n";
                     return "appended '" + text + "'";
                   });
  Tool flaky("flaky", "Sometimes times out", schema, [&counters](const Json& arguments) -> Json {
    ++counters.flaky_calls;
    if (counters.flaky_calls <= counters.flaky_fail_first) {
      throw ToolError("connection timed out");
    }
    return "ok '" + arguments.at("text").get<std::string>() + "'";
  });
  return ToolRegistry({append_line, flaky});
}

std::string act(const std::string& text) {
  return "Action: append_line\nAction Input: {\"text\": \"" + text + "\"}";
}
const std::string kFinal = "Final Answer: done";

std::vector<std::string> types_of(const std::vector<Event>& events) {
  std::vector<std::string> types;
  for (const auto& event : events) types.push_back(event.type);
  return types;
}

// --- classify_failure -----------------------------------------------------------------------

ToolResult err(const std::string& output) {
  return ToolResult("c", "t", output, true);
}

// --- compact_context ------------------------------------------------------------------------

Event event(std::int64_t step, const std::string& type, Json payload) {
  return Event{step, type, std::move(payload), std::nullopt};
}

/// A task, then 20 rounds of a short thought and a 300-character tool result.
std::vector<Event> long_log() {
  std::vector<Event> events = {
      event(0, "task", {{"content", "organize the sandbox files by date"}})};
  for (int i = 1; i <= 20; ++i) {
    events.push_back(
        event(2 * i - 1, "model_turn", {{"completion", "thinking " + std::to_string(i)}}));
    events.push_back(
        event(2 * i, "tool_result", {{"output", std::string(300, 'x')}, {"is_error", false}}));
  }
  return events;
}

/// long_log() as compaction renders it with its `shortened` oldest results cut to
/// COMPACT_KEEP_CHARS characters and the suffix.
const std::string kShortenedResult = "Observation: " + std::string(67, 'x') + " …[compacted]";
std::vector<std::string> rendered_long_log(int shortened) {
  std::vector<std::string> lines = {"Task: organize the sandbox files by date"};
  for (int i = 1; i <= 20; ++i) {
    lines.push_back("Thought: thinking " + std::to_string(i));
    lines.push_back(i <= shortened ? kShortenedResult : "Observation: " + std::string(300, 'x'));
  }
  return lines;
}

std::int64_t total_tokens(const std::vector<std::string>& segments) {
  std::int64_t total = 0;
  for (const auto& segment : segments) total += estimate_tokens(segment);
  return total;
}

// --- ToolRunner -----------------------------------------------------------------------------

ToolCall call(const std::string& call_id, const std::string& text = "alpha") {
  return ToolCall("append_line", {{"text", text}}, call_id);
}

std::vector<std::string> result_statuses(const EventLog& log) {
  std::vector<std::string> statuses;
  for (const auto& e : log.replay()) {
    if (e.type == "tool_result") statuses.push_back(e.payload.value("status", std::string()));
  }
  return statuses;
}

// --- HarnessAgent ---------------------------------------------------------------------------

HarnessAgent make_agent(ScriptedBackend& backend, const fs::path& dir, Counters& counters,
                        HarnessOptions options = {}) {
  return HarnessAgent(backend, sandbox_registry(dir, counters), EventLog(dir / "events.jsonl"),
                      std::move(options));
}

HarnessOptions with_budgets(Budgets budgets) {
  HarnessOptions options;
  options.budgets = budgets;
  return options;
}

}  // namespace

// ---------------------------------------------------------------------------------------------
// EventLog: provided plumbing, green from the start.
// ---------------------------------------------------------------------------------------------

TEST_CASE("event_log_roundtrip", "[clean]") {
  const TempDir tmp;
  EventLog log(tmp / "events.jsonl");
  log.append("task", {{"content", "organize"}});
  log.append("model_turn", {{"completion", "thinking"}}, std::nullopt);
  const auto events = log.replay();
  CHECK(types_of(events) == std::vector<std::string>{"task", "model_turn"});
  CHECK(events[0].step == 0);
  CHECK(events[1].step == 1);
  // replay reads the FILE: a second log object sees the same history
  CHECK(EventLog(log.path()).replay().size() == 2);
}

// ---------------------------------------------------------------------------------------------
// classify_failure
// ---------------------------------------------------------------------------------------------

TEST_CASE("classify_transient_retries", "[todo]") {
  const auto decision = classify_failure(err("connection timed out after 30s"));
  CHECK(decision.kind == "transient");
  CHECK(decision.retry);
}

TEST_CASE("classify_deterministic_does_not_retry", "[todo]") {
  const auto decision = classify_failure(err("file not found: /tmp/x"));
  CHECK(decision.kind == "deterministic");
  CHECK_FALSE(decision.retry);
}

TEST_CASE("classify_unrecognized_defaults_to_no_retry", "[todo]") {
  const auto decision = classify_failure(err("zorp flubbed the grommet"));
  CHECK_FALSE(decision.retry);
}

TEST_CASE("classify_rejects_success", "[todo]") {
  const ToolResult ok("c", "t", "fine", false);
  CHECK_THROWS_AS(classify_failure(ok), g2c::ValueError);
}

TEST_CASE("classify_checks_transient_markers_first", "[todo]") {
  // Both tables match ("busy", "not found"): a server too busy to look is not proof that the file
  // is missing, so the transient table is read first and the call is retried.
  const auto decision = classify_failure(err("server busy: file not found in time"));
  INFO("the transient markers are checked before the deterministic ones");
  CHECK(decision.kind == "transient");
  CHECK(decision.retry);
  CHECK_THAT(decision.reason, Contains("busy"));
}

TEST_CASE("classify_ignores_case", "[todo]") {
  // Tools write their errors as they please; the marker tables are lower case.
  INFO("lower-case the output (lower_ascii) before looking for the markers");
  CHECK(classify_failure(err("Connection Timed Out")).retry);
  const auto missing = classify_failure(err("No Such File: notes.txt"));
  CHECK(missing.kind == "deterministic");
  CHECK_THAT(missing.reason, Contains("no such"));
}

// ---------------------------------------------------------------------------------------------
// compact_context
// ---------------------------------------------------------------------------------------------

TEST_CASE("compact_keeps_everything_under_a_big_budget", "[todo]") {
  const auto events = long_log();
  const auto segments = compact_context(events, 100'000);
  REQUIRE_FALSE(segments.empty());
  CHECK(segments[0] == "Task: organize the sandbox files by date");
  CHECK(segments.size() == events.size());  // every event renders here
}

TEST_CASE("compact_task_survives_any_budget", "[todo]") {
  const auto segments = compact_context(long_log(), 30);
  REQUIRE_FALSE(segments.empty());
  CHECK(segments[0] == "Task: organize the sandbox files by date");
}

TEST_CASE("compact_respects_the_budget", "[todo]") {
  const std::int64_t budget = 400;
  const auto segments = compact_context(long_log(), budget);
  CHECK(total_tokens(segments) <= budget);
}

TEST_CASE("compact_recent_events_stay_verbatim", "[todo]") {
  const auto segments = compact_context(long_log(), 400);
  REQUIRE_FALSE(segments.empty());
  CHECK(segments.back() == "Observation: " + std::string(300, 'x'));
}

TEST_CASE("compact_shortens_old_tool_output_only_as_far_as_needed", "[todo]") {
  // A budget that shortening the three oldest results meets exactly: every line stays, in order,
  // the thoughts untouched and the fourth result on verbatim.
  const auto events = long_log();
  const auto verbatim = rendered_long_log(0);
  const auto saving = estimate_tokens(verbatim[2]) - estimate_tokens(kShortenedResult);
  const auto budget = total_tokens(verbatim) - 3 * saving;
  const auto segments = compact_context(events, budget);
  INFO(
      "shorten tool_result lines oldest first and check the budget after EACH one: newer output "
      "is what the model still needs; thoughts are never shortened, only dropped");
  CHECK(segments == rendered_long_log(3));
  CHECK(total_tokens(segments) <= budget);

  // Long thoughts are not the safe fat: the model's own reasoning is shortened by no one, only
  // dropped whole once every old result has been shortened.
  auto wordy = long_log();
  for (auto& e : wordy) {
    if (e.type == "model_turn")
      e.payload["completion"] = e.payload["completion"].get<std::string>() + std::string(200, 'y');
  }
  std::vector<std::string> expected;
  for (const auto& e : wordy) expected.push_back(g2c::harness::render_event(e));
  const auto wordy_budget = total_tokens(expected) - saving;  // one result's worth
  expected[2] = kShortenedResult;
  CHECK(compact_context(wordy, wordy_budget) == expected);
}

TEST_CASE("compact_drops_the_oldest_lines_first", "[todo]") {
  // Past shortening, whole lines go oldest first: what survives is the task and an unbroken run
  // of the newest lines (the old results among them shortened), in their order.
  const auto segments = compact_context(long_log(), 400);
  INFO("drop whole lines from the front (the oldest), never from the middle or the end");
  REQUIRE(segments.size() >= 3);
  const auto shortened = rendered_long_log(19);  // every result but the newest shortened
  const std::vector<std::string> tail(shortened.end() - (segments.size() - 1), shortened.end());
  CHECK(segments.front() == shortened.front());
  CHECK(std::vector<std::string>(segments.begin() + 1, segments.end()) == tail);
}

// ---------------------------------------------------------------------------------------------
// ToolRunner
// ---------------------------------------------------------------------------------------------

TEST_CASE("runner_executes_and_logs_intent_before_outcome", "[todo]") {
  const TempDir tmp;
  Counters counters;
  EventLog log(tmp / "log.jsonl");
  ToolRunner runner(sandbox_registry(tmp.path(), counters), log);
  const auto result = runner.execute(call("c1"));
  CHECK_FALSE(result.is_error());
  const auto types = types_of(log.replay());
  const auto at_call = std::find(types.begin(), types.end(), "tool_call");
  const auto at_result = std::find(types.begin(), types.end(), "tool_result");
  REQUIRE(at_call != types.end());
  REQUIRE(at_result != types.end());
  CHECK(at_call < at_result);
  CHECK(read_text(tmp / "notes.txt") == "alpha\n");
}

TEST_CASE("runner_logs_the_intent_before_the_tool_runs", "[todo]") {
  // The Python test reads the log after the call, where intent and outcome appear in that order
  // even if both were written after the tool ran. Here the tool itself looks: its intent must
  // already be on the log while it runs, or a crash inside it would leave no trace at all.
  const TempDir tmp;
  EventLog log(tmp / "log.jsonl");
  std::vector<std::string> seen_while_running;
  const Json schema = {{"type", "object"},
                       {"properties", {{"text", {{"type", "string"}, {"description", "payload"}}}}},
                       {"required", {"text"}}};
  Tool peek("peek", "Reports what the log holds while it runs", schema, [&](const Json&) -> Json {
    seen_while_running = types_of(EventLog(tmp / "log.jsonl").replay());
    return "looked";
  });
  ToolRunner runner(ToolRegistry({peek}), log);
  runner.execute(ToolCall("peek", {{"text", "now"}}, "c1"));
  INFO("append the tool_call event BEFORE dispatch_tool_call, the tool_result after it");
  CHECK(seen_while_running == std::vector<std::string>{"tool_call"});
}

TEST_CASE("runner_dedupes_by_call_id", "[todo]") {
  const TempDir tmp;
  Counters counters;
  EventLog log(tmp / "log.jsonl");
  ToolRunner runner(sandbox_registry(tmp.path(), counters), log);
  const auto first = runner.execute(call("c1"));
  const auto second = runner.execute(call("c1"));
  CHECK(counters.append_calls == 1);  // the function ran ONCE
  CHECK(second.output() == first.output());
  CHECK(read_text(tmp / "notes.txt") == "alpha\n");
}

TEST_CASE("runner_rejects_call_id_reuse_for_a_different_operation", "[todo]") {
  const TempDir tmp;
  Counters counters;
  EventLog log(tmp / "log.jsonl");
  ToolRunner runner(sandbox_registry(tmp.path(), counters), log);
  runner.execute(call("c1", "alpha"));
  CHECK_THROWS_MATCHES(runner.execute(call("c1", "beta")), g2c::ValueError,
                       MessageContains("already bound"));
  CHECK(counters.append_calls == 1);
  CHECK(read_text(tmp / "notes.txt") == "alpha\n");
}

TEST_CASE("runner_never_reruns_a_crash_window_call", "[todo]") {
  // Intent logged, outcome missing: an unknown result, no execution.
  const TempDir tmp;
  Counters counters;
  EventLog log(tmp / "log.jsonl");
  log.append("tool_call", {{"tool", "append_line"}, {"arguments", {{"text", "alpha"}}}}, "c9");
  ToolRunner runner(sandbox_registry(tmp.path(), counters), log);
  const auto result = runner.execute(call("c9"));
  CHECK(result.is_error());
  CHECK(counters.append_calls == 0);
  const auto statuses = result_statuses(log);
  CHECK(std::count(statuses.begin(), statuses.end(), UNKNOWN_OUTCOME_STATUS) == 1);
}

TEST_CASE("runner_does_not_duplicate_an_unrecorded_landed_effect", "[todo]") {
  // The same log can mean the side effect already landed.
  const TempDir tmp;
  Counters counters;
  EventLog log(tmp / "log.jsonl");
  log.append("tool_call", {{"tool", "append_line"}, {"arguments", {{"text", "alpha"}}}}, "c9");
  // Simulate: the call ran, then the process died before its result was logged.
  std::ofstream(tmp / "notes.txt") << "alpha\n";

  ToolRunner runner(sandbox_registry(tmp.path(), counters), log);
  const auto result = runner.execute(call("c9"));
  CHECK(result.is_error());
  CHECK_THAT(result.output(), Contains("unknown outcome"));
  CHECK(counters.append_calls == 0);
  CHECK(read_text(tmp / "notes.txt") == "alpha\n");
}

TEST_CASE("runner_denies_by_policy", "[todo]") {
  const TempDir tmp;
  Counters counters;
  EventLog log(tmp / "log.jsonl");
  ToolRunner runner(sandbox_registry(tmp.path(), counters), log,
                    {{"append_line", Permission::Deny}});
  const auto result = runner.execute(call("c1"));
  CHECK(result.is_error());
  CHECK_THAT(result.output(), Contains("permission denied"));
  CHECK(counters.append_calls == 0);
}

TEST_CASE("runner_ask_requires_a_logged_approval", "[todo]") {
  const TempDir tmp;
  Counters counters;
  EventLog log(tmp / "log.jsonl");
  ToolRunner runner(sandbox_registry(tmp.path(), counters), log,
                    {{"append_line", Permission::Ask}});
  const auto refused = runner.execute(call("c1"));
  CHECK(refused.is_error());
  log.append("approval", {{"approved", true}}, "c2");
  const auto approved = runner.execute(call("c2"));
  CHECK_FALSE(approved.is_error());
  CHECK(counters.append_calls == 1);
}

TEST_CASE("runner_records_error_status_for_failed_dispatch", "[todo]") {
  const TempDir tmp;
  Counters counters;
  counters.flaky_fail_first = 1;
  EventLog log(tmp / "log.jsonl");
  ToolRunner runner(sandbox_registry(tmp.path(), counters), log);
  const auto result = runner.execute(ToolCall("flaky", {{"text", "x"}}, "c1"));
  CHECK(result.is_error());
  const auto statuses = result_statuses(log);
  REQUIRE_FALSE(statuses.empty());
  CHECK(statuses.back() == "error");
}

TEST_CASE("runner_logs_a_refused_call_and_its_refusal", "[todo]") {
  // A refusal is part of the trajectory: the intent and the "refused" outcome go on the log, so
  // an audit shows what the model tried, and a second submission of the id returns the refusal.
  const TempDir tmp;
  Counters counters;
  EventLog log(tmp / "log.jsonl");
  ToolRunner runner(sandbox_registry(tmp.path(), counters), log,
                    {{"append_line", Permission::Deny}});
  runner.execute(call("c1"));
  const auto events = log.replay();
  INFO("log the tool_call, then a tool_result with status \"refused\", under the call's id");
  REQUIRE(types_of(events) == std::vector<std::string>{"tool_call", "tool_result"});
  CHECK(events[0].call_id == std::optional<std::string>("c1"));
  CHECK(events[1].call_id == std::optional<std::string>("c1"));
  CHECK(events[1].payload.value("status", std::string()) == "refused");
  CHECK(events[1].payload.value("is_error", false));
  CHECK(counters.append_calls == 0);
}

TEST_CASE("runner_approval_is_for_one_call_id", "[todo]") {
  // An approval names the call it approves; it is not a blanket licence for the tool.
  const TempDir tmp;
  Counters counters;
  EventLog log(tmp / "log.jsonl");
  ToolRunner runner(sandbox_registry(tmp.path(), counters), log,
                    {{"append_line", Permission::Ask}});
  log.append("approval", {{"approved", true}}, "c2");
  log.append("approval", {{"approved", false}}, "c3");
  INFO("approved(call.call_id()): only an approval with THIS id and approved == true counts");
  CHECK_FALSE(runner.execute(call("c2", "alpha")).is_error());
  CHECK(runner.execute(call("c3", "beta")).is_error());
  CHECK(runner.execute(call("c4", "gamma")).is_error());
  CHECK(counters.append_calls == 1);
}

// ---------------------------------------------------------------------------------------------
// HarnessAgent end to end
// ---------------------------------------------------------------------------------------------

TEST_CASE("agent_completes_a_two_step_task", "[todo]") {
  const TempDir tmp;
  Counters counters;
  ScriptedBackend backend({act("alpha"), act("beta"), kFinal});
  auto agent = make_agent(backend, tmp.path(), counters);
  const auto result = agent.run("write alpha then beta");
  CHECK(result.stopped_reason == "final_answer");
  CHECK(result.final_answer == std::optional<std::string>("done"));
  CHECK(read_text(tmp / "notes.txt") == "alpha\nbeta\n");
  const auto types = types_of(result.events);
  REQUIRE_FALSE(types.empty());
  CHECK(types[0] == "task");
  CHECK(std::count(types.begin(), types.end(), "final_answer") == 1);
}

TEST_CASE("agent_uses_the_injected_context_policy", "[todo]") {
  const TempDir tmp;
  Counters counters;
  std::vector<std::pair<std::vector<Event>, std::int64_t>> seen;
  HarnessOptions options;
  options.budgets.context_tokens = 37;
  options.context_policy = [&seen](const std::vector<Event>& events, std::int64_t budget) {
    seen.emplace_back(events, budget);
    return std::vector<std::string>{"Task: policy-controlled prompt"};
  };
  ScriptedBackend backend({kFinal});
  auto agent = make_agent(backend, tmp.path(), counters, options);
  agent.run("original task");

  REQUIRE_FALSE(seen.empty());
  CHECK(seen[0].second == 37);
  const auto& events = seen[0].first;
  CHECK(std::any_of(events.begin(), events.end(), [](const Event& e) { return e.type == "task"; }));
  REQUIRE_FALSE(backend.prompts.empty());
  CHECK_THAT(backend.prompts[0], Contains("Task: policy-controlled prompt"));
  CHECK_THAT(backend.prompts[0], !Contains("original task"));
}

TEST_CASE("agent_budgets_the_whole_prompt_and_reserves_output", "[todo]") {
  const TempDir tmp;
  Counters counters;
  ScriptedBackend backend({kFinal});
  Budgets budgets;
  budgets.context_tokens = 10'000;
  budgets.model_context_tokens = 1000;
  auto options = with_budgets(budgets);
  options.max_new_tokens = 128;
  auto agent = make_agent(backend, tmp.path(), counters, options);
  agent.log().append("task", {{"content", "keep the important instruction"}});
  for (int i = 0; i < 12; ++i) {
    agent.log().append("model_turn", {{"completion", "thinking " + std::to_string(i)}});
    agent.log().append("tool_result",
                       {{"output", std::string(300, 'x')}, {"is_error", false}, {"status", "ok"}},
                       "c" + std::to_string(i));
  }
  const auto prompt = agent.build_prompt(agent.log().replay());
  CHECK(estimate_tokens(prompt) + 128 <= budgets.model_context_tokens);
}

TEST_CASE("agent_retries_transient_failures", "[todo]") {
  const TempDir tmp;
  Counters counters;
  counters.flaky_fail_first = 1;
  ScriptedBackend backend({"Action: flaky\nAction Input: {\"text\": \"x\"}", kFinal});
  auto agent = make_agent(backend, tmp.path(), counters);
  const auto result = agent.run("poke the flaky tool");
  CHECK(result.stopped_reason == "final_answer");
  CHECK(counters.flaky_calls == 2);  // one failure, one retry
}

TEST_CASE("agent_stops_on_repeats", "[todo]") {
  const TempDir tmp;
  Counters counters;
  ScriptedBackend backend(std::vector<std::string>(6, act("alpha")));
  auto agent = make_agent(backend, tmp.path(), counters);
  const auto result = agent.run("loop forever");
  CHECK(result.stopped_reason == "repeat_budget");
}

TEST_CASE("crash_drill_resume_completes", "[todo]") {
  // Kill mid-task, resume from the log, finish the task.
  const TempDir tmp;
  Counters counters;
  ScriptedBackend dying({act("alpha"), act("beta"), kFinal}, 1);
  auto crashed = make_agent(dying, tmp.path(), counters);
  CHECK_THROWS_AS(crashed.run("write alpha then beta"), Crash);

  // A new process: a fresh backend continuing the script, the same log, the same sandbox.
  ScriptedBackend fresh({act("beta"), kFinal});
  auto revived = make_agent(fresh, tmp.path(), counters);
  const auto result = revived.resume();
  CHECK(result.stopped_reason == "final_answer");
  CHECK(read_text(tmp / "notes.txt") == "alpha\nbeta\n");
}

TEST_CASE("crash_drill_no_duplicate_side_effects", "[todo]") {
  // Recorded outcomes are not replayed after a later backend crash.
  const TempDir tmp;
  const auto reference_dir = tmp / "reference";
  const auto crash_dir = tmp / "crashed";
  fs::create_directories(reference_dir);
  fs::create_directories(crash_dir);
  Counters reference_counters, counters;
  ScriptedBackend reference_backend({act("alpha"), act("beta"), kFinal});
  make_agent(reference_backend, reference_dir, reference_counters).run("write alpha then beta");

  ScriptedBackend dying({act("alpha"), act("beta"), kFinal}, 2);
  auto crashed = make_agent(dying, crash_dir, counters);
  CHECK_THROWS_AS(crashed.run("write alpha then beta"), Crash);
  // The resumed model sees the finished beta call in its context and answers. A model that
  // issued the action again would get a fresh call id and run it: the dedupe keeps the HARNESS
  // from repeating work, not the model from choosing to.
  ScriptedBackend fresh({kFinal});
  make_agent(fresh, crash_dir, counters).resume();

  CHECK(read_text(crash_dir / "notes.txt") == read_text(reference_dir / "notes.txt"));
}

TEST_CASE("resume_does_not_reset_the_step_budget", "[todo]") {
  const TempDir tmp;
  Counters counters;
  Budgets budgets;
  budgets.max_steps = 3;
  ScriptedBackend dying({act("alpha"), act("beta")}, 2);
  auto crashed = make_agent(dying, tmp.path(), counters, with_budgets(budgets));
  CHECK_THROWS_AS(crashed.run("keep writing"), Crash);

  ScriptedBackend fresh({act("gamma"), kFinal});
  auto revived = make_agent(fresh, tmp.path(), counters, with_budgets(budgets));
  const auto result = revived.resume();
  CHECK(result.stopped_reason == "max_steps");
  CHECK(result.n_steps == 3);
  CHECK(fresh.calls == 1);
}

TEST_CASE("resume_does_not_reset_repeat_history", "[todo]") {
  const TempDir tmp;
  Counters counters;
  Budgets budgets;
  budgets.max_steps = 8;
  budgets.max_repeats = 2;
  ScriptedBackend dying({act("alpha"), act("alpha")}, 2);
  auto crashed = make_agent(dying, tmp.path(), counters, with_budgets(budgets));
  CHECK_THROWS_AS(crashed.run("repeat forever"), Crash);

  ScriptedBackend fresh({act("alpha")});
  auto revived = make_agent(fresh, tmp.path(), counters, with_budgets(budgets));
  const auto result = revived.resume();
  CHECK(result.stopped_reason == "repeat_budget");
  CHECK(counters.append_calls == 2);
}

TEST_CASE("resume_refuses_a_fresh_or_finished_log", "[todo]") {
  const TempDir tmp;
  Counters counters;
  ScriptedBackend backend({kFinal});
  auto agent = make_agent(backend, tmp.path(), counters);
  CHECK_THROWS_AS(agent.resume(), g2c::ValueError);  // nothing to resume
  agent.run("trivial");
  CHECK_THROWS_AS(agent.resume(), g2c::ValueError);  // already finished
}

TEST_CASE("resume_settles_a_call_left_without_a_result", "[todo]") {
  // The process died inside the tool: the intent is on the log, the outcome is not, and the side
  // effect landed. No Python test resumes such a log (their crashes fall between whole calls), so
  // a resume that skips its crash window, or re-runs the call itself, passes them all.
  const TempDir tmp;
  Counters counters;
  {
    EventLog log(tmp / "events.jsonl");
    log.append("task", {{"content", "write alpha"}});
    log.append("model_turn", {{"completion", act("alpha")}});
    log.append("tool_call", {{"tool", "append_line"}, {"arguments", {{"text", "alpha"}}}},
               "call_0");
    std::ofstream(tmp / "notes.txt") << "alpha\n";  // it ran; nobody wrote that down
  }
  ScriptedBackend fresh({kFinal});
  auto revived = make_agent(fresh, tmp.path(), counters);
  const auto result = revived.resume();

  INFO(
      "resume() submits every tool_call without a tool_result to the runner (same id, tool and "
      "arguments), which records an unknown outcome; it must not run the tool itself");
  CHECK(counters.append_calls == 0);
  CHECK(read_text(tmp / "notes.txt") == "alpha\n");
  std::optional<Event> settled;
  for (const auto& e : result.events) {
    if (e.type == "tool_result" && e.call_id == std::optional<std::string>("call_0")) settled = e;
  }
  REQUIRE(settled.has_value());
  CHECK(settled->payload.value("status", std::string()) == UNKNOWN_OUTCOME_STATUS);
  // ... and the model reads it before it decides what to do next.
  REQUIRE(fresh.prompts.size() == 1);
  CHECK_THAT(fresh.prompts[0], Contains("unknown outcome"));
  CHECK(result.stopped_reason == "final_answer");
}
