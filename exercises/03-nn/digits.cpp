// Exercise 03.5 — module 03's MNIST network on real handwriting: scikit-learn's 1,797 scanned
// digits (8 × 8, resized to MNIST's 28 × 28 so that build_mnist_mlp's 784 inputs fit), a stratified
// split, minibatch SGD epochs; with the ReLU and without it.
#include <fmt/format.h>

#include "exercises/common/cli.h"
#include "exercises/common/digits.h"
#include "exercises/common/figures.h"
#include "exercises/common/tensor_json.h"

namespace exercise_03_digits {

namespace {

struct Config {
  double test_fraction = 0.2;  // a fifth of each class held out: 359 digits
  std::int64_t size = 28;      // MNIST's side: the network's 784 inputs
  g2c::exercises::DigitMlpOptions mlp;
};

}  // namespace

int main(int argc, char** argv) {
  g2c::CommandLine app{"Module 03, exercise 5: the MNIST network on scanned handwritten digits"};
  g2c::exercises::CommonOptions options;
  options.out = "results/03-nn";
  Config config;
  g2c::exercises::add_common_options(app, options);
  app.add_option("--epochs", config.mlp.epochs, "Passes over the training digits").positive();
  app.add_option("--hidden", config.mlp.hidden, "Hidden units").positive();
  app.add_option("--lr", config.mlp.lr, "SGD learning rate").positive();
  app.add_option("--batch-size", config.mlp.batch_size, "Digits per minibatch").positive();
  return g2c::run_cli(app, argc, argv, [&] {
    const auto device = g2c::exercises::prepare(options);
    const auto digits = g2c::exercises::resized(g2c::exercises::load_digits(), config.size);
    const auto split = g2c::exercises::stratified_split(digits, config.test_fraction, options.seed);
    fmt::print("{} scanned digits, {} × {}: {} to train on, {} held out (stratified, seed {})\n",
               digits.size(), config.size, config.size, split.train.size(), split.test.size(),
               options.seed);
    config.mlp.seed = options.seed;

    auto result = g2c::exercises::run_metadata("03_digits", options, device);
    result["config"] = {{"data", "scikit-learn digits (UCI optdigits), 8 x 8 resized to 28 x 28"},
                        {"test_fraction", config.test_fraction},
                        {"train", split.train.size()},
                        {"test", split.test.size()},
                        {"hidden", config.mlp.hidden},
                        {"epochs", config.mlp.epochs},
                        {"batch_size", config.mlp.batch_size},
                        {"lr", config.mlp.lr}};
    // One held-out example of each digit, as the network sees it.
    nlohmann::json examples = nlohmann::json::array();
    for (std::int64_t digit = 0; digit < 10; ++digit) {
      const auto row = (split.test.labels == digit).nonzero()[0][0].item<std::int64_t>();
      examples.push_back(g2c::exercises::matrix_json(split.test.images[row]));
    }
    result["examples"] = examples;
    for (const bool relu : {true, false}) {
      fmt::print("{}:\n", relu ? "Linear -> ReLU -> Linear" : "Linear -> Linear (no ReLU)");
      auto mlp = config.mlp;
      mlp.use_relu = relu;
      const auto run = g2c::exercises::train_digit_mlp(split, mlp, device, options.quiet);
      fmt::print("  held-out accuracy {}\n", run.test.to_string());
      result[relu ? "relu" : "no_relu"] = run.to_json();
    }
    std::vector<std::int64_t> epochs;
    for (std::int64_t e = 1; e <= config.mlp.epochs; ++e) epochs.push_back(e);
    result["epochs"] = epochs;
    std::vector<std::string> names = {"0", "1", "2", "3", "4", "5", "6", "7", "8", "9"};
    using g2c::exercises::Figure;
    using g2c::exercises::Panel;
    using g2c::exercises::Series;
    result["figures"] = g2c::exercises::figures(
        {Figure::line("digits_accuracy.png", "Scanned digits: the MNIST network", "epoch",
                      "accuracy")
             .add(Series("ReLU, train", "/epochs", "/relu/train_accuracy"))
             .add(Series("ReLU, held out", "/epochs", "/relu/test_accuracy"))
             .add(Series("no ReLU, train", "/epochs", "/no_relu/train_accuracy"))
             .add(Series("no ReLU, held out", "/epochs", "/no_relu/test_accuracy")),
         [&] {
           auto figure =
               Figure::heatmaps("digits_examples.png",
                                "One held-out scan of each digit, 8 x 8 resized to 28 x 28")
                   .columns(5)
                   .width(10)
                   .height(4.5);
           for (int digit = 0; digit < 10; ++digit) {
             figure.add(Panel(fmt::format("/examples/{}", digit))
                            .title(std::to_string(digit))
                            .cmap("gray_r")
                            .range(0, 1)
                            .no_colorbar());
           }
           return figure;
         }(),
         Figure::heatmaps("digits_confusion.png", "Held-out digits: true (rows) against predicted")
             .columns(1)
             .width(6)
             .height(5)
             .add(Panel("/relu/confusion")
                      .title("with ReLU")
                      .cmap("Blues")
                      .xlabel("predicted")
                      .ylabel("true")
                      .xticklabels(names)
                      .yticklabels(names))});
    const auto path = g2c::exercises::save_result(options, "digits.json", result);
    g2c::exercises::plot_result(options, path);
  });
}

}  // namespace exercise_03_digits
