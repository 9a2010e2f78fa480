// Exercise 20 — the capstone: one assistant, four setups, and the bare model, on thirty cases.
// Module 20's regression gate (run_evaluation) and its bare-model baseline
// (run_capability_baseline) on SmolLM2-135M-Instruct, with and without retrieval and tools:
//   bare          the question alone, through backend.complete() (module 15's scoring)
//   assistant     the assistant with no tools and no retrieval: the native agent's one reply
//   +tools        the calculator, each call decoded under its schema (ToolChoice::Required); with
//                 --adapter (exercise 18b's fine-tuned model) the model writes its own calls
//   +rag          module 17's BM25 over the course's documents, the best two chunks in the prompt
//   +rag+tools    both
// Three kinds of case, ten each: arithmetic (module 18's kinds, drawn with --seed; right when the
// answer's last number is the result), questions about this course (module 17's first ten, with
// their aliases; contains_match) and general knowledge (exercises/20-capstone/data/general.json;
// contains_match). Every case runs in a fresh conversation. Writes capstone.json (every answer and
// why it failed) and a figure.
#include <chrono>
#include <filesystem>

#include <fmt/format.h>

#include "exercises/common/cli.h"
#include "exercises/common/figures.h"
#include "exercises/common/numbers.h"
#include "exercises/common/proportion.h"
#include "g2c/assistant/assistant.h"
#include "g2c/assistant/eval.h"
#include "g2c/core/atomic_file.h"
#include "g2c/core/errors.h"
#include "g2c/eval/match.h"
#include "g2c/inference/pretrained_backend.h"
#include "g2c/pretraining/build_info.h"
#include "g2c/rag/bm25.h"
#include "g2c/rag/course_documents.h"
#include "g2c/tools/tools.h"

