// Beyond multimodal, exercise 3 — one fixed random order of the patches, the same for every image:
// the same pixels, the layout scrambled. The captioner at patch 2 is trained twice with the same
// initialisation and the same batches, on the images as they are and on the scrambled ones; the
// position embeddings are all it has to learn where a patch came from.
#include <fmt/format.h>

#include "exercises/beyond-multimodal/captioner.h"
#include "exercises/common/cli.h"
#include "exercises/common/figures.h"
#include "exercises/common/tensor_json.h"
#include "g2c/core/errors.h"

namespace exercise_beyond_mm_permute {

int main(int argc, char** argv) {
  g2c::CommandLine app{"Beyond multimodal, exercise 3: a fixed patch permutation"};
  g2c::exercises::CommonOptions options;
  options.out = "results/beyond-multimodal";
  g2c::exercises::multimodal::CaptionerConfig config;
  g2c::exercises::add_common_options(app, options);
  app.add_option("--steps", config.steps, "Training steps of each captioner").positive();
  app.add_option("--patch-size", config.patch_size, "Patch side (2 or 4 on 8 x 8 digits)")
      .positive();
  return g2c::run_cli(app, argc, argv, [&] {
    if (8 % config.patch_size != 0) {
      throw g2c::ValueError(fmt::format(
          "--patch-size {} does not tile the 8 x 8 digits: use 1, 2, 4 or 8", config.patch_size));
    }
    const auto device = g2c::exercises::prepare(options);
    const auto split =
        g2c::exercises::stratified_split(g2c::exercises::load_digits(), 0.2, options.seed);
    config.seed = options.seed;
    const auto n = (8 / config.patch_size) * (8 / config.patch_size);
    auto generator = at::make_generator<at::CPUGeneratorImpl>(options.seed + 7);
    const auto order = torch::randperm(n, generator);

    auto result = g2c::exercises::run_metadata("beyond_mm_permute", options, device);
    result["config"] = {{"patch_size", config.patch_size},
                        {"steps", config.steps},
                        {"order", g2c::exercises::vector_json(order)}};
    const auto example = split.test.images.narrow(0, 0, 1);
    result["example"] = {
        {"as_is", g2c::exercises::matrix_json(example[0])},
        {"scrambled", g2c::exercises::matrix_json(g2c::exercises::multimodal::permute_patches(
                          example, config.patch_size, order)[0])}};
    for (const bool scrambled : {false, true}) {
      auto run_config = config;
      if (scrambled) run_config.patch_order = order;
      const auto run =
          g2c::exercises::multimodal::train_captioner(split, run_config, device, options.quiet);
      fmt::print("{:<22} held-out loss {:.3f}, generated captions right {}\n",
                 scrambled ? "patches scrambled" : "patches in place", run.held_out_loss.back(),
                 run.test.to_string());
      result[scrambled ? "scrambled" : "as_is"] = run.to_json();
    }
    using g2c::exercises::Figure;
    using g2c::exercises::Panel;
    using g2c::exercises::Series;
    result["figures"] = g2c::exercises::figures(
        {Figure::heatmaps("mm_permute_example.png",
                          "One digit, its patches in a fixed random order")
             .columns(2)
             .width(7)
             .height(3.5)
             .add(
                 Panel("/example/as_is").title("as it is").cmap("gray_r").range(0, 1).no_colorbar())
             .add(Panel("/example/scrambled")
                      .title("scrambled")
                      .cmap("gray_r")
                      .range(0, 1)
                      .no_colorbar()),
         Figure::line("mm_permute_loss.png", "Held-out caption loss", "step", "cross-entropy")
             .add(Series("in place", "/as_is/eval_steps", "/as_is/held_out_loss"))
             .add(Series("scrambled", "/scrambled/eval_steps", "/scrambled/held_out_loss"))});
    const auto path = g2c::exercises::save_result(options, "permute.json", result);
    g2c::exercises::plot_result(options, path);
  });
}

}  // namespace exercise_beyond_mm_permute
