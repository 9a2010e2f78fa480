// Beyond multimodal, exercise 1 — patches, looked at: one scanned digit cut at every patch size the
// lesson uses (8 × 8 at patch 2 and 4; resized to 28 × 28 at 4, 7 and 14), the grid drawn, the
// tokens an image costs, the round trip checked; the patch sequence the model reads; and the
// splice with two images in one sequence, each reaching only its own placeholders.
#include <fmt/format.h>
#include <fmt/ranges.h>

#include "exercises/common/cli.h"
#include "exercises/common/digits.h"
#include "exercises/common/figures.h"
#include "exercises/common/tensor_json.h"
#include "g2c/core/errors.h"
#include "g2c/multimodal/model.h"
#include "g2c/multimodal/patches.h"

namespace exercise_beyond_mm_patches {

namespace {

namespace mm = g2c::multimodal;

/// The image with a one-pixel gray seam between its patches: the grid a patch size cuts.
torch::Tensor with_seams(const torch::Tensor& image, std::int64_t p) {
  const auto gh = image.size(0) / p, gw = image.size(1) / p;
  auto out = torch::full({gh * (p + 1) - 1, gw * (p + 1) - 1}, 0.35);
  for (std::int64_t r = 0; r < gh; ++r) {
    for (std::int64_t c = 0; c < gw; ++c) {
      out.narrow(0, r * (p + 1), p)
          .narrow(1, c * (p + 1), p)
          .copy_(image.narrow(0, r * p, p).narrow(1, c * p, p));
    }
  }
  return out;
}

}  // namespace

int main(int argc, char** argv) {
  g2c::CommandLine app{"Beyond multimodal, exercise 1: patches, and two images in one sequence"};
  g2c::exercises::CommonOptions options;
  options.out = "results/beyond-multimodal";
  g2c::exercises::add_common_options(app, options);
  return g2c::run_cli(app, argc, argv, [&] {
    const auto digits = g2c::exercises::load_digits();
    const auto large = g2c::exercises::resized(digits, 28);
    auto result = g2c::exercises::run_metadata("beyond_mm_patches", options, torch::kCPU);
    const auto image8 = digits.images[0], image28 = large.images[0];
    fmt::print("one scanned digit (a {}), cut into patches:\n",
               digits.labels[0].item<std::int64_t>());
    nlohmann::json cuts = nlohmann::json::array();
    std::vector<std::pair<torch::Tensor, std::int64_t>> sizes = {
        {image8, 2}, {image8, 4}, {image28, 4}, {image28, 7}, {image28, 14}};
    for (const auto& [image, p] : sizes) {
      const auto side = image.size(0);
      const auto patches = mm::patchify(image.unsqueeze(0), p);  // (1, N, p²)
      const auto n = patches.size(1);
      const auto g = side / p;
      const auto rebuilt =
          patches.reshape({1, g, g, p, p}).permute({0, 1, 3, 2, 4}).reshape({1, side, side});
      const bool exact = torch::equal(rebuilt[0], image);
      if (!exact) throw g2c::RuntimeError("patchify's round trip is not exact");
      fmt::print(
          "  {:>2} × {:<2} at patch {:>2}: {:>2} × {:<2} grid = {:>3} tokens of {:>3} pixels "
          "(round trip exact)\n",
          side, side, p, g, g, n, p * p);
      cuts.push_back({{"side", side},
                      {"patch", p},
                      {"tokens", n},
                      {"pixels_per_token", p * p},
                      {"grid", g2c::exercises::matrix_json(with_seams(image, p))},
                      {"sequence", g2c::exercises::matrix_json(patches[0])}});
    }
    result["cuts"] = cuts;

    // Two images in one sequence: with zero blocks a placeholder's logits depend on its own patch,
    // so changing the second image must move the second run of placeholders and nothing else.
    torch::manual_seed(options.seed);
    mm::MultimodalLM model(g2c::transformer::TransformerLM(g2c::transformer::TransformerLMOptions(
                               mm::VOCAB_SIZE, 16, 0, 2, 64)),
                           4);
    std::vector<std::int64_t> ids;
    for (int image = 0; image < 2; ++image) {
      ids.push_back(mm::IMAGE_START_ID);
      ids.insert(ids.end(), 4, mm::IMAGE_PATCH_ID);
      ids.push_back(mm::IMAGE_END_ID);
    }
    for (const auto id : mm::caption_ids(digits.labels[1].item<std::int64_t>())) ids.push_back(id);
    const auto x = torch::tensor(ids, torch::kLong).unsqueeze(0);
    const auto pair = torch::stack({digits.images[0], digits.images[1]}).unsqueeze(0);  // (1,2,8,8)
    auto other = pair.clone();
    other[0][1] = digits.images[2];
    torch::NoGradGuard no_grad;
    const auto moved = ((model(x, other) - model(x, pair)).abs().sum(-1) > 1e-6)[0];  // (T)
    std::vector<std::int64_t> positions;
    for (std::int64_t t = 0; t < moved.size(0); ++t) {
      if (moved[t].item<bool>()) positions.push_back(t);
    }
    fmt::print(
        "two images in one sequence of {} ids: changing the second moves positions [{}] "
        "(its placeholders are 7..10)\n",
        ids.size(), fmt::join(positions, ", "));
    if (positions != std::vector<std::int64_t>{7, 8, 9, 10}) {
      throw g2c::RuntimeError("the second image reached positions other than its placeholders");
    }
    result["two_images"] = {{"ids", ids}, {"moved_positions", positions}};

    using g2c::exercises::Figure;
    using g2c::exercises::Panel;
    auto grids = Figure::heatmaps("mm_patch_grids.png", "One scanned digit at each patch size")
                     .columns(5)
                     .width(15)
                     .height(3.6);
    auto sequences = Figure::heatmaps("mm_patch_sequences.png",
                                      "What the model reads: one row per patch token, its pixels")
                         .columns(5)
                         .width(15)
                         .height(4);
    for (std::size_t i = 0; i < cuts.size(); ++i) {
      const auto title = fmt::format("{0}×{0}, patch {1}: {2} tokens", cuts[i]["side"].get<int>(),
                                     cuts[i]["patch"].get<int>(), cuts[i]["tokens"].get<int>());
      grids.add(Panel(fmt::format("/cuts/{}/grid", i))
                    .title(title)
                    .cmap("gray_r")
                    .range(0, 1)
                    .no_colorbar());
      sequences.add(Panel(fmt::format("/cuts/{}/sequence", i))
                        .title(title)
                        .cmap("gray_r")
                        .range(0, 1)
                        .aspect("auto")
                        .no_colorbar());
    }
    result["figures"] = g2c::exercises::figures({grids, sequences});
    const auto path = g2c::exercises::save_result(options, "patches.json", result);
    g2c::exercises::plot_result(options, path);
  });
}

}  // namespace exercise_beyond_mm_patches
