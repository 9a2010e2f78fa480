// Beyond moe — the mixture's two edge cases, before any training. (1) E 1, k 1 is the dense model:
// one expert given a dense FeedForward's weights computes the same outputs and the same gradients,
// because its one routing weight is exactly 1. (2) An untrained E 8 router: how close to uniform
// its probabilities start, how evenly its top-1 and top-2 choices spread the tokens, what its
// balance loss reads (1 is uniform), and the lesson's point about top-1 routing — the task loss
// sends the gate no gradient at k 1 (the renormalised weight is the constant 1) and a real one at
// k 2. The tokens are seeded normal vectors of width D (what a block's ln2 hands its feed-forward
// is about that: zero mean, unit scale per feature).
#include <algorithm>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "exercises/common/cli.h"
#include "exercises/common/figures.h"
#include "g2c/moe/layer.h"
#include "g2c/transformer/ffn.h"

namespace exercise_beyond_moe_collapse {

namespace {

using g2c::exercises::Figure;
using g2c::exercises::Series;

double max_abs_difference(const torch::Tensor& a, const torch::Tensor& b) {
  return (a - b).abs().max().item<double>();
}

/// A fixed random projection of the layer's output as the stand-in task loss: any loss that
/// depends on the output sends the same gradient to the gate through the routing weights.
torch::Tensor task_loss(const torch::Tensor& output, const torch::Tensor& direction) {
  return (output * direction).sum() / output.size(0);
}

struct RouterReading {
  std::vector<double> shares;  // (E) share of the N·k assignments per expert
  double balance_loss;
  double gate_gradient_norm;  // of the task loss only
};

RouterReading read_router(g2c::moe::MoEFeedForward& layer, const torch::Tensor& tokens,
                          const torch::Tensor& direction) {
  layer->zero_grad();
  const auto output = layer->forward(tokens);
  task_loss(output, direction).backward();
  const auto gate = layer->router->gate;
  const double gradient_norm =
      torch::sqrt(gate->W.grad().pow(2).sum() + gate->b.grad().pow(2).sum()).item<double>();
  const auto counts = torch::bincount(layer->last_indices.flatten(), {}, layer->num_experts);
  const auto shares = (counts.to(torch::kDouble) / layer->last_indices.numel()).contiguous();
  return {
      std::vector<double>(shares.data_ptr<double>(), shares.data_ptr<double>() + shares.numel()),
      layer->load_balancing_loss().item<double>(), gradient_norm};
}

}  // namespace

int main(int argc, char** argv) {
  g2c::CommandLine app{
      "Beyond moe: E 1, k 1 against the dense feed-forward it should equal, and an untrained\n"
      "E 8 router's probabilities, token shares, balance loss and gate gradient at k 1 and k 2.\n"
      "Writes collapse.json, router_shares.png and router_confidence.png."};
  g2c::exercises::CommonOptions options;
  options.out = "results/beyond-moe";
  g2c::exercises::add_common_options(app, options);
  std::int64_t embedding_dim = 128, tokens_count = 4096, experts = 8;
  app.add_option("--embedding-dim", embedding_dim, "D of the layers").range(2, 4096);
  app.add_option("--tokens", tokens_count, "Tokens routed").range(2, 1 << 20);
  app.add_option("--experts", experts, "E of the untrained router").range(2, 256);
  return g2c::run_cli(app, argc, argv, [&] {
    const auto device = g2c::exercises::prepare(options);
    torch::manual_seed(options.seed);
    const auto tokens = torch::randn({tokens_count, embedding_dim}).to(device);
    const auto direction = torch::randn({tokens_count, embedding_dim}).to(device);

    // (1) One expert with the dense feed-forward's weights.
    g2c::transformer::FeedForward dense(embedding_dim);
    g2c::moe::MoEFeedForward single(embedding_dim, 1, 1);
    {
      torch::NoGradGuard no_grad;
      auto& expert = single->experts[0];
      expert->fc1->W.copy_(dense->fc1->W);
      expert->fc1->b.copy_(dense->fc1->b);
      expert->fc2->W.copy_(dense->fc2->W);
      expert->fc2->b.copy_(dense->fc2->b);
    }
    dense->to(device);
    single->to(device);
    const auto dense_input = tokens.clone().requires_grad_(true);
    const auto single_input = tokens.clone().requires_grad_(true);
    const auto dense_output = dense->forward(dense_input);
    const auto single_output = single->forward(single_input);
    task_loss(dense_output, direction).backward();
    task_loss(single_output, direction).backward();
    const double output_difference = max_abs_difference(dense_output, single_output);
    const double input_gradient_difference =
        max_abs_difference(dense_input.grad(), single_input.grad());
    const double weight_gradient_difference =
        max_abs_difference(dense->fc1->W.grad(), single->experts[0]->fc1->W.grad());
    const double single_gate_gradient = single->router->gate->W.grad().abs().max().item<double>();
    const double single_balance = single->load_balancing_loss().item<double>();
    fmt::print(
        "E 1, k 1 against the dense FeedForward ({} tokens, D {}): outputs differ by at most "
        "{:.2e}, input gradients by {:.2e}, fc1.W gradients by {:.2e}; the gate's gradient "
        "is {:.2e} and the balance loss {:.3f} (E · 1 · 1)\n",
        tokens_count, embedding_dim, output_difference, input_gradient_difference,
        weight_gradient_difference, single_gate_gradient, single_balance);

    // (2) An untrained router of E experts, the same gate read at k 1 and at k 2.
    torch::manual_seed(options.seed + 1);
    g2c::moe::MoEFeedForward top1(embedding_dim, experts, 1);
    g2c::moe::MoEFeedForward top2(embedding_dim, experts, 2);
    {
      torch::NoGradGuard no_grad;  // the same experts and gate
      const auto source = top1->named_parameters();
      for (auto& parameter : top2->named_parameters())
        parameter.value().copy_(source[parameter.key()]);
    }
    top1->to(device);
    top2->to(device);
    const auto k1 = read_router(top1, tokens, direction);
    const auto k2 = read_router(top2, tokens, direction);
    const auto probs = top2->router->last_probs.detach().to(torch::kCPU, torch::kDouble);
    const auto top_probability = std::get<0>(probs.max(1));
    const double uniform = 1.0 / static_cast<double>(experts);
    fmt::print(
        "Untrained router, E {}: the top expert's probability is {:.3f} on average (uniform "
        "{:.3f}; min {:.3f}, max {:.3f})\n",
        experts, top_probability.mean().item<double>(), uniform,
        top_probability.min().item<double>(), top_probability.max().item<double>());
    for (const auto& [name, reading] : {std::pair{"k 1", k1}, std::pair{"k 2", k2}}) {
      const double busiest = *std::max_element(reading.shares.begin(), reading.shares.end());
      const double idlest = *std::min_element(reading.shares.begin(), reading.shares.end());
      fmt::print(
          "  {}: the busiest expert takes {:.1f} % of the assignments, the idlest {:.1f} % "
          "(uniform {:.1f} %); balance loss {:.3f}; the task loss's gradient to the gate has "
          "norm {:.2e}\n",
          name, 100 * busiest, 100 * idlest, 100 * uniform, reading.balance_loss,
          reading.gate_gradient_norm);
    }

    // Histogram of the top probability, in bins of width 1/(4E) from 0 to 1.
    const std::int64_t bins = 4 * experts;
    const auto histogram = torch::histc(top_probability.to(torch::kFloat), bins, 0.0, 1.0);
    std::vector<std::string> bin_centres;
    std::vector<double> bin_shares;
    for (std::int64_t i = 0; i < bins; ++i) {
      const double share = histogram[i].item<double>() / static_cast<double>(tokens_count);
      if (share == 0.0) continue;
      bin_centres.push_back(
          fmt::format("{:.2f}", (static_cast<double>(i) + 0.5) / static_cast<double>(bins)));
      bin_shares.push_back(share);
    }

    auto result = g2c::exercises::run_metadata("beyond_moe_collapse", options, device);
    result["config"] = {
        {"embedding_dim", embedding_dim}, {"tokens", tokens_count}, {"num_experts", experts}};
    result["single_expert"] = {{"max_output_difference", output_difference},
                               {"max_input_gradient_difference", input_gradient_difference},
                               {"max_fc1_gradient_difference", weight_gradient_difference},
                               {"max_gate_gradient", single_gate_gradient},
                               {"balance_loss", single_balance}};
    std::vector<std::string> expert_names;
    for (std::int64_t e = 0; e < experts; ++e) expert_names.push_back(fmt::format("{}", e));
    result["untrained_router"] = {
        {"top_probability_mean", top_probability.mean().item<double>()},
        {"top_probability_min", top_probability.min().item<double>()},
        {"top_probability_max", top_probability.max().item<double>()},
        {"expert", expert_names},
        {"k1",
         {{"shares", k1.shares},
          {"balance_loss", k1.balance_loss},
          {"gate_gradient_norm", k1.gate_gradient_norm}}},
        {"k2",
         {{"shares", k2.shares},
          {"balance_loss", k2.balance_loss},
          {"gate_gradient_norm", k2.gate_gradient_norm}}},
        {"histogram", {{"top_probability", bin_centres}, {"share_of_tokens", bin_shares}}}};
    result["figures"] = g2c::exercises::figures(
        {Figure::bar("router_shares.png",
                     fmt::format("An untrained router's assignments, E {}, {} tokens", experts,
                                 tokens_count),
                     "expert", "share of the assignments")
             .add(Series("k 1", "/untrained_router/expert", "/untrained_router/k1/shares"))
             .add(Series("k 2", "/untrained_router/expert", "/untrained_router/k2/shares"))
             .hline(uniform, "uniform"),
         Figure::bar("router_confidence.png",
                     fmt::format("The untrained router's top probability (uniform 1/{})", experts),
                     "top expert's probability", "share of tokens")
             .add(Series("", "/untrained_router/histogram/top_probability",
                         "/untrained_router/histogram/share_of_tokens"))});
    const auto path = g2c::exercises::save_result(options, "collapse.json", result);
    g2c::exercises::plot_result(options, path);
  });
}

}  // namespace exercise_beyond_moe_collapse
