// Exercise 19 — agent tasks: questions about this course that take two tools to answer. Each of the
// forty tasks of exercises/19-agent/data/tasks.json needs a fact or two found with search_notes
// (module 17's BM25 over the task set's 24 facts, the two best returned) and then arithmetic with
// module 18's calculator ("How many parameters would two ShakespeareLM-1M models have?": search,
// then 843784 * 2). SmolLM2-135M-Instruct works each task under a step limit, three ways, after a
// script shows what the tools allow:
//   scripted     the ReAct agent with a script in the model's place: search_notes with the question
//                as the query, the calculator on the task's expression, the result as the answer
//   react        the ReAct agent (Agent): the Thought / Action / Action Input format in text
//   native       the native agent (NativeAgent) over chat_with_tools, calls left to the model
//   constrained  the native agent with the first call of a turn decoded under the tool's schema
//                (ToolChoice::Required: a call is certain, which tool and what it asks are not)
// A task is right when the final answer's last number is the answer. Also measured: whether the
// searches brought back every fact the task needs, and whether the calculator ran. Every run that
// is not right
// is put in one class, by how it ended: wrong answer (it answered), loop (the same action twice),
// format (no answer, and no step that acted could be read), wrong tool (no answer, and a call
// failed: an unknown tool or arguments the schema refuses), out of steps. Writes
// agent_tasks.json (every step of every run) and a figure.
#include <chrono>
#include <filesystem>
#include <map>
#include <set>

#include <fmt/format.h>

#include "exercises/common/cli.h"
#include "exercises/common/figures.h"
#include "exercises/common/numbers.h"
#include "exercises/common/proportion.h"
#include "g2c/agent/agent.h"
#include "g2c/agent/native.h"
#include "g2c/core/atomic_file.h"
#include "g2c/core/errors.h"
#include "g2c/core/progress.h"
#include "g2c/inference/pretrained_backend.h"
#include "g2c/pretraining/build_info.h"
#include "g2c/rag/bm25.h"
#include "g2c/tokenizer/utf8.h"
#include "g2c/tools/tools.h"

namespace exercise_19_agent_tasks {

namespace {

namespace fs = std::filesystem;
using g2c::agent::AgentRunResult;
using g2c::exercises::Proportion;
using Json = nlohmann::json;

const std::vector<std::string> kConditions = {"scripted", "react", "native", "constrained"};
const std::vector<std::string> kOutcomes = {"right",  "wrong answer", "loop",
                                            "format", "wrong tool",   "out of steps"};

struct Task {
  std::string id, question, expression;
  std::int64_t answer;
  std::vector<std::string> fact_texts;  // what search_notes must bring back
};

/// The scripted condition's "model": a script that writes the ReAct steps a perfect agent would —
/// search_notes with the question as the query, the calculator on the task's expression, then the
/// last observation as the final answer — so the run goes through the same Agent, parser, tools
/// and scoring as the model's. What it gets wrong, the tools and the data get wrong.
class ScriptedAgent : public g2c::inference::Backend {
 public:
  explicit ScriptedAgent(const Task& task) : task_(task) {}
  const g2c::inference::BackendInfo& info() const override { return info_; }
  g2c::inference::InferenceResult complete(const std::string& prompt,
                                           const g2c::inference::CompletionOptions&) override {
    std::size_t observations = 0;  // in the scratchpad, after the question (not the format's)
    for (auto at = prompt.find("\nObservation: ", prompt.rfind("\nQuestion: "));
         at != std::string::npos; at = prompt.find("\nObservation: ", at + 1)) {
      ++observations;
    }
    std::string completion;
    if (observations == 0) {
      completion = fmt::format("Thought: I need the facts.\nAction: search_notes\nAction Input: {}",
                               Json{{"query", task_.question}}.dump());
    } else if (observations == 1) {
      completion = fmt::format("Thought: Now the arithmetic.\nAction: calculator\nAction Input: {}",
                               Json{{"expression", task_.expression}}.dump());
    } else {
      const auto last = prompt.rfind("\nObservation: ") + 14;
      const auto end = prompt.find('\n', last);
      completion = "Thought: I know it.\nFinal Answer: " + prompt.substr(last, end - last);
    }
    return g2c::inference::InferenceResult(prompt, completion, std::nullopt, std::nullopt, 0.0,
                                           info_);
  }

