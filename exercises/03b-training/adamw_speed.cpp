// Exercise 03b.8 (optional) — how fast is AdamW::step? Your optimizer against
// torch::optim::AdamW on the parameter set of a small GPT (token and position embeddings, four
// pre-norm blocks, layer norms, the output bias), timed in alternating blocks so that a busy
// machine slows both alike.
#include <algorithm>
#include <chrono>

#include <fmt/format.h>

#include "exercises/common/cli.h"
#include "exercises/common/figures.h"
#include "exercises/common/timing.h"
#include "g2c/core/errors.h"
#include "g2c/core/progress.h"
#include "g2c/nn/device.h"
#include "g2c/nn/optim.h"

namespace exercise_03b_adamw_speed {

namespace {

using g2c::exercises::synchronize;

struct Config {
  std::int64_t dim = 128;      // D
  std::int64_t layers = 4;     // transformer blocks
  std::int64_t vocab = 4096;   // the ShakespeareTokenizer's size
  std::int64_t context = 256;  // learned positions
  std::int64_t repeats = 50;   // timed steps per block
  std::int64_t blocks = 6;     // alternating blocks per optimizer
  double lr = 3e-4;
  double weight_decay = 0.1;
};

/// The shapes of a GPT-style model's parameters, in registration order.
std::vector<std::vector<std::int64_t>> gpt_shapes(const Config& c) {
  const auto d = c.dim;
  std::vector<std::vector<std::int64_t>> shapes{{c.vocab, d}, {c.context, d}};
  for (std::int64_t layer = 0; layer < c.layers; ++layer) {
    for (const auto& shape :
         std::vector<std::vector<std::int64_t>>{{d},
                                                {d},  // layer norm 1: gamma, beta
                                                {d, 3 * d},
                                                {3 * d},  // fused q, k, v projection
                                                {d, d},
                                                {d},  // output projection
                                                {d},
                                                {d},  // layer norm 2
                                                {d, 4 * d},
                                                {4 * d},  // feed-forward up
                                                {4 * d, d},
                                                {d}}) {  // feed-forward down
      shapes.push_back(shape);
    }
  }
  shapes.push_back({d});
  shapes.push_back({d});        // final layer norm
  shapes.push_back({c.vocab});  // output bias (the weight is tied to the token embedding)
  return shapes;
}

/// Milliseconds per step over `repeats` steps of `optimizer`.
template <typename Optimizer>
double time_steps(Optimizer& optimizer, std::int64_t repeats, const torch::Device& device) {
  synchronize(device);
  const auto start = std::chrono::steady_clock::now();
  for (std::int64_t i = 0; i < repeats; ++i) optimizer.step();
  synchronize(device);
  const std::chrono::duration<double, std::milli> elapsed =
      std::chrono::steady_clock::now() - start;
  return elapsed.count() / static_cast<double>(repeats);
}

}  // namespace

int main(int argc, char** argv) {
  g2c::CommandLine app{
      "Module 03b: time AdamW::step against torch::optim::AdamW on a small GPT's "
      "parameters"};
  g2c::exercises::CommonOptions options;
  options.out = "results/03b-training";
  Config config;
  g2c::exercises::add_common_options(app, options);
  app.add_option("--dim", config.dim, "Embedding dimension D");
  app.add_option("--layers", config.layers, "Transformer blocks");
  app.add_option("--vocab", config.vocab, "Vocabulary size");
  app.add_option("--repeats", config.repeats, "Timed steps per block");
  app.add_option("--blocks", config.blocks, "Timed blocks per optimizer");
  return g2c::run_cli(app, argc, argv, [&] {
    if (config.dim < 1 || config.layers < 0 || config.vocab < 1 || config.repeats < 1 ||
        config.blocks < 1) {
      throw g2c::ValueError(fmt::format(
          "need --dim, --vocab, --repeats, --blocks >= 1 and --layers >= 0; got {}, {}, {}, {}, {}",
          config.dim, config.vocab, config.repeats, config.blocks, config.layers));
    }
    const auto device = g2c::exercises::prepare(options);
    const auto tensor_options = torch::TensorOptions().device(device);
    std::vector<torch::Tensor> ours_params, theirs_params;
    std::int64_t numel = 0;
    for (const auto& shape : gpt_shapes(config)) {
      const auto start = 0.02 * torch::randn(shape, tensor_options);
      const auto grad = 1e-3 * torch::randn(shape, tensor_options);  // fixed: only step() is timed
      for (auto* list : {&ours_params, &theirs_params}) {
        auto p = start.clone().requires_grad_();
        p.mutable_grad() = grad.clone();
        list->push_back(p);
      }
      numel += start.numel();
    }
    g2c::nn::AdamW ours(ours_params, config.lr, {0.9, 0.95}, 1e-8, config.weight_decay);
    torch::optim::AdamW theirs(theirs_params, torch::optim::AdamWOptions(config.lr)
                                                  .betas({0.9, 0.95})
                                                  .eps(1e-8)
                                                  .weight_decay(config.weight_decay));
    fmt::print("{} parameter tensors, {} numbers, on {}\n", ours_params.size(), numel,
               g2c::nn::device_name(device));

    time_steps(ours, 5, device);  // warm-up: allocator, caches, lazy state on LibTorch's side
    time_steps(theirs, 5, device);
    std::vector<double> ours_ms, theirs_ms;
    g2c::Progress progress("timing", config.blocks, !options.quiet);
    for (std::int64_t block = 0; block < config.blocks; ++block) {
      ours_ms.push_back(time_steps(ours, config.repeats, device));  // A, B, A, B, ...
      theirs_ms.push_back(time_steps(theirs, config.repeats, device));
      progress.update(block + 1);
    }
    progress.finish();
    double difference = 0.0;  // both took the same steps from the same start
    for (std::size_t i = 0; i < ours_params.size(); ++i) {
      difference =
          std::max(difference, (ours_params[i] - theirs_params[i]).abs().max().item<double>());
    }
    const double ours_median = g2c::exercises::median(ours_ms),
                 theirs_median = g2c::exercises::median(theirs_ms);
    fmt::print("AdamW::step               {:8.3f} ms/step (median of {} blocks of {})\n",
               ours_median, config.blocks, config.repeats);
    fmt::print("torch::optim::AdamW::step {:8.3f} ms/step\n", theirs_median);
    fmt::print(
        "ratio ours / LibTorch     {:8.2f}   (max |parameter difference| {:.2e} after {} "
        "steps)\n",
        ours_median / theirs_median, difference, 5 + config.blocks * config.repeats);

    auto result = g2c::exercises::run_metadata("03b_adamw_speed", options, device);
    result["config"] = {{"dim", config.dim},         {"layers", config.layers},
                        {"vocab", config.vocab},     {"context", config.context},
                        {"repeats", config.repeats}, {"blocks", config.blocks},
                        {"lr", config.lr},           {"weight_decay", config.weight_decay},
                        {"betas", {0.9, 0.95}}};
    result["parameters"] = {{"tensors", ours_params.size()}, {"numbers", numel}};
    result["ms_per_step"] = {{"ours", ours_ms}, {"torch_optim", theirs_ms}};
    result["median_ms_per_step"] = {{"ours", ours_median}, {"torch_optim", theirs_median}};
    result["ratio"] = ours_median / theirs_median;
    result["max_parameter_difference"] = difference;
    result["bars"] = {{"name", {"AdamW::step", "torch::optim::AdamW"}},
                      {"ms", {ours_median, theirs_median}}};
    using g2c::exercises::Figure;
    using g2c::exercises::Series;
    const auto title =
        fmt::format("One AdamW step, {} tensors, {} numbers", ours_params.size(), numel);
    result["figures"] =
        g2c::exercises::figures({Figure::bar("adamw_speed.png", title, "", "ms per step (median)")
                                     .add(Series("", "/bars/name", "/bars/ms"))});
    const auto path = g2c::exercises::save_result(options, "adamw_speed.json", result);
    g2c::exercises::plot_result(options, path);
  });
}

}  // namespace exercise_03b_adamw_speed
