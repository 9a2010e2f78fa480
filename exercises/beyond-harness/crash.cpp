// Beyond harness, exercise 2 — crash drills with real kills. The agent runs in a child process
// that dies by SIGKILL: at three scripted points (just after a tool's result reached the log;
// inside the tool, after its side effect and before its result was logged; in the middle of writing
// a log line), then at seeded random moments. Each time a fresh process takes over the log
// (repairing a torn last line first) and resumes. Measured: does every run finish, is notes.txt
// byte for byte what an uncrashed run leaves, how many side effects happened twice (must be none),
// how many calls were recorded as of unknown outcome, how many torn lines were repaired.
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <fstream>
#include <map>
#include <random>
#include <set>
#include <thread>

#include <fmt/format.h>

#include "exercises/beyond-harness/sandbox.h"
#include "exercises/common/cli.h"
#include "exercises/common/figures.h"
#include "g2c/core/errors.h"
#include "g2c/harness/agent.h"

namespace exercise_beyond_harness_crash {

namespace {

namespace fs = std::filesystem;
using g2c::exercises::harness::NotesWriter;
using g2c::exercises::harness::ToolHooks;
using g2c::harness::Event;
using g2c::harness::EventLog;

struct Config {
  std::int64_t lines = 6;          // the task: line 1 .. line 6, each once
  std::int64_t random_kills = 24;  // kills at random moments (landed ones), at least 20
  std::int64_t step_ms = 2;        // a model call takes this long in the drill ...
  std::int64_t tool_ms = 1;        // ... and a tool's side effect is this long before its result
};

/// Where a child process dies by its own hand; nothing set: it runs until done (or until the
/// parent's SIGKILL).
struct KillPlan {
  std::optional<std::int64_t> before_model_call;  // before this call of the process (0-based)
  std::optional<std::int64_t> after_effect;       // inside the tool, after this append (1-based)
  bool torn_line = false;  // at before_model_call: half a log line first, then the kill
};

[[noreturn]] void die_now() {
  ::raise(SIGKILL);
  std::_Exit(99);  // not reached
}

/// The child's whole life: take over the log (or start it) and run until done or killed.
[[noreturn]] void child(const fs::path& dir, const Config& config, const KillPlan& plan) {
  try {
    EventLog log(dir / "events.jsonl");
    ToolHooks hooks;
    hooks.after_effect = [&](const std::string&) {
      if (plan.after_effect && hooks.appends == *plan.after_effect) die_now();
      std::this_thread::sleep_for(std::chrono::milliseconds(config.tool_ms));
    };
    NotesWriter model(config.lines, [&](std::int64_t call) {
      if (plan.before_model_call && call == *plan.before_model_call) {
        if (plan.torn_line) {  // the process dies while writing the model's turn
          const auto line = Event{static_cast<std::int64_t>(log.replay().size()),
                                  "model_turn",
                                  {{"completion", "Line 9 is next."}},
                                  std::nullopt}
                                .to_json();
          std::ofstream(log.path(), std::ios::app | std::ios::binary)
              << line.substr(0, line.size() / 2) << std::flush;
        }
        die_now();
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(config.step_ms));
    });
    g2c::harness::HarnessOptions options;
    options.budgets.max_steps = 4 * config.lines;  // room for the checks a crash makes necessary
    options.budgets.max_repeats = 3;
    g2c::harness::HarnessAgent agent(model, g2c::exercises::harness::sandbox_tools(dir, hooks), log,
                                     options);
    const auto result = log.replay().empty()
                            ? agent.run(g2c::exercises::harness::notes_task(config.lines))
                            : agent.resume();
    std::_Exit(result.stopped_reason == "final_answer" ? 0 : 3);
  } catch (const std::exception& error) {
    std::fprintf(stderr, "child: %s\n", error.what());
    std::_Exit(2);
  }
}

struct Outcome {
  bool killed = false;
  int exit_code = -1;
};

/// Runs the child to its end; the parent kills it after `kill_after_us` when given.
Outcome run_child(const fs::path& dir, const Config& config, const KillPlan& plan,
                  std::optional<std::int64_t> kill_after_us) {
  std::fflush(stdout);
  const pid_t pid = ::fork();
  if (pid < 0) throw g2c::RuntimeError("fork failed");
  if (pid == 0) child(dir, config, plan);
  if (kill_after_us) {
    std::this_thread::sleep_for(std::chrono::microseconds(*kill_after_us));
    ::kill(pid, SIGKILL);
  }
  int status = 0;
  ::waitpid(pid, &status, 0);
  Outcome outcome;
  outcome.killed = WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL;
  outcome.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  return outcome;
}

/// Where the log says a kill landed: inside a tool call (intent without outcome), in the middle
/// of a line, or between steps.
std::string landing(const EventLog& log) {
  std::vector<Event> events;
  try {
    events = log.replay();
  } catch (const g2c::ValueError&) {
    return "mid-line";
  }
  std::set<std::string> open;
  for (const auto& e : events) {
    if (e.type == "tool_call" && e.call_id) open.insert(*e.call_id);
    if (e.type == "tool_result" && e.call_id) open.erase(*e.call_id);
  }
  if (!open.empty()) return "inside a tool call";
  if (!events.empty() && events.back().type == "model_turn") return "after a model turn";
  return "between steps";
}

struct Drill {
  std::string name;
  std::int64_t kills = 0, resumes = 0, repaired = 0, unknown_outcomes = 0, model_calls = 0;
  std::int64_t duplicates = 0, missing = 0;
  bool finished = false, identical = false;
  std::map<std::string, std::int64_t> landings;

