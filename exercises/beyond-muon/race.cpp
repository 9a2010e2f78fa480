// Beyond muon, exercise 3 — the race, run fairly. ShakespeareLM-0.3M learns the first million
// characters of TinyShakespeare through module 10's Trainer twice over: with AdamW on every
// parameter, and with Muon on the Linear weights and AdamW on the rest (Trainer's "muon"). Each
// optimizer gets its own learning-rate sweep — a single shared rate would rig the race, since
// Muon's unit-size updates want rates on another scale than AdamW's — on the same seed, batches,
// schedule and token budget; the best of each sweep then runs again on a second seed. Reported:
// validation loss against steps and against training seconds, the sweep's landscape, the tokens
// Muon needs to reach AdamW's final loss, each optimizer's state in bytes, and Muon's step-time
// overhead at every rung of module 12's ladder. --violate-partition adds a Muon run whose token
// and position tables (the token table is also the tied head) go through Muon too.
#include <algorithm>
#include <chrono>
#include <cmath>
#include <limits>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "exercises/common/batches.h"
#include "exercises/common/cli.h"
#include "exercises/common/course_tokenizer.h"
#include "exercises/common/data.h"
#include "exercises/common/figures.h"
#include "exercises/common/timing.h"
#include "exercises/common/training.h"
#include "g2c/core/errors.h"
#include "g2c/core/progress.h"
#include "g2c/muon/optimizer.h"
#include "g2c/muon/partition.h"
#include "g2c/pretraining/data.h"
#include "g2c/pretraining/model_artifact.h"
#include "g2c/pretraining/trainer.h"
#include "g2c/transformer/fused.h"
#include "g2c/transformer/transformer_lm.h"

