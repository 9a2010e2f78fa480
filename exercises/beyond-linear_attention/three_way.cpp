// Beyond linear_attention, exercise 2 — full, linear and hybrid at ShakespeareLM-0.8M's size. Three
// HybridTransformerLMs of the same dimensions (D 128, H 4, 4 layers, context 128, V 264): every
// layer full attention (module 09's architecture), every layer linear, and the 3:1 hybrid
// [L, L, L, F], each from the same seed through module 10's Trainer on module 10's data with the
// same batches and steps: parameter counts (linear layers add H decay scalars each), validation
// loss against steps, a sample of each, and the decays the linear layers learned (exercise 4 reads
// them from this file).
#include <cstdint>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "exercises/common/batches.h"
#include "exercises/common/cli.h"
#include "exercises/common/course_tokenizer.h"
#include "exercises/common/data.h"
#include "exercises/common/figures.h"
#include "exercises/common/generation.h"
#include "exercises/common/training.h"
#include "g2c/core/progress.h"
#include "g2c/linear_attention/hybrid.h"
#include "g2c/pretraining/data.h"
#include "g2c/pretraining/trainer.h"

namespace exercise_beyond_la_three_way {

namespace {

using g2c::exercises::Figure;
using g2c::exercises::Series;
using g2c::linear_attention::HybridTransformerLM;
using g2c::pretraining::Trainer;
using g2c::pretraining::TrainerOptions;

struct Variant {
  std::string name;
  std::vector<std::string> pattern;
};

std::vector<Variant> variants(std::int64_t layers) {
  std::vector<std::string> hybrid(layers, "linear");
  hybrid.back() = "full";  // the 3:1 pattern at 4 layers: full attention on top
  return {{"full", std::vector<std::string>(layers, "full")},
          {"linear", std::vector<std::string>(layers, "linear")},
          {"hybrid", hybrid}};
}

}  // namespace

int main(int argc, char** argv) {
  g2c::CommandLine app{
      "Beyond linear_attention, exercise 2: full, linear and [L, L, L, F] models of\n"
      "ShakespeareLM-0.8M's size, the same batches and steps through module 10's Trainer;\n"
      "parameter counts, validation loss, samples and the learned decays. Writes three_way.json\n"
      "and three_way_loss.png."};
  g2c::exercises::CommonOptions options;
  options.out = "results/beyond-linear_attention";
  options.steps = 300;
  g2c::exercises::add_common_options(app, options);
  std::int64_t dim = 128, layers = 4, heads = 4, context = 128, batch = 8, eval_every = 25;
  std::int64_t sample_tokens = 200;
  double max_lr = 1e-3;
  app.add_option("--embedding-dim", dim, "D of the three models").range(4, 4096);
  app.add_option("--layers", layers, "Layers (the hybrid's last one is full)").range(1, 64);
  app.add_option("--heads", heads, "Heads (must divide D)").range(1, 64);
  app.add_option("--context", context, "Tokens per sequence").range(2, 4096);
  app.add_option("--batch", batch, "Sequences per step").range(1, 4096);
  app.add_option("--eval-every", eval_every, "Steps between validation losses").range(1, 100000);
  app.add_option("--max-lr", max_lr, "AdamW's peak learning rate").range(1e-6, 1.0);
  app.add_option("--sample-tokens", sample_tokens, "Tokens sampled from each model")
      .range(0, 10000);
  return g2c::run_cli(app, argc, argv, [&] {
    const auto device = g2c::exercises::prepare(options);
    const std::int64_t steps = options.steps;
    eval_every = std::min(eval_every, steps);
    const std::string text = g2c::exercises::load_tinyshakespeare().substr(0, 1'000'000);
    const auto tokenizer = g2c::exercises::course_tokenizer("bpe", text, /*vocab_size=*/0);
    const auto ids = torch::tensor(tokenizer.encode(text), torch::kLong);
    const auto split = g2c::pretraining::split_token_stream(ids, /*train_fraction=*/0.9);
    const auto final_batches =
        g2c::exercises::WindowSampler(split.val, context, batch,
                                      g2c::exercises::TargetRule::kNextToken, 0)
            .fixed(32, options.seed);
    const std::vector<std::int64_t> prompt(split.val.data_ptr<std::int64_t>(),
                                           split.val.data_ptr<std::int64_t>() + context);

    auto runs = nlohmann::json::array();
    for (const auto& variant : variants(layers)) {
      torch::manual_seed(options.seed);
      HybridTransformerLM model(tokenizer.size(), dim, variant.pattern, heads, context);
      const auto module = std::static_pointer_cast<g2c::nn::Module>(model.ptr());
      Trainer trainer(module, TrainerOptions(batch, context, steps, max_lr)
                                  .min_lr(0.1 * max_lr)
                                  .warmup_steps(std::min<std::int64_t>(30, steps / 10))
                                  .grad_clip(1.0)
                                  .eval_every(eval_every)
                                  .eval_iters(8)
                                  .log_every(eval_every)
                                  .generator(at::make_generator<at::CPUGeneratorImpl>(options.seed))
                                  .device(device.str())
                                  .optimizer("adamw"));
      g2c::Progress progress(variant.name, steps, !options.quiet);
      const auto history = trainer.train(
          split.train, g2c::pretraining::RunOptions().val_ids(split.val).on_log(
                           [&](const g2c::pretraining::LogEvent& event) {
                             progress.update(event.step + 1,
                                             event.val_loss
                                                 ? fmt::format("loss {:.3f} val {:.3f}",
                                                               event.train_loss, *event.val_loss)
                                                 : fmt::format("loss {:.3f}", event.train_loss));
                           }));
      const double final_val = g2c::exercises::mean_loss(*model, final_batches);
      progress.finish(fmt::format("final validation loss {:.4f}", final_val));

      // The decays each linear layer learned, per head (1 forgets nothing, 0.5 halves per step).
      nlohmann::json decays = nlohmann::json::array();
      for (std::size_t l = 0; l < model->blocks.size(); ++l) {
        if (!model->blocks[l]->linear_attn) continue;
        const auto gamma = model->blocks[l]->linear_attn->decay().detach().cpu().to(torch::kDouble);
        decays.push_back(
            {{"layer", l},
             {"decay", std::vector<double>(gamma.data_ptr<double>(),
                                           gamma.data_ptr<double>() + gamma.numel())}});
      }
      model->eval();
      const auto sample =
          g2c::exercises::continue_text(module, tokenizer.size(), context, prompt, sample_tokens,
                                        at::make_generator<at::CPUGeneratorImpl>(options.seed));
      model->train();
      runs.push_back({{"name", variant.name},
                      {"pattern", variant.pattern},
                      {"parameters", model->parameter_count()},
                      {"final_val_loss", final_val},
                      {"history", history.to_json()},
                      {"learned_decays", decays},
                      {"sample", tokenizer.decode(sample)}});
    }
    const std::int64_t full_parameters = runs[0]["parameters"].get<std::int64_t>();
    for (const auto& run : runs) {
      fmt::print("{:<7} {:>8} parameters (full + {:>2}): final validation loss {:.4f}\n",
                 run["name"].get<std::string>(), run["parameters"].get<std::int64_t>(),
                 run["parameters"].get<std::int64_t>() - full_parameters,
                 run["final_val_loss"].get<double>());
    }
    for (const auto& run : runs) {
      fmt::print("\n--- {} ---\n{}\n", run["name"].get<std::string>(),
                 run["sample"].get<std::string>());
    }

    auto result = g2c::exercises::run_metadata("beyond_la_three_way", options, device);
    result["config"] = {{"steps", steps},
                        {"batch_size", batch},
                        {"context_length", context},
                        {"embedding_dim", dim},
                        {"num_layers", layers},
                        {"num_heads", heads},
                        {"max_lr", max_lr},
                        {"eval_every", eval_every},
                        {"final_eval_batches", 32},
                        {"tokenizer", g2c::exercises::tokenizer_json(tokenizer)}};
    result["runs"] = runs;
    auto loss = Figure::line("three_way_loss.png",
                             fmt::format("Full, linear and hybrid at D {}, {} layers", dim, layers),
                             "step", "validation loss");
    for (std::size_t r = 0; r < runs.size(); ++r) {
      loss.add(Series(runs[r]["name"].get<std::string>(),
                      fmt::format("/runs/{}/history/val_step", r),
                      fmt::format("/runs/{}/history/val_loss", r))
                   .marker("o"));
    }
    result["figures"] = g2c::exercises::figures({loss});
    const auto path = g2c::exercises::save_result(options, "three_way.json", result);
    g2c::exercises::plot_result(options, path);
  });
}

}  // namespace exercise_beyond_la_three_way
