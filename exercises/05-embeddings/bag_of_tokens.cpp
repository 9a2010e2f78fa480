// Exercise 05.6 — a bag of tokens. "dog bites man" and "man bites dog" hold the same three token
// vectors, so any order-blind model sees them as one input. The model here is the classic
// bag-of-embeddings one: a fixed feature map φ(x) = tanh(x W) applied to every position, then
// averaged (attention without positions is order-blind in the same way). Adding positions —
// sinusoidal, learned, or rotating with RoPE — tells the two sentences apart. subtle: a plain *sum*
// of the vectors stays blind even with added positions, since Σ(xᵢ + pᵢ) = Σxᵢ + Σpᵢ.
#include <cmath>

#include <fmt/format.h>

#include "exercises/common/cli.h"
#include "exercises/common/figures.h"
#include "exercises/common/tensor_json.h"
#include "g2c/embeddings/positional.h"
#include "g2c/embeddings/rotary.h"
#include "g2c/embeddings/token_embedding.h"

namespace exercise_05_bag_of_tokens {

int main(int argc, char** argv) {
  g2c::CommandLine app{"Module 05, exercise 6: without positions, word order is invisible"};
  g2c::exercises::CommonOptions options;
  options.out = "results/05-embeddings";
  std::int64_t embedding_dim = 16;
  g2c::exercises::add_common_options(app, options);
  app.add_option("--dim", embedding_dim, "Embedding dimension D (even)");
  return g2c::run_cli(app, argc, argv, [&] {
    const auto device = g2c::exercises::prepare(options);
    const std::vector<std::string> vocabulary{"dog", "bites", "man"};
    const auto first = torch::tensor({0, 1, 2}, torch::kLong).to(device);   // dog bites man
    const auto second = torch::tensor({2, 1, 0}, torch::kLong).to(device);  // man bites dog
    g2c::embeddings::TokenEmbedding tokens(3, embedding_dim);
    g2c::embeddings::SinusoidalPositionalEmbedding sinusoidal(8, embedding_dim);
    g2c::embeddings::LearnedPositionalEmbedding learned(8, embedding_dim);
    g2c::embeddings::RotaryEmbedding rope(8, embedding_dim);
    tokens->to(device);
    sinusoidal->to(device);
    learned->to(device);
    rope->to(device);

    torch::NoGradGuard no_grad;
    const auto a = tokens(first), b = tokens(second);  // (3, D) each
    const auto feature_map = torch::randn({embedding_dim, embedding_dim}, a.options()) /
                             std::sqrt(static_cast<double>(embedding_dim));  // W (D, D)
    // The order-blind model: mean over positions of tanh(x W), (D).
    auto pooled = [&](const torch::Tensor& x) {
      return torch::tanh(x.matmul(feature_map)).mean(0);
    };
    auto pooled_distance = [&](const torch::Tensor& x, const torch::Tensor& y) {
      return (pooled(x) - pooled(y)).norm().item<double>();
    };
    auto sum_distance = [](const torch::Tensor& x, const torch::Tensor& y) {
      return (x.sum(0) - y.sum(0)).norm().item<double>();
    };
    const auto sin_a = a + sinusoidal(3), sin_b = b + sinusoidal(3);
    const auto learned_a = a + learned(3), learned_b = b + learned(3);
    const auto rope_a = rope(a), rope_b = rope(b);
    const std::vector<std::string> methods{"none", "sinusoidal", "learned", "rope"};
    const std::vector<double> distances{pooled_distance(a, b), pooled_distance(sin_a, sin_b),
                                        pooled_distance(learned_a, learned_b),
                                        pooled_distance(rope_a, rope_b)};
    const std::vector<double> sum_distances{sum_distance(a, b), sum_distance(sin_a, sin_b),
                                            sum_distance(learned_a, learned_b),
                                            sum_distance(rope_a, rope_b)};
    const double scale = pooled(a).norm().item<double>();
    fmt::print("distance between the two sentences (‖mean tanh(xW)‖ = {:.3f}):\n", scale);
    fmt::print("  {:<12} {:>14} {:>14}\n", "positions", "bag model", "plain sum");
    for (std::size_t i = 0; i < methods.size(); ++i) {
      fmt::print("  {:<12} {:>14.6f} {:>14.6f}{}\n", methods[i], distances[i], sum_distances[i],
                 distances[i] < 1e-6 ? "   <- the same input: order is invisible" : "");
    }

    auto result = g2c::exercises::run_metadata("05_bag_of_tokens", options, device);
    result["config"] = {{"embedding_dim", embedding_dim},
                        {"sentences", {"dog bites man", "man bites dog"}},
                        {"vocabulary", vocabulary},
                        {"model", "mean over positions of tanh(x W), W (D, D) random"}};
    result["methods"] = methods;
    result["distances"] = distances;
    result["sum_distances"] = sum_distances;
    result["summary_norm"] = scale;
    result["same_without_positions"] = distances[0] < 1e-6;
    using g2c::exercises::Figure;
    using g2c::exercises::Series;
    result["figures"] = g2c::exercises::figures(
        {Figure::bar("bag_of_tokens.png",
                     "dog bites man vs man bites dog, through an order-blind model",
                     "positional information", "‖difference‖")
             .add(Series("", "/methods", "/distances"))});
    const auto path = g2c::exercises::save_result(options, "bag_of_tokens.json", result);
    g2c::exercises::plot_result(options, path);
  });
}

}  // namespace exercise_05_bag_of_tokens
