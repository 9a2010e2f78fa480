// Exercise 13 — supervised fine-tuning of a pretrained ShakespeareLM on tasks made from the corpus.
// The base artifact (module 10's ShakespeareLM-1M unless --base names another) is scored on
// held-out speaker attribution and line completion, fine-tuned by your SFTTrainer (module 10's
// loop with your chat template, collation and masked loss), and scored again. Two comparisons
// show what the lesson claims: the loss mask (the reply only, against every token) and the amount
// of data (a sweep over subsets). The fine-tuned model is saved as <base>-SFT with its lineage.
#include <algorithm>
#include <chrono>
#include <cmath>
#include <numeric>
#include <optional>
#include <random>

#include <fmt/format.h>

#include "exercises/13-sft/sft_runs.h"
#include "exercises/common/cli.h"
#include "exercises/common/figures.h"
#include "exercises/common/tasks.h"
#include "g2c/core/errors.h"
#include "g2c/pretraining/model_artifact.h"
#include "g2c/sampling/text_generation.h"
#include "g2c/sft/chat.h"
#include "g2c/sft/sft.h"

namespace exercise_13_sft {

namespace {

namespace fs = std::filesystem;
using g2c::sft::SFTExample;

struct Config {
  g2c::exercises::ArtifactOptions artifact;  // name default: <base>-SFT
  double lr = 1e-3;
  std::vector<std::int64_t> sweep = {500};  // training examples of the data-size sweep
  bool ablation = true;
};

}  // namespace

int main(int argc, char** argv) {
  g2c::CommandLine app{
      "Module 13: supervised fine-tuning. Scores a pretrained model on held-out speaker\n"
      "attribution and line completion (tasks made from TinyShakespeare), fine-tunes it with your\n"
      "SFTTrainer, scores it again, and compares the loss mask and the amount of data. Saves the\n"
      "fine-tuned model as <base>-SFT. Writes sft.json and figures."};
  g2c::exercises::CommonOptions options;
  options.out = "results/13-sft";
  options.steps = 250;
  Config config;
  g2c::exercises::SFTRunOptions run;
  g2c::exercises::add_common_options(app, options);
  g2c::exercises::add_sft_run_options(app, run);
  g2c::exercises::add_artifact_options(app, config.artifact,
                                       {.name = "Name of the saved artifact (default: <base>-SFT)",
                                        .dir = "Folder of the saved artifact (default: "
                                               "artifacts/models/<name>)",
                                        .no_save = "Do not save the fine-tuned model"});
  app.add_option("--lr", config.lr, "Peak learning rate");
  app.add_option("--sweep", config.sweep,
                 "Training-set sizes of the data-size sweep (the full set is the main run); "
                 "--sweep 0 skips the sweep (a size not below the set's is skipped too)");
  app.add_flag("!--no-ablation", config.ablation, "Skip the loss-mask ablation");
  return g2c::run_cli(app, argc, argv, [&] {
    const auto device = g2c::exercises::prepare(options);
    const auto start = std::chrono::steady_clock::now();
    auto text_model = g2c::sampling::load_text_model(run.base, device);
    const auto& tokenizer = text_model.tokenizer;
    const auto base_name = text_model.artifact.summary.name;
    const auto model_options = text_model.artifact.model->options;
    const std::int64_t vocab = model_options.vocab_size();
    const std::int64_t context = model_options.max_seq_len();
    if (config.artifact.name.empty()) config.artifact.name = base_name + "-SFT";

    // The task data, rendered with your chat template at the model's vocabulary size.
    const auto data = g2c::exercises::prepare_sft_data(tokenizer, vocab, context, options.seed,
                                                       run.chat_repeat, run.eval_items);
    const auto& examples = data.examples;
    // One shuffled order for every run, so the sweep's subsets are nested random samples.
    std::vector<std::size_t> order(examples.size());
    std::iota(order.begin(), order.end(), 0);
    std::mt19937_64 rng(options.seed);
    for (std::size_t i = order.size(); i > 1; --i) std::swap(order[i - 1], order[rng() % i]);
    const auto subset = [&](std::size_t count) {
      std::vector<SFTExample> out;
      for (std::size_t i = 0; i < std::min(count, order.size()); ++i) {
        out.push_back(examples[order[i]]);
      }
      return out;
    };
    const auto score = [&](g2c::transformer::TransformerLM& model) {
      return g2c::exercises::score_model(model, tokenizer, data, run.max_new_tokens);
    };
    const auto trainer_options =
        g2c::exercises::sft_trainer_options(run, options, context, config.lr, device);
    // One SFT run from the base: your SFTTrainer through module 10's loop, the same batches for
    // every run (one seed).
    const auto fine_tune = [&](const std::string& label, std::vector<SFTExample> train_examples,
                               g2c::transformer::TransformerLM& model) {
      return g2c::exercises::fine_tune(label, std::move(train_examples), model, trainer_options,
                                       !options.quiet)
          .history;
    };
    const auto report = g2c::exercises::print_scores;
    const g2c::exercises::BaseModelCopies load_base(run.base, device, run.fused);

    std::fflush(stdout);  // the lines above before the progress lines, in a log file too
    auto base_model = load_base();
    const auto before = score(base_model);
    report("base", before);

    auto model = load_base();
    const auto run_start = std::chrono::steady_clock::now();
    const auto history = fine_tune("SFT (mask: replies)", examples, model);
    const double train_seconds =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - run_start).count();
    const auto after = score(model);
    report("SFT (mask: replies)", after);

    // Samples of the chat set's kind: the reply stops where the model writes <|end|>.
    nlohmann::json samples = nlohmann::json::array();
    for (const auto* prompt :
         {"Greet me as a courtier would.", "Bid me good night.", "What news from the court?",
          "Who says \"My lord, the king is come.\"?", "Continue: Now is the winter of"}) {
      const auto reply_options = g2c::sft::ChatReplyOptions().max_new_tokens(run.max_new_tokens);
      const auto tuned = g2c::sft::chat_reply(*model, tokenizer, {{"user", prompt}}, reply_options);
      const auto untuned =
          g2c::sft::chat_reply(*base_model, tokenizer, {{"user", prompt}}, reply_options);
      const std::string reply = tuned.text, base_reply = untuned.text;
      const bool stopped = tuned.stopped, base_stopped = untuned.stopped;
      samples.push_back({{"prompt", prompt},
                         {"sft_reply", reply},
                         {"sft_stopped", stopped},
                         {"base_reply", base_reply},
                         {"base_stopped", base_stopped}});
      fmt::print("  {} -> {}{}\n", prompt, g2c::sampling::for_terminal(reply),
                 stopped ? "  <|end|>" : "  (no end marker)");
    }

    std::optional<g2c::exercises::Scores> ablation;
    nlohmann::json ablation_history = nullptr;
    if (config.ablation) {
      auto ablated = load_base();
      ablation_history = fine_tune("SFT (mask: every token)", data.every_token, ablated).to_json();
      ablation = score(ablated);
      report("SFT (mask: every token)", *ablation);
    }

    nlohmann::json sweep = nlohmann::json::array();
    for (const auto size : config.sweep) {
      if (size <= 0 || static_cast<std::size_t>(size) >= examples.size()) continue;
      auto swept = load_base();
      fine_tune(fmt::format("SFT on {} examples", size), subset(size), swept);
      const auto s = score(swept);
      report(fmt::format("SFT on {} examples", size), s);
      sweep.push_back({{"examples", size}, {"scores", s.to_json()}});
    }
    sweep.push_back({{"examples", examples.size()}, {"scores", after.to_json()}});

    std::optional<fs::path> saved;
    if (config.artifact.save) {
      g2c::pretraining::ModelArtifactInfo info;
      info.name = config.artifact.name;
      info.module = "module-13";
      info.source = "shakespeare-tasks";
      info.tokenizer_artifact = text_model.artifact.summary.tokenizer_artifact;
      info.training_config = g2c::pretraining::trainer_options_json(trainer_options.trainer());
      info.training_config.update({{"max_seq_len", trainer_options.max_seq_len()},
                                   {"loss", "masked_cross_entropy"},
                                   {"examples", examples.size()},
                                   {"dataset", data.tasks.manifest}});
      info.seed = options.seed;
      info.history = history;
      info.base_artifact = base_name;
      info.notes =
          "supervised fine-tuning on speaker attribution, line completion and the "
          "hand-written chat set (exercise 13_sft)";
      saved = g2c::pretraining::save_model_artifact(
          info, model, config.artifact.folder_for(config.artifact.name));
      fmt::print("saved {} (base_artifact {})\n", saved->string(), base_name);
    }

    const double seconds =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    nlohmann::json result = g2c::exercises::run_metadata("13_sft", options, device);
    result["config"] = {{"base", run.base},
                        {"name", config.artifact.name},
                        {"batch_size", run.batch_size},
                        {"lr", config.lr},
                        {"warmup", run.warmup},
                        {"steps", options.steps},
                        {"eval_items", run.eval_items},
                        {"max_new_tokens", run.max_new_tokens},
                        {"fused", run.fused},
                        {"context", context},
                        {"vocab_size", vocab}};
    result["dataset"] = data.to_json();
    result["examples"] = {
        {"used", examples.size()}, {"too_long", data.too_long}, {"chat_repeat", run.chat_repeat}};
    result["before"] = before.to_json();
    result["after"] = after.to_json();
    result["ablation"] = ablation ? ablation->to_json() : nlohmann::json(nullptr);
    result["sweep"] = sweep;
    result["samples"] = samples;
    result["history"] = history.to_json();
    result["ablation_history"] = ablation_history;
    result["train_seconds"] = train_seconds;
    result["seconds"] = seconds;
    result["artifact"] = saved ? nlohmann::json(saved->string()) : nlohmann::json(nullptr);
    // Accuracy bars per model, and the sweep.
    nlohmann::json labels = {"base", "SFT"},
                   speaker = {before.speaker.exact.value(), after.speaker.exact.value()},
                   completion = {before.completion.first_word.value(),
                                 after.completion.first_word.value()},
                   stops = {before.speaker.stopped.value(), after.speaker.stopped.value()};
    if (ablation) {
      labels.push_back("SFT, mask on every token");
      speaker.push_back(ablation->speaker.exact.value());
      completion.push_back(ablation->completion.first_word.value());
      stops.push_back(ablation->speaker.stopped.value());
    }
    result["bars"] = {
        {"labels", labels}, {"speaker", speaker}, {"completion", completion}, {"stops", stops}};
    nlohmann::json sweep_x = nlohmann::json::array(), sweep_speaker = nlohmann::json::array(),
                   sweep_completion = nlohmann::json::array();
    for (const auto& entry : sweep) {
      sweep_x.push_back(entry["examples"]);
      sweep_speaker.push_back(entry["scores"]["speaker"]["exact"]["value"]);
      sweep_completion.push_back(entry["scores"]["completion"]["first_word"]["value"]);
    }
    result["sweep_series"] = {
        {"examples", sweep_x}, {"speaker", sweep_speaker}, {"completion", sweep_completion}};
    using g2c::exercises::Figure;
    using g2c::exercises::Series;
    auto loss =
        Figure::line("sft_loss.png", "SFT training loss (masked cross-entropy)", "step", "loss")
            .add(Series("mask: replies", "/history/step", "/history/train_loss"));
    if (ablation_history.is_object()) {
      loss.add(
          Series("mask: every token", "/ablation_history/step", "/ablation_history/train_loss"));
    }
    result["figures"] = g2c::exercises::figures(
        {Figure::bar("sft_accuracy.png",
                     fmt::format("{} before and after SFT (held-out, 95% intervals in sft.json)",
                                 base_name),
                     "", "accuracy")
             .add(Series("speaker (exact)", "/bars/labels", "/bars/speaker"))
             .add(Series("completion (first word)", "/bars/labels", "/bars/completion"))
             .add(Series("replies ending with <|end|>", "/bars/labels", "/bars/stops")),
         loss,
         Figure::line("sft_data_sweep.png", "Held-out accuracy against SFT examples",
                      "training examples", "accuracy")
             .logx()
             .add(Series("speaker (exact)", "/sweep_series/examples", "/sweep_series/speaker")
                      .marker("o"))
             .add(Series("completion (first word)", "/sweep_series/examples",
                         "/sweep_series/completion")
                      .marker("o"))});
    const auto path = g2c::exercises::save_result(options, "sft.json", result);
    g2c::exercises::plot_result(options, path);
    fmt::print("{:.0f} s in all ({:.0f} s for the main SFT run)\n", seconds, train_seconds);
  });
}

}  // namespace exercise_13_sft
