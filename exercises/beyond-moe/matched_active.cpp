// Beyond moe, exercise 2 — dense against MoE at matched active parameters. A fresh dense model of
// ShakespeareLM-0.8M's shape and a MoE model of the same dimensions with E 8 experts per block and
// k 1 (about 5.4 times the parameters, the dense model's per token plus the routers) learn module
// 10's data through module 10's Trainer: the same seed, the same batches, the same steps, schedule
// and AdamW; the MoE loss is the language-model loss plus α times the balance loss. Reported:
// validation loss against steps, time per step, and every expert's share of its layer's tokens over
// training.
#include <algorithm>
#include <cctype>
#include <iterator>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "exercises/beyond-moe/moe_runs.h"
#include "exercises/common/cli.h"
#include "exercises/common/figures.h"
#include "g2c/core/errors.h"
#include "g2c/lora/inject.h"

namespace exercise_beyond_moe_matched_active {

using g2c::exercises::Figure;
using g2c::exercises::Panel;
using g2c::exercises::Series;

namespace {

/// The specialisation probe's byte classes, by the input token's byte (ids 0-255 are bytes, the
/// rest special).
const std::vector<std::string> kByteClasses = {"space",     "newline",     "capital",
                                               "lowercase", "punctuation", "other"};

std::int64_t byte_class(std::int64_t id) {
  if (id == ' ') return 0;
  if (id == '\n') return 1;
  if (id >= 'A' && id <= 'Z') return 2;
  if (id >= 'a' && id <= 'z') return 3;
  if (id < 128 && std::ispunct(static_cast<int>(id))) return 4;
  return 5;
}

/// Which experts each kind of byte goes to: the trained model routes the held-out batches, and
/// for every block, of the assignments of the tokens whose input byte is of class c, the share
/// each expert takes — routing[layer][class][expert] — with each class's token count. A class
/// whose row matches the block's overall shares has no expert of its own.
nlohmann::json byte_class_routing(g2c::moe::MoETransformerLMImpl& moe,
                                  const std::vector<g2c::exercises::TokenBatch>& batches,
                                  const torch::Device& device) {
  const auto classes = static_cast<std::int64_t>(kByteClasses.size());
  const std::int64_t experts = moe.num_experts;
  std::vector<torch::Tensor> counts;  // (C, E) per block; a tensor each, not one shared handle
  for (std::int64_t l = 0; l < moe.num_layers; ++l) {
    counts.push_back(torch::zeros({classes, experts}, torch::kDouble));
  }
  auto class_of_id = torch::empty({moe.vocab_size}, torch::kLong);  // (V) a class per id
  for (std::int64_t id = 0; id < moe.vocab_size; ++id) class_of_id[id] = byte_class(id);
  auto class_tokens = torch::zeros({classes}, torch::kLong);
  torch::NoGradGuard no_grad;
  for (const auto& batch : batches) {
    moe.forward(batch.inputs.to(device));
    const auto token_class = class_of_id.index_select(0, batch.inputs.flatten().to(torch::kCPU));
    class_tokens += torch::bincount(token_class, {}, classes);
    for (std::int64_t l = 0; l < moe.num_layers; ++l) {
      const auto indices = moe.blocks[l]->moe_ffn->last_indices.to(torch::kCPU);  // (N, k)
      const auto rows = token_class.unsqueeze(1).expand_as(indices);
      counts[l].view(-1).index_add_(0, (rows * experts + indices).flatten(),
                                    torch::ones({indices.numel()}, torch::kDouble));
    }
  }
  nlohmann::json routing = nlohmann::json::array();
  for (const auto& layer : counts) {
    const auto shares = layer / layer.sum(1, true).clamp_min(1.0);
    nlohmann::json rows = nlohmann::json::array();
    for (std::int64_t c = 0; c < classes; ++c) {
      const auto row = shares[c].contiguous();
      rows.push_back(std::vector<double>(row.data_ptr<double>(), row.data_ptr<double>() + experts));
    }
    routing.push_back(rows);
  }
  const auto tokens = class_tokens.contiguous();
  return {{"classes", kByteClasses},
          {"class_tokens", std::vector<std::int64_t>(tokens.data_ptr<std::int64_t>(),
                                                     tokens.data_ptr<std::int64_t>() + classes)},
          {"routing", routing}};
}

}  // namespace

int main(int argc, char** argv) {
  g2c::CommandLine app{
      "Beyond moe, exercise 2: a dense ShakespeareLM-0.8M-shaped model against MoE E 8, k 1 at\n"
      "the same dimensions, the same batches and steps through module 10's Trainer; validation\n"
      "loss, time per step and every expert's share of its layer's tokens over training. Writes\n"
      "matched_active.json and matched_active_*.png."};
  g2c::exercises::CommonOptions options;
  options.out = "results/beyond-moe";
  g2c::exercises::moe::RunConfig config;
  options.steps = config.steps;
  g2c::exercises::add_common_options(app, options);
  g2c::exercises::moe::add_run_options(app, config);
  app.add_option("--top-k", config.top_k, "k of the MoE model").range(1, 256);
  app.add_option("--balance", config.balance, "α, the balance loss's coefficient")
      .range(0.0, 100.0);
  return g2c::run_cli(app, argc, argv, [&] {
    const auto device = g2c::exercises::prepare(options);
    g2c::exercises::moe::finish_config(config, options.steps);
    const auto data = g2c::exercises::moe::load_data(config, options.seed);
    const auto dense = g2c::exercises::moe::dense_model(config, data, options.seed);
    auto moe = g2c::exercises::moe::moe_model(config, data, config.top_k, options.seed);
    const std::int64_t dense_parameters = g2c::lora::count_parameters(*dense).total;
    fmt::print("dense: {} parameters; MoE E {}, k {}: {} parameters, {} active per token\n",
               dense_parameters, config.experts, config.top_k, moe->total_parameter_count(),
               moe->active_parameter_count());
    std::fflush(stdout);

    auto runs = nlohmann::json::array();
    runs.push_back(g2c::exercises::moe::train_run("dense", dense, nullptr, 0.0, config, options,
                                                  device, data));
    runs.push_back(
        g2c::exercises::moe::train_run(fmt::format("MoE E {} k {}", config.experts, config.top_k),
                                       std::static_pointer_cast<g2c::nn::Module>(moe.ptr()),
                                       moe.get(), config.balance, config, options, device, data));
    for (const auto& run : runs) {
      fmt::print(
          "{:<12} {:>9} parameters ({:>9} active): validation loss {:.4f}, {:.1f} ms a step\n",
          run["name"].get<std::string>(), run["total_parameters"].get<std::int64_t>(),
          run["active_parameters"].get<std::int64_t>(), run["final_val_loss"].get<double>(),
          run["median_step_ms"].get<double>());
    }
    fmt::print("largest expert share per layer at the end (1/E = {:.3f}): {}\n",
               1.0 / static_cast<double>(config.experts), runs[1]["final_max_share"].dump());
    // The specialisation probe: which experts each kind of byte goes to, per block.
    const auto probe = byte_class_routing(*moe, data.final_batches, device);
    for (std::int64_t l = 0; l < config.num_layers; ++l) {
      std::string line = fmt::format("block {}: the favourite expert's share of", l);
      for (std::size_t c = 0; c < kByteClasses.size(); ++c) {
        const auto& row = probe["routing"][l][c];
        const auto favourite = std::max_element(row.begin(), row.end());
        line += fmt::format(" {} {:.0f} % (expert {}){}", kByteClasses[c],
                            100 * favourite->get<double>(), std::distance(row.begin(), favourite),
                            c + 1 < kByteClasses.size() ? "," : "");
      }
      fmt::print("{}\n", line);
    }

    auto result = g2c::exercises::run_metadata("beyond_moe_matched_active", options, device);
    result["config"] = g2c::exercises::moe::config_json(config);
    result["config"]["top_k"] = config.top_k;
    result["config"]["balance"] = config.balance;
    result["config"]["dispatch"] = config.lesson_loop ? "lesson loop" : "sorted";
    result["config"]["final_eval_batches"] = config.final_eval_batches;
    result["runs"] = runs;
    result["specialisation"] = probe;
    auto loss =
        Figure::line("matched_active_loss.png", "Validation loss at matched active parameters",
                     "step", "validation loss");
    for (std::size_t r = 0; r < runs.size(); ++r) {
      loss.add(Series(runs[r]["name"], fmt::format("/runs/{}/history/val_step", r),
                      fmt::format("/runs/{}/history/val_loss", r))
                   .marker("o"));
    }
    std::vector<Figure> figures = {loss};
    for (std::int64_t l = 0; l < config.num_layers;
         l += std::max<std::int64_t>(1, config.num_layers - 1)) {
      auto shares = Figure::line(fmt::format("matched_active_shares_layer{}.png", l),
                                 fmt::format("Each expert's share of block {}'s tokens", l), "step",
                                 "share of the assignments");
      for (std::int64_t e = 0; e < config.experts; ++e) {
        // shares[l][snapshot][e]: a column of the JSON, as its own series.
        std::vector<double> column;
        for (const auto& snapshot : runs[1]["shares"][l]) column.push_back(snapshot[e]);
        shares.add(Series(fmt::format("expert {}", e), "/runs/1/share_steps", column));
      }
      shares.hline(1.0 / static_cast<double>(config.experts), "1/E");
      figures.push_back(shares);
    }
    auto specialisation = Figure::heatmaps("matched_active_specialisation.png",
                                           "Which experts each kind of byte goes to (held-out "
                                           "tokens; a row is a class's assignments)")
                              .columns(2);
    for (std::int64_t l = 0; l < config.num_layers; ++l) {
      specialisation.add(Panel(fmt::format("/specialisation/routing/{}", l))
                             .title(fmt::format("block {}", l))
                             .xlabel("expert")
                             .yticklabels(kByteClasses)
                             .range(0.0, 1.0));
    }
    figures.push_back(specialisation);
    result["figures"] = g2c::exercises::figures(figures);
    const auto path = g2c::exercises::save_result(options, "matched_active.json", result);
    g2c::exercises::plot_result(options, path);
  });
}

}  // namespace exercise_beyond_moe_matched_active
