// Beyond multimodal, exercise 2 — the captioner: module 09's TransformerLM (4 blocks, D 128, 4
// heads, hidden 512) behind the splice, trained from scratch on "<img> patches </img> This is a d .
// <end>" with module 13's masked cross-entropy on scikit-learn's scanned 8 × 8 digits, at patch 4
// (4 patches an image) and patch 2 (16) — or, with --data synth28, on generated 28 × 28 digits at
// the lesson's patch sizes 14, 7 and 4 — scored on the captions it generates, against module 03's
// MNIST network trained on the same split.
#include <fmt/format.h>

#include "exercises/beyond-multimodal/captioner.h"
#include "exercises/common/cli.h"
#include "exercises/common/figures.h"
#include "exercises/common/synth_digits.h"
#include "exercises/common/tensor_json.h"
#include "g2c/core/errors.h"

namespace exercise_beyond_mm_caption {

int main(int argc, char** argv) {
  g2c::CommandLine app{"Beyond multimodal, exercise 2: a digit captioner against module 03's MLP"};
  g2c::exercises::CommonOptions options;
  options.out = "results/beyond-multimodal";
  g2c::exercises::multimodal::CaptionerConfig config;
  double test_fraction = 0.2;
  g2c::exercises::DigitMlpOptions mlp;
  std::string data = "digits";
  g2c::exercises::add_common_options(app, options);
  app.add_option("--data", data,
                 "digits: scikit-learn's scanned 8 x 8 digits; synth28: generated 28 x 28 ones")
      .one_of({"digits", "synth28"});
  app.add_option("--steps", config.steps, "Training steps of each captioner").positive();
  app.add_option("--batch-size", config.batch_size, "Images per step").positive();
  app.add_option("--lr", config.lr, "AdamW's peak learning rate (cosine to a tenth of it)")
      .positive();
  app.add_option("--mlp-epochs", mlp.epochs, "Epochs of module 03's MLP").positive();
  return g2c::run_cli(app, argc, argv, [&] {
    const auto device = g2c::exercises::prepare(options);
    const bool synth = data == "synth28";
    const auto digits = synth ? g2c::exercises::stored_synth_digits28(180, options.seed)
                              : g2c::exercises::load_digits();
    const auto side = digits.images.size(1);
    const auto split = g2c::exercises::stratified_split(digits, test_fraction, options.seed);
    fmt::print("{} (not MNIST): {} to train on, {} held out, {} × {}\n",
               synth ? "SynthDigits-28, generated" : "scikit-learn's scanned digits",
               split.train.size(), split.test.size(), side, side);
    config.seed = options.seed;
    mlp.seed = options.seed;
    const std::vector<std::int64_t> patch_sizes =
        synth ? std::vector<std::int64_t>{14, 7, 4} : std::vector<std::int64_t>{4, 2};

    auto result = g2c::exercises::run_metadata("beyond_mm_caption", options, device);
    result["config"] = {{"data", synth ? "SynthDigits-28 (generated, 180 per class)"
                                       : "scikit-learn digits (UCI optdigits), 8 x 8"},
                        {"train", split.train.size()},
                        {"test", split.test.size()},
                        {"side", side},
                        {"patch_sizes", patch_sizes},
                        {"embedding_dim", config.embedding_dim},
                        {"num_layers", config.num_layers},
                        {"num_heads", config.num_heads},
                        {"hidden_dim", config.hidden_dim},
                        {"steps", config.steps},
                        {"batch_size", config.batch_size},
                        {"lr", config.lr},
                        {"weight_decay", config.weight_decay},
                        {"mlp_epochs", mlp.epochs}};
    std::vector<std::string> models;
    std::vector<double> accuracy;
    for (const auto p : patch_sizes) {
      auto run_config = config;
      run_config.patch_size = p;
      const auto run =
          g2c::exercises::multimodal::train_captioner(split, run_config, device, options.quiet);
      fmt::print(
          "captioner, patch {} ({} patches an image, {} parameters, {:.0f} s): held-out "
          "loss {:.3f}; generated captions right {} ({} without a digit)\n",
          p, (side / p) * (side / p), run.parameters, run.train_seconds, run.held_out_loss.back(),
          run.test.to_string(), run.no_digit);
      for (const auto& example : run.examples) fmt::print("    {}\n", example);
      result[fmt::format("patch{}", p)] = run.to_json();
      models.push_back(fmt::format("captioner, patch {}", p));
      accuracy.push_back(run.test.value());
    }
    fmt::print("module 03's MLP (784 -> 128 -> 10) on the same digits{}:\n",
               side == 28 ? "" : " resized to 28 × 28");
    const auto mlp_run = g2c::exercises::train_digit_mlp(
        side == 28 ? split
                   : g2c::exercises::stratified_split(g2c::exercises::resized(digits, 28),
                                                      test_fraction, options.seed),
        mlp, device, true);
    fmt::print("  held-out accuracy {}\n", mlp_run.test.to_string());
    result["mlp"] = mlp_run.to_json();
    models.push_back("MLP (module 03)");
    accuracy.push_back(mlp_run.test.value());
    result["accuracy"] = {{"model", models}, {"value", accuracy}};
    const auto finest = fmt::format("/patch{}", patch_sizes.back());

    std::vector<std::string> names = {"0", "1", "2", "3", "4", "5", "6", "7", "8", "9"};
    using g2c::exercises::Figure;
    using g2c::exercises::Panel;
    using g2c::exercises::Series;
    const auto confusion = [&](const std::string& pointer, const std::string& title) {
      return Panel(pointer)
          .title(title)
          .cmap("Blues")
          .xlabel("predicted")
          .ylabel("true")
          .xticklabels(names)
          .yticklabels(names);
    };
    const std::string stem = synth ? "mm_caption_synth28" : "mm_caption";
    auto losses = Figure::line(stem + "_loss.png", "Captioner: masked loss on the caption tokens",
                               "step", "cross-entropy");
    for (const auto p : patch_sizes) {
      const auto key = fmt::format("/patch{}", p);
      losses
          .add(Series(fmt::format("patch {}, train", p), key + "/eval_steps", key + "/train_loss"))
          .add(Series(fmt::format("patch {}, held out", p), key + "/eval_steps",
                      key + "/held_out_loss"));
    }
    // One held-out image of each digit, as the captioner sees it.
    auto examples = Figure::heatmaps(stem + "_examples.png",
                                     synth ? "SynthDigits-28: one held-out image of each digit"
                                           : "One held-out scan of each digit")
                        .columns(10)
                        .width(15)
                        .height(2.2);
    for (std::int64_t digit = 0; digit < 10; ++digit) {
      const auto row = (split.test.labels == digit).nonzero()[0][0].item<std::int64_t>();
      result["examples"].push_back(g2c::exercises::matrix_json(split.test.images[row]));
      examples.add(Panel(fmt::format("/examples/{}", digit))
                       .title(std::to_string(digit))
                       .cmap("gray_r")
                       .range(0, 1)
                       .no_colorbar());
    }
    result["figures"] = g2c::exercises::figures(
        {losses, examples,
         Figure::heatmaps(stem + "_confusion.png", "Held-out digits: true (rows) against predicted")
             .columns(2)
             .width(11)
             .height(4.5)
             .add(confusion(
                 finest + "/confusion",
                 fmt::format("captioner, patch {} (generated captions)", patch_sizes.back())))
             .add(confusion("/mlp/confusion", "module 03's MLP"))});
    const auto path = g2c::exercises::save_result(
        options, synth ? "caption_synth28.json" : "caption.json", result);
    g2c::exercises::plot_result(options, path);
  });
}

}  // namespace exercise_beyond_mm_caption
