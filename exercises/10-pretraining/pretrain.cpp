// Exercise 10 — pretrain ShakespeareLM-1M. A TransformerLM (D 128, L 4, H 4, context 128) learns
// next-token prediction on the first million characters of TinyShakespeare (ShakespeareTokenizer
// ids) through g2c::pretraining::Trainer: AdamW, warmup + cosine from 6e-4 to 3e-5, gradient
// clipping at 1.0, periodic evaluation on the held-out 10 %, rolling checkpoints that --resume
// continues, and the trained model saved as a named artifact that module 11 samples from.
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <map>
#include <optional>

#include <fmt/format.h>

#include "exercises/common/cli.h"
#include "exercises/common/course_tokenizer.h"
#include "exercises/common/data.h"
#include "exercises/common/figures.h"
#include "exercises/common/run_log.h"
#include "exercises/common/training.h"
#include "g2c/core/errors.h"
#include "g2c/pretraining/data.h"
#include "g2c/pretraining/model_artifact.h"
#include "g2c/pretraining/trainer.h"
#include "g2c/tokenizer/artifacts.h"
#include "g2c/transformer/fused.h"
#include "g2c/transformer/transformer_lm.h"

namespace exercise_10_pretrain {

namespace {

namespace fs = std::filesystem;
using g2c::pretraining::Trainer;
using g2c::pretraining::TrainerOptions;

/// Everything a preset fixes besides the model, which is the same in every preset.
struct Preset {
  std::int64_t steps;
  std::int64_t batch_size;
  std::int64_t context_length;
  std::int64_t warmup_steps;
  std::int64_t eval_every;
  std::int64_t eval_iters;
  std::int64_t log_every;
  std::int64_t checkpoint_every;
};

// smoke: seconds, for scripts/smoke_10.sh. cpu: the default, about 4 minutes on a 2-core CPU
// (measured with --threads 1). course: the lesson's run (notebook exercise 2), for a GPU.
const std::map<std::string, Preset> kPresets = {
    {"smoke",
     {.steps = 6,
      .batch_size = 4,
      .context_length = 32,
      .warmup_steps = 2,
      .eval_every = 2,
      .eval_iters = 2,
      .log_every = 1,
      .checkpoint_every = 2}},
    {"cpu",
     {.steps = 1000,
      .batch_size = 16,
      .context_length = 128,
      .warmup_steps = 100,
      .eval_every = 100,
      .eval_iters = 10,
      .log_every = 20,
      .checkpoint_every = 100}},
    {"course",
     {.steps = 10000,
      .batch_size = 32,
      .context_length = 128,
      .warmup_steps = 200,
      .eval_every = 100,
      .eval_iters = 20,
      .log_every = 20,
      .checkpoint_every = 100}},
};

struct Config {
  std::string preset = "cpu";
  g2c::exercises::ArtifactOptions artifact{
      .name = std::string(g2c::pretraining::kShakespeareLM), .dir = std::nullopt, .save = true};
  std::size_t vocab = 0;               // 0: bytes and specials only (V 264), as the lesson
  std::size_t characters = 1'000'000;  // the lesson's first million characters
  std::int64_t embedding_dim = 128, num_layers = 4, num_heads = 4, max_seq_len = 128;
  double max_lr = 6e-4, min_lr = 3e-5, weight_decay = 0.01, grad_clip = 1.0;
  bool resume = false;
  bool fused = false;  // the named fast path: fused kernels for the model and AdamW
};

nlohmann::json training_json(const TrainerOptions& o, const Preset& p) {
  auto json = g2c::pretraining::trainer_options_json(o);
  json["checkpoint_every"] = p.checkpoint_every;
  return json;
}

}  // namespace

int main(int argc, char** argv) {
  g2c::CommandLine app{
      "Module 10: pretrain ShakespeareLM-1M (TransformerLM D 128, L 4, H 4, context 128) on\n"
      "TinyShakespeare with the Trainer: AdamW, warmup + cosine, clipping, evaluation, rolling\n"
      "checkpoints (--resume continues them). Writes pretrain.json, figures and the model "
      "artifact."};
  g2c::exercises::CommonOptions options;
  options.out = "results/10-pretraining";
  Config config;
  g2c::exercises::add_common_options(app, options);  // options.steps 0: --steps is added below
  app.add_option("--steps", options.steps,
                 "Training steps, the run's total (default: the preset's: smoke 6, cpu 1000, "
                 "course 10000)")
      .positive()
      .no_default();
  app.add_option(
         "--preset", config.preset,
         "smoke (seconds), cpu (1,000 steps, about 4 min on 2 cores) or course (10,000 steps, GPU)")
      .one_of({"smoke", "cpu", "course"});
  app.add_flag("--resume", config.resume,
               "Continue from the rolling checkpoint in --out (to --steps, the new total)");
  g2c::exercises::add_artifact_options(
      app, config.artifact,
      {.name = "Model artifact name",
       .dir = "Folder for the model artifact (default artifacts/models/<name>)",
       .no_save = ""});  // the artifact is what pretraining makes: always saved
  app.add_option("--vocab", config.vocab,
                 "ShakespeareTokenizer vocabulary: 0 = bytes and specials (264), up to 4096")
      .range(0, 4096);
  app.add_flag("--fused", config.fused,
               "Fast path: the same model and AdamW through LibTorch's fused kernels instead of "
               "your own code (g2c/transformer/fused.h, g2c/nn/fused_adamw.h)");
  return g2c::run_cli(app, argc, argv, [&] {
    const auto device = g2c::exercises::prepare(options);
    Preset preset = kPresets.at(config.preset);
    if (options.steps > 0) preset.steps = options.steps;

    // The corpus: the first million characters, one id stream, 90 % train / 10 % validation.
    const std::string text = g2c::exercises::load_tinyshakespeare().substr(0, config.characters);
    const auto tokenizer = g2c::exercises::course_tokenizer("bpe", text, config.vocab);
    const auto ids = torch::tensor(tokenizer.encode(text), torch::kLong);
    const auto split = g2c::pretraining::split_token_stream(ids, /*train_fraction=*/0.9);
    const std::int64_t vocab = tokenizer.size();
    fmt::print("{}: {} characters -> {} tokens ({} train, {} validation)\n",
               tokenizer.description(), text.size(), ids.numel(), split.train.numel(),
               split.val.numel());

    torch::manual_seed(options.seed);
    const auto model_options = g2c::transformer::TransformerLMOptions(
        vocab, config.embedding_dim, config.num_layers, config.num_heads, config.max_seq_len);
    // The lesson's model runs your module 09 code; --fused computes the same model with LibTorch's
    // fused kernels (the parameters, the checkpoints and the artifact are the same either way).
    auto model = config.fused ? g2c::transformer::fused_transformer_lm(model_options)
                              : g2c::transformer::TransformerLM(model_options);
    const auto parameters = g2c::transformer::parameter_count(model_options);
    fmt::print("TransformerLM: {} parameters\n", parameters);

    auto trainer_options =
        TrainerOptions(preset.batch_size, preset.context_length, preset.steps, config.max_lr)
            .min_lr(config.min_lr)
            .warmup_steps(preset.warmup_steps)
            .weight_decay(config.weight_decay)
            .grad_clip(config.grad_clip)
            .eval_every(preset.eval_every)
            .eval_iters(preset.eval_iters)
            .log_every(preset.log_every)
            .generator(at::make_generator<at::CPUGeneratorImpl>(options.seed))
            .device(device.str())
            .optimizer("adamw")
            .fused_kernels(config.fused);
    Trainer trainer(model, trainer_options);
    const nlohmann::json model_config = g2c::pretraining::model_config_json(model_options);
    const nlohmann::json training_config = training_json(trainer_options, preset);
    const nlohmann::json extra = {{"model_config", model_config},
                                  {"vocab_size", vocab},
                                  {"tokenizer", g2c::exercises::tokenizer_json(tokenizer)},
                                  {"preset", config.preset},
                                  {"seed", options.seed}};

    const fs::path checkpoint = options.out / "pretrain.ckpt";
    auto history = g2c::pretraining::empty_training_history();
    if (config.resume) {
      if (!fs::exists(checkpoint) && !fs::exists(checkpoint.string() + ".bak")) {
        throw g2c::ValueError(fmt::format(
            "--resume: no checkpoint {} to continue; run without --resume first, or pass the --out "
            "of the run to continue",
            checkpoint.string()));
      }
      const auto saved = trainer.load_checkpoint(checkpoint);  // ValueError when there is none
      if (!saved.note.empty()) fmt::print(stderr, "{}\n", saved.note);
      const nlohmann::json saved_model = {
          {"model_config", saved.extra.value("model_config", nlohmann::json())},
          {"vocab_size", saved.extra.value("vocab_size", nlohmann::json())}};
      const nlohmann::json this_model = {{"model_config", model_config}, {"vocab_size", vocab}};
      if (saved_model != this_model) {
        throw g2c::ValueError(fmt::format(
            "{} was written for model {}, this run builds {}; resume with the same --vocab",
            saved.path.string(), saved_model.dump(), this_model.dump()));
      }
      history = saved.history;
      if (trainer.step >= preset.steps) {
        throw g2c::ValueError(
            fmt::format("the checkpoint is already at step {}, and --steps is {}: pass a larger "
                        "--steps to train further",
                        trainer.step, preset.steps));
      }
      fmt::print("resuming from {} at step {}\n", saved.path.string(), trainer.step);
    }
    const std::int64_t start_step = trainer.step;
    const std::int64_t tokens_per_step = preset.batch_size * preset.context_length;

    std::fflush(stdout);  // the lines above before the progress line, in a log file too
    g2c::exercises::RunLog log(
        {.label = "pretraining",
         .steps = preset.steps,
         .first_step = start_step,
         .tokens_per_step = tokens_per_step,
         .show = !options.quiet,
         .advice = fmt::format("Training stopped; {} holds the weights of that step (the one "
                               "before is {}.bak). Start again without --resume, with a lower "
                               "learning rate, or check g2c/pretraining/trainer.cpp.",
                               checkpoint.string(), checkpoint.string())});
    const auto start = std::chrono::steady_clock::now();
    trainer.train(split.train, history,
                  g2c::pretraining::RunOptions()
                      .val_ids(split.val)
                      .on_log(log.callback())
                      .checkpoint_path(checkpoint)
                      .checkpoint_every(preset.checkpoint_every)
                      .checkpoint_extra(extra));
    const double seconds =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    log.finish();
    const double tokens_per_s =
        static_cast<double>((trainer.step - start_step) * tokens_per_step) / seconds;
    const double train_loss = history.train_loss.back();
    const double val_loss = history.val_loss.back();
    const double ln_vocab = std::log(static_cast<double>(vocab));
    fmt::print(
        "step {}: train loss {:.3f}, validation loss {:.3f} (perplexity {:.1f}; ln V = {:.3f}), "
        "{:.0f} tokens/s, {:.1f}s\n",
        trainer.step, train_loss, val_loss, std::exp(val_loss), ln_vocab, tokens_per_s, seconds);

    const auto artifact = g2c::pretraining::save_model_artifact(
        {.name = config.artifact.name,
         .source = "tinyshakespeare.txt",
         .tokenizer_artifact =
             tokenizer.is_bpe() ? std::string(g2c::tokenizer::kShakespeareTokenizer) : "",
         .training_config = training_config,
         .seed = options.seed,
         .history = history,
         .notes = fmt::format("exercise 10_pretrain, preset {}, {} ({} characters)", config.preset,
                              tokenizer.description(), text.size())},
        model, config.artifact.folder_for(config.artifact.name));
    // Read it back the way module 11 will, and compare every parameter with the trained model.
    const auto reloaded = g2c::pretraining::load_model_artifact(artifact.string());
    double max_difference = 0.0;
    const auto trained = model->parameters(), loaded = reloaded.model->parameters();
    for (std::size_t i = 0; i < trained.size(); ++i) {
      max_difference = std::max(max_difference,
                                (trained[i].detach().cpu() - loaded[i]).abs().max().item<double>());
    }
    fmt::print("saved model artifact {} (reloaded: largest parameter difference {})\n",
               artifact.string(), max_difference);

    auto result = g2c::exercises::run_metadata("10_pretrain", options, device);
    result["preset"] = config.preset;
    nlohmann::json model_json = model_config;  // pretrain.json's model: the keywords and V
    model_json["vocab_size"] = vocab;
    result["config"] = {{"model", model_json},
                        {"parameters", parameters},
                        {"training", training_config},
                        {"tokenizer", g2c::exercises::tokenizer_json(tokenizer)},
                        {"corpus",
                         {{"source", "tinyshakespeare.txt"},
                          {"characters", text.size()},
                          {"tokens", ids.numel()},
                          {"train_tokens", split.train.numel()},
                          {"val_tokens", split.val.numel()}}}};
    result["resumed_from_step"] = config.resume ? nlohmann::json(start_step) : nullptr;
    result["history"] = history.to_json();
    result["final"] = {{"steps_completed", trainer.step},
                       {"train_loss", train_loss},
                       {"val_loss", val_loss},
                       {"val_perplexity", std::exp(val_loss)}};
    result["ln_vocab"] = ln_vocab;
    result["tokens_per_s"] = tokens_per_s;
    result["seconds"] = seconds;
    result["checkpoint"] = checkpoint.string();
    result["artifact"] = {{"dir", artifact.string()},
                          {"name", reloaded.manifest.at("name")},
                          {"reloaded_max_param_difference", max_difference}};
    using g2c::exercises::Figure;
    using g2c::exercises::Series;
    const auto loss =
        Figure::line("pretrain_loss.png", "ShakespeareLM pretraining loss", "step",
                     "cross-entropy (nats)")
            .add(Series("train (one batch)", "/history/step", "/history/train_loss").style("-"))
            .add(Series("validation", "/history/val_step", "/history/val_loss").style("-"))
            .hline(ln_vocab, fmt::format("ln V = {:.2f} (uniform guess)", ln_vocab));
    const auto lr = Figure::line("pretrain_lr.png", "Learning rate: warmup + cosine", "step", "lr")
                        .add(Series("lr", "/history/step", "/history/lr").style("-"));
    const auto grad_norm =
        Figure::line("pretrain_grad_norm.png", "Gradient norm before clipping", "step",
                     "global norm")
            .add(Series("grad norm", "/history/step", "/history/grad_norm").style("-"))
            .hline(config.grad_clip, "clip");
    result["figures"] = g2c::exercises::figures({loss, lr, grad_norm});
    const auto path = g2c::exercises::save_result(options, "pretrain.json", result);
    g2c::exercises::plot_result(options, path);
  });
}

}  // namespace exercise_10_pretrain
