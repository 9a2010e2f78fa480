// Exercise 09.7 — what the heads of a small trained TransformerLM look at. The toy stream
// [0 … 9, 3 4 5 6 7 0] repeats every 16 tokens; 3 to 7 appear twice per period, and what follows
// 7 (8 or 0) depends on which half you are in — so a model that predicts well must look back.
// Trains TransformerLM(V 10, D 32, L 2, H 4, context 32) with AdamW, reports next-token accuracy
// on a held window, and draws every head's attention on that window, layer by layer.
#include <fmt/format.h>

#include "exercises/09-transformer/toy_stream.h"
#include "exercises/09-transformer/train_on_stream.h"
#include "exercises/09-transformer/variants.h"
#include "exercises/common/cli.h"
#include "exercises/common/figures.h"
#include "exercises/common/tensor_json.h"
#include "g2c/transformer/transformer_lm.h"

namespace exercise_09_attention_maps {

namespace {

struct Config {
  std::int64_t vocab_size = 10;
  std::int64_t embedding_dim = 32;
  std::int64_t num_layers = 2;
  std::int64_t num_heads = 4;
  std::int64_t repeats = 200;
  std::int64_t window_start = 5;  // the window drawn: 32 tokens starting mid-period
};

}  // namespace

int main(int argc, char** argv) {
  g2c::CommandLine app{
      "Module 09, exercise 7: attention maps per layer and head of a trained model"};
  g2c::exercises::CommonOptions options;
  options.out = "results/09-transformer";
  options.steps = 300;
  Config config;
  g2c::exercises::toy::TrainSettings train;
  train.optimizer = "adamw";  // plain SGD at 1e-3 barely moves in 300 steps; this model must learn
  train.lr = 3e-3;
  g2c::exercises::add_common_options(app, options);
  g2c::exercises::toy::add_train_options(app, train);
  app.add_option("--layers", config.num_layers, "Blocks L").positive();
  app.add_option("--heads", config.num_heads, "Heads per block (must divide D = 32)").positive();
  return g2c::run_cli(app, argc, argv, [&] {
    const auto device = g2c::exercises::prepare(options);
    train.steps = options.steps;
    train.batch_seed = options.seed;
    const auto stream = g2c::exercises::toy::toy_stream(config.repeats);
    g2c::transformer::TransformerLM model(g2c::transformer::TransformerLMOptions(
        config.vocab_size, config.embedding_dim, config.num_layers, config.num_heads,
        train.context_length));
    model->to(device);
    const auto training =
        g2c::exercises::toy::train_on_stream(*model, stream, train, "train", !options.quiet);

    torch::NoGradGuard no_grad;
    const auto window = stream.narrow(0, config.window_start, train.context_length + 1);
    const auto ids = window.narrow(0, 0, train.context_length).unsqueeze(0).to(device);  // (1, T)
    const auto targets = window.narrow(0, 1, train.context_length);                      // (T)
    const auto predicted = model(ids)[0].argmax(-1).cpu();                               // (T)
    const double accuracy = (predicted == targets).to(torch::kDouble).mean().item<double>();
    // The first 15 positions cannot always know which half of the period they are in.
    const double accuracy_after_period = (predicted.narrow(0, 15, train.context_length - 15) ==
                                          targets.narrow(0, 15, train.context_length - 15))
                                             .to(torch::kDouble)
                                             .mean()
                                             .item<double>();
    fmt::print(
        "loss {:.4f} -> {:.4f} in {:.1f}s; next-token accuracy on the window {:.3f} ({:.3f} "
        "after the first 15 positions)\n",
        training.train_loss.front(), training.final_train_loss, training.wall_seconds, accuracy,
        accuracy_after_period);

    std::vector<std::string> labels;
    for (std::int64_t t = 0; t < train.context_length; ++t) {
      labels.push_back(std::to_string(window[t].item<std::int64_t>()));
    }
    const auto maps = g2c::exercises::toy::attention_maps(*model, ids);
    using g2c::exercises::Figure;
    using g2c::exercises::Panel;
    using g2c::exercises::Series;
    nlohmann::json layers = nlohmann::json::array();
    std::vector<Figure> figures;
    for (std::size_t l = 0; l < maps.size(); ++l) {
      nlohmann::json heads = nlohmann::json::array();
      auto figure = Figure::heatmaps(fmt::format("attention_layer{}.png", l),
                                     fmt::format("Layer {}: attention of each head on the toy "
                                                 "stream (rows: queries, columns: keys)",
                                                 l))
                        .columns(std::min<std::int64_t>(config.num_heads, 2));
      for (std::int64_t h = 0; h < config.num_heads; ++h) {
        const auto weights = maps[l][h];  // (T, T)
        // Mean distance looked back, weighted by attention: 0 = each token looks at itself.
        const auto rows = torch::arange(train.context_length, weights.options()).unsqueeze(1);
        const auto cols = torch::arange(train.context_length, weights.options()).unsqueeze(0);
        const double distance = (weights * (rows - cols)).sum(-1).mean().item<double>();
        heads.push_back(
            {{"weights", g2c::exercises::matrix_json(weights)}, {"mean_distance", distance}});
        figure.add(Panel(fmt::format("/layers/{}/heads/{}/weights", l, h))
                       .title(fmt::format("layer {} head {} (looks back {:.1f})", l, h, distance))
                       .xticklabels("/tokens")
                       .yticklabels("/tokens")
                       .range(0, 1)
                       .fontsize(6));
        fmt::print("layer {} head {}: mean distance looked back {:.2f}\n", l, h, distance);
      }
      layers.push_back({{"layer", l}, {"heads", heads}});
      figures.push_back(figure);
    }
    figures.push_back(Figure::line("attention_maps_loss.png", "Training loss of the model drawn",
                                   "step", "training loss")
                          .add(Series("", "/train_curve/steps", "/train_curve/loss")));
    auto result = g2c::exercises::run_metadata("09_attention_maps", options, device);
    result["config"] = {{"vocab_size", config.vocab_size},
                        {"embedding_dim", config.embedding_dim},
                        {"num_layers", config.num_layers},
                        {"num_heads", config.num_heads},
                        {"max_seq_len", train.context_length},
                        {"window_start", config.window_start},
                        {"train", g2c::exercises::toy::settings_json(train)}};
    result["train_curve"] = g2c::exercises::toy::curve_json(training);
    result["accuracy"] = accuracy;
    result["accuracy_after_first_period"] = accuracy_after_period;
    result["tokens"] = labels;
    result["layers"] = layers;
    result["figures"] = g2c::exercises::figures(figures);
    const auto path = g2c::exercises::save_result(options, "attention_maps.json", result);
    g2c::exercises::plot_result(options, path);
  });
}

}  // namespace exercise_09_attention_maps
