// Exercise 08 — why several smaller heads instead of one big one? The TinyShakespeare probe
// (token embedding + learned positions + causal MultiHeadAttention, D = 64 + Linear to the
// vocabulary) trained with H = 1, 4 and 8: loss curves, per-head heatmaps and entropies, and the
// parameter count, which does not depend on H.
#include <cmath>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "exercises/common/cli.h"
#include "exercises/common/corpus.h"
#include "exercises/common/figures.h"
#include "exercises/common/tensor_json.h"
#include "exercises/common/tiny_lm.h"
#include "exercises/common/training.h"
#include "g2c/nn/optim.h"

namespace exercise_08_heads {

namespace {

struct Config {
  std::vector<std::int64_t> heads{1, 4, 8};
  std::int64_t embedding_dim = 64;
  std::int64_t context_length = 64;
  std::int64_t batch_size = 32;
  double lr = 3e-3;  // AdamW, as the module 07 probe
  double weight_decay = 1e-4;
  std::int64_t log_every = 50;
  std::int64_t heatmap_tokens =
      24;  // the first characters of the validation text, for the heatmaps
};

/// Mean over query rows of -sum w log w: 0 = each query looks at one key; larger = spread out.
double mean_row_entropy(const torch::Tensor& weights) {  // (T, T)
  const auto safe = weights.clamp_min(1e-12);
  return (-(weights * safe.log()).sum(/*dim=*/-1)).mean().item<double>();
}

}  // namespace

int main(int argc, char** argv) {
  g2c::CommandLine app{
      "Module 08: one head or several? The TinyShakespeare probe with H = 1, 4 and 8"};
  g2c::exercises::CommonOptions options;
  options.out = "results/08-multi-head-attention";
  options.steps = 800;
  Config config;
  g2c::exercises::add_common_options(app, options);
  app.add_option("--heads", config.heads, "Head counts to compare (each must divide D)").positive();
  app.add_option("--dim", config.embedding_dim, "Embedding dimension D");
  app.add_option("--context", config.context_length, "Context length T").range(2, 4096);
  app.add_option("--log-every", config.log_every, "Record the loss every N steps")
      .positive()
      .no_default();
  return g2c::run_cli(app, argc, argv, [&] {
    const auto device = g2c::exercises::prepare(options);
    // Characters: every heatmap row is one readable symbol.
    const auto corpus = g2c::exercises::tinyshakespeare_corpus("char");
    const auto probe_length = std::min(config.heatmap_tokens, config.context_length);
    const auto probe_ids = corpus.val_prefix(probe_length);
    std::vector<std::string> labels;
    for (const auto id : probe_ids) {
      labels.push_back(corpus.decode({id}) == " " ? "␣" : corpus.token_label(id));
    }
    const auto probe = torch::tensor(probe_ids, torch::kLong).unsqueeze(0).to(device);  // (1, T)

    using g2c::exercises::Figure;
    using g2c::exercises::Panel;
    using g2c::exercises::Series;
    nlohmann::json runs = nlohmann::json::array();
    auto loss = Figure::line("heads_loss.png",
                             "Training loss by head count (same parameters, same batches)", "step",
                             "cross-entropy");
    std::vector<Figure> figures;  // one heatmap figure per run; the loss curves go in front last
    for (std::size_t run_index = 0; run_index < config.heads.size(); ++run_index) {
      const std::int64_t heads = config.heads[run_index];
      torch::manual_seed(options.seed);
      g2c::exercises::TinyAttentionLM model(
          g2c::exercises::TinyAttentionLMOptions(corpus.vocab_size, config.context_length,
                                                 config.embedding_dim)
              .num_heads(heads));
      model->to(device);
      std::int64_t attention_parameters = 0;
      for (const auto& p : model->multi_head_attention->parameters()) {
        attention_parameters += p.numel();
      }
      g2c::nn::AdamW optimizer(model->parameters(), config.lr, {0.9, 0.999}, 1e-8,
                               config.weight_decay);
      g2c::exercises::WindowSampler batches(corpus.train, config.context_length, config.batch_size,
                                            g2c::exercises::TargetRule::kWithinWindow,
                                            options.seed + 1);  // the same batches for every H
      const auto training = g2c::exercises::train_language_model(
          *model, optimizer, batches, /*validation=*/{},
          g2c::exercises::TrainLanguageModelOptions()
              .steps(options.steps)
              .log_every(config.log_every)
              .label(fmt::format("H={}", heads))
              .show_progress(!options.quiet)
              .files_to_check({"g2c/attention/multi_head.cpp (attention_weights, forward)",
                               "g2c/nn/cross_entropy.cpp", "g2c/nn/adamw.cpp"}));
      const auto& steps = training.steps;
      const auto& losses = training.train_loss;

      torch::NoGradGuard no_grad;
      const auto weights = model->attention_weights(probe)[0];  // (H, T, T)
      nlohmann::json per_head = nlohmann::json::array();
      auto heatmap =
          Figure::heatmaps(fmt::format("heads_H{}.png", heads),
                           fmt::format("Per-head attention after training, H = {}", heads))
              .columns(std::min<std::int64_t>(heads, 4));
      std::vector<double> entropies;
      for (std::int64_t h = 0; h < heads; ++h) {
        entropies.push_back(mean_row_entropy(weights[h]));
        per_head.push_back(g2c::exercises::matrix_json(weights[h]));
        heatmap.add(Panel(fmt::format("/runs/{}/weights/{}", run_index, h))
                        .title(fmt::format("head {} (entropy {:.2f})", h, entropies.back()))
                        .xticklabels(labels)
                        .yticklabels(labels)
                        .range(0, 1)
                        .fontsize(6));
      }
      fmt::print("H={}: final loss {:.3f}, attention parameters {}, per-head entropy {:.2f}\n",
                 heads, losses.back(), attention_parameters, fmt::join(entropies, ", "));
      runs.push_back({{"num_heads", heads},
                      {"head_dim", config.embedding_dim / heads},
                      {"attention_parameters", attention_parameters},
                      {"steps", steps},
                      {"train_loss", losses},
                      {"head_entropy", entropies},
                      {"weights", per_head}});
      loss.add(Series(fmt::format("H = {}", heads), fmt::format("/runs/{}/steps", run_index),
                      fmt::format("/runs/{}/train_loss", run_index)));
      figures.push_back(heatmap);
    }
    auto result = g2c::exercises::run_metadata("08_heads", options, device);
    result["config"] = {{"heads", config.heads},
                        {"embedding_dim", config.embedding_dim},
                        {"context_length", config.context_length},
                        {"batch_size", config.batch_size},
                        {"optimizer", "adamw"},
                        {"lr", config.lr},
                        {"weight_decay", config.weight_decay},
                        {"steps", options.steps},
                        {"log_every", config.log_every},
                        {"tokenizer", "char"}};
    result["probe_tokens"] = labels;
    result["runs"] = runs;
    figures.insert(figures.begin(), loss);
    result["figures"] = g2c::exercises::figures(figures);
    const auto path = g2c::exercises::save_result(options, "heads.json", result);
    g2c::exercises::plot_result(options, path);
  });
}

}  // namespace exercise_08_heads
