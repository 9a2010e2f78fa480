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

#include "exercises/common/cli.h"
#include "exercises/common/data.h"
#include "exercises/common/tasks.h"
#include "g2c/core/errors.h"
#include "g2c/core/progress.h"
#include "g2c/pretraining/model_artifact.h"
#include "g2c/sampling/text_generation.h"
#include "g2c/sft/course_encoder.h"
#include "g2c/sft/sft.h"
#include "g2c/transformer/fused.h"

namespace {

namespace fs = std::filesystem;
using g2c::exercises::TaskItem;
using g2c::exercises::TaskScore;
using g2c::sft::SFTExample;

struct Config {
  std::string base = "ShakespeareLM-1M";
  std::string name;  // default: <base>-SFT
  std::optional<fs::path> artifact_dir;
  bool save = true;
  std::int64_t batch_size = 16;
  double lr = 1e-3;
  std::int64_t warmup = 20;
  std::int64_t eval_items = 150;  // held-out items scored per task
  std::int64_t max_new_tokens = 40;
  std::vector<std::int64_t> sweep = {250, 1000};  // training examples of the data-size sweep
  bool ablation = true;
  bool fused = false;
};

/// The base model, loaded afresh for each run (so every run starts from the same weights), on
/// the fast path when asked.
g2c::transformer::TransformerLM load_base(const std::string& base, torch::Device device,
                                          bool fused) {
  auto model = g2c::pretraining::load_model_artifact(base, device).model;
  if (!fused) return model;
  auto fast = g2c::transformer::fused_transformer_lm(model->options);
  fast->to(device);
  torch::NoGradGuard no_grad;
  const auto source = model->named_parameters();
  for (auto& parameter : fast->named_parameters()) parameter.value().copy_(source[parameter.key()]);
  return fast;
}

struct Scores {
  TaskScore speaker;
  TaskScore completion;
  nlohmann::json to_json() const {
    return {{"speaker", speaker.to_json()}, {"completion", completion.to_json()}};
  }
};

std::string percent(const g2c::exercises::Proportion& p) {
  return fmt::format("{:5.1f}% [{:.1f}, {:.1f}]", 100 * p.value(), 100 * p.low(), 100 * p.high());
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{
      "Module 13: supervised fine-tuning. Scores a pretrained model on held-out speaker\n"
      "attribution and line completion (tasks made from TinyShakespeare), fine-tunes it with your\n"
      "SFTTrainer, scores it again, and compares the loss mask and the amount of data. Saves the\n"
      "fine-tuned model as <base>-SFT. Writes sft.json and figures."};
  g2c::exercises::CommonOptions options;
  options.out = "results/13-sft";
  options.steps = 300;
  Config config;
  g2c::exercises::add_common_options(app, options);
  app.add_option("--base", config.base, "Base model artifact (name, alias or folder)")
      ->capture_default_str();
  app.add_option("--name", config.name, "Name of the saved artifact (default: <base>-SFT)");
  app.add_option("--artifact-dir", config.artifact_dir,
                 "Folder of the saved artifact (default: artifacts/models/<name>)");
  app.add_flag("!--no-save", config.save, "Do not save the fine-tuned model");
  app.add_option("--batch", config.batch_size, "Examples per step")
      ->check(CLI::PositiveNumber)
      ->capture_default_str();
  app.add_option("--lr", config.lr, "Peak learning rate")->capture_default_str();
  app.add_option("--warmup", config.warmup, "Warmup steps")->capture_default_str();
  app.add_option("--eval-items", config.eval_items, "Held-out items scored per task")
      ->check(CLI::PositiveNumber)
      ->capture_default_str();
  app.add_option("--max-new-tokens", config.max_new_tokens, "Reply length limit when scoring")
      ->check(CLI::PositiveNumber)
      ->capture_default_str();
  app.add_option("--sweep", config.sweep,
                 "Training-set sizes of the data-size sweep (the full set is the main run)")
      ->capture_default_str();
  app.add_flag("!--no-ablation", config.ablation, "Skip the loss-mask ablation");
  app.add_flag("--fused", config.fused,
               "Fast path: the model and AdamW through LibTorch's fused kernels (the same model)");
  return g2c::run_cli(app, argc, argv, [&] {
    const auto device = g2c::exercises::prepare(options);
    const auto start = std::chrono::steady_clock::now();
    auto text_model = g2c::sampling::load_text_model(config.base, device);
    const auto& tokenizer = text_model.tokenizer;
    const auto base_name = text_model.artifact.manifest.value("name", config.base);
    const auto model_options = text_model.artifact.model->options;
    const std::int64_t vocab = model_options.vocab_size();
    const std::int64_t context = model_options.max_seq_len();
    if (config.name.empty()) config.name = base_name + "-SFT";

    // The task data, written beside the models for inspection (and for the Python edition).
    auto data = g2c::exercises::build_task_data(g2c::exercises::load_tinyshakespeare(),
                                                {.seed = options.seed});
    const auto data_dir = g2c::exercises::write_task_data(data);
    fmt::print("task data: {} training items, {} held out, in {}\n", data.train.size(),
               data.val.size(), data_dir.string());

    // Tokenized with the chat template, the mask on the replies. Longer than the context: left
    // out (counted), never cut mid-reply.
    const g2c::sft::ChatTemplate chat;
    const g2c::sft::CourseEncoder encoder(tokenizer);
    std::vector<SFTExample> examples, everything_examples;
    std::int64_t too_long = 0;
    for (const auto& item : data.train) {
      auto example = chat.render_with_mask(item.messages(), encoder, vocab);
      if (static_cast<std::int64_t>(example.ids.size()) > context) {
        ++too_long;
        continue;
      }
      examples.push_back(example);
      std::fill(example.mask.begin(), example.mask.end(), 1);  // the ablation: every token counts
      everything_examples.push_back(example);
    }
    // One shuffled order for every run, so the sweep's subsets are nested random samples.
    std::vector<std::size_t> order(examples.size());
    std::iota(order.begin(), order.end(), 0);
    std::mt19937_64 rng(options.seed);
    for (std::size_t i = order.size(); i > 1; --i) std::swap(order[i - 1], order[rng() % i]);
    const auto subset = [&](const std::vector<SFTExample>& from, std::size_t count) {
      std::vector<SFTExample> out;
      for (std::size_t i = 0; i < std::min(count, order.size()); ++i) out.push_back(from[order[i]]);
      return out;
    };
    auto val_speaker = g2c::exercises::items_of(data.val, "speaker");
    auto val_completion = g2c::exercises::items_of(data.val, "completion");
    val_speaker.resize(std::min<std::size_t>(val_speaker.size(), config.eval_items));
    val_completion.resize(std::min<std::size_t>(val_completion.size(), config.eval_items));
    fmt::print(
        "{} SFT examples ({} longer than the context {} left out); scoring {} + {} "
        "held-out items\n",
        examples.size(), too_long, context, val_speaker.size(), val_completion.size());

    const auto score = [&](g2c::transformer::TransformerLM& model) {
      return Scores{
          g2c::exercises::score_task(*model, tokenizer, val_speaker, config.max_new_tokens),
          g2c::exercises::score_task(*model, tokenizer, val_completion, config.max_new_tokens)};
    };
    const auto report = [&](const std::string& label, const Scores& s) {
      fmt::print("{:<28} speaker {}   completion first word {}   stops {}\n", label,
                 percent(s.speaker.exact), percent(s.completion.first_word),
                 percent(s.speaker.stopped));
    };

    // One SFT run from the base: your SFTTrainer through module 10's loop.
    const auto fine_tune = [&](const std::string& label, std::vector<SFTExample> train_examples,
                               g2c::transformer::TransformerLM& model) {
      auto trainer_options = g2c::sft::SFTTrainerOptions(context, /*pad_id=*/0, config.batch_size,
                                                         options.steps, config.lr)
                                 .min_lr(config.lr / 10)
                                 .warmup_steps(config.warmup)
                                 .weight_decay(0.01)
                                 .grad_clip(1.0)
                                 .log_every(10)
                                 .generator(at::make_generator<at::CPUGeneratorImpl>(options.seed))
                                 .device(device.str())
                                 .fused_kernels(config.fused);
      g2c::sft::SFTTrainer trainer(model, std::move(train_examples), trainer_options);
      std::optional<g2c::Progress> progress;
      const auto history = trainer.train(
          {}, g2c::pretraining::TrainOptions().on_log([&](const g2c::pretraining::LogEvent& e) {
            if (!std::isfinite(e.train_loss)) {
              throw g2c::ValueError(fmt::format(
                  "{}: the loss stopped being finite at step {} (lr {}); try a lower --lr", label,
                  e.step, e.lr));
            }
            const auto metrics = fmt::format("loss {:.3f}", e.train_loss);
            if (!progress) {
              // Its clock starts after the first step: count from there, so the first rate is
              // not one step over no time.
              progress.emplace(label, options.steps, !options.quiet);
              progress->update(e.step, metrics);
            } else {
              progress->update(e.step + 1, metrics);
            }
          }));
      if (progress) progress->finish();
      return history;
    };

    std::fflush(stdout);  // the lines above before the progress lines, in a log file too
    auto base_model = load_base(config.base, device, config.fused);
    const auto before = score(base_model);
    report("base", before);

    auto model = load_base(config.base, device, config.fused);
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
      bool stopped = false;
      const auto reply = g2c::exercises::chat_reply(*model, tokenizer, {{"user", prompt}},
                                                    config.max_new_tokens, &stopped);
      bool base_stopped = false;
      const auto base_reply = g2c::exercises::chat_reply(*base_model, tokenizer, {{"user", prompt}},
                                                         config.max_new_tokens, &base_stopped);
      samples.push_back({{"prompt", prompt},
                         {"sft_reply", reply},
                         {"sft_stopped", stopped},
                         {"base_reply", base_reply},
                         {"base_stopped", base_stopped}});
      fmt::print("  {} -> {}{}\n", prompt, g2c::sampling::for_terminal(reply),
                 stopped ? "  <|end|>" : "  (no end marker)");
    }

    std::optional<Scores> ablation;
    nlohmann::json ablation_history = nullptr;
    if (config.ablation) {
      auto ablated = load_base(config.base, device, config.fused);
      ablation_history =
          fine_tune("SFT (mask: every token)", everything_examples, ablated).to_json();
      ablation = score(ablated);
      report("SFT (mask: every token)", *ablation);
    }

    nlohmann::json sweep = nlohmann::json::array();
    for (const auto size : config.sweep) {
      if (size <= 0 || static_cast<std::size_t>(size) >= examples.size()) continue;
      auto swept = load_base(config.base, device, config.fused);
      fine_tune(fmt::format("SFT on {} examples", size), subset(examples, size), swept);
      const auto s = score(swept);
      report(fmt::format("SFT on {} examples", size), s);
      sweep.push_back({{"examples", size}, {"scores", s.to_json()}});
    }
    sweep.push_back({{"examples", examples.size()}, {"scores", after.to_json()}});

    std::optional<fs::path> saved;
    if (config.save) {
      g2c::pretraining::ModelArtifactInfo info;
      info.name = config.name;
      info.module = "module-13";
      info.source = "shakespeare-tasks";
      info.tokenizer_artifact = text_model.artifact.manifest.value("tokenizer_artifact", "");
      info.training_config = {{"steps", options.steps},      {"batch_size", config.batch_size},
                              {"max_lr", config.lr},         {"warmup_steps", config.warmup},
                              {"optimizer", "adamw"},        {"loss", "masked_cross_entropy"},
                              {"examples", examples.size()}, {"dataset", data.manifest}};
      info.seed = options.seed;
      info.history = history;
      info.base_artifact = base_name;
      info.notes =
          "supervised fine-tuning on speaker attribution, line completion and the "
          "hand-written chat set (exercise 13_sft)";
      saved = g2c::pretraining::save_model_artifact(info, model, config.artifact_dir);
      fmt::print("saved {} (base_artifact {})\n", saved->string(), base_name);
    }

    const double seconds =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    nlohmann::json result = g2c::exercises::run_metadata("13_sft", options, device);
    result["config"] = {{"base", config.base},
                        {"name", config.name},
                        {"batch_size", config.batch_size},
                        {"lr", config.lr},
                        {"warmup", config.warmup},
                        {"steps", options.steps},
                        {"eval_items", config.eval_items},
                        {"max_new_tokens", config.max_new_tokens},
                        {"fused", config.fused},
                        {"context", context},
                        {"vocab_size", vocab}};
    result["dataset"] = data.manifest;
    result["dataset"]["folder"] = data_dir.string();
    result["examples"] = {{"used", examples.size()}, {"too_long", too_long}};
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
    result["figures"] = {
        {{"file", "sft_accuracy.png"},
         {"kind", "bar"},
         {"title",
          fmt::format("{} before and after SFT (held-out, 95% intervals in sft.json)", base_name)},
         {"ylabel", "accuracy"},
         {"series",
          {{{"label", "speaker (exact)"}, {"x", "/bars/labels"}, {"y", "/bars/speaker"}},
           {{"label", "completion (first word)"}, {"x", "/bars/labels"}, {"y", "/bars/completion"}},
           {{"label", "replies ending with <|end|>"},
            {"x", "/bars/labels"},
            {"y", "/bars/stops"}}}}},
        {{"file", "sft_loss.png"},
         {"kind", "line"},
         {"title", "SFT training loss (masked cross-entropy)"},
         {"xlabel", "step"},
         {"ylabel", "loss"},
         {"series",
          {{{"label", "mask: replies"}, {"x", "/history/step"}, {"y", "/history/train_loss"}}}}},
        {{"file", "sft_data_sweep.png"},
         {"kind", "line"},
         {"title", "Held-out accuracy against SFT examples"},
         {"xlabel", "training examples"},
         {"ylabel", "accuracy"},
         {"logx", true},
         {"series",
          {{{"label", "speaker (exact)"},
            {"x", "/sweep_series/examples"},
            {"y", "/sweep_series/speaker"},
            {"marker", "o"}},
           {{"label", "completion (first word)"},
            {"x", "/sweep_series/examples"},
            {"y", "/sweep_series/completion"},
            {"marker", "o"}}}}}};
    if (ablation_history.is_object()) {
      result["figures"][1]["series"].push_back({{"label", "mask: every token"},
                                                {"x", "/ablation_history/step"},
                                                {"y", "/ablation_history/train_loss"}});
    }
    const auto path = g2c::exercises::save_result(options, "sft.json", result);
    g2c::exercises::plot_result(options, path);
    fmt::print("{:.0f} s in all ({:.0f} s for the main SFT run)\n", seconds, train_seconds);
  });
}
