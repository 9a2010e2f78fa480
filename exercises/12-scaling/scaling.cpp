// Exercise 12 — the scaling ladder. ShakespeareLM at four sizes (about 0.1M, 0.3M, 0.8M and 3M
// parameters; the 0.8M rung is module 10's model) trains on the same tokens — the same corpus,
// split, batches, token budget, optimizer and schedule — through module 10's Trainer; only the
// shape of the model changes. Each rung's held-out loss, against its parameter count N and the
// compute C ≈ 6·N·tokens it spent, gives the lesson's power laws L(N) = a·N^(−α) and L(C).
#include <chrono>
#include <cmath>
#include <cstdio>
#include <map>
#include <optional>
#include <utility>

#include <fmt/format.h>

#include "exercises/12-scaling/scaling_fits.h"
#include "exercises/common/batches.h"
#include "exercises/common/cli.h"
#include "exercises/common/course_tokenizer.h"
#include "exercises/common/data.h"
#include "exercises/common/run_log.h"
#include "exercises/common/training.h"
#include "g2c/core/errors.h"
#include "g2c/pretraining/data.h"
#include "g2c/pretraining/model_artifact.h"
#include "g2c/pretraining/trainer.h"
#include "g2c/tokenizer/artifacts.h"
#include "g2c/transformer/fused.h"
#include "g2c/transformer/transformer_lm.h"