 private:
  const Task& task_;
  g2c::inference::BackendInfo info_{"script", "scripted-agent"};
};

/// search_notes: BM25 over the facts, the best two joined by a newline.
g2c::tools::Tool search_notes(std::shared_ptr<g2c::rag::BM25Retriever> index) {
  return g2c::tools::Tool(
      "search_notes",
      "Search the course's notes for a fact, such as a model's size or a module's test count. "
      "Returns the two notes that match the query best.",
      {{"type", "object"},
       {"properties",
        {{"query", {{"type", "string"}, {"description", "What to look for, in a few words."}}}}},
       {"required", {"query"}}},
      [index](const Json& arguments) -> Json {
        std::string found;
        for (const auto& hit : index->retrieve(arguments.at("query").get<std::string>(), 2)) {
          found += (found.empty() ? "" : "\n") + hit.chunk.text();
        }
        return found.empty() ? "No note matches that query." : found;
      });
}

/// How a run that is not right ended (see the top of this file).
std::string outcome_of(const AgentRunResult& run, bool right) {
  if (right) return "right";
  if (run.final_answer) return "wrong answer";
  if (run.stopped_reason == "duplicate_action") return "loop";
  bool acted = false, call_failed = false;
  for (const auto& step : run.steps) {
    acted = acted || step.action.has_value();
    call_failed = call_failed || (step.observation && step.observation->is_error());
  }
  if (!acted) return "format";
  if (call_failed) return "wrong tool";
  return "out of steps";
}

/// One condition over the tasks.
struct Tally {
  Proportion right, found_the_facts, used_calculator;
  std::map<std::string, std::int64_t> outcomes;
  double steps = 0, steps_when_right = 0, tokens = 0, seconds = 0;
  std::int64_t rescued = 0;
  Json runs = Json::array();
};

Json step_record(const g2c::agent::AgentStep& step) {
  Json record = {{"completion", step.completion}};
  if (!step.thought.empty()) record["thought"] = step.thought;
  if (step.action) {
    record["action"] = {{"tool", step.action->tool()}, {"arguments", step.action->arguments()}};
  }
  if (step.observation) {
    record["observation"] = step.observation->output();
    record["error"] = step.observation->is_error();
  }
  if (step.final_answer) record["final_answer"] = *step.final_answer;
  if (step.parse_error) record["parse_error"] = *step.parse_error;
  return record;
}

}  // namespace

int main(int argc, char** argv) {
  g2c::CommandLine app{
      "Module 19: forty questions about this course that need search_notes and then the\n"
      "calculator, worked by SmolLM2-135M-Instruct as a ReAct agent and as a native tool-calling\n"
      "agent (free and schema-constrained), and by a script that shows what the tools allow:\n"
      "success with 95% intervals, steps used, and how each failed run ended. Writes\n"
      "agent_tasks.json and a figure."};
  g2c::exercises::CommonOptions options;
  options.out = "results/19-agent";
  std::string model_name = "SmolLM2-135M-Instruct";
  std::int64_t limit = 0, max_steps = 5, max_tokens = 80;
  bool plan = false;
  std::vector<std::string> conditions = kConditions;
  g2c::exercises::add_common_options(app, options);
  app.add_option("--model", model_name, "The pretrained model that works the tasks");
  app.add_option("--limit", limit, "Only the first N tasks (0: all)").non_negative();
  app.add_option("--max-steps", max_steps, "Steps (backend calls) per task at most").positive();
  app.add_option("--max-tokens", max_tokens, "Reply length limit per step, in tokens").positive();
  app.add_flag("--plan", plan, "Let each agent plan first (one more backend call per task)");
  app.add_option("--conditions", conditions, "Which agents to run").one_of(kConditions);
  return g2c::run_cli(app, argc, argv, [&] {
    const auto device = g2c::exercises::prepare(options);
    if (!device.is_cpu()) {
      throw g2c::ValueError("19_agent_tasks runs SmolLM2 on the CPU; use --device cpu");
    }
    const fs::path root(g2c::pretraining::source_dir());
    const auto data = Json::parse(g2c::read_file(root / "exercises/19-agent/data/tasks.json"));

    // The notes: one chunk per fact.
    auto index = std::make_shared<g2c::rag::BM25Retriever>();
    std::map<std::string, std::string> facts;
    std::vector<g2c::rag::Chunk> chunks;
    for (const auto& fact : data.at("facts")) {
      const std::string id = fact.at("id"), text = fact.at("text");
      facts[id] = text;
      chunks.emplace_back(text, "notes/" + id, 0,
                          static_cast<std::int64_t>(g2c::tokenizer::utf8_length(text)));
    }
    index->add(chunks);
    std::vector<Task> tasks;
    for (const auto& item : data.at("tasks")) {
      if (limit > 0 && static_cast<std::int64_t>(tasks.size()) == limit) break;
      Task task{item.at("id"), item.at("question"), item.at("expression"), item.at("answer"), {}};
      for (const auto& id : item.at("facts")) task.fact_texts.push_back(facts.at(id));
      tasks.push_back(std::move(task));
    }

    auto model =
        std::make_shared<g2c::pretrained::PretrainedModel>(g2c::pretrained::load_pretrained_model(
            model_name, g2c::pretrained::LoadOptions().packed(true)));
    g2c::inference::PretrainedBackend free_backend(model);
    g2c::inference::PretrainedBackend constrained_backend(
        model, g2c::inference::PretrainedBackendOptions().with_tool_choice(
                   g2c::inference::ToolChoice::Required));
    const g2c::tools::ToolRegistry registry({search_notes(index), g2c::tools::make_calculator()});
    g2c::agent::NativeAgentOptions agent_options;
    agent_options.max_steps = max_steps;
    agent_options.plan = plan;
    agent_options.sampling =
        g2c::inference::CompletionOptions().with_max_new_tokens(max_tokens).with_temperature(0);

    Json results = Json::object();
    Json table = {{"outcome", kOutcomes}};
    for (const auto& condition : conditions) {
      Tally tally;
      g2c::Progress progress(condition, static_cast<std::int64_t>(tasks.size()), !options.quiet);
      for (const auto& task : tasks) {
        const auto start = std::chrono::steady_clock::now();
        ScriptedAgent script(task);
        const auto run =
            condition == "scripted"
                ? g2c::agent::Agent(script, registry, agent_options).run(task.question)
            : condition == "react"
                ? g2c::agent::Agent(free_backend, registry, agent_options).run(task.question)
                : g2c::agent::NativeAgent(
                      condition == "native" ? free_backend : constrained_backend, registry,
                      agent_options)
                      .run(task.question);
        tally.seconds +=
            std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
        const bool right =
            run.final_answer && g2c::exercises::last_number_is(*run.final_answer, task.answer);
        const auto outcome = outcome_of(run, right);
        ++tally.outcomes[outcome];
        tally.right.hits += right;
        ++tally.right.total;
        std::set<std::string> found;  // the needed facts some observation brought back
        bool calculated = false;
        auto steps = Json::array();
        for (const auto& step : run.steps) {
          tally.tokens += static_cast<double>(step.inference.completion_tokens.value_or(0));
          if (step.action && step.observation && !step.observation->is_error()) {
            for (const auto& text : task.fact_texts) {
              if (step.observation->output().find(text) != std::string::npos) found.insert(text);
            }
            calculated = calculated || step.action->tool() == "calculator";
          }
          steps.push_back(step_record(step));
        }
        tally.found_the_facts.hits += found.size() == task.fact_texts.size();
        ++tally.found_the_facts.total;
        tally.used_calculator.hits += calculated;
        ++tally.used_calculator.total;
        tally.steps += static_cast<double>(run.steps.size());
        if (right) tally.steps_when_right += static_cast<double>(run.steps.size());
        tally.rescued += run.metadata.value("n_rescued_calls", std::int64_t{0});
        tally.runs.push_back({{"task", task.id},
                              {"question", task.question},
                              {"answer", task.answer},
                              {"final_answer", run.final_answer ? Json(*run.final_answer) : Json()},
                              {"stopped", run.stopped_reason},
                              {"outcome", outcome},
                              {"steps", steps}});
        progress.update(tally.right.total);
      }
      progress.finish();
      const auto n = static_cast<double>(tasks.size());
      std::string classes;
      for (const auto& outcome : kOutcomes) {
        if (outcome != "right") classes += fmt::format("  {} {}", outcome, tally.outcomes[outcome]);
      }
      fmt::print(
          "{:<12} right {}  found the facts {}  used the calculator {}  {:.1f} steps, {:.1f} s "
          "per task\n{:<12}{}\n",
          condition, tally.right.to_string(), tally.found_the_facts.to_string(),
          tally.used_calculator.to_string(), tally.steps / n, tally.seconds / n, "", classes);
      Json outcomes = Json::object(), shares = Json::array();
      for (const auto& outcome : kOutcomes) {
        outcomes[outcome] = tally.outcomes[outcome];
        shares.push_back(static_cast<double>(tally.outcomes[outcome]) / n);
      }
      table[condition] = shares;
      results[condition] = {
          {"right", tally.right.to_json()},
          {"found_the_facts", tally.found_the_facts.to_json()},
          {"used_the_calculator", tally.used_calculator.to_json()},
          {"outcomes", outcomes},
          {"steps_per_task", tally.steps / n},
          {"steps_per_right_task",
           tally.right.hits ? Json(tally.steps_when_right / static_cast<double>(tally.right.hits))
                            : Json()},
          {"tokens_per_task", tally.tokens / n},
          {"seconds_per_task", tally.seconds / n},
          {"rescued_calls", tally.rescued},
          {"runs", tally.runs}};
    }

    auto out = g2c::exercises::run_metadata("19_agent_tasks", options, device);
    out["config"] = {{"model", model_name},      {"tasks", tasks.size()}, {"max_steps", max_steps},
                     {"max_tokens", max_tokens}, {"plan", plan},          {"temperature", 0}};
    out["conditions"] = results;
    out["outcome_table"] = table;
    using g2c::exercises::Figure;
    using g2c::exercises::Series;
    auto figure = Figure::bar("agent_outcomes.png",
                              fmt::format("{} as an agent on {} course tasks ({} steps at most)",
                                          model_name, tasks.size(), max_steps),
                              "", "share of tasks")
                      .rotate_labels(20);
    for (const auto& condition : conditions) {
      figure.add(Series(condition, "/outcome_table/outcome", "/outcome_table/" + condition));
    }
    out["figures"] = g2c::exercises::figures({figure});
    const auto path = g2c::exercises::save_result(options, "agent_tasks.json", out);
    g2c::exercises::plot_result(options, path);
  });
}

}  // namespace exercise_19_agent_tasks