  nlohmann::json to_json() const {
    return {{"name", name},
            {"kills", kills},
            {"resumes", resumes},
            {"torn_lines_repaired", repaired},
            {"unknown_outcomes", unknown_outcomes},
            {"model_calls", model_calls},
            {"duplicate_effects", duplicates},
            {"missing_effects", missing},
            {"finished", finished},
            {"notes_identical", identical},
            {"landings", landings}};
  }
};

/// One drill: the first process and the kills planned for it, then fresh processes until the
/// run is done (each first repairing a torn last line). `kills_at_us` are the parent's kills, one
/// per process in order, after the scripted one(s).
Drill drill(const std::string& name, const fs::path& dir, const Config& config, KillPlan first,
            std::vector<std::int64_t> kills_at_us, const std::string& reference) {
  fs::remove_all(dir);
  fs::create_directories(dir);
  Drill d;
  d.name = name;
  EventLog log(dir / "events.jsonl");
  const bool scripted = first.before_model_call || first.after_effect;
  for (std::int64_t process = 0; process < 40; ++process) {
    if (process > 0) {
      ++d.resumes;
      if (log.repair()) ++d.repaired;
    }
    const auto plan = process == 0 ? first : KillPlan{};
    const std::size_t parent_kill = scripted ? process - 1 : process;
    const auto kill_after = (!scripted || process > 0) && parent_kill < kills_at_us.size()
                                ? std::optional<std::int64_t>(kills_at_us[parent_kill])
                                : std::nullopt;
    const auto outcome = run_child(dir, config, plan, kill_after);
    if (outcome.killed) {
      ++d.kills;
      ++d.landings[landing(log)];
      continue;
    }
    if (outcome.exit_code == 0) {
      d.finished = true;
      break;
    }
    throw g2c::RuntimeError(
        fmt::format("drill {}: a process ended with status {} (not killed, "
                    "not finished): see its message above",
                    name, outcome.exit_code));
  }
  const auto events = log.replay();
  for (const auto& e : events) {
    if (e.type == "model_turn") ++d.model_calls;
    if (e.type == "tool_result" &&
        e.payload.value("status", std::string()) == g2c::harness::UNKNOWN_OUTCOME_STATUS) {
      ++d.unknown_outcomes;
    }
  }
  const auto lines = g2c::exercises::harness::file_lines(dir / "notes.txt");
  std::map<std::string, std::int64_t> counts;
  for (const auto& line : lines) ++counts[line];
  for (std::int64_t k = 1; k <= config.lines; ++k) {
    const auto n = counts[fmt::format("line {}", k)];
    d.duplicates += std::max<std::int64_t>(0, n - 1);
    d.missing += n == 0;
  }
  std::ifstream notes(dir / "notes.txt", std::ios::binary);
  d.identical = std::string(std::istreambuf_iterator<char>(notes), {}) == reference;
  return d;
}

}  // namespace

int main(int argc, char** argv) {
  g2c::CommandLine app{"Beyond harness, exercise 2: crash drills with real kills (SIGKILL)"};
  g2c::exercises::CommonOptions options;
  options.out = "results/beyond-harness";
  Config config;
  g2c::exercises::add_common_options(app, options);
  app.add_option("--random-kills", config.random_kills, "Kills at random moments (landed ones)");
  app.add_option("--lines", config.lines, "Lines the task writes").positive();
  return g2c::run_cli(app, argc, argv, [&] {
    if (config.random_kills < 0 || config.lines < 1) {
      throw g2c::ValueError("--random-kills must be >= 0 and --lines >= 1");
    }
    const auto work = options.out / "crash-drills";
    const auto reference_dir = work / "reference";
    // The uncrashed run: what every drill must leave behind.
    const auto reference_drill = drill("uncrashed", reference_dir, config, {}, {}, "");
    std::ifstream file(reference_dir / "notes.txt", std::ios::binary);
    const std::string reference(std::istreambuf_iterator<char>(file), {});
    if (!reference_drill.finished ||
        reference != g2c::exercises::harness::expected_notes(config.lines)) {
      throw g2c::RuntimeError("the uncrashed run did not write the expected notes");
    }
    fmt::print("uncrashed run: {} model calls, notes.txt = lines 1..{}\n",
               reference_drill.model_calls, config.lines);

    std::vector<Drill> drills;
    const auto report = [&](const Drill& d) {
      fmt::print(
          "  {:<34} kills {:>2}  resumes {:>2}  torn {:>1}  unknown {:>1}  duplicates {}  "
          "{}\n",
          d.name, d.kills, d.resumes, d.repaired, d.unknown_outcomes, d.duplicates,
          d.finished && d.identical ? "notes identical" : "NOTES DIFFER");
      drills.push_back(d);
    };
    fmt::print("scripted kills:\n");
    KillPlan after_result;  // the third model call: two results are on the log
    after_result.before_model_call = 2;
    report(drill("after a result was logged", work / "after-result", config, after_result, {},
                 reference));
    KillPlan inside_tool;  // append_line #2 wrote its line; its result never reached the log
    inside_tool.after_effect = 2;
    report(drill("inside a tool, after its effect", work / "inside-tool", config, inside_tool, {},
                 reference));
    KillPlan torn;  // half of the fourth model turn's line written
    torn.before_model_call = 3;
    torn.torn_line = true;
    report(drill("in the middle of a log line", work / "torn-line", config, torn, {}, reference));

    // Random moments: a drill's processes are killed after seeded delays until the run is done;
    // a kill that comes after the process finished does not count.
    std::mt19937_64 rng(options.seed);
    const auto span_us = static_cast<std::int64_t>(reference_drill.model_calls) *
                         (config.step_ms + config.tool_ms) * 1000;
    std::uniform_int_distribution<std::int64_t> delay(200, std::max<std::int64_t>(400, span_us));
    std::uniform_int_distribution<int> per_drill(1, 3);
    std::int64_t landed = 0;
    fmt::print("random kills (seed {}):\n", options.seed);
    for (int index = 0; landed < config.random_kills && index < 200; ++index) {
      std::vector<std::int64_t> kills(static_cast<std::size_t>(per_drill(rng)));
      for (auto& k : kills) k = delay(rng);
      const auto d =
          drill(fmt::format("random #{} ({} planned)", index + 1, kills.size()),
                work / fmt::format("random-{}", index + 1), config, {}, kills, reference);
      landed += d.kills;
      report(d);
    }

    Drill total;
    total.name = "all drills";
    std::int64_t finished = 0, identical = 0;
    for (const auto& d : drills) {
      total.kills += d.kills;
      total.resumes += d.resumes;
      total.repaired += d.repaired;
      total.unknown_outcomes += d.unknown_outcomes;
      total.duplicates += d.duplicates;
      total.missing += d.missing;
      finished += d.finished;
      identical += d.identical;
      for (const auto& [where, n] : d.landings) total.landings[where] += n;
    }
    fmt::print(
        "{} drills, {} kills ({} random): {} finished, {} with notes.txt byte-identical to "
        "the uncrashed run; {} duplicated and {} missing side effects; {} calls recorded as "
        "of unknown outcome; {} torn lines repaired\n",
        drills.size(), total.kills, landed, finished, identical, total.duplicates, total.missing,
        total.unknown_outcomes, total.repaired);
    for (const auto& [where, n] : total.landings) fmt::print("  kills {}: {}\n", where, n);

    auto result = g2c::exercises::run_metadata("beyond_harness_crash", options, torch::kCPU);
    result["config"] = {{"lines", config.lines},
                        {"random_kills", config.random_kills},
                        {"step_ms", config.step_ms},
                        {"tool_ms", config.tool_ms}};
    result["reference"] = reference_drill.to_json();
    nlohmann::json list = nlohmann::json::array();
    for (const auto& d : drills) list.push_back(d.to_json());
    result["drills"] = list;
    result["total"] = total.to_json();
    result["total"]["drills"] = drills.size();
    result["total"]["finished"] = finished;
    result["total"]["notes_identical"] = identical;
    result["total"]["random_kills"] = landed;
    std::vector<std::string> where;
    std::vector<std::int64_t> count;
    for (const auto& [w, n] : total.landings) {
      where.push_back(w);
      count.push_back(n);
    }
    result["landings"] = {{"where", where}, {"kills", count}};
    using g2c::exercises::Figure;
    using g2c::exercises::Series;
    result["figures"] = g2c::exercises::figures(
        {Figure::bar("harness_crash_landings.png",
                     fmt::format("{} SIGKILLs, every run resumed: {} duplicated effects",
                                 total.kills, total.duplicates),
                     "where the kill landed", "kills")
             .add(Series("kills", "/landings/where", "/landings/kills"))});
    const auto path = g2c::exercises::save_result(options, "crash.json", result);
    g2c::exercises::plot_result(options, path);
  });
}

}  // namespace exercise_beyond_harness_crash
