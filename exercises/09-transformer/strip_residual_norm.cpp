// Exercise 09.5 — what residuals and LayerNorm are for: the toy-stream model (D 48, H 4) at depths
// 1, 2, 4 and 8, wired three ways from the same weights and trained on the same batches — the
// course's pre-norm block, the block without its residual connections (x = attn(ln1 x);
// x = ffn(ln2 x)), and without its LayerNorms (x = x + attn(x); x = x + ffn(x)). The lesson's
// settings: plain SGD, lr 1e-3, batch 32, 200 steps, model seed 2. One figure per wiring (loss
// curves by depth) and one of final loss against depth.
#include <cmath>

#include <fmt/format.h>

#include "exercises/09-transformer/toy_stream.h"
#include "exercises/09-transformer/train_on_stream.h"
#include "exercises/09-transformer/variants.h"
#include "exercises/common/cli.h"
#include "exercises/common/figures.h"
#include "g2c/core/errors.h"
#include "g2c/transformer/transformer_lm.h"

namespace exercise_09_strip_residual_norm {

namespace {

struct Config {
  std::vector<std::int64_t> depths{1, 2, 4, 8};
  // The lesson strips one piece at a time; the intact pre-norm block is the baseline they are
  // read against.
  std::vector<std::string> wirings{"pre_norm", "no_residual", "no_norm"};
  std::int64_t vocab_size = 50;
  std::int64_t embedding_dim = 48;
  std::int64_t num_heads = 4;
  std::int64_t repeats = 200;
  std::uint64_t model_seed = 2;
};

}  // namespace

int main(int argc, char** argv) {
  g2c::CommandLine app{
      "Module 09, exercise 5: strip the residuals or the LayerNorms, at depth 1 to 8"};
  g2c::exercises::CommonOptions options;
  options.out = "results/09-transformer";
  options.steps = 200;
  Config config;
  g2c::exercises::toy::TrainSettings train;
  g2c::exercises::add_common_options(app, options);
  app.add_option("--depths", config.depths, "Numbers of blocks L");
  app.add_option("--wirings", config.wirings,
                 "Block wirings: pre_norm, post_norm, no_residual, no_norm");
  g2c::exercises::toy::add_train_options(app, train);
  return g2c::run_cli(app, argc, argv, [&] {
    const auto device = g2c::exercises::prepare(options);
    train.steps = options.steps;
    train.batch_seed = options.seed;
    for (const auto depth : config.depths) {
      if (depth <= 0) throw g2c::ValueError(fmt::format("depths must be positive, got {}", depth));
    }
    const auto stream = g2c::exercises::toy::toy_stream(config.repeats);
    const double baseline = std::log(static_cast<double>(config.vocab_size));
    using g2c::exercises::Figure;
    using g2c::exercises::Series;
    nlohmann::json runs = nlohmann::json::object();
    std::vector<Figure> figures;
    auto by_depth = Figure::line("strip_final_by_depth.png",
                                 fmt::format("Final training loss after {} steps", train.steps),
                                 "blocks L", "final training loss")
                        .hline(baseline, "ln V");
    for (const auto& name : config.wirings) {
      const auto wiring = g2c::exercises::toy::parse_wiring(name);
      auto figure =
          Figure::line(fmt::format("strip_{}.png", name),
                       fmt::format("{}: training loss by depth", name), "step", "training loss")
              .hline(baseline, "ln V");
      std::vector<double> finals;
      for (const auto depth : config.depths) {
        torch::manual_seed(config.model_seed);
        g2c::exercises::toy::WiredTransformerLM model(
            g2c::transformer::TransformerLM(g2c::transformer::TransformerLMOptions(
                config.vocab_size, config.embedding_dim, depth, config.num_heads,
                train.context_length)),
            wiring);
        model->to(device);
        const auto training = g2c::exercises::toy::train_on_stream(
            *model, stream, train, fmt::format("{} L={}", name, depth), !options.quiet);
        fmt::print("{:<12} L={:<2} loss {:.4f} -> {:.4f} in {:.1f}s\n", name, depth,
                   training.train_loss.front(), training.final_train_loss, training.wall_seconds);
        const auto key = std::to_string(depth);
        runs[name][key] = g2c::exercises::toy::curve_json(training);
        runs[name][key]["num_layers"] = depth;
        finals.push_back(training.final_train_loss);
        figure.add(Series(fmt::format("L = {}", depth), fmt::format("/runs/{}/{}/steps", name, key),
                          fmt::format("/runs/{}/{}/loss", name, key)));
      }
      runs[name]["final_by_depth"] = finals;
      figures.push_back(figure);
      by_depth.add(
          Series(name, "/config/depths", fmt::format("/runs/{}/final_by_depth", name)).marker("o"));
    }
    figures.push_back(by_depth);
    auto result = g2c::exercises::run_metadata("09_strip_residual_norm", options, device);
    result["config"] = {{"depths", config.depths},
                        {"wirings", config.wirings},
                        {"vocab_size", config.vocab_size},
                        {"embedding_dim", config.embedding_dim},
                        {"num_heads", config.num_heads},
                        {"max_seq_len", train.context_length},
                        {"stream_tokens", stream.numel()},
                        {"model_seed", config.model_seed},
                        {"train", g2c::exercises::toy::settings_json(train)}};
    result["baseline_ln_vocab"] = baseline;
    result["runs"] = runs;
    result["figures"] = g2c::exercises::figures(figures);
    const auto path = g2c::exercises::save_result(options, "strip_residual_norm.json", result);
    g2c::exercises::plot_result(options, path);
  });
}

}  // namespace exercise_09_strip_residual_norm