namespace exercise_beyond_muon_race {

namespace {

using g2c::exercises::synchronize;

using Clock = std::chrono::steady_clock;
using g2c::exercises::Figure;
using g2c::exercises::Series;
using g2c::pretraining::Trainer;
using g2c::pretraining::TrainerOptions;
using g2c::transformer::TransformerLMOptions;

/// D, L, H of a model (module 12's ladder; context = the preset's).
struct Shape {
  std::string label;
  std::int64_t embedding_dim, num_layers, num_heads;
};

const std::vector<Shape> kLadder = {
    {"0.1M", 48, 3, 3}, {"0.3M", 80, 4, 5}, {"0.8M", 128, 4, 4}, {"3M", 192, 6, 6}};
const Shape kSmokeShape = {"smoke", 16, 1, 2};

struct Preset {
  std::int64_t steps, batch_size, context_length, warmup_steps, eval_every, eval_iters;
  std::int64_t final_eval_batches;
  std::vector<double> adamw_lrs, muon_lrs;
  int seeds;
  int timing_repeats;  // of each measured region in the overhead table
};

// cpu: what a 2-core CPU runs in about ten minutes at 0.3M (nine to eleven trainings of 800 steps
// of 8 x 128 tokens); gpu: the tokens of 2,000 steps of 32 x 128 per run.
const std::map<std::string, Preset> kPresets = {
    {"smoke", {12, 4, 32, 2, 4, 2, 2, {1e-3, 3e-3}, {0.02, 0.05}, 2, 2}},
    {"cpu", {800, 8, 128, 50, 50, 8, 32, {3e-4, 1e-3, 3e-3}, {0.01, 0.02, 0.05}, 2, 5}},
    {"gpu", {2000, 32, 128, 200, 100, 20, 64, {3e-4, 1e-3, 3e-3}, {0.01, 0.02, 0.05}, 2, 20}},
};

struct Setup {
  const g2c::exercises::CommonOptions& options;
  const Preset& preset;
  TransformerLMOptions model;
  torch::Device device;
  g2c::pretraining::TokenSplit split;
  std::vector<g2c::exercises::TokenBatch> final_batches;
};

std::int64_t optimizer_state_bytes(const g2c::nn::Optimizer& optimizer) {
  if (const auto* muon = dynamic_cast<const g2c::muon::Muon*>(&optimizer)) {
    return g2c::muon::state_bytes(*muon);
  }
  return g2c::muon::state_bytes(dynamic_cast<const g2c::nn::AdamW&>(optimizer));
}

/// null for a number that is not finite (JSON has no NaN).
nlohmann::json finite_or_null(double value) {
  return std::isfinite(value) ? nlohmann::json(value) : nlohmann::json(nullptr);
}

/// One training run: `optimizer` ("adamw" or "muon") at peak rate `lr` (Muon's AdamW side at
/// `adamw_lr`), from the weights and batches of `seed`. Training seconds exclude evaluation.
nlohmann::json train_run(const Setup& setup, const std::string& optimizer, double lr,
                         double adamw_lr, std::uint64_t seed, bool violate_partition) {
  const auto& preset = setup.preset;
  torch::manual_seed(seed);  // the same initial weights for every run of this seed
  auto model = g2c::transformer::fused_transformer_lm(setup.model);
  const auto trainer_options =
      TrainerOptions(preset.batch_size, preset.context_length, preset.steps, lr)
          .min_lr(0.1 * lr)
          .warmup_steps(preset.warmup_steps)
          .grad_clip(1.0)
          .eval_iters(preset.eval_iters)
          .generator(at::make_generator<at::CPUGeneratorImpl>(seed))
          .device(setup.device.str())
          .optimizer(optimizer)
          .adamw_lr(adamw_lr);
  Trainer trainer(model, trainer_options);
  if (violate_partition) {
    trainer.optimizer = g2c::muon::scheduled_muon(*model, lr, adamw_lr, /*weight_decay=*/0.0,
                                                  /*tables_to_muon=*/true);
  }
  const std::string name = violate_partition ? fmt::format("muon lr {:g}, tables through Muon", lr)
                           : optimizer == "muon"
                               ? fmt::format("muon lr {:g} (AdamW side {:g})", lr, adamw_lr)
                               : fmt::format("adamw lr {:g}", lr);
  const std::int64_t tokens_per_step = preset.batch_size * preset.context_length;

  std::vector<double> train_loss, step_ms, val_loss, val_seconds;
  std::vector<std::int64_t> val_step, val_tokens;
  double training_seconds = 0.0;
  std::optional<std::int64_t> diverged_at;
  g2c::Progress progress(fmt::format("{} seed {}", name, seed), preset.steps, !setup.options.quiet);
  for (std::int64_t step = 0; step < preset.steps; ++step) {
    synchronize(setup.device);
    const auto start = Clock::now();
    const auto metrics = trainer.train_step(setup.split.train);
    synchronize(setup.device);
    const double seconds = std::chrono::duration<double>(Clock::now() - start).count();
    training_seconds += seconds;
    step_ms.push_back(1e3 * seconds);
    train_loss.push_back(metrics.loss);
    if (!std::isfinite(metrics.loss)) {  // a rate too high for this optimizer: the sweep says so
      diverged_at = step;
      break;
    }
    if ((step + 1) % preset.eval_every == 0 || step + 1 == preset.steps) {
      val_step.push_back(step);
      val_tokens.push_back((step + 1) * tokens_per_step);
      val_seconds.push_back(training_seconds);
      val_loss.push_back(trainer.evaluate(setup.split.val));
      progress.update(step + 1,
                      fmt::format("loss {:.3f} val {:.3f}", metrics.loss, val_loss.back()));
    }
  }
  const double final_val = diverged_at ? std::numeric_limits<double>::infinity()
                                       : g2c::exercises::mean_loss(*model, setup.final_batches,
                                                                   /*fused=*/true);
  progress.finish(diverged_at ? fmt::format("diverged at step {}", *diverged_at)
                              : fmt::format("final validation loss {:.4f}", final_val));

  nlohmann::json train_loss_json = nlohmann::json::array();
  for (const double loss : train_loss) train_loss_json.push_back(finite_or_null(loss));
  nlohmann::json run = {
      {"name", name},
      {"optimizer", optimizer},
      {"lr", lr},
      {"adamw_lr", optimizer == "muon" ? nlohmann::json(adamw_lr) : nlohmann::json(nullptr)},
      {"seed", seed},
      {"tables_through_muon", violate_partition},
      {"final_val_loss", finite_or_null(final_val)},
      {"diverged_at", diverged_at ? nlohmann::json(*diverged_at) : nlohmann::json(nullptr)},
      {"training_seconds", training_seconds},
      {"median_step_ms", g2c::exercises::median(step_ms)},
      {"optimizer_state_bytes", optimizer_state_bytes(*trainer.optimizer)},
      {"train_loss", train_loss_json},
      {"val_step", val_step},
      {"val_tokens", val_tokens},
      {"val_seconds", val_seconds},
      {"val_loss", val_loss}};
  return run;
}

double final_loss(const nlohmann::json& run) {
  return run["final_val_loss"].is_null() ? std::numeric_limits<double>::infinity()
                                         : run["final_val_loss"].get<double>();
}

/// The index (into `runs`) of the lowest final loss among `indices`.
std::size_t best_of(const nlohmann::json& runs, const std::vector<std::size_t>& indices) {
  return *std::min_element(indices.begin(), indices.end(), [&](std::size_t a, std::size_t b) {
    return final_loss(runs[a]) < final_loss(runs[b]);
  });
}

/// Where `run` first reached `target` (its first evaluation at or below it): the `series` value
/// there ("val_tokens" or "val_seconds"), or null.
nlohmann::json when_reached(const nlohmann::json& run, double target, const char* series) {
  const auto& losses = run["val_loss"];
  for (std::size_t i = 0; i < losses.size(); ++i) {
    if (losses[i].get<double>() <= target) return run[series][i];
  }
  return nullptr;
}

/// `value` / `total`, or null when `value` is null.
nlohmann::json share_of(const nlohmann::json& value, const nlohmann::json& total) {
  return value.is_null() ? nlohmann::json(nullptr)
                         : nlohmann::json(value.get<double>() / total.get<double>());
}

/// Milliseconds of one forward and backward pass, one AdamW step and one Muon step (and of the
/// Newton–Schulz passes alone) at one model size, medians of `repeats`.
nlohmann::json measure_overhead(const Shape& shape, const Preset& preset,
                                const torch::Device& device, std::int64_t vocab_size,
                                const torch::Tensor& train_ids) {
  const auto options = TransformerLMOptions(vocab_size, shape.embedding_dim, shape.num_layers,
                                            shape.num_heads, preset.context_length);
  torch::manual_seed(0);
  auto model = g2c::transformer::fused_transformer_lm(options);
  model->to(device);
  const auto groups = g2c::muon::muon_partition(*model);
  g2c::nn::AdamW adamw(model->parameters(), 1e-4);
  g2c::muon::Muon muon(groups.muon, groups.adamw, g2c::muon::MuonOptions().lr(1e-4));
  g2c::exercises::WindowSampler sampler(train_ids, preset.context_length, preset.batch_size,
                                        g2c::exercises::TargetRule::kNextToken, 0);
  const auto batch = sampler.next();
  const auto inputs = batch.inputs.to(device);
  const auto targets = batch.targets.to(device);
  const auto time_ms = [&](const std::function<void()>& work) {
    std::vector<double> ms;
    for (int i = 0; i <= preset.timing_repeats; ++i) {  // the first is a warm-up, not counted
      synchronize(device);
      const auto start = Clock::now();
      work();
      synchronize(device);
      if (i > 0) ms.push_back(1e3 * std::chrono::duration<double>(Clock::now() - start).count());
    }
    return g2c::exercises::median(ms);
  };
  const double forward_backward = time_ms([&] {
    model->zero_grad();
    g2c::exercises::next_token_loss(model->forward(inputs), targets, /*fused=*/true).backward();
  });
  const double adamw_ms = time_ms([&] { adamw.step(); });
  const double muon_ms = time_ms([&] { muon.step(); });
  const double newton_schulz_ms = time_ms([&] {
    for (const auto& p : groups.muon) g2c::muon::zeropower_via_newtonschulz(p.grad());
  });
  const double adamw_total = forward_backward + adamw_ms;
  nlohmann::json entry = {{"model", shape.label},
                          {"parameters", g2c::transformer::parameter_count(options)},
                          {"muon_matrices", groups.muon.size()},
                          {"forward_backward_ms", forward_backward},
                          {"adamw_step_ms", adamw_ms},
                          {"muon_step_ms", muon_ms},
                          {"newton_schulz_ms", newton_schulz_ms},
                          {"muon_overhead_share", (muon_ms - adamw_ms) / adamw_total},
                          {"newton_schulz_share", newton_schulz_ms / (forward_backward + muon_ms)}};
  fmt::print(
      "{:>5}: forward+backward {:7.2f} ms, AdamW step {:6.2f} ms, Muon step {:6.2f} ms "
      "(Newton-Schulz {:6.2f} ms): Muon adds {:+.1f} % to a step\n",
      shape.label, forward_backward, adamw_ms, muon_ms, newton_schulz_ms,
      100.0 * (muon_ms - adamw_ms) / adamw_total);
  return entry;
}

}  // namespace

int main(int argc, char** argv) {
  g2c::CommandLine app{
      "Beyond muon, exercise 3: Muon against AdamW on ShakespeareLM through module 10's Trainer,\n"
      "each at the best rate of its own sweep, on two seeds; validation loss against steps and\n"
      "seconds, tokens to match, optimizer state, and Muon's overhead at every ladder rung.\n"
      "Writes race.json and race_*.png."};
  g2c::exercises::CommonOptions options;
  options.out = "results/beyond-muon";
  g2c::exercises::add_common_options(app, options);
  std::string preset_name = "cpu";
  std::string model_label = "0.3M";
  bool violate_partition = false;
  std::optional<std::int64_t> steps;
  app.add_option("--preset", preset_name,
                 "smoke (seconds), cpu (0.3M, about ten minutes on 2 cores) or gpu (ten times the "
                 "tokens per run)")
      .one_of({"smoke", "cpu", "gpu"});
  app.add_option("--model", model_label, "The model of the race: a rung of module 12's ladder")
      .one_of({"0.1M", "0.3M", "0.8M", "3M"});
  app.add_option("--steps", steps, "Steps of every run (default: the preset's)").no_default();
  app.add_flag("--violate-partition", violate_partition,
               "Add a run of the best Muon rate with the token and position tables through Muon");
  return g2c::run_cli(app, argc, argv, [&] {
    const auto device = g2c::exercises::prepare(options);
    Preset preset = kPresets.at(preset_name);
    if (steps) {
      if (*steps < 1) throw g2c::ValueError(fmt::format("--steps must be >= 1, got {}", *steps));
      preset.steps = *steps;
      preset.warmup_steps = std::min(preset.warmup_steps, *steps / 10);
      preset.eval_every = std::max<std::int64_t>(1, std::min(preset.eval_every, *steps / 4));
    }
    const Shape shape = preset_name == "smoke"
                            ? kSmokeShape
                            : *std::find_if(kLadder.begin(), kLadder.end(),
                                            [&](const Shape& s) { return s.label == model_label; });

    // Module 10's data: the first million characters at V 264 (one token per byte), split 90/10.
    const std::string text = g2c::exercises::load_tinyshakespeare().substr(0, 1'000'000);
    const auto tokenizer = g2c::exercises::course_tokenizer("bpe", text, /*vocab_size=*/0);
    const auto ids = torch::tensor(tokenizer.encode(text), torch::kLong);
    const auto split = g2c::pretraining::split_token_stream(ids, /*train_fraction=*/0.9);
    const g2c::exercises::WindowSampler val_windows(split.val, preset.context_length,
                                                    preset.batch_size,
                                                    g2c::exercises::TargetRule::kNextToken, 0);
    Setup setup{options,
                preset,
                TransformerLMOptions(tokenizer.size(), shape.embedding_dim, shape.num_layers,
                                     shape.num_heads, preset.context_length),
                device,
                split,
                val_windows.fixed(preset.final_eval_batches, options.seed)};
    // The model's split between the two optimizers: for the header line and the state bill.
    std::int64_t matrix_elements = 0, other_elements = 0, matrices = 0;
    {
      auto probe = g2c::transformer::TransformerLM(setup.model);
      const auto groups = g2c::muon::muon_partition(*probe);
      matrices = static_cast<std::int64_t>(groups.muon.size());
      for (const auto& p : groups.muon) matrix_elements += p.numel();
      for (const auto& p : groups.adamw) other_elements += p.numel();
    }
    fmt::print(
        "ShakespeareLM-{} (D {}, L {}, H {}): {} parameters, {} of them in {} matrices for Muon; "
        "{} steps of {} x {} tokens per run\n",
        shape.label, shape.embedding_dim, shape.num_layers, shape.num_heads,
        matrix_elements + other_elements, matrix_elements, matrices, preset.steps,
        preset.batch_size, preset.context_length);
    std::fflush(stdout);  // before the runs' progress lines on stderr

    // 1. The sweeps on the first seed: AdamW's, then Muon's with its AdamW side at AdamW's best.
    auto runs = nlohmann::json::array();
    const auto run = [&](const std::string& optimizer, double lr, double adamw_lr,
                         std::uint64_t seed, bool violate) {
      runs.push_back(train_run(setup, optimizer, lr, adamw_lr, seed, violate));
      return runs.size() - 1;
    };
    const std::uint64_t seed = options.seed;
    // A sweep must bracket its best rate: while the best is the highest (lowest) rate tried, one
    // more run at three times (a third of) it, at most twice.
    const auto run_sweep = [&](const std::string& optimizer, std::vector<double> rates,
                               double adamw_lr) {
      std::sort(rates.begin(), rates.end());
      std::vector<std::size_t> indices;
      for (const double lr : rates) indices.push_back(run(optimizer, lr, adamw_lr, seed, false));
      for (int extension = 0; extension < 2; ++extension) {
        const double best = runs[best_of(runs, indices)]["lr"];
        const double lowest = runs[indices.front()]["lr"];
        const double highest = runs[indices.back()]["lr"];
        if (best == highest && rates.size() > 1) {
          indices.push_back(run(optimizer, 3.0 * highest, adamw_lr, seed, false));
        } else if (best == lowest && rates.size() > 1) {
          indices.insert(indices.begin(), run(optimizer, lowest / 3.0, adamw_lr, seed, false));
        } else {
          break;
        }
      }
      return indices;  // in order of rate
    };
    const std::vector<std::size_t> adamw_sweep = run_sweep("adamw", preset.adamw_lrs, 0.0);
    const std::size_t best_adamw = best_of(runs, adamw_sweep);
    const double adamw_lr = runs[best_adamw]["lr"];
    const std::vector<std::size_t> muon_sweep = run_sweep("muon", preset.muon_lrs, adamw_lr);
    const std::size_t best_muon = best_of(runs, muon_sweep);
    const double muon_lr = runs[best_muon]["lr"];

    // 2. The two winners again on further seeds.
    std::vector<std::pair<std::size_t, std::size_t>> pairs = {{best_adamw, best_muon}};
    for (int s = 1; s < preset.seeds; ++s) {
      const auto a = run("adamw", adamw_lr, 0.0, seed + s, false);
      const auto m = run("muon", muon_lr, adamw_lr, seed + s, false);
      pairs.emplace_back(a, m);
    }
    std::optional<std::size_t> violation;
    if (violate_partition) violation = run("muon", muon_lr, adamw_lr, seed, true);

    // 3. What the race says.
    auto per_seed = nlohmann::json::array();
    for (const auto& [a, m] : pairs) {
      const double adamw_final = runs[a]["val_loss"].back().get<double>();
      const double muon_final = runs[m]["val_loss"].back().get<double>();
      per_seed.push_back(
          {{"seed", runs[a]["seed"]},
           {"adamw_run", a},
           {"muon_run", m},
           {"adamw_final_val_loss", final_loss(runs[a])},
           {"muon_final_val_loss", final_loss(runs[m])},
           // Shares of the whole run's tokens (or of AdamW's training seconds) that one optimizer
           // needed to reach the other's last periodic validation loss; null: not reached.
           {"muon_tokens_to_adamw_final", share_of(when_reached(runs[m], adamw_final, "val_tokens"),
                                                   runs[a]["val_tokens"].back())},
           {"adamw_tokens_to_muon_final", share_of(when_reached(runs[a], muon_final, "val_tokens"),
                                                   runs[m]["val_tokens"].back())},
           {"muon_seconds_to_adamw_final",
            share_of(when_reached(runs[m], adamw_final, "val_seconds"),
                     runs[a]["val_seconds"].back())},
           {"seconds_per_step_ratio",
            runs[m]["median_step_ms"].get<double>() / runs[a]["median_step_ms"].get<double>()}});
      const auto& row = per_seed.back();
      const auto percent = [](const nlohmann::json& share) {
        return share.is_null() ? std::string("not reached")
                               : fmt::format("{:.0f} %", 100.0 * share.get<double>());
      };
      fmt::print(
          "seed {}: AdamW lr {:g} -> {:.4f}, Muon lr {:g} -> {:.4f}; Muon reaches AdamW's final "
          "loss with {} of the tokens and {} of AdamW's seconds; AdamW reaches Muon's: {}\n",
          row["seed"].get<std::uint64_t>(), adamw_lr, final_loss(runs[a]), muon_lr,
          final_loss(runs[m]), percent(row["muon_tokens_to_adamw_final"]),
          percent(row["muon_seconds_to_adamw_final"]), percent(row["adamw_tokens_to_muon_final"]));
    }
    const auto landscape = [&](const std::vector<std::size_t>& sweep, std::size_t best) {
      auto rows = nlohmann::json::array();
      for (const auto i : sweep) {
        rows.push_back(
            {{"lr", runs[i]["lr"]},
             {"lr_over_best", runs[i]["lr"].get<double>() / runs[best]["lr"].get<double>()},
             {"final_val_loss", runs[i]["final_val_loss"]},
             {"loss_above_best", finite_or_null(final_loss(runs[i]) - final_loss(runs[best]))}});
      }
      return rows;
    };

    // 4. Step-time overhead at every rung, and the state bill.
    std::vector<Shape> rungs = preset_name == "smoke" ? std::vector<Shape>{kSmokeShape} : kLadder;
    auto overhead = nlohmann::json::array();
    for (const auto& rung : rungs) {
      overhead.push_back(measure_overhead(rung, preset, device, tokenizer.size(), split.train));
    }
    const auto& adamw_run = runs[best_adamw];
    const auto& muon_run = runs[best_muon];
    const nlohmann::json state = {
        {"computed",
         {{"adamw_everything", 4 * 2 * (matrix_elements + other_elements)},
          {"muon_hybrid", 4 * (matrix_elements + 2 * other_elements)}}},
        {"measured",
         {{"adamw_everything", adamw_run["optimizer_state_bytes"]},
          {"muon_hybrid", muon_run["optimizer_state_bytes"]}}},
        {"matrix_parameters", matrix_elements},
        {"other_parameters", other_elements}};
    fmt::print(
        "optimizer state: AdamW on everything {} bytes, the Muon hybrid {} bytes ({:.0f} %)\n",
        adamw_run["optimizer_state_bytes"].get<std::int64_t>(),
        muon_run["optimizer_state_bytes"].get<std::int64_t>(),
        100.0 * muon_run["optimizer_state_bytes"].get<double>() /
            adamw_run["optimizer_state_bytes"].get<double>());

    auto result = g2c::exercises::run_metadata("beyond_muon_race", options, device);
    result["config"] = {
        {"preset", preset_name},
        {"model",
         {{"label", shape.label}, {"config", g2c::pretraining::model_config_json(setup.model)}}},
        {"steps", preset.steps},
        {"batch_size", preset.batch_size},
        {"context_length", preset.context_length},
        {"tokens_per_run", preset.steps * preset.batch_size * preset.context_length},
        {"warmup_steps", preset.warmup_steps},
        {"schedule", "linear warmup, cosine to 0.1 x peak"},
        {"grad_clip", 1.0},
        {"weight_decay", 0.0},
        {"eval_every", preset.eval_every},
        {"eval_iters", preset.eval_iters},
        {"final_eval_batches", preset.final_eval_batches},
        {"adamw_lrs", preset.adamw_lrs},
        {"muon_lrs", preset.muon_lrs},
        {"seeds", preset.seeds},
        {"corpus", nlohmann::json::object()}};
    result["config"]["corpus"] = {{"characters", text.size()},
                                  {"train_tokens", split.train.numel()},
                                  {"val_tokens", split.val.numel()}};
    result["runs"] = runs;
    result["best"] = {{"adamw", {{"run", best_adamw}, {"lr", adamw_lr}}},
                      {"muon", {{"run", best_muon}, {"lr", muon_lr}, {"adamw_lr", adamw_lr}}}};
    result["per_seed"] = per_seed;
    result["landscape"] = {{"adamw", landscape(adamw_sweep, best_adamw)},
                           {"muon", landscape(muon_sweep, best_muon)}};
    result["violation"] =
        violation ? nlohmann::json(
                        {{"run", *violation},
                         {"final_val_loss", runs[*violation]["final_val_loss"]},
                         {"proper_partition_final_val_loss", runs[best_muon]["final_val_loss"]}})
                  : nlohmann::json(nullptr);
    result["overhead"] = overhead;
    result["state_bytes"] = state;

    auto by_tokens = Figure::line("race_tokens.png", "Validation loss, best rate of each sweep",
                                  "training tokens", "validation loss");
    auto by_seconds = Figure::line("race_seconds.png", "Validation loss against training time",
                                   "training seconds (evaluation excluded)", "validation loss");
    for (std::size_t p = 0; p < pairs.size(); ++p) {
      const auto style = p == 0 ? std::string("-") : std::string("--");
      for (const auto& [index, label, color] :
           {std::tuple{pairs[p].first, "AdamW", "C0"}, std::tuple{pairs[p].second, "Muon", "C1"}}) {
        const auto series_label =
            fmt::format("{} lr {:g}, seed {}", label, runs[index]["lr"].get<double>(),
                        runs[index]["seed"].get<std::uint64_t>());
        by_tokens.add(Series(series_label, fmt::format("/runs/{}/val_tokens", index),
                             fmt::format("/runs/{}/val_loss", index))
                          .style(style)
                          .color(color));
        by_seconds.add(Series(series_label, fmt::format("/runs/{}/val_seconds", index),
                              fmt::format("/runs/{}/val_loss", index))
                           .style(style)
                           .color(color));
      }
    }
    if (violation) {
      by_tokens.add(Series("Muon, tables through Muon",
                           fmt::format("/runs/{}/val_tokens", *violation),
                           fmt::format("/runs/{}/val_loss", *violation))
                        .color("C3"));
    }
    auto sweep = Figure::line("race_sweep.png", "Final validation loss across each sweep",
                              "peak learning rate", "validation loss (fixed batches)")
                     .logx();
    nlohmann::json sweep_points = {
        {"adamw", {{"lr", nlohmann::json::array()}, {"loss", nlohmann::json::array()}}},
        {"muon", {{"lr", nlohmann::json::array()}, {"loss", nlohmann::json::array()}}}};
    for (const auto& [key, indices] :
         {std::pair{"adamw", &adamw_sweep}, std::pair{"muon", &muon_sweep}}) {
      for (const auto i : *indices) {
        sweep_points[key]["lr"].push_back(runs[i]["lr"]);
        sweep_points[key]["loss"].push_back(runs[i]["final_val_loss"]);
      }
    }
    result["sweep"] = sweep_points;
    sweep.add(Series("AdamW", "/sweep/adamw/lr", "/sweep/adamw/loss").marker("o"));
    sweep.add(Series("Muon", "/sweep/muon/lr", "/sweep/muon/loss").marker("s"));
    auto timing = Figure::bar("race_overhead.png", "One training step's parts at each model size",
                              "model", "ms (median)")
                      .logy();
    nlohmann::json bars = {{"model", nlohmann::json::array()}};
    for (const auto& key :
         {"forward_backward_ms", "adamw_step_ms", "muon_step_ms", "newton_schulz_ms"}) {
      bars[key] = nlohmann::json::array();
      for (const auto& entry : overhead) bars[key].push_back(entry[key]);
    }
    for (const auto& entry : overhead) bars["model"].push_back(entry["model"]);
    result["overhead_bars"] = bars;
    timing.add(
        Series("forward + backward", "/overhead_bars/model", "/overhead_bars/forward_backward_ms"));
    timing.add(Series("AdamW step", "/overhead_bars/model", "/overhead_bars/adamw_step_ms"));
    timing.add(Series("Muon step", "/overhead_bars/model", "/overhead_bars/muon_step_ms"));
    timing.add(
        Series("Newton-Schulz alone", "/overhead_bars/model", "/overhead_bars/newton_schulz_ms"));
    result["figures"] = g2c::exercises::figures({by_tokens, by_seconds, sweep, timing});
    const auto path = g2c::exercises::save_result(options, "race.json", result);
    g2c::exercises::plot_result(options, path);
  });
}

}  // namespace exercise_beyond_muon_race
