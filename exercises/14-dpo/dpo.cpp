// Exercise 14 — direct preference optimisation of the fine-tuned ShakespeareLM. The SFT artifact
// (module 13's ShakespeareLM-1M-SFT unless --base names another) is the policy's start and, frozen,
// its reference. Pairs of replies made from the same tasks (the right speaker against a wrong one,
// the rest of a line against its words shuffled or one word repeated) train it through your
// DPOTrainer (module 10's loop with your collation, sequence log-probabilities and DPO loss). It
// reports what the lesson is about: the implicit reward margin and preference accuracy on training
// and held-out pairs as training goes, a sweep over beta, and whether held-out task accuracy moved.
// The tuned model is saved as <family>-DPO with its lineage (-> -SFT -> base).
#include <chrono>
#include <cmath>
#include <optional>

#include <fmt/format.h>

#include "exercises/13-sft/sft_runs.h"
#include "exercises/14-dpo/preferences.h"
#include "exercises/common/cli.h"
#include "exercises/common/figures.h"
#include "exercises/common/proportion.h"
#include "exercises/common/run_log.h"
#include "exercises/common/tasks.h"
#include "g2c/core/errors.h"
#include "g2c/dpo/dpo.h"
#include "g2c/pretraining/model_artifact.h"
#include "g2c/sampling/text_generation.h"
#include "g2c/sft/chat.h"