namespace exercise_12_scaling {

namespace {

namespace fs = std::filesystem;
using g2c::pretraining::Trainer;
using g2c::pretraining::TrainerOptions;
using g2c::transformer::TransformerLMOptions;

/// One model size: D, L and H (the context is the preset's).
struct Rung {
  std::int64_t embedding_dim, num_layers, num_heads;
};

/// A ladder and the one training recipe every rung of it follows.
struct Preset {
  std::vector<Rung> rungs;
  std::int64_t steps, batch_size, context_length, warmup_steps;
  double max_lr, min_lr;
  std::int64_t eval_every, eval_iters, log_every;
  std::int64_t final_eval_batches;  // the fixed held-out batches every rung's final loss uses
};

// At V 264 and context 128 the four cpu rungs have 103,992 / 343,144 / 843,784 / 2,745,096
// parameters. The width grows faster than the depth, as in the lesson's configurations; head size
// 16 below D 128, 32 from there on. The cpu budget is what a 2-core CPU trains in under ten
// minutes for all four; gpu is the lesson's budget (5,000 steps of 32 × 128) with a fifth rung.
const std::map<std::string, Preset> kPresets = {
    {"smoke",
     {.rungs = {{16, 1, 2}, {24, 1, 2}, {32, 2, 2}},
      .steps = 12,
      .batch_size = 4,
      .context_length = 32,
      .warmup_steps = 2,
      .max_lr = 1e-3,
      .min_lr = 5e-5,
      .eval_every = 4,
      .eval_iters = 2,
      .log_every = 1,
      .final_eval_batches = 2}},
    {"cpu",
     {.rungs = {{48, 3, 3}, {80, 4, 5}, {128, 4, 4}, {192, 6, 6}},
      .steps = 500,
      .batch_size = 8,
      .context_length = 128,
      .warmup_steps = 50,
      .max_lr = 1e-3,
      .min_lr = 5e-5,
      .eval_every = 25,
      .eval_iters = 8,
      .log_every = 10,
      .final_eval_batches = 64}},
    {"gpu",
     {.rungs = {{48, 3, 3}, {80, 4, 5}, {128, 4, 4}, {192, 6, 6}, {320, 8, 10}},
      .steps = 5000,
      .batch_size = 32,
      .context_length = 128,
      .warmup_steps = 200,
      .max_lr = 6e-4,
      .min_lr = 3e-5,
      .eval_every = 100,
      .eval_iters = 20,
      .log_every = 20,
      .final_eval_batches = 64}},
};

struct Config {
  std::string preset = "cpu";
  g2c::exercises::ArtifactOptions artifact;  // one artifact per rung, named by the ladder
  bool lesson_path = false;            // the course's own forward and AdamW instead of the fused
  std::optional<double> max_lr;        // replaces the preset's (min_lr keeps its ratio)
  std::size_t characters = 1'000'000;  // module 10's first million characters
};

/// The size a rung is named by: its total parameter count in millions to one significant figure
/// ("0.1M", "0.8M", "3M", "10M").
std::string size_label(std::int64_t parameters) {
  const double millions = static_cast<double>(parameters) / 1e6;
  const int exponent = static_cast<int>(std::floor(std::log10(millions)));
  const double unit = std::pow(10.0, exponent);
  const double rounded = std::round(millions / unit) * unit;  // 0.0957 -> 0.1, 2.75 -> 3
  if (rounded >= 1.0) return fmt::format("{:.0f}M", rounded);
  const int decimals = static_cast<int>(-std::floor(std::log10(rounded) + 1e-9));
  return fmt::format("{:.{}f}M", rounded, decimals);
}

/// Parameters outside the token and position tables: what the lesson's N and C ≈ 6·N·tokens count.
/// The tables are lookups, not matmuls (the tied head's V·D is the exception, see the README).
std::int64_t non_embedding_count(const TransformerLMOptions& options) {
  return g2c::transformer::parameter_count(options) -
         (options.vocab_size() + options.max_seq_len()) * options.embedding_dim();
}

nlohmann::json training_json(const TrainerOptions& o, const Preset& p) {
  auto json = g2c::pretraining::trainer_options_json(o);
  json["tokens"] = o.max_steps() * o.batch_size() * o.context_length();
  json["final_eval_batches"] = p.final_eval_batches;
  return json;
}

/// The one training recipe of every rung: module 10's AdamW, warmup + cosine, clipping at 1.0.
TrainerOptions recipe(const Preset& preset, const Config& config, std::uint64_t seed,
                      const torch::Device& device) {
  const double max_lr = config.max_lr.value_or(preset.max_lr);
  return TrainerOptions(preset.batch_size, preset.context_length, preset.steps, max_lr)
      .min_lr(preset.min_lr * max_lr / preset.max_lr)
      .warmup_steps(preset.warmup_steps)
      .weight_decay(0.01)
      .grad_clip(1.0)
      .eval_every(preset.eval_every)
      .eval_iters(preset.eval_iters)
      .log_every(preset.log_every)
      .generator(at::make_generator<at::CPUGeneratorImpl>(seed))
      .device(device.str())
      .optimizer("adamw")
      .fused_kernels(!config.lesson_path);
}

/// What the whole ladder shares: the data, the recipe and where things go.
struct Ladder {
  const g2c::exercises::CommonOptions& options;
  const Config& config;
  const Preset& preset;
  torch::Device device;
  const g2c::tokenizer::TextTokenizer& tokenizer;
  g2c::pretraining::TokenSplit split;
  const std::vector<g2c::exercises::TokenBatch>& final_batches;  // the same for every rung
};

/// Trains one rung through the Trainer and returns its entry of scaling.json.
nlohmann::json train_rung(const Ladder& ladder, const Rung& rung) {
  const auto& [options, config, preset, device, tokenizer, split, final_batches] = ladder;
  const auto model_options = TransformerLMOptions(
      tokenizer.size(), rung.embedding_dim, rung.num_layers, rung.num_heads, preset.context_length);
  const std::int64_t total = g2c::transformer::parameter_count(model_options);
  const std::int64_t non_embedding = non_embedding_count(model_options);
  const std::string label = size_label(total);
  const std::string name = "ShakespeareLM-" + label;
  // Module 10's artifact is the default base of modules 13-15; the ladder never replaces it.
  if (name == g2c::pretraining::kShakespeareLM) throw std::logic_error("a rung named " + name);

  // Every rung starts from the same seed and draws the same batches: only the model differs.
  torch::manual_seed(options.seed);
  auto model = config.lesson_path ? g2c::transformer::TransformerLM(model_options)
                                  : g2c::transformer::fused_transformer_lm(model_options);
  const auto trainer_options = recipe(preset, config, options.seed, device);
  Trainer trainer(model, trainer_options);
  const std::int64_t tokens_per_step = preset.batch_size * preset.context_length;
  const std::int64_t tokens = preset.steps * tokens_per_step;

  std::fflush(stdout);
  g2c::exercises::RunLog log({.label = name,
                              .steps = preset.steps,
                              .tokens_per_step = tokens_per_step,
                              .show = !options.quiet,
                              .advice = "Try a lower --max-lr, or check "
                                        "g2c/pretraining/trainer.cpp."});
  const auto start = std::chrono::steady_clock::now();
  auto history = trainer.train(
      split.train, g2c::pretraining::RunOptions().val_ids(split.val).on_log(log.callback()));
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  log.finish();

  // The fitted loss: the same fixed held-out batches for every rung, more of them than one
  // periodic evaluation reads, so the points of the fit differ by the model, not by the draw.
  const double final_val = g2c::exercises::mean_loss(*model, final_batches, !config.lesson_path);

  // Loss against tokens and against compute: validation at step s follows s + 1 updates.
  std::vector<double> curve_tokens, curve_compute;
  for (const auto step : history.val_step) {
    const double seen = static_cast<double>((step + 1) * tokens_per_step);
    curve_tokens.push_back(seen);
    curve_compute.push_back(6.0 * static_cast<double>(non_embedding) * seen);
  }
  nlohmann::json model_json = g2c::pretraining::model_config_json(model_options);
  model_json["vocab_size"] = tokenizer.size();
  nlohmann::json entry = {
      {"label", label},
      {"name", name},
      {"model", model_json},
      {"parameters",
       {{"total", total}, {"non_embedding", non_embedding}, {"embedding", total - non_embedding}}},
      {"tokens", tokens},
      {"compute", 6.0 * static_cast<double>(non_embedding) * static_cast<double>(tokens)},
      {"compute_total_params", 6.0 * static_cast<double>(total) * static_cast<double>(tokens)},
      {"seconds", seconds},
      {"tokens_per_s", static_cast<double>(tokens) / seconds},
      {"final_val_loss", final_val},
      {"final_val_perplexity", std::exp(final_val)},
      {"final_train_loss", history.train_loss.back()},
      {"last_periodic_val_loss", history.val_loss.back()},
      {"history", history.to_json()},
      {"curve", {{"tokens", curve_tokens}, {"compute", curve_compute}}},
      {"artifact", nullptr}};
  fmt::print(
      "{} (D {}, L {}, H {}): {} parameters ({} non-embedding), {} tokens -> validation loss "
      "{:.3f} (perplexity {:.2f}), {:.1f}s, {:.0f} tokens/s\n",
      name, rung.embedding_dim, rung.num_layers, rung.num_heads, total, non_embedding, tokens,
      final_val, std::exp(final_val), seconds, static_cast<double>(tokens) / seconds);

  if (config.artifact.save) {
    nlohmann::json training_config = training_json(trainer_options, preset);
    training_config["ladder_preset"] = config.preset;
    const auto dir = g2c::pretraining::save_model_artifact(
        {.name = name,
         .module = "module-12",
         .source = "tinyshakespeare.txt",
         .tokenizer_artifact = std::string(g2c::tokenizer::kShakespeareTokenizer),
         .training_config = training_config,
         .seed = options.seed,
         .history = history,
         .notes = fmt::format("exercise 12_scaling, preset {}, rung {} of the ladder; validation "
                              "loss {:.4f} over the {} fixed final batches",
                              config.preset, label, final_val, preset.final_eval_batches)},
        model, config.artifact.folder_for(name, /*several=*/true));
    fmt::print("saved model artifact {}\n", dir.string());
    entry["artifact"] = dir.string();
  }
  return entry;
}

}  // namespace

int main(int argc, char** argv) {
  g2c::CommandLine app{
      "Module 12: the scaling ladder. ShakespeareLM at several sizes trained on the same tokens\n"
      "with module 10's Trainer; validation loss against parameters, compute and tokens, with\n"
      "fitted power laws. Writes scaling.json, figures and one model artifact per size."};
  g2c::exercises::CommonOptions options;
  options.out = "results/12-scaling";
  Config config;
  g2c::exercises::add_common_options(app, options);
  app.add_option(
         "--steps", options.steps,
         "Training steps of every rung (default: the preset's: smoke 12, cpu 500, gpu 5000)")
      .positive()
      .no_default();
  app.add_option("--preset", config.preset,
                 "smoke (seconds), cpu (four sizes up to 3M, under 10 min on 2 cores) or gpu "
                 "(five sizes up to 10M, the lesson's 5,000 steps of 32 x 128)")
      .one_of({"smoke", "cpu", "gpu"});
  app.add_option("--max-lr", config.max_lr,
                 "Peak learning rate of every rung (default: the preset's; min lr keeps its ratio)")
      .no_default();
  g2c::exercises::add_artifact_options(
      app, config.artifact,
      {.name = "",  // the ladder names its rungs
       .dir = "Folder for the model artifacts, one <name> folder each (default "
              "artifacts/models/<name>)",
       .no_save = "Save no model artifacts"});
  app.add_flag("--lesson-path", config.lesson_path,
               "Train with the course's own code (module 09's forward, module 03b's AdamW) "
               "instead of the fused fast path (g2c/transformer/fused.h)");
  return g2c::run_cli(app, argc, argv, [&] {
    if (config.max_lr && !(*config.max_lr > 0.0 && *config.max_lr < 1.0)) {
      throw g2c::ValueError(fmt::format(
          "--max-lr must be between 0 and 1, got {}; the cpu preset uses 1e-3", *config.max_lr));
    }
    const auto device = g2c::exercises::prepare(options);
    Preset preset = kPresets.at(config.preset);
    if (options.steps > 0) preset.steps = options.steps;

    // Module 10's data: the first million characters at --vocab 0 (V 264), split 90 / 10.
    const std::string text = g2c::exercises::load_tinyshakespeare().substr(0, config.characters);
    const auto tokenizer = g2c::exercises::course_tokenizer("bpe", text, /*vocab_size=*/0);
    const auto ids = torch::tensor(tokenizer.encode(text), torch::kLong);
    const auto split = g2c::pretraining::split_token_stream(ids, /*train_fraction=*/0.9);
    fmt::print("{}: {} characters -> {} tokens ({} train, {} validation)\n",
               tokenizer.description(), text.size(), ids.numel(), split.train.numel(),
               split.val.numel());
    const g2c::exercises::WindowSampler val_windows(split.val, preset.context_length,
                                                    preset.batch_size,
                                                    g2c::exercises::TargetRule::kNextToken, 0);
    const auto final_batches = val_windows.fixed(preset.final_eval_batches, options.seed);
    const Ladder ladder{options, config, preset, device, tokenizer, split, final_batches};

    auto rungs = nlohmann::json::array();
    for (const auto& rung : preset.rungs) rungs.push_back(train_rung(ladder, rung));

    const auto fit = g2c::exercises::fit_ladder(rungs, preset.warmup_steps);
    for (const auto& [key, what] : {std::pair{"loss_vs_parameters", "L(N), N non-embedding"},
                                    {"loss_vs_total_parameters", "L(N), N all parameters"},
                                    {"loss_vs_compute", "L(C) on the compute frontier"}}) {
      const auto& f = fit[key];
      if (f.contains("error")) {
        fmt::print("{}: no fit ({})\n", what, f["error"].get<std::string>());
      } else {
        fmt::print("{}: L = {:.3f} x^-{:.4f} (R^2 {:.3f}, {} points)\n", what, f["a"].get<double>(),
                   f["alpha"].get<double>(), f["r2"].get<double>(), f["points"].get<int>());
      }
    }

    auto result = g2c::exercises::run_metadata("12_scaling", options, device);
    result["preset"] = config.preset;
    auto ladder_json = nlohmann::json::array();
    for (const auto& rung : preset.rungs) {
      ladder_json.push_back({{"embedding_dim", rung.embedding_dim},
                             {"num_layers", rung.num_layers},
                             {"num_heads", rung.num_heads},
                             {"max_seq_len", preset.context_length}});
    }
    result["config"] = {
        {"rungs", ladder_json},
        {"path", config.lesson_path ? "lesson" : "fused"},
        {"training", training_json(recipe(preset, config, options.seed, device), preset)},
        {"tokenizer", g2c::exercises::tokenizer_json(tokenizer)},
        {"corpus",
         {{"source", "tinyshakespeare.txt"},
          {"characters", text.size()},
          {"tokens", ids.numel()},
          {"train_tokens", split.train.numel()},
          {"val_tokens", split.val.numel()}}}};
    result["rungs"] = rungs;
    result["fit"] = fit;
    result["ln_vocab"] = std::log(static_cast<double>(tokenizer.size()));
    result["figures"] = g2c::exercises::figures(g2c::exercises::ladder_figures(rungs, fit));
    const auto path = g2c::exercises::save_result(options, "scaling.json", result);
    g2c::exercises::plot_result(options, path);
  });
}

}  // namespace exercise_12_scaling
