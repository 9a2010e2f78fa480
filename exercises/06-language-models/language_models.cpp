// Exercise 06 — three language models on TinyShakespeare. The counts bigram is fitted, the neural
// bigram and the MLP are trained with train_lm, at the character level and on ShakespeareTokenizer
// ids. Validation perplexity says how many tokens each model is still hesitating between; the
// samples show what that means as text. Everything goes to one JSON file, plotted.
#include <chrono>
#include <cmath>
#include <optional>

#include <fmt/format.h>

#include "exercises/common/cli.h"
#include "exercises/common/corpus.h"
#include "exercises/common/figures.h"
#include "g2c/core/errors.h"
#include "g2c/core/progress.h"
#include "g2c/lm/lm.h"
#include "g2c/nn/device.h"
#include "g2c/tokenizer/text_tokenizer.h"

namespace exercise_06_language_models {

namespace {

struct Config {
  std::vector<std::string> tokenizers = {"char", "bpe"};
  // ShakespeareTokenizer capped here: a V x V bigram table needs enough data for its V² counts.
  std::int64_t bpe_vocab = 512;
  std::int64_t context_length = 8;  // N of the MLP (the bigrams read 1 token)
  std::int64_t embedding_dim = 32;  // D of both neural models
  std::int64_t hidden_dim = 256;    // H of the MLP
  std::int64_t batch_size = 128;
  double lr = 0.5;
  std::int64_t log_every = 250;
  std::int64_t curve_tokens = 20000;  // validation tokens behind each point of the curves
  std::int64_t sample_tokens = 200;
  double temperature = 0.8;
};

double seconds_since(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

/// The corpus at one token level, with its tokenizer; the split is the exercises' one rule.
struct Split {
  g2c::tokenizer::TextTokenizer tokenizer;
  torch::Tensor train;  // (N_train) int64: the first 90 % of the ids
  torch::Tensor val;    // (N_val) int64: the rest
};

Split tokenize(const std::string& kind, const Config& config) {
  auto corpus =
      g2c::exercises::tinyshakespeare_corpus(kind, static_cast<std::size_t>(config.bpe_vocab));
  return {*corpus.tokenizer, corpus.train, corpus.val};
}

/// The sample every model continues: the first N tokens of the validation text.
std::vector<std::int64_t> prompt_of(const Split& split, std::int64_t length) {
  const auto head = split.val.narrow(0, 0, length).contiguous();
  return {head.data_ptr<std::int64_t>(), head.data_ptr<std::int64_t>() + length};
}

std::string sample_text(g2c::lm::LanguageModelImpl& model, const Split& split, const Config& config,
                        const g2c::exercises::CommonOptions& options, const torch::Device& device) {
  const auto prompt = prompt_of(split, model.context_length);
  auto generator = at::make_generator<at::CPUGeneratorImpl>(options.seed + 99);
  const auto ids = g2c::lm::sample(model, prompt, config.sample_tokens, config.temperature,
                                   generator, g2c::nn::device_name(device));
  return split.tokenizer.decode(ids);
}

nlohmann::json fit_counts(const Split& split, const Config& config,
                          const g2c::exercises::CommonOptions& options,
                          const torch::Device& device) {
  const auto start = std::chrono::steady_clock::now();
  g2c::lm::CountsBigramLM model(split.tokenizer.size());
  model->fit(split.train);
  const double fit_seconds = seconds_since(start);
  const double val_perplexity =
      g2c::lm::perplexity(model, split.val, 4096, g2c::nn::device_name(device));
  fmt::print("  counts bigram   fitted in {:.2f}s, val perplexity {:.2f}\n", fit_seconds,
             val_perplexity);
  return {{"val_perplexity", val_perplexity},
          {"fit_seconds", fit_seconds},
          {"sample", sample_text(*model, split, config, options, device)}};
}

/// Trains with train_lm; the validation perplexity is measured in on_log so that the training
/// speed (tokens/s) can leave the evaluation time out. The curve is measured on the first
/// curve_tokens validation tokens (quick); the final perplexity on all of them.
nlohmann::json train(const std::string& label, g2c::lm::LanguageModelImpl& model,
                     const Split& split, const Config& config,
                     const g2c::exercises::CommonOptions& options, const torch::Device& device) {
  const auto device_name = g2c::nn::device_name(device);
  const auto curve_ids = split.val.narrow(0, 0, std::min(config.curve_tokens, split.val.numel()));
  std::vector<double> val_perplexities;
  double eval_seconds = 0.0;
  g2c::Progress progress(fmt::format("  {:<15}", label), options.steps, !options.quiet);
  auto generator = at::make_generator<at::CPUGeneratorImpl>(options.seed + 1);
  const auto start = std::chrono::steady_clock::now();
  const auto record = g2c::lm::train_lm(
      model, split.train, std::nullopt,
      g2c::lm::TrainLMOptions()
          .batch_size(config.batch_size)
          .num_steps(options.steps)
          .lr(config.lr)
          .log_every(config.log_every)
          .generator(generator)
          .device(device_name)
          .on_log([&](const g2c::lm::TrainLogEntry& entry) {
            const auto eval_start = std::chrono::steady_clock::now();
            val_perplexities.push_back(g2c::lm::perplexity(model, curve_ids, 1024, device_name));
            eval_seconds += seconds_since(eval_start);
            progress.update(entry.step + 1, fmt::format("loss {:.3f}  val ppl {:.2f}",
                                                        entry.train_loss, val_perplexities.back()));
          }));
  const double wall_seconds = seconds_since(start);
  const double train_seconds = wall_seconds - eval_seconds;
  const double final_val_perplexity = g2c::lm::perplexity(model, split.val, 1024, device_name);
  // Each example reads context_length tokens and predicts one: both rates are reported.
  const double predictions_per_second =
      static_cast<double>(options.steps * config.batch_size) / train_seconds;
  const double tokens_per_second =
      predictions_per_second * static_cast<double>(model.context_length);
  progress.finish(fmt::format("val perplexity {:.2f}, {:.0f} tokens/s", final_val_perplexity,
                              tokens_per_second));
  return {{"steps", record.steps},
          {"train_loss", record.train_losses},
          {"val_perplexity", val_perplexities},
          {"final_val_perplexity", final_val_perplexity},
          {"parameters",
           [&] {
             std::int64_t count = 0;
             for (const auto& parameter : model.parameters()) count += parameter.numel();
             return count;
           }()},
          {"wall_seconds", wall_seconds},
          {"train_seconds", train_seconds},
          {"tokens_per_second", tokens_per_second},
          {"predictions_per_second", predictions_per_second},
          {"sample", sample_text(model, split, config, options, device)}};
}

nlohmann::json figure_for(const std::string& kind, const std::string& description,
                          double counts_perplexity) {
  using g2c::exercises::Series;
  const auto base = "/tokenizers/" + kind + "/models/";
  return g2c::exercises::Figure::line(fmt::format("language_models_{}.png", kind),
                                      fmt::format("Validation perplexity, {}", description), "step",
                                      "validation perplexity (first tokens)")
      .add(Series("neural bigram", base + "neural_bigram/steps",
                  base + "neural_bigram/val_perplexity"))
      .add(Series("MLP", base + "mlp/steps", base + "mlp/val_perplexity"))
      .hline(counts_perplexity, fmt::format("counts bigram {:.2f}", counts_perplexity))
      .json();
}

}  // namespace

int main(int argc, char** argv) {
  g2c::CommandLine app{
      "Module 06: counts bigram vs neural bigram vs MLP language model on TinyShakespeare, at the\n"
      "character level and on ShakespeareTokenizer ids. Writes validation perplexity curves and\n"
      "samples to language_models.json and plots them."};
  g2c::exercises::CommonOptions options;
  options.out = "results/06-language-models";
  options.steps = 5000;
  Config config;
  g2c::exercises::add_common_options(app, options);
  app.add_option("--tokenizers", config.tokenizers, "Token levels to run: char, bpe")
      .one_of({"char", "bpe"});
  app.add_option("--bpe-vocab", config.bpe_vocab, "ShakespeareTokenizer vocabulary size")
      .range(257, 4096);
  app.add_option("--context", config.context_length, "MLP context length N").range(1, 256);
  app.add_option("--dim", config.embedding_dim, "Embedding dimension D").positive();
  app.add_option("--hidden", config.hidden_dim, "MLP hidden width H").positive();
  app.add_option("--batch", config.batch_size, "Batch size").positive();
  app.add_option("--lr", config.lr, "SGD learning rate").positive();
  app.add_option("--log-every", config.log_every, "Validation perplexity every N steps").positive();
  app.add_option("--sample-tokens", config.sample_tokens, "Tokens generated per model")
      .non_negative();
  app.add_option("--temperature", config.temperature, "Sampling temperature").positive();
  return g2c::run_cli(app, argc, argv, [&] {
    const auto device = g2c::exercises::prepare(options);
    auto result = g2c::exercises::run_metadata("06_language_models", options, device);
    result["config"] = {{"tokenizers", config.tokenizers},
                        {"bpe_vocab", config.bpe_vocab},
                        {"context_length", config.context_length},
                        {"embedding_dim", config.embedding_dim},
                        {"hidden_dim", config.hidden_dim},
                        {"batch_size", config.batch_size},
                        {"optimizer", "sgd"},
                        {"lr", config.lr},
                        {"steps", options.steps},
                        {"log_every", config.log_every},
                        {"val_fraction", 0.1},
                        {"curve_tokens", config.curve_tokens},
                        {"sample_tokens", config.sample_tokens},
                        {"temperature", config.temperature}};
    result["tokenizers"] = nlohmann::json::object();
    result["figures"] = nlohmann::json::array();

    std::vector<std::string> levels;
    for (const auto& kind : config.tokenizers) {
      const Split split = tokenize(kind, config);
      if (kind == "bpe" && !split.tokenizer.is_bpe()) {
        fmt::print(
            "\nbpe: the ShakespeareTokenizer artifact is missing (scripts/setup.sh builds it); "
            "skipping the BPE runs\n");
        continue;
      }
      levels.push_back(kind);
      const auto vocab = split.tokenizer.size();
      fmt::print("\n{}: {} training and {} validation tokens (uniform guess: perplexity {})\n",
                 split.tokenizer.description(), split.train.numel(), split.val.numel(), vocab);
      nlohmann::json models;
      models["counts_bigram"] = fit_counts(split, config, options, device);
      torch::manual_seed(options.seed);
      g2c::lm::NeuralBigramLM bigram(vocab, config.embedding_dim);
      models["neural_bigram"] = train("neural bigram", *bigram, split, config, options, device);
      torch::manual_seed(options.seed);
      g2c::lm::MLPLanguageModel mlp(vocab, config.context_length, config.embedding_dim,
                                    config.hidden_dim);
      models["mlp"] = train("MLP", *mlp, split, config, options, device);

      for (const auto* name : {"counts_bigram", "neural_bigram", "mlp"}) {
        fmt::print("\n--- {} ({}) ---\n{}\n", name, kind,
                   models[name]["sample"].get<std::string>());
      }
      result["tokenizers"][kind] = {{"description", split.tokenizer.description()},
                                    {"vocab_size", vocab},
                                    {"train_tokens", split.train.numel()},
                                    {"val_tokens", split.val.numel()},
                                    {"models", models}};
      result["figures"].push_back(figure_for(kind, split.tokenizer.description(),
                                             models["counts_bigram"]["val_perplexity"]));
    }

    if (levels.empty()) {
      throw g2c::ValueError(
          "nothing to run: --tokenizers bpe needs the ShakespeareTokenizer artifact "
          "(scripts/setup.sh, or scripts/make_tokenizer_artifacts.sh build/reference)");
    }
    fmt::print("\n{:<34} {:>14} {:>14} {:>10}\n", "validation perplexity", "counts bigram",
               "neural bigram", "MLP");
    for (const auto& kind : levels) {
      const auto& models = result["tokenizers"][kind]["models"];
      fmt::print("{:<34} {:>14.2f} {:>14.2f} {:>10.2f}\n",
                 result["tokenizers"][kind]["description"].get<std::string>(),
                 models["counts_bigram"]["val_perplexity"].get<double>(),
                 models["neural_bigram"]["final_val_perplexity"].get<double>(),
                 models["mlp"]["final_val_perplexity"].get<double>());
    }
    const auto path = g2c::exercises::save_result(options, "language_models.json", result);
    g2c::exercises::plot_result(options, path);
  });
}

}  // namespace exercise_06_language_models
