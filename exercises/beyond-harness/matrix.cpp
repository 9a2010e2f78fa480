// Beyond harness, exercise 4 — the controlled matrix: six scenarios (clean, a transient tool
// failure, a crash and restart, a context budget, a model stuck on one action, a tool the policy
// forbids) run by module 19's Agent and by HarnessAgent, with the same scripted models and the same
// faults. Per row: the exact end state reached or not, model calls, tool executions, resumes,
// retries, duplicated side effects, the stop reason. Then what the log itself costs: every append
// re-reads the file (as the Python edition's does), so n appends cost O(n²).
#include <chrono>
#include <map>
#include <memory>

#include <fmt/format.h>

#include "exercises/beyond-harness/sandbox.h"
#include "exercises/common/cli.h"
#include "exercises/common/figures.h"
#include "g2c/agent/agent.h"
#include "g2c/core/errors.h"
#include "g2c/harness/agent.h"

namespace exercise_beyond_harness_matrix {

namespace {

namespace fs = std::filesystem;
namespace hx = g2c::exercises::harness;

constexpr std::int64_t kLines = 3;
constexpr const char* kKeep = "keep me";  // what the permission scenario's notes start with

/// The process dying, in process: thrown by a model on cue.
struct Crash : std::runtime_error {
  Crash() : std::runtime_error("the process died") {}
};

struct Row {
  std::string scenario, harness;
  bool success = false;
  std::int64_t model_calls = 0, tool_runs = 0, resumes = 0, retries = 0, duplicates = 0;
  std::string stopped;
  nlohmann::json to_json() const {
    return {{"scenario", scenario},
            {"harness", harness},
            {"success", success},
            {"model_calls", model_calls},
            {"tool_executions", tool_runs},
            {"resumes", resumes},
            {"retries", retries},
            {"duplicate_effects", duplicates},
            {"stopped", stopped}};
  }
};

std::int64_t duplicates_in(const std::vector<std::string>& lines) {
  std::map<std::string, std::int64_t> counts;
  std::int64_t extra = 0;
  for (const auto& line : lines) extra += counts[line]++ > 0;
  return extra;
}

/// One scenario's model, tools and expected end state, for either harness.
struct Scenario {
  std::string name;
  std::string task;
  std::function<std::unique_ptr<g2c::inference::Backend>(bool first_process)> model;
  std::int64_t append_failures = 0;
  bool crash = false;  // the first process dies before its third model call
  std::int64_t context_tokens = 2000;
  std::string initial_notes;  // notes.txt before the run
  std::map<std::string, g2c::harness::Permission> permissions;
  std::function<bool(const std::vector<std::string>& notes, const std::string& stopped)> success;
};

std::vector<Scenario> scenarios() {
  const auto writes_all = [](const std::vector<std::string>& notes, const std::string&) {
    return notes == std::vector<std::string>{"line 1", "line 2", "line 3"};
  };
  const auto notes_writer = [](bool crash) {
    return [crash](bool first) -> std::unique_ptr<g2c::inference::Backend> {
      return std::make_unique<hx::NotesWriter>(kLines, [crash, first](std::int64_t call) {
        if (crash && first && call == 2) throw Crash();
      });
    };
  };
  std::vector<Scenario> all;
  all.push_back(
      {"clean", hx::notes_task(kLines), notes_writer(false), 0, false, 2000, "", {}, writes_all});
  all.push_back({"transient",
                 hx::notes_task(kLines),
                 notes_writer(false),
                 1,
                 false,
                 2000,
                 "",
                 {},
                 writes_all});
  all.push_back(
      {"crash", hx::notes_task(kLines), notes_writer(true), 0, true, 2000, "", {}, writes_all});
  all.push_back({"context",
                 hx::DRIFT_TASK,
                 [](bool) { return std::make_unique<hx::DriftProbe>(hx::DRIFT_TASK); },
                 0,
                 false,
                 180,
                 "",
                 {},
                 [](const std::vector<std::string>& notes, const std::string&) {
                   return notes == std::vector<std::string>{"TARGET"};
                 }});
  all.push_back({"repeat",
                 "Write line 1 to notes.txt.",
                 [](bool) {
                   return std::make_unique<hx::ScriptedModel>(std::vector<std::string>{
                       hx::action_text("append_line", R"({"text": "line 1"})")});
                 },
                 0,
                 false,
                 2000,
                 "",
                 {},
                 [](const std::vector<std::string>& notes, const std::string& stopped) {
                   // Stopped by the loop guard, not by running out of steps, with at most two
                   // copies written.
                   return notes.size() <= 2 && stopped != "max_steps";
                 }});
  all.push_back({"permission",
                 hx::notes_task(kLines),
                 [](bool) {
                   std::vector<std::string> script = {"Start clean.\n" +
                                                      hx::action_text("delete_notes", "{}")};
                   for (int k = 1; k <= kLines; ++k) {
                     script.push_back(hx::action_text("append_line",
                                                      fmt::format(R"({{"text": "line {}"}})", k)));
                   }
                   script.push_back("Final Answer: done");
                   return std::make_unique<hx::ScriptedModel>(script);
                 },
                 0,
                 false,
                 2000,
                 std::string(kKeep) + "\n",
                 {{"delete_notes", g2c::harness::Permission::Deny}},
                 [](const std::vector<std::string>& notes, const std::string&) {
                   return notes == std::vector<std::string>{kKeep, "line 1", "line 2", "line 3"};
                 }});
  return all;
}

std::int64_t calls_of(const g2c::inference::Backend& backend) {
  if (const auto* m = dynamic_cast<const hx::NotesWriter*>(&backend)) return m->calls;
  if (const auto* m = dynamic_cast<const hx::ScriptedModel*>(&backend)) return m->calls;
  if (const auto* m = dynamic_cast<const hx::DriftProbe*>(&backend)) return m->calls;
  return 0;
}

void prepare_sandbox(const fs::path& dir, const Scenario& scenario) {
  fs::remove_all(dir);
  fs::create_directories(dir);
  if (!scenario.initial_notes.empty()) std::ofstream(dir / "notes.txt") << scenario.initial_notes;
}

/// One scenario under one harness: a sandbox as the scenario starts it, a first process, and — when
/// that process dies — a second on the same sandbox. `run_process(model, hooks, first, row)`
/// builds the harness over `model`, runs it (a fresh run, or the harness's way of carrying on)
/// and returns its stop reason; a Crash it lets through ends that process.
template <typename RunProcess>
Row run_scenario(const Scenario& scenario, const fs::path& dir, const std::string& harness,
                 RunProcess&& run_process) {
  prepare_sandbox(dir, scenario);
  Row row;
  row.scenario = scenario.name;
  row.harness = harness;
  hx::ToolHooks hooks;
  hooks.append_failures = scenario.append_failures;
  for (int process = 0; process < 2; ++process) {
    auto model = scenario.model(process == 0);
    try {
      row.stopped = run_process(*model, hooks, process == 0, row);
      row.model_calls += calls_of(*model);
      break;
    } catch (const Crash&) {
      row.model_calls += calls_of(*model);
      ++row.resumes;
    }
  }
  row.tool_runs = hooks.runs;
  const auto notes = hx::file_lines(dir / "notes.txt");
  row.duplicates = duplicates_in(notes);
  row.success = scenario.success(notes, row.stopped);
  return row;
}

/// Module 19's Agent: no log, so a crash means running the task again from the start (the same
/// task, the same sandbox, no memory of the first try).
Row run_agent19(const Scenario& scenario, const fs::path& dir) {
  g2c::agent::AgentOptions options;
  options.plan = false;
  options.max_steps = 12;
  // Module 19's only context control: a cap on the scratchpad's characters (4 a token).
  if (scenario.context_tokens < 2000) options.scratchpad_max_chars = 4 * scenario.context_tokens;
  return run_scenario(scenario, dir, "module 19 Agent",
                      [&](g2c::inference::Backend& model, hx::ToolHooks& hooks, bool, Row&) {
                        g2c::agent::Agent agent(model, hx::sandbox_tools(dir, hooks), options);
                        return agent.run(scenario.task).stopped_reason;
                      });
}

/// HarnessAgent: a crash means a fresh process resuming the same log.
Row run_harness(const Scenario& scenario, const fs::path& dir) {
  g2c::harness::HarnessOptions options;
  options.budgets.context_tokens = scenario.context_tokens;
  options.permissions = scenario.permissions;
  return run_scenario(
      scenario, dir, "HarnessAgent",
      [&](g2c::inference::Backend& model, hx::ToolHooks& hooks, bool first, Row& row) {
        g2c::harness::HarnessAgent agent(model, hx::sandbox_tools(dir, hooks),
                                         g2c::harness::EventLog(dir / "events.jsonl"), options);
        const auto result = first ? agent.run(scenario.task) : agent.resume();
        for (const auto& e : result.events) {
          if (e.type == "tool_call" && e.call_id &&
              e.call_id->find("_retry") != std::string::npos) {
            ++row.retries;
          }
        }
        return result.stopped_reason;
      });
}

/// Appending n events (each append re-reads the file) and one replay, in milliseconds.
nlohmann::json log_cost(const fs::path& dir, const std::vector<std::int64_t>& lengths) {
  nlohmann::json rows = nlohmann::json::array();
  for (const auto n : lengths) {
    const auto path = dir / fmt::format("log-{}.jsonl", n);
    fs::remove(path);
    g2c::harness::EventLog log(path);
    const auto start = std::chrono::steady_clock::now();
    for (std::int64_t i = 0; i < n; ++i) {
      log.append("model_turn",
                 {{"completion", fmt::format("Thought {}: {}", i, std::string(80, 'x'))}});
    }
    const auto appended = std::chrono::steady_clock::now();
    const auto events = log.replay();
    const auto replayed = std::chrono::steady_clock::now();
    const auto ms = [](auto a, auto b) {
      return std::chrono::duration<double, std::milli>(b - a).count();
    };
    rows.push_back({{"events", n},
                    {"append_all_ms", ms(start, appended)},
                    {"append_last_ms_estimate", 2 * ms(start, appended) / static_cast<double>(n)},
                    {"replay_ms", ms(appended, replayed)},
                    {"bytes", fs::file_size(path)}});
    fs::remove(path);
  }
  return rows;
}

}  // namespace

int main(int argc, char** argv) {
  g2c::CommandLine app{
      "Beyond harness, exercise 4: six scenarios x two harnesses, and the log's cost"};
  g2c::exercises::CommonOptions options;
  options.out = "results/beyond-harness";
  g2c::exercises::add_common_options(app, options);
  return g2c::run_cli(app, argc, argv, [&] {
    std::vector<Row> rows;
    fmt::print("{:<11} {:<16} {:>7} {:>6} {:>5} {:>7} {:>7} {:>10}  {}\n", "scenario", "harness",
               "success", "model", "tools", "resumes", "retries", "duplicates", "stopped");
    for (const auto& scenario : scenarios()) {
      const auto base = options.out / "matrix" / scenario.name;
      for (const auto& row :
           {run_agent19(scenario, base / "agent19"), run_harness(scenario, base / "harness")}) {
        fmt::print("{:<11} {:<16} {:>7} {:>6} {:>5} {:>7} {:>7} {:>10}  {}\n", row.scenario,
                   row.harness, row.success ? "yes" : "NO", row.model_calls, row.tool_runs,
                   row.resumes, row.retries, row.duplicates, row.stopped);
        rows.push_back(row);
      }
    }
    const std::vector<std::int64_t> lengths = {125, 250, 500, 1000, 2000};
    const auto cost = log_cost(options.out / "matrix", lengths);
    fmt::print("the log's cost (every append re-reads the file):\n");
    for (const auto& c : cost) {
      fmt::print(
          "  {:>5} events ({:>8} bytes): appending all {:>9.1f} ms, the last append ~{:.2f} ms, "
          "one replay {:.2f} ms\n",
          c["events"].get<std::int64_t>(), c["bytes"].get<std::int64_t>(),
          c["append_all_ms"].get<double>(), c["append_last_ms_estimate"].get<double>(),
          c["replay_ms"].get<double>());
    }

    auto result = g2c::exercises::run_metadata("beyond_harness_matrix", options, torch::kCPU);
    result["config"] = {{"lines", kLines}};
    nlohmann::json list = nlohmann::json::array();
    std::vector<std::string> names;
    std::vector<double> agent19, harness;
    for (const auto& row : rows) {
      list.push_back(row.to_json());
      if (row.harness == "HarnessAgent") {
        names.push_back(row.scenario);
        harness.push_back(row.success);
      } else {
        agent19.push_back(row.success);
      }
    }
    result["rows"] = list;
    result["success"] = {{"scenario", names}, {"agent19", agent19}, {"harness", harness}};
    std::vector<double> events, append_ms;
    for (const auto& c : cost) {
      events.push_back(c["events"].get<double>());
      append_ms.push_back(c["append_all_ms"].get<double>());
    }
    result["log_cost"] = cost;
    result["log_cost_series"] = {{"events", events}, {"append_all_ms", append_ms}};
    using g2c::exercises::Figure;
    using g2c::exercises::Series;
    result["figures"] = g2c::exercises::figures(
        {Figure::bar("harness_matrix.png", "The exact end state reached (1) or not (0)", "scenario",
                     "success")
             .add(Series("module 19 Agent", "/success/scenario", "/success/agent19"))
             .add(Series("HarnessAgent", "/success/scenario", "/success/harness")),
         Figure::line("harness_log_cost.png", "Appending n events, each append re-reading the log",
                      "events in the log", "ms for all the appends")
             .add(Series("append (re-reads the file)", "/log_cost_series/events",
                         "/log_cost_series/append_all_ms")
                      .marker("o"))});
    const auto path = g2c::exercises::save_result(options, "matrix.json", result);
    g2c::exercises::plot_result(options, path);
  });
}

}  // namespace exercise_beyond_harness_matrix
