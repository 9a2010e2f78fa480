// Exercise 07.2 — what does attention look at? Heatmaps for two sentences that differ in one word,
// before and after lightly training a TinyShakespeare probe (token embedding + learned positions
// + causal SelfAttention, D = 64 + Linear to the vocabulary); how much sharper attention gets; and
// one self-contained offline HTML page to explore the patterns (hover a row, toggle the mask).
#include <cmath>

#include <fmt/format.h>

#include "exercises/common/cli.h"
#include "exercises/common/corpus.h"
#include "exercises/common/data.h"
#include "exercises/common/figures.h"
#include "exercises/common/tensor_json.h"
#include "exercises/common/tiny_lm.h"
#include "exercises/common/training.h"
#include "g2c/core/atomic_file.h"
#include "g2c/core/errors.h"
#include "g2c/nn/optim.h"

namespace exercise_07_visualize {

namespace {

struct Config {
  std::vector<std::string> sentences{"The animal didn't cross the street because it was too tired.",
                                     "The animal didn't cross the street because it was too wide."};
  std::int64_t embedding_dim = 64;
  std::string tokenizer = "bpe";  // G2CTokenizer, else ShakespeareTokenizer, else characters
  std::int64_t bpe_vocab = 2048;
  std::int64_t char_context = 64;  // T in characters
  std::int64_t bpe_context = 25;   // T in BPE tokens (about the same stretch of text)
  std::int64_t batch_size = 128;
  double lr = 3e-3;  // AdamW
  double weight_decay = 1e-4;
  std::uint64_t model_seed = 7;
  std::uint64_t data_seed = 0;     // the training batches
  std::uint64_t stat_seed = 4321;  // the held-out windows of the sharpness statistics
  std::int64_t stat_batches = 4;   // that many batches' worth of them
};

/// Mean over rows of the largest weight (1 = every query looks at one key) and of the row entropy.
std::pair<double, double> sharpness(const torch::Tensor& weights) {  // (..., T, T)
  const double mean_max = std::get<0>(weights.max(/*dim=*/-1)).mean().item<double>();
  const double entropy =
      (-(weights * weights.clamp_min(1e-12).log()).sum(/*dim=*/-1)).mean().item<double>();
  return {mean_max, entropy};
}

std::vector<std::string> token_labels(const g2c::exercises::Corpus& corpus,
                                      const std::vector<std::int64_t>& ids) {
  std::vector<std::string> labels;
  for (const auto id : ids) labels.push_back(corpus.token_label(id));
  return labels;
}

}  // namespace

int main(int argc, char** argv) {
  g2c::CommandLine app{
      "Module 07, exercise 2: attention heatmaps before and after training, and an offline HTML "
      "explorer"};
  g2c::exercises::CommonOptions options;
  options.out = "results/07-attention";
  options.steps = 600;
  Config config;
  g2c::exercises::add_common_options(app, options);
  app.add_option("--batch", config.batch_size, "Batch size").positive();
  app.add_option("--tokenizer", config.tokenizer,
                 "Token level: bpe (G2CTokenizer, else ShakespeareTokenizer) or char")
      .one_of({"bpe", "char"});
  return g2c::run_cli(app, argc, argv, [&] {
    const auto device = g2c::exercises::prepare(options);
    const auto corpus = g2c::exercises::tinyshakespeare_corpus(
        config.tokenizer, static_cast<std::size_t>(config.bpe_vocab), /*prefer_g2c=*/true);
    const auto& tokenizer = *corpus.tokenizer;
    const std::int64_t context_length =
        tokenizer.is_bpe() ? config.bpe_context : config.char_context;
    fmt::print("tokenizer: {}, T = {}\n", tokenizer.description(), context_length);

    torch::manual_seed(config.model_seed);
    g2c::exercises::TinyAttentionLM model(g2c::exercises::TinyAttentionLMOptions(
        tokenizer.size(), context_length, config.embedding_dim));
    model->to(device);

    using g2c::exercises::TargetRule;
    const auto stat_batch = g2c::exercises::WindowSampler(
                                corpus.val, context_length, config.batch_size * config.stat_batches,
                                TargetRule::kWithinWindow, config.stat_seed)
                                .next()
                                .inputs.to(device);
    const std::string probe_text = tokenizer.decode(corpus.val_prefix(context_length));

    auto weights_of = [&](const std::string& sample, bool causal) {
      torch::NoGradGuard no_grad;
      model->set_causal(causal);
      const auto sample_ids =
          torch::tensor(tokenizer.encode(sample), torch::kLong).unsqueeze(0).to(device);
      const auto weights = model->attention_weights(sample_ids)[0];  // (T, T)
      model->set_causal(true);
      return weights;
    };
    auto batch_sharpness = [&] {
      torch::NoGradGuard no_grad;
      return sharpness(model->attention_weights(stat_batch));
    };

    const auto [max_before, entropy_before] = batch_sharpness();
    std::vector<torch::Tensor> before;
    for (const auto& sentence : config.sentences) before.push_back(weights_of(sentence, true));

    g2c::nn::AdamW optimizer(model->parameters(), config.lr, {0.9, 0.999}, 1e-8,
                             config.weight_decay);
    g2c::exercises::WindowSampler batches(corpus.train, context_length, config.batch_size,
                                          TargetRule::kWithinWindow, config.data_seed);
    const auto training = g2c::exercises::train_language_model(
        *model, optimizer, batches, /*validation=*/{},
        g2c::exercises::TrainLanguageModelOptions()
            .steps(options.steps)
            .log_every(1)
            .label("probe")
            .show_progress(!options.quiet)
            .files_to_check({"g2c/attention/self_attention.cpp (attention_weights)",
                             "g2c/nn/cross_entropy.cpp", "g2c/nn/adamw.cpp"}));
    const auto& losses = training.train_loss;
    const auto [max_after, entropy_after] = batch_sharpness();
    fmt::print(
        "mean max attention {:.3f} -> {:.3f}; mean row entropy {:.3f} -> {:.3f} (sharper after "
        "training)\n",
        max_before, max_after, entropy_before, entropy_after);

    nlohmann::json examples = nlohmann::json::array();
    nlohmann::json page_examples = nlohmann::json::array();
    std::vector<std::pair<std::string, std::string>> samples;
    for (std::size_t i = 0; i < config.sentences.size(); ++i)
      samples.push_back({"sentence " + std::to_string(i + 1), config.sentences[i]});
    samples.push_back({"TinyShakespeare validation text", probe_text});
    for (std::size_t i = 0; i < samples.size(); ++i) {
      const auto& [title, sample] = samples[i];
      const auto labels = token_labels(corpus, tokenizer.encode(sample));
      const auto after = weights_of(sample, true);
      const auto unmasked = weights_of(sample, false);
      nlohmann::json example = {{"title", title},
                                {"text", sample},
                                {"tokens", labels},
                                {"causal_after", g2c::exercises::matrix_json(after)},
                                {"non_causal_after", g2c::exercises::matrix_json(unmasked)}};
      if (i < before.size()) example["causal_before"] = g2c::exercises::matrix_json(before[i]);
      examples.push_back(example);
      page_examples.push_back(
          {{"title", title + " (trained probe)"},
           {"tokens", labels},
           {"causal", example["causal_after"]},
           {"non_causal", example["non_causal_after"]},
           {"note", fmt::format("{}, D = {}, after {} steps", tokenizer.description(),
                                config.embedding_dim, options.steps)}});
      if (i < before.size()) {
        page_examples.push_back(
            {{"title", title + " (untrained)"},
             {"tokens", labels},
             {"causal", example["causal_before"]},
             {"non_causal", example["causal_before"]},
             {"note", "random initial weights (the toggle shows the causal pattern only)"}});
      }
    }
    using g2c::exercises::Figure;
    using g2c::exercises::Panel;
    using g2c::exercises::Series;
    auto heatmaps = Figure::heatmaps("visualize_sentences.png",
                                     "Causal attention of the probe, before and after training")
                        .columns(2);
    for (std::size_t i = 0; i < config.sentences.size(); ++i) {
      for (const std::string stage : {"before", "after"}) {
        heatmaps.add(Panel(fmt::format("/examples/{}/causal_{}", i, stage))
                         .title(fmt::format("sentence {} {} training", i + 1, stage))
                         .xticklabels(fmt::format("/examples/{}/tokens", i))
                         .yticklabels(fmt::format("/examples/{}/tokens", i))
                         .range(0, 1)
                         .fontsize(5));
      }
    }

    auto result = g2c::exercises::run_metadata("07_visualize", options, device);
    result["config"] = {{"embedding_dim", config.embedding_dim},
                        {"context_length", context_length},
                        {"batch_size", config.batch_size},
                        {"optimizer", "adamw"},
                        {"lr", config.lr},
                        {"weight_decay", config.weight_decay},
                        {"steps", options.steps},
                        {"model_seed", config.model_seed},
                        {"data_seed", config.data_seed},
                        {"sentences", config.sentences}};
    result["tokenizer"] = corpus.tokenizer_json;
    result["train_loss"] = losses;
    result["sharpness"] = {{"mean_max_before", max_before},
                           {"mean_max_after", max_after},
                           {"entropy_before", entropy_before},
                           {"entropy_after", entropy_after}};
    result["examples"] = examples;
    const auto loss =
        Figure::line("visualize_loss.png", "Probe training loss", "step", "cross-entropy")
            .add(Series("train", nullptr, "/train_loss"));
    result["figures"] = g2c::exercises::figures({heatmaps, loss});
    const auto path = g2c::exercises::save_result(options, "visualize.json", result);

    // The page: the template with the data inlined, so it works from a file:// URL without network.
    std::string page = g2c::read_file(g2c::exercises::project_dir() /
                                      "exercises/07-attention/attention_page.html");
    std::string data = nlohmann::json({{"examples", page_examples}}).dump();
    for (std::size_t at = data.find("</"); at != std::string::npos; at = data.find("</", at + 3))
      data.replace(at, 2, "<\\/");
    const std::string marker = "__G2C_ATTENTION_DATA__";
    const auto position = page.find(marker);
    if (position == std::string::npos)
      throw g2c::ValueError("attention_page.html has lost its data marker " + marker);
    page.replace(position, marker.size(), data);
    g2c::write_file_atomic(options.out / "attention.html", page);
    std::cout << "wrote " << (options.out / "attention.html").string()
              << " (open it in a browser; no network needed)\n";
    g2c::exercises::plot_result(options, path);
  });
}

}  // namespace exercise_07_visualize
