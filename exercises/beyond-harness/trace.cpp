// Beyond harness, exercise 1 — a trace: a two-line task run by HarnessAgent over a scripted model,
// and its event log printed as the table it is (step, type, call id, payload). Everything the
// run did is in that file; everything the next exercises do is a view of it.
#include <fmt/format.h>

#include "exercises/beyond-harness/sandbox.h"
#include "exercises/common/cli.h"
#include "g2c/harness/agent.h"

namespace exercise_beyond_harness_trace {

int main(int argc, char** argv) {
  g2c::CommandLine app{"Beyond harness, exercise 1: a two-action run and its event log"};
  g2c::exercises::CommonOptions options;
  options.out = "results/beyond-harness";
  g2c::exercises::add_common_options(app, options);
  return g2c::run_cli(app, argc, argv, [&] {
    const auto dir = options.out / "trace";
    std::filesystem::remove_all(dir);
    std::filesystem::create_directories(dir);
    g2c::exercises::harness::ToolHooks hooks;
    g2c::exercises::harness::NotesWriter model(2);
    g2c::harness::HarnessAgent agent(model, g2c::exercises::harness::sandbox_tools(dir, hooks),
                                     g2c::harness::EventLog(dir / "events.jsonl"));
    const auto result = agent.run(g2c::exercises::harness::notes_task(2));

    fmt::print("{:>4}  {:<12}  {:<8}  {}\n", "step", "type", "call id", "payload");
    nlohmann::json rows = nlohmann::json::array();
    for (const auto& event : result.events) {
      auto payload = event.payload.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
      if (payload.size() > 90) payload = payload.substr(0, 87) + "...";
      fmt::print("{:>4}  {:<12}  {:<8}  {}\n", event.step, event.type, event.call_id.value_or("-"),
                 payload);
      rows.push_back(nlohmann::json::parse(event.to_json()));
    }
    fmt::print("stopped: {} after {} model turns; the log is {}\n", result.stopped_reason,
               result.n_steps, (dir / "events.jsonl").string());

    auto out = g2c::exercises::run_metadata("beyond_harness_trace", options, torch::kCPU);
    out["config"] = {{"task", g2c::exercises::harness::notes_task(2)}};
    out["events"] = rows;
    out["stopped_reason"] = result.stopped_reason;
    out["n_steps"] = result.n_steps;
    g2c::exercises::save_result(options, "trace.json", out);
  });
}

}  // namespace exercise_beyond_harness_trace
