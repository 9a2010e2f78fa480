// Beyond harness, exercise 3 — context drift. A prompt-sensitive scripted model surveys the
// workspace four times (400 characters of output each), then writes TARGET if the task line is
// still in its prompt and DRIFT if it is not. With 180 tokens for the trajectory, a naive policy
// that drops the oldest lines first loses the task; compact_context shortens old output instead.
#include <fmt/format.h>

#include "exercises/beyond-harness/sandbox.h"
#include "exercises/common/cli.h"
#include "exercises/common/figures.h"
#include "g2c/harness/agent.h"

namespace exercise_beyond_harness_drift {

namespace {

/// Render everything, then drop the oldest lines — the task among them — until it fits.
std::vector<std::string> drop_oldest(const std::vector<g2c::harness::Event>& events,
                                     std::int64_t budget) {
  std::vector<std::string> lines;
  for (const auto& event : events) {
    auto line = g2c::harness::render_event(event);
    if (!line.empty()) lines.push_back(std::move(line));
  }
  while (lines.size() > 1 && g2c::harness::estimated_tokens(lines) > budget) {
    lines.erase(lines.begin());
  }
  return lines;
}

}  // namespace

int main(int argc, char** argv) {
  g2c::CommandLine app{"Beyond harness, exercise 3: context drift under a token budget"};
  g2c::exercises::CommonOptions options;
  options.out = "results/beyond-harness";
  std::int64_t budget = 180;
  g2c::exercises::add_common_options(app, options);
  app.add_option("--budget", budget, "Tokens for the trajectory (context_tokens)").positive();
  return g2c::run_cli(app, argc, argv, [&] {
    auto out = g2c::exercises::run_metadata("beyond_harness_drift", options, torch::kCPU);
    out["config"] = {{"context_tokens", budget}};
    for (const bool compact : {false, true}) {
      const auto name = compact ? "compact_context" : "drop_oldest";
      const auto dir = options.out / "drift" / name;
      std::filesystem::remove_all(dir);
      std::filesystem::create_directories(dir);
      g2c::exercises::harness::ToolHooks hooks;
      g2c::exercises::harness::DriftProbe model(g2c::exercises::harness::DRIFT_TASK);
      g2c::harness::HarnessOptions harness;
      harness.budgets.context_tokens = budget;
      if (!compact) harness.context_policy = drop_oldest;
      g2c::harness::HarnessAgent agent(model, g2c::exercises::harness::sandbox_tools(dir, hooks),
                                       g2c::harness::EventLog(dir / "events.jsonl"), harness);
      const auto result = agent.run(g2c::exercises::harness::DRIFT_TASK);
      const auto lines = g2c::exercises::harness::file_lines(dir / "notes.txt");
      const auto wrote = lines.empty() ? std::string("nothing") : lines.back();
      const auto last_prompt = agent.build_prompt(agent.log().replay());
      fmt::print("{:<16} wrote {:<7} ({} model turns; the last prompt {} the task)\n", name, wrote,
                 result.n_steps,
                 last_prompt.find(g2c::exercises::harness::DRIFT_TASK) != std::string::npos
                     ? "still holds"
                     : "has lost");
      // The prompt the model was shown at each step, rebuilt from the log as the step saw it.
      const auto events = agent.log().replay();
      std::vector<std::int64_t> steps, tokens;
      std::vector<double> holds_task;
      for (std::size_t i = 0; i < events.size(); ++i) {
        if (events[i].type != "model_turn") continue;
        const auto prompt =
            agent.build_prompt({events.begin(), events.begin() + static_cast<long>(i)});
        steps.push_back(static_cast<std::int64_t>(steps.size()) + 1);
        tokens.push_back(g2c::harness::estimate_tokens(prompt));
        holds_task.push_back(prompt.find(g2c::exercises::harness::DRIFT_TASK) != std::string::npos);
      }
      out["runs"][name] = {{"wrote", wrote},
                           {"steps", steps},
                           {"prompt_tokens", tokens},
                           {"prompt_holds_task", holds_task},
                           {"n_steps", result.n_steps},
                           {"stopped_reason", result.stopped_reason},
                           {"last_prompt", last_prompt}};
    }
    using g2c::exercises::Figure;
    using g2c::exercises::Series;
    out["figures"] = g2c::exercises::figures(
        {Figure::line("harness_drift.png",
                      fmt::format("Does the prompt still hold the task? ({} tokens for the "
                                  "trajectory)",
                                  budget),
                      "model call", "task in the prompt (1 yes, 0 no)")
             .add(Series("drop oldest", "/runs/drop_oldest/steps",
                         "/runs/drop_oldest/prompt_holds_task")
                      .marker("o"))
             .add(Series("compact_context", "/runs/compact_context/steps",
                         "/runs/compact_context/prompt_holds_task")
                      .marker("s"))});
    const auto path = g2c::exercises::save_result(options, "drift.json", out);
    g2c::exercises::plot_result(options, path);
  });
}

}  // namespace exercise_beyond_harness_drift