namespace exercise_20_capstone {

namespace {

namespace fs = std::filesystem;
using g2c::assistant::EvalCase;
using g2c::exercises::Proportion;
using Json = nlohmann::json;

const std::vector<std::string> kConditions = {"bare", "assistant", "+tools", "+rag", "+rag+tools"};
const std::vector<std::string> kKinds = {"arithmetic", "course", "general"};

struct Case {
  std::string kind;
  EvalCase eval_case;
};

/// The thirty cases: arithmetic, course questions, general knowledge, ten of each.
std::vector<Case> make_cases(const fs::path& root, std::int64_t per_kind, std::uint64_t seed) {
  std::vector<Case> cases;
  const g2c::eval::MatchFn last_number_matches = [](const std::string& prediction,
                                                    const std::vector<std::string>& references) {
    return g2c::exercises::last_number(prediction) == references.front();
  };
  for (const auto& q : g2c::exercises::draw_arithmetic(per_kind, seed)) {
    cases.push_back({"arithmetic", EvalCase(q.kind + ":" + q.expression, q.text,
                                            {.expected_answer = {std::to_string(q.answer)},
                                             .matcher = last_number_matches,
                                             .matcher_name = "last_number"})});
  }
  const auto course =
      Json::parse(g2c::read_file(root / "exercises/17-rag/data/questions.json")).at("questions");
  for (std::int64_t i = 0; i < per_kind && i < static_cast<std::int64_t>(course.size()); ++i) {
    std::vector<std::string> references = {course[i].at("answer")};
    for (const auto& alias : course[i].at("aliases")) references.push_back(alias);
    cases.push_back({"course", EvalCase(course[i].at("id"), course[i].at("question"),
                                        {.expected_answer = references})});
  }
  const auto general =
      Json::parse(g2c::read_file(root / "exercises/20-capstone/data/general.json")).at("cases");
  for (std::int64_t i = 0; i < per_kind && i < static_cast<std::int64_t>(general.size()); ++i) {
    cases.push_back({"general", EvalCase(general[i].at("name"), general[i].at("question"),
                                         {.expected_answer = general[i].at("answer")})});
  }
  return cases;
}

}  // namespace

int main(int argc, char** argv) {
  g2c::CommandLine app{
      "Module 20: the capstone assistant on SmolLM2-135M-Instruct — bare, as an assistant, with\n"
      "the calculator, with retrieval over the course's documents, and with both — on thirty\n"
      "cases (arithmetic, questions about the course, general knowledge): pass rates with 95%\n"
      "intervals by kind. Writes capstone.json and a figure."};
  g2c::exercises::CommonOptions options;
  options.out = "results/20-capstone";
  std::string model_name = "SmolLM2-135M-Instruct";
  std::optional<std::string> adapter;
  std::int64_t per_kind = 10, max_steps = 3, max_tokens = 64, rag_k = 2;
  std::vector<std::string> conditions = kConditions;
  g2c::exercises::add_common_options(app, options);
  app.add_option("--model", model_name, "The pretrained model behind the assistant");
  app.add_option("--adapter", adapter,
                 "A LoRA adapter file merged into the model (exercise 18b_tool_tuning's); its "
                 "tool setups then let the model write its own calls instead of forcing one");
  app.add_option("--per-kind", per_kind, "Cases of each kind (at most 10)").range(1, 10);
  app.add_option("--max-steps", max_steps, "Agent steps per case at most").positive();
  app.add_option("--max-tokens", max_tokens, "Reply length limit per step, in tokens").positive();
  app.add_option("--rag-k", rag_k, "Chunks retrieved per case").positive();
  app.add_option("--conditions", conditions, "Which setups to run").one_of(kConditions);
  return g2c::run_cli(app, argc, argv, [&] {
    const auto device = g2c::exercises::prepare(options);
    if (!device.is_cpu()) {
      throw g2c::ValueError("20_capstone runs SmolLM2 on the CPU; use --device cpu");
    }
    const fs::path root(g2c::pretraining::source_dir());
    const auto cases = make_cases(root, per_kind, options.seed);
    std::vector<EvalCase> eval_cases;
    for (const auto& c : cases) eval_cases.push_back(c.eval_case);

    auto model =
        std::make_shared<g2c::pretrained::PretrainedModel>(g2c::pretrained::load_pretrained_model(
            model_name, g2c::pretrained::LoadOptions().packed(true),
            adapter ? std::optional<fs::path>(*adapter) : std::nullopt));
    if (adapter)
      fmt::print("model: {} ({} with the adapter {})\n", model->name, model_name, *adapter);
    // The base calls no tool unless made to; a model fine-tuned to call writes its own calls.
    const auto tool_choice =
        adapter ? g2c::inference::ToolChoice::Auto : g2c::inference::ToolChoice::Required;
    g2c::inference::PretrainedBackend free_backend(model);
    g2c::inference::PretrainedBackend tools_backend(
        model, g2c::inference::PretrainedBackendOptions().with_tool_choice(tool_choice));
    g2c::rag::BM25Retriever index;
    index.add(g2c::rag::course_document_chunks(root));

    Json results = Json::object();
    Json table = {{"kind", kKinds}};
    table["kind"].push_back("all");
    for (const auto& condition : conditions) {
      if (!options.quiet) {
        fmt::print(stderr, "{}: {} cases...\n", condition, cases.size());  // each takes seconds
      }
      const auto start = std::chrono::steady_clock::now();
      std::vector<bool> passed;
      std::vector<std::optional<std::string>> answers, reasons;
      std::vector<std::int64_t> tool_calls;
      if (condition == "bare") {
        const auto report = g2c::assistant::run_capability_baseline(free_backend, eval_cases,
                                                                    {.max_new_tokens = max_tokens});
        for (const auto& result : report.results) {
          passed.push_back(result.correct);
          answers.emplace_back(result.prediction);
          reasons.emplace_back(result.correct ? std::nullopt
                                              : std::optional<std::string>("wrong answer"));
          tool_calls.push_back(0);
        }
      } else {
        const bool tools = condition.find("tools") != std::string::npos;
        const bool rag = condition.find("rag") != std::string::npos;
        g2c::assistant::AssistantOptions setup;
        setup.config.max_steps = max_steps;
        setup.config.plan = false;
        setup.config.max_new_tokens = max_tokens;
        setup.config.temperature = 0;
        setup.config.rag_enabled = rag;
        setup.config.rag_k = rag_k;
        setup.retriever = rag ? &index : nullptr;
        g2c::assistant::Assistant assistant(
            tools ? tools_backend : free_backend,
            tools ? g2c::tools::ToolRegistry({g2c::tools::make_calculator()})
                  : g2c::tools::ToolRegistry(),
            setup);
        const auto report = g2c::assistant::run_evaluation(assistant, eval_cases);
        for (const auto& result : report.results) {
          passed.push_back(result.passed);
          answers.push_back(result.final_answer);
          reasons.push_back(result.failure_reason);
          tool_calls.push_back(result.turn.metadata.value("n_tool_calls", std::int64_t{0}));
        }
      }
      const double seconds =
          std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();

      std::map<std::string, Proportion> by_kind;
      Proportion all;
      Json runs = Json::array();
      std::int64_t with_calls = 0;
      for (std::size_t i = 0; i < cases.size(); ++i) {
        by_kind[cases[i].kind].hits += passed[i];
        ++by_kind[cases[i].kind].total;
        all.hits += passed[i];
        ++all.total;
        with_calls += tool_calls[i] > 0;
        runs.push_back({{"kind", cases[i].kind},
                        {"case", cases[i].eval_case.name()},
                        {"question", cases[i].eval_case.question()},
                        {"expected", cases[i].eval_case.expected_answer()},
                        {"answer", answers[i] ? Json(*answers[i]) : Json()},
                        {"passed", passed[i]},
                        {"failure", reasons[i] ? Json(*reasons[i]) : Json()},
                        {"tool_calls", tool_calls[i]}});
      }
      Json kinds = Json::object(), shares = Json::array();
      std::string line;
      for (const auto& kind : kKinds) {
        kinds[kind] = by_kind[kind].to_json();
        shares.push_back(by_kind[kind].value());
        line += fmt::format("  {} {}", kind, by_kind[kind].to_string());
      }
      shares.push_back(all.value());
      table[condition] = shares;
      fmt::print("{:<11} all {}{}  {:.1f} s per case\n", condition, all.to_string(), line,
                 seconds / static_cast<double>(cases.size()));
      results[condition] = {{"passed", all.to_json()},
                            {"by_kind", kinds},
                            {"cases_with_tool_calls", with_calls},
                            {"seconds_per_case", seconds / static_cast<double>(cases.size())},
                            {"runs", runs}};
    }

    auto out = g2c::exercises::run_metadata("20_capstone", options, device);
    out["config"] = {{"model", model->name},
                     {"adapter", adapter ? Json(*adapter) : Json()},
                     {"tool_choice", adapter ? "auto" : "required"},
                     {"per_kind", per_kind},
                     {"max_steps", max_steps},
                     {"max_tokens", max_tokens},
                     {"rag_k", rag_k},
                     {"temperature", 0},
                     {"seed", options.seed}};
    out["conditions"] = results;
    out["pass_table"] = table;
    using g2c::exercises::Figure;
    using g2c::exercises::Series;
    auto figure = Figure::bar(
        "capstone.png",
        fmt::format("{} with and without the scaffolding ({} cases)", model->name, cases.size()),
        "", "cases passed");
    for (const auto& condition : conditions) {
      figure.add(Series(condition, "/pass_table/kind", "/pass_table/" + condition));
    }
    out["figures"] = g2c::exercises::figures({figure});
    const auto path = g2c::exercises::save_result(options, "capstone.json", out);
    g2c::exercises::plot_result(options, path);
  });
}

}  // namespace exercise_20_capstone
