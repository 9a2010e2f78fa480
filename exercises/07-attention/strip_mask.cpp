// Exercise 07.3 — strip the mask. The same tiny attention-only language model is trained twice,
// causal = true and causal = false. Without the mask, position t reads token t + 1, the very
// token it must predict: its training loss collapses towards 0 while what it generates is
// garbage. With the mask the loss stays honest. Both runs' curves go to one JSON file and plot.
#include <cmath>

#include <fmt/format.h>

#include "exercises/common/cli.h"
#include "exercises/common/course_tokenizer.h"
#include "exercises/common/data.h"
#include "exercises/common/tiny_lm.h"
#include "g2c/core/errors.h"
#include "g2c/core/progress.h"
#include "g2c/nn/optim.h"

namespace {

struct Config {
  std::string data = "tinyshakespeare";  // or "random": the Python edition's control experiment
  std::string tokenizer = "bpe";         // ShakespeareTokenizer capped at bpe_vocab, or "char"
  std::int64_t bpe_vocab = 2048;
  std::int64_t context_length = 64;  // T
  std::int64_t embedding_dim = 64;   // D
  std::int64_t batch_size = 32;
  std::string optimizer = "adamw";  // adamw (lr 3e-3) for text; the control uses sgd 0.5
  double lr = 3e-3;
  double weight_decay = 1e-4;
  std::int64_t log_every = 50;    // train/val losses recorded every this many steps
  std::int64_t val_batches = 16;  // batches averaged for each validation loss
  double val_fraction = 0.1;      // the last 10% of the token stream is held out
  std::int64_t sample_tokens = 200;
  std::uint64_t causal_batch_seed = 1;  // batch order of the causal run
  std::uint64_t non_causal_batch_seed = 2;
  std::int64_t random_vocab = 8;  // --data random: uniform tokens over this many ids
  std::int64_t random_tokens = 4096;
  std::uint64_t random_stream_seed = 7;
};

struct Corpus {
  torch::Tensor train;  // (N_train) int64
  torch::Tensor val;    // (N_val) int64
  std::int64_t vocab_size = 0;
  nlohmann::json tokenizer;
  std::function<std::string(const std::vector<std::int64_t>&)> decode;
  std::vector<std::int64_t> prompt;
};

Corpus load_corpus(const Config& config) {
  Corpus corpus;
  if (config.data == "random") {
    auto generator = at::make_generator<at::CPUGeneratorImpl>(config.random_stream_seed);
    const auto stream =
        torch::randint(config.random_vocab, {config.random_tokens}, generator, torch::kLong);
    corpus.train = stream;
    // A second stream, never trained on, for the validation curve.
    auto val_generator = at::make_generator<at::CPUGeneratorImpl>(config.random_stream_seed + 1);
    corpus.val = torch::randint(config.random_vocab, {config.random_tokens / 4}, val_generator,
                                torch::kLong);
    corpus.vocab_size = config.random_vocab;
    corpus.tokenizer = {{"kind", "random"}, {"vocab_size", config.random_vocab}};
    corpus.decode = [](const std::vector<std::int64_t>& ids) {
      std::string text;
      for (const auto id : ids) text += std::to_string(id) + " ";
      return text;
    };
    corpus.prompt = {0};
    return corpus;
  }
  const std::string text = g2c::exercises::load_tinyshakespeare();
  auto tokenizer = std::make_shared<g2c::tokenizer::TextTokenizer>(g2c::exercises::course_tokenizer(
      config.tokenizer, text, static_cast<std::size_t>(config.bpe_vocab)));
  const auto ids = torch::tensor(tokenizer->encode(text), torch::kLong);
  const auto split =
      static_cast<std::int64_t>(static_cast<double>(ids.numel()) * (1.0 - config.val_fraction));
  corpus.train = ids.narrow(0, 0, split);
  corpus.val = ids.narrow(0, split, ids.numel() - split);
  corpus.vocab_size = tokenizer->size();
  corpus.tokenizer = g2c::exercises::tokenizer_json(*tokenizer);
  corpus.decode = [tokenizer](const std::vector<std::int64_t>& ids) {
    return tokenizer->decode(ids);
  };
  corpus.prompt = tokenizer->encode("ROMEO:\n");
  return corpus;
}

bool logged_step(std::int64_t step, std::int64_t steps, std::int64_t every) {
  return step % every == 0 || step == steps - 1;
}

nlohmann::json train_run(bool causal, std::uint64_t batch_seed, const Config& config,
                         const Corpus& corpus, const g2c::exercises::CommonOptions& options,
                         const torch::Device& device) {
  torch::manual_seed(options.seed);  // both runs start from the same initial weights
  g2c::exercises::TinyAttentionLM model(
      g2c::exercises::TinyAttentionLMOptions(corpus.vocab_size, config.context_length,
                                             config.embedding_dim)
          .causal(causal));
  model->to(device);
  std::unique_ptr<g2c::nn::Optimizer> optimizer;
  if (config.optimizer == "sgd") {
    optimizer = std::make_unique<g2c::nn::SGD>(model->parameters(), config.lr);
  } else {
    optimizer = std::make_unique<g2c::nn::AdamW>(model->parameters(), config.lr,
                                                 std::pair{0.9, 0.999}, 1e-8, config.weight_decay);
  }
  auto batch_generator = at::make_generator<at::CPUGeneratorImpl>(batch_seed);
  nlohmann::json run = {{"causal", causal}, {"batch_seed", batch_seed}};
  std::vector<std::int64_t> logged;
  std::vector<double> train_losses, val_losses;

  auto validation_loss = [&] {
    torch::NoGradGuard no_grad;
    auto val_generator =
        at::make_generator<at::CPUGeneratorImpl>(1234);  // the same batches every time
    double total = 0.0;
    for (std::int64_t i = 0; i < config.val_batches; ++i) {
      const auto batch = g2c::exercises::sample_windows(corpus.val, config.batch_size,
                                                        config.context_length, val_generator);
      total += model->next_token_loss(batch.to(device)).item<double>();
    }
    return total / static_cast<double>(config.val_batches);
  };

  const std::string label = causal ? "causal    " : "non-causal";
  g2c::Progress progress(label, options.steps, !options.quiet);
  const auto start = std::chrono::steady_clock::now();
  for (std::int64_t step = 0; step < options.steps; ++step) {
    const auto batch = g2c::exercises::sample_windows(corpus.train, config.batch_size,
                                                      config.context_length, batch_generator);
    const auto loss = model->next_token_loss(batch.to(device));
    if (logged_step(step, options.steps, config.log_every)) {
      logged.push_back(step);
      train_losses.push_back(loss.item<double>());
      val_losses.push_back(validation_loss());
    }
    optimizer->zero_grad();
    loss.backward();
    optimizer->step();
    if (step % 10 == 0 || step == options.steps - 1) {
      progress.update(step + 1, fmt::format("loss {:.3f}", train_losses.back()));
    }
  }
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  progress.finish(fmt::format("loss {:.3f}, val {:.3f}", train_losses.back(), val_losses.back()));

  auto sample_generator = at::make_generator<at::CPUGeneratorImpl>(options.seed + 99);
  model->eval();
  const auto generated = model->generate(corpus.prompt, config.sample_tokens, sample_generator);
  run["steps"] = logged;
  run["train_loss"] = train_losses;
  run["val_loss"] = val_losses;
  run["final_train_loss"] = train_losses.back();
  run["final_val_loss"] = val_losses.back();
  run["wall_seconds"] = seconds;
  run["tokens_per_second"] =
      static_cast<double>(options.steps * config.batch_size * config.context_length) / seconds;
  run["sample"] = corpus.decode(generated);
  return run;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{
      "Module 07, exercise 3: strip the causal mask. Trains a tiny attention-only language model "
      "with\n"
      "causal = true and causal = false and writes both loss curves. --data random reproduces the\n"
      "Python edition's control experiment."};
  g2c::exercises::CommonOptions options;
  options.out = "results/07-attention";
  options.steps = 2000;
  Config config;
  g2c::exercises::add_common_options(app, options);
  app.add_option("--data", config.data, "tinyshakespeare or random")
      ->check(CLI::IsMember({"tinyshakespeare", "random"}))
      ->capture_default_str();
  app.add_option("--tokenizer", config.tokenizer,
                 "Token level: bpe (the ShakespeareTokenizer) or char")
      ->check(CLI::IsMember({"bpe", "char"}))
      ->capture_default_str();
  app.add_option("--bpe-vocab", config.bpe_vocab, "ShakespeareTokenizer vocabulary cap")
      ->check(CLI::Range(257, 4096))
      ->capture_default_str();
  app.add_option(
         "--context", config.context_length,
         "Context length T [default: 32 BPE tokens (about 100 characters) or 64 characters]")
      ->check(CLI::Range(2, 4096));
  app.add_option("--dim", config.embedding_dim, "Embedding dimension D")
      ->check(CLI::PositiveNumber)
      ->capture_default_str();
  app.add_option("--batch", config.batch_size, "Batch size")
      ->check(CLI::PositiveNumber)
      ->capture_default_str();
  app.add_option("--lr", config.lr, "Learning rate")
      ->check(CLI::PositiveNumber)
      ->capture_default_str();
  app.add_option("--log-every", config.log_every, "Record losses every N steps")
      ->check(CLI::PositiveNumber)
      ->capture_default_str();
  app.add_option("--sample-tokens", config.sample_tokens, "Tokens generated per model")
      ->capture_default_str();
  return g2c::exercises::run(app, argc, argv, [&] {
    bool steps_given = app.count("--steps") > 0;
    if (config.data == "random") {
      // The Python edition's control: vocab 8, T = 8, D = 32, SGD lr 0.5, batch 128, 500 steps,
      // logs every 50 steps and at the last one; batch seeds 1 (causal) and 2 (non-causal).
      config.tokenizer = "none";
      config.context_length = app.count("--context") ? config.context_length : 8;
      config.embedding_dim = app.count("--dim") ? config.embedding_dim : 32;
      config.batch_size = app.count("--batch") ? config.batch_size : 128;
      config.optimizer = "sgd";
      config.lr = app.count("--lr") ? config.lr : 0.5;
      config.log_every = app.count("--log-every") ? config.log_every : 50;
      config.sample_tokens = app.count("--sample-tokens") ? config.sample_tokens : 16;
      if (!steps_given) options.steps = 500;
    } else if (config.tokenizer == "bpe" && !app.count("--context")) {
      // The 2048-way output layer costs the same per token at any T; 32 BPE tokens already span
      // more text than 64 characters and keep the default run near two minutes on two cores.
      config.context_length = 32;
    }
    const auto device = g2c::exercises::prepare(options);
    const Corpus corpus = load_corpus(config);
    fmt::print(
        "data: {} ({} training tokens, {} validation tokens), {}\n", config.data,
        corpus.train.numel(), corpus.val.numel(),
        corpus.tokenizer.value("description", fmt::format("vocabulary {}", corpus.vocab_size)));

    const auto causal_run =
        train_run(true, config.causal_batch_seed, config, corpus, options, device);
    const auto non_causal_run =
        train_run(false, config.non_causal_batch_seed, config, corpus, options, device);
    const double baseline = std::log(static_cast<double>(corpus.vocab_size));

    fmt::print("\n{:<11} {:>11} {:>9} {:>8} {:>10}\n", "run", "train loss", "val loss", "time",
               "tokens/s");
    for (const auto* run : {&causal_run, &non_causal_run}) {
      fmt::print("{:<11} {:>11.4f} {:>9.4f} {:>7.1f}s {:>10.0f}\n",
                 (*run)["causal"].get<bool>() ? "causal" : "non-causal",
                 (*run)["final_train_loss"].get<double>(), (*run)["final_val_loss"].get<double>(),
                 (*run)["wall_seconds"].get<double>(), (*run)["tokens_per_second"].get<double>());
    }
    fmt::print("ln V = {:.3f} (the loss of a uniform guess)\n", baseline);
    fmt::print("\n--- sample from the causal model ---\n{}\n",
               causal_run["sample"].get<std::string>());
    fmt::print(
        "\n--- sample from the non-causal model (it learned to copy the next token, not to predict "
        "it) ---\n{}\n",
        non_causal_run["sample"].get<std::string>());

    auto result = g2c::exercises::run_metadata("07_strip_mask", options, device);
    result["config"] = {{"data", config.data},
                        {"tokenizer", config.tokenizer},
                        {"bpe_vocab", config.bpe_vocab},
                        {"context_length", config.context_length},
                        {"embedding_dim", config.embedding_dim},
                        {"batch_size", config.batch_size},
                        {"optimizer", config.optimizer},
                        {"lr", config.lr},
                        {"weight_decay", config.optimizer == "adamw" ? config.weight_decay : 0.0},
                        {"steps", options.steps},
                        {"log_every", config.log_every},
                        {"val_batches", config.val_batches},
                        {"sample_tokens", config.sample_tokens},
                        {"model_seed", options.seed}};
    if (config.data == "random") {
      result["config"]["random"] = {{"vocab_size", config.random_vocab},
                                    {"tokens", config.random_tokens},
                                    {"stream_seed", config.random_stream_seed}};
    }
    result["tokenizer"] = corpus.tokenizer;
    result["data"] = {{"source", config.data},
                      {"train_tokens", corpus.train.numel()},
                      {"val_tokens", corpus.val.numel()}};
    result["baseline_ln_vocab"] = baseline;
    result["runs"] = {{"causal", causal_run}, {"non_causal", non_causal_run}};
    result["figures"] = {
        {{"file", "strip_mask_loss.png"},
         {"kind", "line"},
         {"title", fmt::format("Strip the mask ({}): next-token loss", config.data)},
         {"xlabel", "step"},
         {"ylabel", "cross-entropy"},
         {"series",
          {{{"label", "causal, train"},
            {"x", "/runs/causal/steps"},
            {"y", "/runs/causal/train_loss"}},
           {{"label", "causal, validation"},
            {"x", "/runs/causal/steps"},
            {"y", "/runs/causal/val_loss"},
            {"style", "--"}},
           {{"label", "non-causal, train"},
            {"x", "/runs/non_causal/steps"},
            {"y", "/runs/non_causal/train_loss"}},
           {{"label", "non-causal, validation"},
            {"x", "/runs/non_causal/steps"},
            {"y", "/runs/non_causal/val_loss"},
            {"style", "--"}}}},
         {"hlines", {{{"y", baseline}, {"label", fmt::format("ln V = {:.3f}", baseline)}}}}}};
    const std::string name = config.data == "random" ? "strip_mask_random.json" : "strip_mask.json";
    if (config.data == "random") result["figures"][0]["file"] = "strip_mask_random_loss.png";
    const auto path = g2c::exercises::save_result(options, name, result);
    g2c::exercises::plot_result(options, path);
  });
}
