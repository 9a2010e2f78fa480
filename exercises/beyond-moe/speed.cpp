// Beyond moe — what routing costs. One training step (forward, backward, AdamW) of a dense
// ShakespeareLM-0.8M-shaped model against MoE E 8, k 1 at the same dimensions (the same active
// parameters per token, plus the routers), its mixture computed by the lesson's loop over experts
// (your MoEFeedForward::forward) and by the sorted dispatch (g2c/moe/sorted_dispatch.h), all on the
// same batch, side by side: milliseconds per step (median of repeats) and training tokens per
// second.
#include <chrono>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "exercises/common/batches.h"
#include "exercises/common/cli.h"
#include "exercises/common/figures.h"
#include "exercises/common/timing.h"
#include "g2c/core/errors.h"
#include "g2c/lora/inject.h"
#include "g2c/moe/model.h"
#include "g2c/nn/optim.h"
#include "g2c/pretraining/loss.h"
#include "g2c/transformer/transformer_lm.h"

namespace exercise_beyond_moe_speed {

namespace {

using g2c::exercises::synchronize;

using Clock = std::chrono::steady_clock;
using g2c::exercises::Figure;
using g2c::exercises::Series;

/// Median milliseconds of one training step of `model` on (inputs, targets), and of its parts:
/// zero_grad, forward, next-token loss (plus `balance` times the model's balance loss when it has
/// one) and backward; then the AdamW step. The first `warmup` steps are not counted.
struct StepTime {
  double total_ms, forward_backward_ms, optimizer_ms;
};

StepTime step_ms(g2c::nn::Module& model, const std::function<torch::Tensor()>& balance_loss,
                 double balance, const torch::Tensor& inputs, const torch::Tensor& targets,
                 int repeats, int warmup, const torch::Device& device) {
  g2c::nn::AdamW optimizer(model.parameters(), 1e-3);
  std::vector<double> total, forward_backward, update;
  for (int i = 0; i < warmup + repeats; ++i) {
    synchronize(device);
    const auto start = Clock::now();
    optimizer.zero_grad();
    auto loss = g2c::pretraining::lm_cross_entropy(model.forward(inputs), targets);
    if (balance_loss) loss = loss + balance * balance_loss();
    loss.backward();
    synchronize(device);
    const auto middle = Clock::now();
    optimizer.step();
    synchronize(device);
    const auto end = Clock::now();
    if (i < warmup) continue;
    total.push_back(1e3 * std::chrono::duration<double>(end - start).count());
    forward_backward.push_back(1e3 * std::chrono::duration<double>(middle - start).count());
    update.push_back(1e3 * std::chrono::duration<double>(end - middle).count());
  }
  return {g2c::exercises::median(total), g2c::exercises::median(forward_backward),
          g2c::exercises::median(update)};
}

}  // namespace

int main(int argc, char** argv) {
  g2c::CommandLine app{
      "Beyond moe: one training step of a dense ShakespeareLM-0.8M-shaped model against MoE E 8,\n"
      "k 1 at the same dimensions, with the lesson's dispatch loop and with the sorted dispatch.\n"
      "Writes speed.json and speed.png."};
  g2c::exercises::CommonOptions options;
  options.out = "results/beyond-moe";
  g2c::exercises::add_common_options(app, options);
  std::int64_t embedding_dim = 128, num_layers = 4, num_heads = 4, context = 128, batch = 8;
  std::int64_t experts = 8, top_k = 1;
  int repeats = 10;
  app.add_option("--embedding-dim", embedding_dim, "D of both models").range(8, 4096);
  app.add_option("--layers", num_layers, "Blocks of both models").range(1, 64);
  app.add_option("--heads", num_heads, "Attention heads (must divide D)").range(1, 64);
  app.add_option("--context", context, "Tokens per sequence").range(2, 4096);
  app.add_option("--batch", batch, "Sequences per step").range(1, 4096);
  app.add_option("--experts", experts, "E of the MoE model").range(1, 256);
  app.add_option("--top-k", top_k, "k of the MoE model").range(1, 256);
  app.add_option("--repeats", repeats, "Timed steps of each model (after two warm-up steps)")
      .range(1, 1000);
  return g2c::run_cli(app, argc, argv, [&] {
    const auto device = g2c::exercises::prepare(options);
    constexpr std::int64_t kVocab = 264;  // the course's byte-level vocabulary
    torch::manual_seed(options.seed);
    const auto inputs = torch::randint(0, kVocab, {batch, context}, torch::kLong).to(device);
    const auto targets = torch::randint(0, kVocab, {batch, context}, torch::kLong).to(device);
    const double tokens = static_cast<double>(batch * context);

    g2c::transformer::TransformerLM dense(kVocab, embedding_dim, num_layers, num_heads, context);
    g2c::moe::MoETransformerLM loop(kVocab, embedding_dim, num_layers, num_heads, context, experts,
                                    top_k);
    g2c::moe::MoETransformerLM sorted(kVocab, embedding_dim, num_layers, num_heads, context,
                                      experts, top_k, /*hidden_dim=*/0, /*sorted_dispatch=*/true);
    dense->to(device);
    loop->to(device);
    sorted->to(device);

    struct Row {
      std::string name;
      std::int64_t total, active;
      StepTime time;
    };
    std::vector<Row> rows;
    const std::int64_t dense_total = g2c::lora::count_parameters(*dense).total;
    rows.push_back({"dense", dense_total, dense_total,
                    step_ms(*dense, nullptr, 0.0, inputs, targets, repeats, 2, device)});
    for (auto* model : {&loop, &sorted}) {
      const bool is_sorted = model == &sorted;
      rows.push_back({is_sorted ? "MoE, sorted dispatch" : "MoE, the lesson's loop",
                      (*model)->total_parameter_count(), (*model)->active_parameter_count(),
                      step_ms(
                          **model, [&] { return (*model)->load_balancing_loss(); }, 0.01, inputs,
                          targets, repeats, 2, device)});
    }

    auto result = g2c::exercises::run_metadata("beyond_moe_speed", options, device);
    result["config"] = {{"vocab_size", kVocab},      {"embedding_dim", embedding_dim},
                        {"num_layers", num_layers},  {"num_heads", num_heads},
                        {"context_length", context}, {"batch_size", batch},
                        {"num_experts", experts},    {"top_k", top_k},
                        {"repeats", repeats},        {"balance_coefficient", 0.01}};
    nlohmann::json table = nlohmann::json::array();
    for (const auto& row : rows) {
      const double per_second = tokens / (row.time.total_ms / 1e3);
      const double relative = rows.front().time.total_ms / row.time.total_ms;
      table.push_back({{"model", row.name},
                       {"total_parameters", row.total},
                       {"active_parameters", row.active},
                       {"ms_per_step", row.time.total_ms},
                       {"forward_backward_ms", row.time.forward_backward_ms},
                       {"optimizer_ms", row.time.optimizer_ms},
                       {"tokens_per_s", per_second},
                       {"relative_to_dense", relative}});
      fmt::print(
          "{:<24} {:>9} parameters ({:>9} active): {:7.1f} ms a step ({:6.1f} forward + "
          "backward, {:5.1f} AdamW), {:6.0f} tokens/s, {:.2f}x the dense model's\n",
          row.name, row.total, row.active, row.time.total_ms, row.time.forward_backward_ms,
          row.time.optimizer_ms, per_second, relative);
    }
    result["models"] = table;
    nlohmann::json names = nlohmann::json::array(), speeds = nlohmann::json::array();
    for (const auto& entry : table) {
      names.push_back(entry["model"]);
      speeds.push_back(entry["tokens_per_s"]);
    }
    result["bars"] = {{"model", names}, {"tokens_per_s", speeds}};
    result["figures"] = g2c::exercises::figures(
        {Figure::bar(
             "speed.png",
             fmt::format("Training tokens per second, {} x {} tokens a step", batch, context), "",
             "tokens/s (median step)")
             .add(Series("", "/bars/model", "/bars/tokens_per_s"))});
    const auto path = g2c::exercises::save_result(options, "speed.json", result);
    g2c::exercises::plot_result(options, path);
  });
}

}  // namespace exercise_beyond_moe_speed
