// Exercise 09.4 — pre-norm vs post-norm. The same TransformerLM (D 64, L 6, H 4, context 32,
// vocabulary 50, model seed 1) trained on the lesson's toy stream twice, from the same weights and
// on the same batches: once wired pre-norm (the course's Block), once post-norm (the 2017 order,
// x = ln(x + sublayer(x))). The lesson's settings: plain SGD, lr 1e-3, batch 32, 300 steps.
#include <cmath>

#include <fmt/format.h>

#include "exercises/09-transformer/toy_stream.h"
#include "exercises/09-transformer/train_on_stream.h"
#include "exercises/09-transformer/variants.h"
#include "exercises/common/cli.h"
#include "exercises/common/figures.h"
#include "g2c/transformer/transformer_lm.h"

namespace exercise_09_pre_post_norm {

namespace {

struct Config {
  std::int64_t vocab_size = 50;  // ids 0–9 occur; a uniform guess over 50 costs ln 50 ≈ 3.912
  std::int64_t embedding_dim = 64;
  std::int64_t num_layers = 6;
  std::int64_t num_heads = 4;
  std::int64_t repeats = 200;  // 3,200 tokens
  std::uint64_t model_seed = 1;
};

}  // namespace

int main(int argc, char** argv) {
  g2c::CommandLine app{"Module 09, exercise 4: pre-norm vs post-norm on the toy stream"};
  g2c::exercises::CommonOptions options;
  options.out = "results/09-transformer";
  options.steps = 300;
  Config config;
  g2c::exercises::toy::TrainSettings train;
  g2c::exercises::add_common_options(app, options);
  g2c::exercises::toy::add_train_options(app, train);
  app.add_option("--layers", config.num_layers, "Blocks L").positive();
  app.add_option("--dim", config.embedding_dim, "Embedding dimension D");
  return g2c::run_cli(app, argc, argv, [&] {
    const auto device = g2c::exercises::prepare(options);
    train.steps = options.steps;
    train.batch_seed = options.seed;
    const auto stream = g2c::exercises::toy::toy_stream(config.repeats);
    const auto model_options = g2c::transformer::TransformerLMOptions(
        config.vocab_size, config.embedding_dim, config.num_layers, config.num_heads,
        train.context_length);
    using g2c::exercises::Figure;
    using g2c::exercises::Series;
    nlohmann::json runs = nlohmann::json::object();
    auto figure = Figure::line("pre_post_norm.png",
                               fmt::format("Pre-norm vs post-norm, L = {} ({}, lr {})",
                                           config.num_layers, train.optimizer, train.lr),
                               "step", "training loss");
    for (const auto wiring :
         {g2c::exercises::toy::Wiring::pre_norm, g2c::exercises::toy::Wiring::post_norm}) {
      const auto name = g2c::exercises::toy::wiring_name(wiring);
      torch::manual_seed(config.model_seed);
      g2c::exercises::toy::WiredTransformerLM model(g2c::transformer::TransformerLM(model_options),
                                                    wiring);
      model->to(device);
      const auto training =
          g2c::exercises::toy::train_on_stream(*model, stream, train, name, !options.quiet);
      fmt::print("{:<10} loss {:.4f} -> {:.4f} in {:.1f}s\n", name, training.train_loss.front(),
                 training.final_train_loss, training.wall_seconds);
      runs[name] = g2c::exercises::toy::curve_json(training);
      figure.add(
          Series(name, fmt::format("/runs/{}/steps", name), fmt::format("/runs/{}/loss", name)));
    }
    const double baseline = std::log(static_cast<double>(config.vocab_size));
    fmt::print("ln V = {:.3f} (a uniform guess)\n", baseline);
    auto result = g2c::exercises::run_metadata("09_pre_post_norm", options, device);
    result["config"] = {{"vocab_size", config.vocab_size},
                        {"embedding_dim", config.embedding_dim},
                        {"num_layers", config.num_layers},
                        {"num_heads", config.num_heads},
                        {"max_seq_len", train.context_length},
                        {"stream_tokens", stream.numel()},
                        {"model_seed", config.model_seed},
                        {"train", g2c::exercises::toy::settings_json(train)}};
    result["baseline_ln_vocab"] = baseline;
    result["runs"] = runs;
    result["figures"] = g2c::exercises::figures({figure.hline(baseline, "ln V")});
    const auto path = g2c::exercises::save_result(options, "pre_post_norm.json", result);
    g2c::exercises::plot_result(options, path);
  });
}

}  // namespace exercise_09_pre_post_norm
