// Exercise 15 — evaluation of the course's models: the base ShakespeareLM, its -SFT and its -DPO
// (and any --model given), on held-out items they never trained on. Speaker attribution as
// four-way multiple choice scored by your continuation log-probabilities (raw and
// length-normalised, with the confidence's calibration: ECE and a reliability diagram), and both
// tasks as generation scored by your matchers. Each accuracy comes with its interval, and each
// tuned model is compared with the model it was tuned from on the same items, so the report says
// whether SFT and DPO changed anything. Writes artifacts/evals/<name>/{runs.jsonl, summary.md,
// failure_cases.md}, eval.json and figures.
#include <algorithm>
#include <chrono>
#include <cmath>
#include <map>

#include <fmt/format.h>

#include "exercises/15-eval/evals.h"
#include "exercises/common/cli.h"
#include "exercises/common/data.h"
#include "exercises/common/figures.h"
#include "exercises/common/tasks.h"
#include "g2c/core/errors.h"
#include "g2c/eval/eval.h"
#include "g2c/pretraining/model_artifact.h"
#include "g2c/sampling/text_generation.h"
#include "g2c/sft/chat.h"
#include "g2c/sft/course_encoder.h"

namespace exercise_15_eval {

namespace {

namespace fs = std::filesystem;
using g2c::exercises::ModelEval;

struct Config {
  std::string base = "ShakespeareLM-1M";  // evaluates it and the models tuned from it
  std::vector<std::string> models;        // evaluated besides (or, with --only, instead)
  bool only = false;
  std::string name;                     // default: <base>-tasks
  std::int64_t mc_items = 400;          // held-out speaker items as multiple choice
  std::int64_t generation_items = 120;  // held-out items per task, answered by generation
  std::int64_t max_new_tokens = 40;
};

// The reports' metadata carry the item itself, so runs.jsonl and the failure cases can show it.
void attach_items(g2c::eval::EvalReport& report, const std::vector<nlohmann::json>& items) {
  for (std::size_t i = 0; i < report.results.size(); ++i) {
    for (const auto& [key, value] : items[i].items()) report.results[i].metadata[key] = value;
  }
}

}  // namespace

int main(int argc, char** argv) {
  g2c::CommandLine app{
      "Module 15: evaluation. Scores the base model, its -SFT and its -DPO on held-out speaker\n"
      "attribution (four-way multiple choice: raw and length-normalised log-probabilities,\n"
      "calibration) and on speaker and completion replies (generation), with intervals and the\n"
      "change each tuning made. Writes artifacts/evals/<name>/{runs.jsonl, summary.md,\n"
      "failure_cases.md}, eval.json and figures."};
  g2c::exercises::CommonOptions options;
  options.out = "results/15-eval";
  Config config;
  g2c::exercises::add_common_options(app, options);
  app.add_option("--base", config.base,
                 "Base model: evaluates it and every model tuned from it (its -SFT, their -DPO), "
                 "as the manifests' base_artifact records them");
  app.add_option("--model", config.models, "Another model to evaluate (repeatable)").no_default();
  app.add_flag("--only", config.only, "Evaluate only the --model models");
  app.add_option("--name", config.name, "Name of the eval artifact (default: <base>-tasks)")
      .no_default();
  app.add_option("--mc-items", config.mc_items, "Held-out speaker items as multiple choice")
      .positive();
  app.add_option("--generation-items", config.generation_items,
                 "Held-out items per task answered by generation")
      .positive();
  app.add_option("--max-new-tokens", config.max_new_tokens, "Reply length limit").positive();
  return g2c::run_cli(app, argc, argv, [&] {
    const auto device = g2c::exercises::prepare(options);
    const auto start = std::chrono::steady_clock::now();
    if (config.name.empty()) config.name = config.base + "-tasks";

    // Which models: the base and every model tuned from it, generation by generation, as the
    // manifests' base_artifact records them (13_sft's model names the base, 14_dpo's names the
    // SFT model), then any --model.
    std::vector<std::string> names;
    if (!config.only) {
      if (fs::exists(g2c::pretraining::models_root() / config.base)) {
        std::vector<std::string> generation{config.base};
        while (!generation.empty()) {
          std::vector<std::string> next;
          for (const auto& name : generation) {
            if (std::find(names.begin(), names.end(), name) != names.end()) continue;
            names.push_back(name);
            for (auto& child : g2c::exercises::tuned_from(name)) next.push_back(std::move(child));
          }
          generation = std::move(next);
        }
        if (names.size() == 1) {
          fmt::print(
              "note: nothing in {} was tuned from {}; exercises 13_sft and 14_dpo make its "
              "-SFT and -DPO models\n",
              g2c::pretraining::models_root().string(), config.base);
        }
      } else {
        fmt::print("note: no {} in {}; exercise 10_pretrain makes it\n", config.base,
                   g2c::pretraining::models_root().string());
      }
    }
    for (const auto& model : config.models) {
      if (std::find(names.begin(), names.end(), model) == names.end()) names.push_back(model);
    }
    if (names.empty()) {
      throw g2c::ValueError(
          "no model to evaluate: train one (10_pretrain, 13_sft, 14_dpo) or name one with --model");
    }

    // The held-out items: speaker attribution as multiple choice, both tasks as generation.
    const g2c::exercises::TaskDataOptions task_options{.seed = options.seed};
    // The items 13_sft wrote (the same seed and corpus), or built and written now.
    const auto tasks =
        g2c::exercises::stored_task_data(g2c::exercises::load_tinyshakespeare(), task_options).data;
    auto val_speaker = g2c::exercises::items_of(tasks.val, "speaker");
    auto mc_items = val_speaker;
    mc_items.resize(std::min<std::size_t>(mc_items.size(), config.mc_items));
    auto gen_speaker = val_speaker;
    gen_speaker.resize(std::min<std::size_t>(gen_speaker.size(), config.generation_items));
    auto gen_completion = g2c::exercises::items_of(tasks.val, "completion");
    gen_completion.resize(std::min<std::size_t>(gen_completion.size(), config.generation_items));
    const auto mc_examples =
        g2c::exercises::speaker_choices(mc_items, tasks.speakers, options.seed);
    const auto speaker_examples = g2c::exercises::generation_examples(gen_speaker);
    const auto completion_examples = g2c::exercises::generation_examples(gen_completion);
    const auto item_info = [](const std::vector<g2c::exercises::TaskItem>& items) {
      std::vector<nlohmann::json> info;
      for (const auto& item : items)
        info.push_back({{"question", item.prompt}, {"answer", item.answer}});
      return info;
    };
    const auto mc_info = item_info(mc_items), speaker_info = item_info(gen_speaker),
               completion_info = item_info(gen_completion);
    fmt::print(
        "held-out items: {} speaker questions with 4 choices (chance 25%), {} speaker and {} "
        "completion questions answered by generation\n",
        mc_examples.size(), speaker_examples.size(), completion_examples.size());

    std::vector<ModelEval> evaluated;
    for (const auto& name : names) {
      const auto model_start = std::chrono::steady_clock::now();
      auto text_model = g2c::sampling::load_text_model(name, device);
      auto& model = *text_model.artifact.model;
      const g2c::sft::CourseEncoder encoder(text_model.tokenizer);
      ModelEval eval;
      eval.name = text_model.artifact.summary.name;
      eval.manifest = text_model.artifact.manifest;
      eval.manifest.erase("history");  // the summary needs the lineage, not the curves

      auto raw = g2c::eval::run_multiple_choice_eval(
          model, encoder, mc_examples,
          g2c::eval::MultipleChoiceEvalOptions().task_name("speaker choice (raw)"));
      auto normalized =
          g2c::eval::run_multiple_choice_eval(model, encoder, mc_examples,
                                              g2c::eval::MultipleChoiceEvalOptions()
                                                  .task_name("speaker choice (per token)")
                                                  .length_normalize(true));
      // Replies as module 13 scores them: greedy, until <|end|> or the token budget. All of them
      // are generated up front in batches (chat_replies) and the evaluation looks them up.
      std::vector<std::string> questions;
      for (const auto* examples : {&speaker_examples, &completion_examples}) {
        for (const auto& example : *examples) questions.push_back(example.prompt());
      }
      std::vector<std::vector<g2c::sft::Message>> conversations;
      for (const auto& question : questions) conversations.push_back({{"user", question}});
      const auto generated = g2c::sft::chat_replies(
          model, text_model.tokenizer, conversations,
          g2c::sft::ChatReplyOptions().max_new_tokens(config.max_new_tokens));
      std::map<std::string, std::string> reply_to;
      for (std::size_t i = 0; i < questions.size(); ++i) reply_to[questions[i]] = generated[i].text;
      const g2c::eval::GenerateFn reply = [&](const std::string& question) {
        return reply_to.at(question);
      };
      auto speaker =
          g2c::eval::run_generation_eval(reply, speaker_examples, g2c::eval::normalized_match,
                                         "speaker reply", "normalized_match");
      auto completion =
          g2c::eval::run_generation_eval(reply, completion_examples, g2c::eval::normalized_match,
                                         "completion reply", "normalized_match");
      attach_items(raw, mc_info);
      attach_items(normalized, mc_info);
      attach_items(speaker, speaker_info);
      attach_items(completion, completion_info);
      for (auto& result : completion.results) {
        const bool repetitive = g2c::exercises::repeats_one_word(result.prediction);
        result.metadata["repeats_one_word"] = repetitive;
        eval.repetitive.push_back(repetitive);
      }

      std::vector<double> confidences;
      std::vector<bool> correct;
      for (const auto& result : raw.results) {
        confidences.push_back(result.confidence.value_or(0.0));
        correct.push_back(result.correct);
      }
      eval.reliability = g2c::eval::reliability_curve(confidences, correct, 10);
      eval.reports = {std::move(raw), std::move(normalized), std::move(speaker),
                      std::move(completion)};
      eval.seconds =
          std::chrono::duration<double>(std::chrono::steady_clock::now() - model_start).count();
      fmt::print("{}  ({:.0f} s)\n", eval.name, eval.seconds);
      const auto repetitive = std::count(eval.repetitive.begin(), eval.repetitive.end(), true);
      for (const auto& report : eval.reports) {
        const auto accuracy = g2c::exercises::accuracy_of(report);
        fmt::print("  {:<28} {}{}\n", report.task_name, accuracy.to_string(),
                   report.ece ? fmt::format("   ECE {:.3f}", *report.ece) : "");
      }
      fmt::print("  {:<28} {} of {}\n", "completion replies repeating one word", repetitive,
                 eval.repetitive.size());
      std::fflush(stdout);
      evaluated.push_back(std::move(eval));
    }

    const std::vector<std::string> notes = {
        fmt::format("Items from the held-out chunks of TinyShakespeare (every {}th chunk of {} "
                    "characters; seed {}), never seen in training by the course's tasks.",
                    task_options.held_out_every, task_options.chunk_chars, options.seed),
        "speaker choice: the line's speaker among four of the task's speakers (chance 25 %), "
        "chosen by the summed log-probability of each name after the chat prompt (raw) or by its "
        "mean per token; confidence = softmax over the four scores.",
        "speaker reply / completion reply: a greedy reply through the chat template, compared "
        "with the answer by normalized_match (case, punctuation and spacing ignored).",
    };
    const auto folder = g2c::exercises::write_eval_artifact(config.name, evaluated, notes);
    fmt::print("wrote {}/{{runs.jsonl, summary.md, failure_cases.md}}\n", folder.string());

    // eval.json: the numbers, the changes along the lineage and the figures.
    const double seconds =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    nlohmann::json result = g2c::exercises::run_metadata("15_eval", options, device);
    result["config"] = {{"base", config.base},
                        {"models", names},
                        {"name", config.name},
                        {"mc_items", config.mc_items},
                        {"generation_items", config.generation_items},
                        {"max_new_tokens", config.max_new_tokens}};
    result["artifact"] = folder.string();
    result["chance"] = 0.25;
    nlohmann::json models = nlohmann::json::array(), labels = nlohmann::json::array();
    std::vector<nlohmann::json> accuracy_by_task(evaluated.front().reports.size(),
                                                 nlohmann::json::array());
    using g2c::exercises::Figure;
    using g2c::exercises::Series;
    auto reliability =
        Figure::line("eval_reliability.png",
                     "Reliability of the multiple-choice confidence (raw scores)",
                     "confidence (mean of the bin)", "accuracy in the bin")
            .aspect("equal")
            .add(Series("perfectly calibrated", {0.0, 1.0}, {0.0, 1.0}).style("--").color("gray"));
    for (const auto& eval : evaluated) {
      nlohmann::json tasks_json = nlohmann::json::object();
      for (std::size_t t = 0; t < eval.reports.size(); ++t) {
        const auto& report = eval.reports[t];
        tasks_json[report.task_name] = {
            {"accuracy", g2c::exercises::accuracy_of(report).to_json()},
            {"ece", report.ece ? nlohmann::json(*report.ece) : nlohmann::json(nullptr)},
            {"mean_confidence", report.mean_confidence ? nlohmann::json(*report.mean_confidence)
                                                       : nlohmann::json(nullptr)}};
        accuracy_by_task[t].push_back(g2c::exercises::accuracy_of(report).value());
      }
      // The reliability diagram leaves out empty bins (their accuracy is undefined).
      nlohmann::json bins_x = nlohmann::json::array(), bins_y = nlohmann::json::array(),
                     bins_n = nlohmann::json::array();
      for (std::size_t b = 0; b < eval.reliability.bin_count.size(); ++b) {
        if (eval.reliability.bin_count[b] == 0) continue;
        bins_x.push_back(eval.reliability.bin_confidence[b]);
        bins_y.push_back(eval.reliability.bin_accuracy[b]);
        bins_n.push_back(eval.reliability.bin_count[b]);
      }
      reliability.add(Series(eval.name, bins_x, bins_y).marker("o"));
      nlohmann::json changes = nlohmann::json::object();
      const auto parent_name = g2c::exercises::base_artifact_of(eval.manifest);
      for (const auto& parent : evaluated) {
        if (parent.name != parent_name) continue;
        for (std::size_t t = 0; t < eval.reports.size(); ++t) {
          changes[eval.reports[t].task_name] =
              g2c::exercises::paired_change(parent.reports[t], eval.reports[t]).to_json();
        }
      }
      g2c::exercises::Proportion repetitive;
      repetitive.total = static_cast<std::int64_t>(eval.repetitive.size());
      for (const bool r : eval.repetitive) repetitive.hits += r;
      for (const auto& parent : evaluated) {
        if (parent.name == parent_name) {
          changes["repetitive completion replies"] =
              g2c::exercises::paired_change(parent.repetitive, eval.repetitive).to_json();
        }
      }
      models.push_back(
          {{"name", eval.name},
           {"repetitive_completion_replies", repetitive.to_json()},
           {"base_artifact",
            parent_name.empty() ? nlohmann::json(nullptr) : nlohmann::json(parent_name)},
           {"tasks", tasks_json},
           {"change_from_base_artifact", changes},
           {"reliability", {{"confidence", bins_x}, {"accuracy", bins_y}, {"count", bins_n}}},
           {"seconds", eval.seconds}});
      labels.push_back(eval.name);
    }
    result["models"] = models;
    result["bars"] = {{"labels", labels}};
    auto accuracy =
        Figure::bar("eval_accuracy.png",
                    "Held-out accuracy (chance on the choice tasks: 25%; intervals in summary.md)",
                    "", "accuracy");
    for (std::size_t t = 0; t < accuracy_by_task.size(); ++t) {
      const auto task = evaluated.front().reports[t].task_name;
      result["bars"][fmt::format("task{}", t)] = accuracy_by_task[t];
      accuracy.add(Series(task, "/bars/labels", fmt::format("/bars/task{}", t)));
    }
    result["seconds"] = seconds;
    result["figures"] = g2c::exercises::figures({accuracy, reliability});
    const auto path = g2c::exercises::save_result(options, "eval.json", result);
    g2c::exercises::plot_result(options, path);
    fmt::print("{:.0f} s in all\n", seconds);
  });
}

}  // namespace exercise_15_eval
