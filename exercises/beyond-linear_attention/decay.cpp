// Beyond linear_attention, exercise 4 — what the decay does to the state. One linear-attention
// layer (D 128, H 4) reads 512 seeded random tokens with every head's γ set to 1 (sigmoid(50): no
// forgetting), 0.99 (the initial value) and 0.5: the size of its state after each token, ‖S‖ and
// ‖z‖ averaged over heads. Without decay the state grows with every token (z is a sum of positive
// vectors), so old and new tokens weigh alike in a sum that never stops growing; with decay γ it
// settles near 1 / (1 − γ) tokens' worth — the layer's memory span. Then the decays the linear
// layers learned in exercise 2 (read from its three_way.json), as spans.
#include <cmath>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <optional>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "exercises/common/cli.h"
#include "exercises/common/figures.h"
#include "g2c/linear_attention/attention.h"

namespace exercise_beyond_la_decay {

namespace {

using g2c::exercises::Figure;
using g2c::exercises::Series;
using g2c::linear_attention::LinearAttention;
using g2c::linear_attention::LinearAttentionState;

/// The tokens' memory span of a decay: the sum of γ^k over k, 1 / (1 − γ) (infinite at 1).
double span(double gamma) {
  return gamma < 1.0 ? 1.0 / (1.0 - gamma) : INFINITY;
}

}  // namespace

int main(int argc, char** argv) {
  g2c::CommandLine app{
      "Beyond linear_attention, exercise 4: the state's size over 512 tokens at decay 1, 0.99\n"
      "and 0.5, and the decays exercise 2's linear layers learned. Writes decay.json,\n"
      "decay_state.png and decay_normaliser.png."};
  g2c::exercises::CommonOptions options;
  options.out = "results/beyond-linear_attention";
  g2c::exercises::add_common_options(app, options);
  std::int64_t dim = 128, heads = 4, tokens = 512;
  std::string three_way;
  app.add_option("--embedding-dim", dim, "D of the layer").range(4, 4096);
  app.add_option("--heads", heads, "H of the layer (must divide D)").range(1, 256);
  app.add_option("--tokens", tokens, "Tokens read").range(1, 1000000);
  app.add_option("--three-way", three_way,
                 "Exercise 2's result file (default: three_way.json in --out, when it is there)");
  return g2c::run_cli(app, argc, argv, [&] {
    const auto device = g2c::exercises::prepare(options);
    torch::NoGradGuard no_grad;
    torch::manual_seed(options.seed);
    LinearAttention layer(dim, heads);
    layer->to(device);
    const auto inputs = torch::randn({tokens, 1, dim}, torch::TensorOptions().device(device));

    const std::vector<std::pair<std::string, double>> settings = {
        {"γ = 1", 50.0}, {"γ = 0.99", 4.6}, {"γ = 0.5", 0.0}};
    auto curves = nlohmann::json::array();
    std::vector<std::int64_t> steps;
    for (std::int64_t t = 1; t <= tokens; ++t) steps.push_back(t);
    for (const auto& [name, logit] : settings) {
      layer->gamma_logit.fill_(logit);
      const double gamma = layer->decay()[0].item<double>();
      std::optional<LinearAttentionState> state;
      std::vector<double> s_norm, z_norm;
      for (std::int64_t t = 0; t < tokens; ++t) {
        state = layer->step(inputs[t], state).state;
        // (1, H, d, d) and (1, H, d): the Frobenius norm of each head's S, the length of its z,
        // averaged over heads.
        s_norm.push_back(state->S.flatten(2).norm(2, -1).mean().item<double>());
        z_norm.push_back(state->z.norm(2, -1).mean().item<double>());
      }
      fmt::print(
          "{:<9} (span {:>6}): ‖S‖ {:8.1f} after 16 tokens, {:8.1f} after {}; ‖z‖ {:7.1f}, "
          "{:7.1f}\n",
          name, std::isinf(span(gamma)) ? std::string("∞") : fmt::format("{:.0f}", span(gamma)),
          s_norm[std::min<std::int64_t>(15, tokens - 1)], s_norm.back(), tokens,
          z_norm[std::min<std::int64_t>(15, tokens - 1)], z_norm.back());
      curves.push_back({{"name", name}, {"gamma", gamma}, {"s_norm", s_norm}, {"z_norm", z_norm}});
    }

    // The decays exercise 2 learned, when its result is there.
    const std::filesystem::path learned_path =
        three_way.empty() ? std::filesystem::path(options.out) / "three_way.json"
                          : std::filesystem::path(three_way);
    nlohmann::json learned = nullptr;
    if (std::filesystem::exists(learned_path)) {
      std::ifstream file(learned_path);
      const auto document = nlohmann::json::parse(file);
      learned = nlohmann::json::array();
      for (const auto& run : document.at("runs")) {
        for (const auto& layer_decay : run.at("learned_decays")) {
          std::vector<double> spans;
          std::string gammas, span_text;
          for (const auto& gamma : layer_decay.at("decay")) {
            spans.push_back(span(gamma));
            gammas += fmt::format(" {:.4f}", gamma.get<double>());
            span_text += fmt::format(" {:.0f}", spans.back());
          }
          fmt::print("learned in exercise 2, {} model, layer {}: γ{} (spans{} tokens)\n",
                     run.at("name").get<std::string>(), layer_decay.at("layer").get<int>(), gammas,
                     span_text);
          learned.push_back({{"model", run.at("name")},
                             {"layer", layer_decay.at("layer")},
                             {"decay", layer_decay.at("decay")},
                             {"span", spans}});
        }
      }
      if (learned.empty()) fmt::print("{} holds no linear layers\n", learned_path.string());
    } else {
      fmt::print("(no {}: run beyond_la_three_way first to see the learned decays)\n",
                 learned_path.string());
    }

    auto result = g2c::exercises::run_metadata("beyond_la_decay", options, device);
    result["config"] = {{"embedding_dim", dim}, {"num_heads", heads}, {"tokens", tokens}};
    result["step"] = steps;
    result["curves"] = curves;
    result["learned"] = learned;
    auto s_figure = Figure::line("decay_state.png", "The state S as tokens arrive", "tokens read",
                                 "‖S‖ (mean over heads)")
                        .logy();
    auto z_figure = Figure::line("decay_normaliser.png", "The normaliser z as tokens arrive",
                                 "tokens read", "‖z‖ (mean over heads)")
                        .logy();
    for (std::size_t c = 0; c < curves.size(); ++c) {
      const auto name = curves[c]["name"].get<std::string>();
      s_figure.add(Series(name, "/step", fmt::format("/curves/{}/s_norm", c)));
      z_figure.add(Series(name, "/step", fmt::format("/curves/{}/z_norm", c)));
    }
    result["figures"] = g2c::exercises::figures({s_figure, z_figure});
    const auto path = g2c::exercises::save_result(options, "decay.json", result);
    g2c::exercises::plot_result(options, path);
  });
}

}  // namespace exercise_beyond_la_decay
