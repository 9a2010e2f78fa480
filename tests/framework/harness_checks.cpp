// Framework checks for the Beyond module harness: the event log under real crashes and hostile
// lines, the provided rendering and budgets. Provided code only, so these pass on the scaffold.
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <random>
#include <sstream>
#include <string>
#include <thread>

#include <nlohmann/json.hpp>

#include "g2c/core/errors.h"
#include "g2c/harness/agent.h"
#include "g2c/harness/context.h"
#include "g2c/harness/events.h"
#include "g2c_test.h"
#include "temp_dir.h"

using Catch::Matchers::Contains;
using g2c::harness::estimate_tokens;
using g2c::harness::Event;
using g2c::harness::EventLog;
using g2c::harness::render_event;
using g2c::harness::shorten_line;
using g2c::testing::TempDir;
using Json = nlohmann::json;
namespace fs = std::filesystem;

namespace {

std::string read_bytes(const fs::path& path) {
  std::ifstream file(path, std::ios::binary);
  std::ostringstream text;
  text << file.rdbuf();
  return text.str();
}

void append_bytes(const fs::path& path, const std::string& bytes) {
  std::ofstream(path, std::ios::binary | std::ios::app) << bytes;
}

/// Every event's step is its place: what replay() itself enforces, checked from outside.
void check_numbered(const std::vector<Event>& events) {
  for (std::size_t i = 0; i < events.size(); ++i) {
    CHECK(events[i].step == static_cast<std::int64_t>(i));
  }
}

}  // namespace

TEST_CASE("event_log_refuses_a_torn_last_line_by_name_and_repair_drops_it") {
  const TempDir tmp;
  const auto path = tmp / "events.jsonl";
  EventLog log(path);
  log.append("task", {{"content", "write alpha"}});
  log.append("model_turn", {{"completion", "Action: append_line"}});
  // A third line cut short, as a process killed inside its write leaves it.
  const auto line = Event{2, "tool_call", {{"tool", "append_line"}}, "call_0"}.to_json();
  append_bytes(path, line.substr(0, line.size() / 2));
  const auto torn = read_bytes(path);

  CHECK_THROWS_MATCHES(log.replay(), g2c::ValueError, MessageContains(path.string() + ":3:"));
  CHECK_THROWS_MATCHES(log.replay(), g2c::ValueError, MessageContains("repair()"));
  // Nothing is written after a torn line: the next event would be glued to it.
  CHECK_THROWS_AS(log.append("model_turn", {{"completion", "x"}}), g2c::ValueError);
  CHECK(read_bytes(path) == torn);

  const auto dropped = log.repair();
  REQUIRE(dropped.has_value());
  CHECK(*dropped == line.substr(0, line.size() / 2));
  CHECK(log.replay().size() == 2);
  CHECK_FALSE(log.repair().has_value());  // whole again: nothing to drop
  CHECK(log.append("tool_call", {{"tool", "append_line"}}, "call_0").step == 2);
  check_numbered(log.replay());
}

TEST_CASE("event_log_keeps_whole_lines_through_sigkill_at_random_moments") {
  // A child process appends events until it is killed with SIGKILL at a seeded random moment;
  // the next child carries on the same log. After every kill the log must replay (after repair()
  // if the kill landed inside a write), numbered without a gap.
  const TempDir tmp;
  const auto path = tmp / "events.jsonl";
  std::mt19937 rng(20261129);
  std::uniform_int_distribution<int> delay_us(200, 4000);
  constexpr int kKills = 20;
  int repaired = 0;
  std::size_t previous = 0;
  for (int kill_index = 0; kill_index < kKills; ++kill_index) {
    const pid_t child = ::fork();
    REQUIRE(child >= 0);
    if (child == 0) {
      EventLog log(path);
      for (int i = 0;; ++i) {
        log.append("model_turn", {{"completion", std::string(64 + (i % 7) * 50, 'a' + i % 26)}});
      }
    }
    std::this_thread::sleep_for(std::chrono::microseconds(delay_us(rng)));
    ::kill(child, SIGKILL);
    int status = 0;
    ::waitpid(child, &status, 0);
    REQUIRE(WIFSIGNALED(status));
    CHECK(WTERMSIG(status) == SIGKILL);

    EventLog log(path);
    if (log.repair()) ++repaired;
    const auto events = log.replay();
    check_numbered(events);
    CHECK(events.size() >= previous);  // nothing whole is ever lost
    previous = events.size();
  }
  INFO(previous << " events over " << kKills << " kills, " << repaired << " torn lines repaired");
  CHECK(previous > 0);
}