namespace exercise_14_dpo {

namespace {

namespace fs = std::filesystem;
using g2c::dpo::PreferenceExample;
using g2c::exercises::Proportion;

struct Config {
  g2c::exercises::ArtifactOptions artifact;  // name default: dpo_name(base, its base_artifact)
  double lr = 1e-4;
  double beta = 0.5;
  std::vector<double> sweep = {0.1};  // betas tried besides --beta
  std::int64_t eval_every = 25;
};

// The DPO model's default name, from the lineage the manifests record: a model tuned from the
// base's own base artifact (ShakespeareLM-1M-SFT, tuned from ShakespeareLM-1M, gives
// ShakespeareLM-1M-DPO), or from the base itself when it records none.
std::string dpo_name(const std::string& base, const std::string& base_parent) {
  return (base_parent.empty() ? base : base_parent) + "-DPO";
}

// How often the model itself gives the chosen reply a higher log-probability than the rejected
// one (no reference involved): the preference DPO is meant to instil, counted over whole pairs.
Proportion preference_accuracy(g2c::transformer::TransformerLM& model,
                               const std::vector<PreferenceExample>& examples,
                               std::int64_t max_seq_len, const torch::Device& device) {
  torch::NoGradGuard no_grad;
  const bool was_training = model->is_training();
  model->eval();
  Proportion accuracy;
  constexpr std::size_t chunk = 64;
  for (std::size_t first = 0; first < examples.size(); first += chunk) {
    const std::vector<PreferenceExample> batch_examples(
        examples.begin() + static_cast<std::ptrdiff_t>(first),
        examples.begin() + static_cast<std::ptrdiff_t>(std::min(first + chunk, examples.size())));
    const auto batch = g2c::dpo::pad_and_collate_pref(batch_examples, max_seq_len, /*pad_id=*/0);
    const auto chosen = g2c::dpo::sequence_logprob(
        model(batch.chosen_x.to(device)), batch.chosen_y.to(device), batch.chosen_mask.to(device));
    const auto rejected =
        g2c::dpo::sequence_logprob(model(batch.rejected_x.to(device)), batch.rejected_y.to(device),
                                   batch.rejected_mask.to(device));
    accuracy.hits += (chosen > rejected).sum().item<std::int64_t>();
    accuracy.total += static_cast<std::int64_t>(batch_examples.size());
  }
  model->train(was_training);
  return accuracy;
}

}  // namespace

int main(int argc, char** argv) {
  g2c::CommandLine app{
      "Module 14: direct preference optimisation. Trains the fine-tuned model (module 13's\n"
      "<base>-SFT) on pairs of preferred and rejected replies with your DPOTrainer, against a\n"
      "frozen copy of itself; reports reward margins and preference accuracy (training and\n"
      "held-out), a beta sweep and held-out task accuracy before and after. Saves <family>-DPO.\n"
      "Writes dpo.json and figures."};
  g2c::exercises::CommonOptions options;
  options.out = "results/14-dpo";
  options.steps = 150;
  Config config;
  g2c::exercises::SFTRunOptions run;
  run.base = "ShakespeareLM-1M-SFT";
  g2c::exercises::add_common_options(app, options);
  g2c::exercises::add_sft_run_options(app, run, /*chat_pairs=*/false);
  g2c::exercises::add_artifact_options(
      app, config.artifact,
      {.name = "Name of the saved artifact (default: <the base's base_artifact>-DPO, "
               "or <base>-DPO when it records none)",
       .dir = "Folder of the saved artifact (default: "
              "artifacts/models/<name>)",
       .no_save = "Do not save the tuned model"});
  app.add_option("--lr", config.lr, "Peak learning rate");
  app.add_option("--beta", config.beta, "DPO's beta for the saved run").positive();
  app.add_option("--sweep", config.sweep, "Other betas to compare, each a run of its own");
  bool no_sweep = false;
  app.add_flag("--no-sweep", no_sweep, "Train only the --beta run");
  app.add_option("--eval-every", config.eval_every, "Steps between held-out evaluations")
      .positive();
  return g2c::run_cli(app, argc, argv, [&] {
    if (no_sweep) config.sweep.clear();
    for (const double beta : config.sweep) {
      if (!(beta > 0)) {
        throw g2c::ValueError(fmt::format("--sweep: every beta must be > 0, got {}", beta));
      }
    }
    const auto device = g2c::exercises::prepare(options);
    const auto start = std::chrono::steady_clock::now();
    auto text_model = g2c::sampling::load_text_model(run.base, device);
    const auto& tokenizer = text_model.tokenizer;
    const auto base_name = text_model.artifact.summary.name;
    const auto base_parent = text_model.artifact.summary.base_artifact.value_or("");
    const auto model_options = text_model.artifact.model->options;
    const std::int64_t vocab = model_options.vocab_size();
    const std::int64_t context = model_options.max_seq_len();
    if (config.artifact.name.empty()) config.artifact.name = dpo_name(base_name, base_parent);
    if (base_parent.empty()) {
      fmt::print(
          "note: {} has no base_artifact: DPO usually starts from a fine-tuned (-SFT) model "
          "(exercise 13_sft makes one)\n",
          base_name);
    }

    // The SFT task data (for held-out scoring) and the preference pairs made from it.
    const auto sft_data = g2c::exercises::prepare_sft_data(tokenizer, vocab, context, options.seed,
                                                           run.chat_repeat, run.eval_items);
    const auto prefs = g2c::exercises::prepare_preference_data(sft_data.tasks, tokenizer, vocab,
                                                               context, options.seed);
    std::vector<PreferenceExample> val_speaker, val_completion;
    for (std::size_t i = 0; i < prefs.val_examples.size(); ++i) {
      (prefs.val_tasks[i] == "speaker" ? val_speaker : val_completion)
          .push_back(prefs.val_examples[i]);
    }

    const g2c::exercises::BaseModelCopies load(run.base, device, run.fused);
    const auto trainer_options = [&](double beta) {
      auto dpo = g2c::dpo::DPOTrainerOptions(prefs.max_seq_len, /*pad_id=*/0, beta, run.batch_size,
                                             options.steps, config.lr);
      dpo.trainer()
          .min_lr(config.lr / 10)
          .warmup_steps(run.warmup)
          .grad_clip(1.0)
          .log_every(5)
          .eval_every(config.eval_every)
          .eval_iters(4)
          .generator(at::make_generator<at::CPUGeneratorImpl>(options.seed))
          .device(device.str())
          .fused_kernels(run.fused);
      return dpo;
    };
    const auto pref_accuracy = [&](g2c::transformer::TransformerLM& model) {
      return nlohmann::json{
          {"speaker", preference_accuracy(model, val_speaker, prefs.max_seq_len, device).to_json()},
          {"completion",
           preference_accuracy(model, val_completion, prefs.max_seq_len, device).to_json()}};
    };
    // One DPO run from the SFT weights, against a frozen copy of them.
    const auto train = [&](const std::string& label, double beta,
                           g2c::transformer::TransformerLM& policy) {
      auto reference = load();
      g2c::dpo::DPOTrainer trainer(policy, reference, prefs.train_examples, trainer_options(beta));
      g2c::exercises::RunLog log({.label = label,
                                  .steps = options.steps,
                                  .show = !options.quiet,
                                  .advice = "Try a lower --lr."});
      auto history =
          trainer.train(prefs.val_examples, g2c::pretraining::RunOptions().on_log(log.callback()));
      log.finish();
      return history;
    };
    const auto print_preferences = [](const std::string& label, const nlohmann::json& accuracy) {
      const auto show = [](const nlohmann::json& p) {
        return g2c::exercises::Proportion{p["hits"].get<std::int64_t>(),
                                          p["total"].get<std::int64_t>()}
            .to_string();
      };
      fmt::print("{:<28} prefers the chosen reply: speaker {}   completion {}\n", label,
                 show(accuracy["speaker"]), show(accuracy["completion"]));
      std::fflush(stdout);  // before the next progress line, in a log file too
    };

    std::fflush(stdout);
    auto sft_model = load();
    const auto before =
        g2c::exercises::score_model(sft_model, tokenizer, sft_data, run.max_new_tokens);
    g2c::exercises::print_scores(base_name, before);
    const auto before_pref = pref_accuracy(sft_model);
    print_preferences(base_name, before_pref);

    auto model = load();
    const auto run_start = std::chrono::steady_clock::now();
    const auto main_label = fmt::format("DPO beta {}", config.beta);
    const auto history = train(main_label, config.beta, model);
    const double train_seconds =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - run_start).count();
    const auto after = g2c::exercises::score_model(model, tokenizer, sft_data, run.max_new_tokens);
    g2c::exercises::print_scores(main_label, after);
    const auto after_pref = pref_accuracy(model);
    print_preferences(main_label, after_pref);

    nlohmann::json runs = nlohmann::json::array();
    runs.push_back({{"beta", config.beta},
                    {"history", history.to_json()},
                    {"preference_accuracy", after_pref},
                    {"scores", after.to_json()}});
    for (const double beta : config.sweep) {
      if (beta == config.beta) continue;
      auto swept = load();
      const auto label = fmt::format("DPO beta {}", beta);
      const auto swept_history = train(label, beta, swept);
      const auto scores =
          g2c::exercises::score_model(swept, tokenizer, sft_data, run.max_new_tokens);
      g2c::exercises::print_scores(label, scores);
      const auto accuracy = pref_accuracy(swept);
      print_preferences(label, accuracy);
      runs.push_back({{"beta", beta},
                      {"history", swept_history.to_json()},
                      {"preference_accuracy", accuracy},
                      {"scores", scores.to_json()}});
    }

    // Replies before and after, to the prompts of both tasks and the chat set.
    nlohmann::json samples = nlohmann::json::array();
    const auto reply_options = g2c::sft::ChatReplyOptions().max_new_tokens(run.max_new_tokens);
    for (const auto& item : {sft_data.val_speaker.front(), sft_data.val_completion.front()}) {
      const auto tuned = g2c::sft::chat_reply(*model, tokenizer, item.messages(), reply_options);
      const auto untuned =
          g2c::sft::chat_reply(*sft_model, tokenizer, item.messages(), reply_options);
      samples.push_back({{"prompt", item.prompt},
                         {"answer", item.answer},
                         {"sft_reply", untuned.text},
                         {"dpo_reply", tuned.text},
                         {"dpo_stopped", tuned.stopped}});
      fmt::print("  {} -> SFT: {} | DPO: {}\n", g2c::sampling::for_terminal(item.prompt),
                 g2c::sampling::for_terminal(untuned.text),
                 g2c::sampling::for_terminal(tuned.text));
    }

    std::optional<fs::path> saved;
    if (config.artifact.save) {
      g2c::pretraining::ModelArtifactInfo info;
      info.name = config.artifact.name;
      info.module = "module-14";
      info.source = "shakespeare-preferences";
      info.tokenizer_artifact = text_model.artifact.summary.tokenizer_artifact;
      nlohmann::json lineage = {base_name};
      if (!base_parent.empty()) lineage.push_back(base_parent);
      const auto recipe = trainer_options(config.beta);
      info.training_config = g2c::pretraining::trainer_options_json(recipe.trainer());
      info.training_config.update({{"max_seq_len", recipe.max_seq_len()},
                                   {"loss", "dpo"},
                                   {"beta", recipe.beta()},
                                   {"reference", base_name},
                                   {"lineage", lineage},
                                   {"pairs", prefs.train_examples.size()},
                                   {"dataset", prefs.manifest}});
      info.seed = options.seed;
      info.history = history;
      info.base_artifact = base_name;
      info.notes =
          "direct preference optimisation on speaker and completion preference pairs "
          "(exercise 14_dpo)";
      saved = g2c::pretraining::save_model_artifact(
          info, model, config.artifact.folder_for(config.artifact.name));
      fmt::print("saved {} (base_artifact {})\n", saved->string(), base_name);
    }

    const double seconds =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    nlohmann::json result = g2c::exercises::run_metadata("14_dpo", options, device);
    result["config"] = {{"base", run.base},
                        {"name", config.artifact.name},
                        {"batch_size", run.batch_size},
                        {"lr", config.lr},
                        {"beta", config.beta},
                        {"sweep", config.sweep},
                        {"warmup", run.warmup},
                        {"steps", options.steps},
                        {"eval_every", config.eval_every},
                        {"eval_items", run.eval_items},
                        {"max_new_tokens", run.max_new_tokens},
                        {"fused", run.fused},
                        {"context", context},
                        {"vocab_size", vocab}};
    result["dataset"] = prefs.to_json();
    result["tasks"] = sft_data.to_json();
    result["before"] = {{"scores", before.to_json()}, {"preference_accuracy", before_pref}};
    result["after"] = {{"scores", after.to_json()}, {"preference_accuracy", after_pref}};
    result["runs"] = runs;
    result["samples"] = samples;
    result["train_seconds"] = train_seconds;
    result["seconds"] = seconds;
    result["artifact"] = saved ? nlohmann::json(saved->string()) : nlohmann::json(nullptr);
    result["lineage"] = {config.artifact.name, base_name};
    if (!base_parent.empty()) result["lineage"].push_back(base_parent);

    // Curves of every run, and held-out accuracy before and after.
    using g2c::exercises::Figure;
    using g2c::exercises::Series;
    auto margin = Figure::line("dpo_reward_margin.png",
                               "DPO reward margin: beta * (log-ratio of chosen - log-ratio of "
                               "rejected)",
                               "step", "reward margin");
    auto accuracy = Figure::line("dpo_preference_accuracy.png",
                                 "DPO preference accuracy (chosen reward > rejected reward)",
                                 "step", "accuracy");
    auto loss = Figure::line("dpo_loss.png", "DPO loss (ln 2 = no preference yet)", "step", "loss");
    for (std::size_t r = 0; r < runs.size(); ++r) {
      const auto beta = runs[r]["beta"].get<double>();
      const auto at = fmt::format("/runs/{}/history", r);
      const auto train = fmt::format("train, beta {}", beta);
      const auto held_out = fmt::format("held-out, beta {}", beta);
      margin.add(Series(train, at + "/step", at + "/reward_margin"))
          .add(Series(held_out, at + "/val_step", at + "/val_reward_margin").marker("o"));
      accuracy.add(Series(train, at + "/step", at + "/accuracy"))
          .add(Series(held_out, at + "/val_step", at + "/val_accuracy").marker("o"));
      loss.add(Series(train, at + "/step", at + "/train_loss"));
    }
    result["bars"] = {
        {"labels", {base_name, config.artifact.name}},
        {"speaker", {before.speaker.exact.value(), after.speaker.exact.value()}},
        {"completion", {before.completion.first_word.value(), after.completion.first_word.value()}},
        {"prefers_chosen_speaker",
         {before_pref["speaker"]["value"], after_pref["speaker"]["value"]}},
        {"prefers_chosen_completion",
         {before_pref["completion"]["value"], after_pref["completion"]["value"]}}};
    result["figures"] = g2c::exercises::figures(
        {margin, accuracy, loss,
         Figure::bar("dpo_accuracy.png",
                     "Held-out, before and after DPO (95% intervals in dpo.json)", "", "accuracy")
             .add(Series("speaker (exact reply)", "/bars/labels", "/bars/speaker"))
             .add(Series("completion (first word)", "/bars/labels", "/bars/completion"))
             .add(Series("prefers chosen (speaker pairs)", "/bars/labels",
                         "/bars/prefers_chosen_speaker"))
             .add(Series("prefers chosen (completion pairs)", "/bars/labels",
                         "/bars/prefers_chosen_completion"))});
    const auto path = g2c::exercises::save_result(options, "dpo.json", result);
    g2c::exercises::plot_result(options, path);
    fmt::print("{:.0f} s in all ({:.0f} s for the main DPO run)\n", seconds, train_seconds);
  });
}

}  // namespace exercise_14_dpo