TEST_CASE("event_log_refuses_damaged_and_hostile_lines_by_name") {
  const TempDir tmp;
  const auto path = tmp / "events.jsonl";
  const auto refused = [&](const std::string& line, const std::string& why) {
    fs::remove(path);
    append_bytes(path, Event{0, "task", {{"content", "t"}}, std::nullopt}.to_json() + "\n");
    append_bytes(path, line + "\n");
    INFO(line.substr(0, 80));
    CHECK_THROWS_MATCHES(EventLog(path).replay(), g2c::ValueError,
                         MessageContains(path.string() + ":2:"));
    CHECK_THROWS_MATCHES(EventLog(path).replay(), g2c::ValueError, MessageContains(why));
  };
  refused("{not json", "not a JSON event");
  refused(std::string(100'000, '[') + std::string(100'000, ']'), "nested deeper than 64");
  refused("[1, 2]", "must be a JSON object");
  refused(R"({"type": "task", "payload": {}, "call_id": null})", "no \"step\"");
  refused(R"({"step": -1, "type": "task", "payload": {}, "call_id": null})", "non-negative");
  refused(R"({"step": 1, "type": "", "payload": {}, "call_id": null})", "non-empty string");
  refused(R"({"step": 1, "type": "task", "payload": [], "call_id": null})", "must be an object");
  refused(R"({"step": 1, "type": "task", "payload": {}, "call_id": 7})", "string or null");
  // An edited log (a line removed, two logs joined): the numbering gives it away.
  refused(R"({"step": 5, "type": "task", "payload": {}, "call_id": null})", "numbered 5");
}

TEST_CASE("event_log_writes_invalid_utf8_as_replacement_characters") {
  // A tool's raw bytes reach the payload; the line must still be written, and read back.
  const TempDir tmp;
  EventLog log(tmp / "events.jsonl");
  log.append("tool_result", {{"output", std::string("caf\xC3") + "\xFF!"}, {"is_error", false}},
             "c1");
  const auto events = log.replay();
  REQUIRE(events.size() == 1);
  CHECK(events[0].payload["output"] == "caf\xEF\xBF\xBD\xEF\xBF\xBD!");
  CHECK(events[0].call_id == std::optional<std::string>("c1"));
}

TEST_CASE("event_to_json_is_one_sorted_line_and_round_trips") {
  const Event event{
      3, "tool_call", {{"tool", "calc"}, {"arguments", {{"b", 2}, {"a", "x\ny"}}}}, "call_1"};
  const auto line = event.to_json();
  CHECK(line.find('\n') == std::string::npos);
  CHECK(line.find("\"call_id\"") < line.find("\"payload\""));
  CHECK(line.find("\"payload\"") < line.find("\"step\""));
  CHECK(line.find("\"step\"") < line.find("\"type\""));
  CHECK(Event::from_json(line) == event);
  CHECK(Event::from_json(Event{0, "task", Json::object(), std::nullopt}.to_json()).call_id ==
        std::nullopt);
}

TEST_CASE("render_event_shows_what_the_model_sees") {
  const auto render = [](const std::string& type, Json payload) {
    return render_event(Event{0, type, std::move(payload), std::nullopt});
  };
  CHECK(render("task", {{"content", "sort files"}}) == "Task: sort files");
  CHECK(render("model_turn", {{"completion", "I will look"}}) == "Thought: I will look");
  CHECK(render("tool_call", {{"tool", "ls"}, {"arguments", {{"path", "."}}}}) ==
        R"(Action: ls  Input: {"path":"."})");
  CHECK(render("tool_result", {{"output", "a b"}, {"is_error", false}}) == "Observation: a b");
  CHECK(render("tool_result", {{"output", "no such file"}, {"is_error", true}}) ==
        "Observation: [error] no such file");
  CHECK(render("final_answer", {{"content", "42"}}) == "Final Answer: 42");
  CHECK(render("approval", {{"approved", true}}).empty());
  CHECK(render("stopped", {{"reason", "max_steps"}}).empty());
}

TEST_CASE("estimate_tokens_and_shortening_count_characters_not_bytes") {
  CHECK(estimate_tokens("") == 1);
  CHECK(estimate_tokens("abcd") == 2);
  CHECK(estimate_tokens("\xC3\xA9\xC3\xA9\xC3\xA9\xC3\xA9") == 2);  // four characters, eight bytes
  const std::string accents = [] {
    std::string text;
    for (int i = 0; i < 100; ++i) text += "\xC3\xA9";
    return text;
  }();
  const auto shortened = shorten_line(accents);
  CHECK(shortened.substr(0, 160) == accents.substr(0, 160));  // 80 whole characters
  CHECK(shortened.substr(160) == " …[compacted]");
  CHECK(shorten_line("short") == "short");
}

TEST_CASE("harness_agent_refuses_a_window_without_room_and_a_used_log") {
  class Silent : public g2c::inference::Backend {
   public:
    const g2c::inference::BackendInfo& info() const override { return info_; }
    g2c::inference::InferenceResult complete(const std::string&,
                                             const g2c::inference::CompletionOptions&) override {
      throw std::logic_error("not called");
    }
    g2c::inference::BackendInfo info_{"fake", "silent"};
  } backend;
  const TempDir tmp;
  g2c::harness::HarnessOptions options;
  options.max_new_tokens = 4096;  // the whole default window
  CHECK_THROWS_MATCHES(g2c::harness::HarnessAgent(backend, {}, EventLog(tmp / "a.jsonl"), options),
                       g2c::ValueError, MessageContains("must leave room"));
  options = {};
  options.budgets.max_steps = 0;
  CHECK_THROWS_AS(g2c::harness::HarnessAgent(backend, {}, EventLog(tmp / "a.jsonl"), options),
                  g2c::ValueError);

  EventLog used(tmp / "used.jsonl");
  used.append("task", {{"content", "an earlier run"}});
  g2c::harness::HarnessAgent agent(backend, {}, used);
  CHECK_THROWS_AS(agent.run(""), g2c::ValueError);
  CHECK_THROWS_MATCHES(agent.run("another task"), g2c::ValueError, MessageContains("resume()"));
  CHECK(used.replay().size() == 1);
}

TEST_CASE("permissions_read_and_write_as_words") {
  using g2c::harness::Permission;
  for (const auto permission : {Permission::Allow, Permission::Ask, Permission::Deny}) {
    CHECK(g2c::harness::permission_from_string(g2c::harness::to_string(permission)) == permission);
  }
  CHECK_THROWS_MATCHES(g2c::harness::permission_from_string("maybe"), g2c::ValueError,
                       MessageContains("allow, ask or deny"));
}
