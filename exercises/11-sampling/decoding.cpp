// Exercise 11 — what the decoding knobs do. A small TransformerLM trained for a short while on
// TinyShakespeare (ShakespeareTokenizer ids) by module 10's Trainer predicts the next token after a
// probe text; the program shows that distribution sorted by probability before and after each
// warper (temperature, top-k, top-p), then generates samples with several settings, from greedy to
// hot. Random weights would show nothing: the point is how the warpers reshape a real distribution.
#include <algorithm>
#include <chrono>
#include <cmath>
#include <utility>

#include <fmt/format.h>

#include "exercises/11-sampling/short_training.h"
#include "exercises/common/cli.h"
#include "exercises/common/corpus.h"
#include "exercises/common/course_tokenizer.h"
#include "exercises/common/data.h"
#include "exercises/common/figures.h"
#include "exercises/common/generation.h"
#include "exercises/common/tensor_json.h"
#include "g2c/core/errors.h"
#include "g2c/sampling/generate.h"
#include "g2c/transformer/transformer_lm.h"

namespace exercise_11_decoding {

namespace {

using g2c::sampling::GenerateOptions;

struct Config {
  std::int64_t vocab = 512;  // ShakespeareTokenizer capped: enough for words, quick to train
  std::int64_t embedding_dim = 64;
  std::int64_t num_layers = 2;
  std::int64_t num_heads = 4;
  std::int64_t context_length = 64;  // also the model's max_seq_len
  std::int64_t batch_size = 16;
  double lr = 3e-3;  // AdamW's peak; a short run needs a brisk rate
  double weight_decay = 0.01;
  std::int64_t log_every = 50;
  std::string probe = "ROMEO:\nI will";  // whose next-token distribution is inspected
  std::string prompt = "KING:";          // what the samples continue (the lesson's prompt)
  std::int64_t ranks = 64;               // sorted probabilities kept per setting
  std::int64_t sample_tokens = 120;
};

/// One way of warping the next-token logits (temperature 0 = greedy, samples only).
struct Setting {
  Setting(std::string name_, double temperature_ = 1.0,
          std::optional<std::int64_t> top_k_ = std::nullopt,
          std::optional<double> top_p_ = std::nullopt, double repetition_penalty_ = 1.0)
      : name(std::move(name_)),
        temperature(temperature_),
        top_k(top_k_),
        top_p(top_p_),
        repetition_penalty(repetition_penalty_) {}
  std::string name;
  double temperature;
  std::optional<std::int64_t> top_k;
  std::optional<double> top_p;
  double repetition_penalty;
};

nlohmann::json setting_json(const Setting& s) {
  return {{"name", s.name},
          {"temperature", s.temperature},
          {"top_k", s.top_k ? nlohmann::json(*s.top_k) : nlohmann::json(nullptr)},
          {"top_p", s.top_p ? nlohmann::json(*s.top_p) : nlohmann::json(nullptr)},
          {"repetition_penalty", s.repetition_penalty}};
}

/// The warpers of `s` applied to logits (V), in generate()'s order, then softmax: (V).
torch::Tensor warped_probabilities(const torch::Tensor& logits, const Setting& s) {
  auto warped = g2c::sampling::apply_temperature(logits, s.temperature);
  if (s.top_k) warped = g2c::sampling::top_k_filter(warped, *s.top_k);
  if (s.top_p) warped = g2c::sampling::top_p_filter(warped, *s.top_p);
  return torch::softmax(warped, /*dim=*/-1);
}

}  // namespace

int main(int argc, char** argv) {
  g2c::CommandLine app{
      "Module 11: how temperature, top-k and top-p reshape a trained model's next-token\n"
      "distribution, and what the samples look like. Trains a small TransformerLM on\n"
      "TinyShakespeare first (ShakespeareTokenizer ids); writes decoding.json and figures."};
  g2c::exercises::CommonOptions options;
  options.out = "results/11-sampling";
  options.steps = 600;
  Config config;
  g2c::exercises::add_common_options(app, options);
  app.add_option("--vocab", config.vocab, "ShakespeareTokenizer vocabulary size").range(257, 4096);
  app.add_option("--dim", config.embedding_dim, "Embedding dimension D");
  app.add_option("--layers", config.num_layers, "Transformer blocks L");
  app.add_option("--heads", config.num_heads, "Attention heads H (must divide D)");
  app.add_option("--context", config.context_length, "Context length = max_seq_len").range(2, 1024);
  app.add_option("--probe", config.probe, "Text whose next-token distribution is inspected");
  app.add_option("--prompt", config.prompt, "Text the samples continue");
  app.add_option("--sample-tokens", config.sample_tokens, "Tokens generated per sample")
      .non_negative();
  app.add_option("--ranks", config.ranks, "Sorted probabilities kept per setting").positive();
  return g2c::run_cli(app, argc, argv, [&] {
    const auto device = g2c::exercises::prepare(options);
    const std::string text = g2c::exercises::load_tinyshakespeare();
    const auto tokenizer = g2c::exercises::course_tokenizer("bpe", text, config.vocab);
    config.vocab = tokenizer.size();  // characters when the tokenizer artifact is missing
    const auto corpus =
        g2c::exercises::split_corpus(torch::tensor(tokenizer.encode(text), torch::kLong));
    fmt::print("{}: {} training tokens\n", tokenizer.description(), corpus.train.numel());

    torch::manual_seed(options.seed);
    g2c::transformer::TransformerLM model(g2c::transformer::TransformerLMOptions(
        config.vocab, config.embedding_dim, config.num_layers, config.num_heads,
        config.context_length));
    model->to(device);
    std::int64_t parameters = 0;
    for (const auto& p : model->parameters()) parameters += p.numel();
    auto training =
        g2c::exercises::train_briefly(model, corpus,
                                      {config.batch_size, config.context_length, config.lr,
                                       config.weight_decay, config.log_every},
                                      options, device);
    const double ln_vocab = std::log(static_cast<double>(config.vocab));
    training["ln_vocab"] = ln_vocab;
    fmt::print(
        "trained {} steps in {:.1f}s: train loss {:.3f}, validation loss {:.3f} (ln V = {:.3f})\n",
        options.steps, training["seconds"].get<double>(),
        training["train_loss"].back().get<double>(), training["val_loss"].get<double>(), ln_vocab);

    // The next-token distribution after the probe, before and after each warper.
    const auto probe_ids = tokenizer.encode(config.probe);
    if (probe_ids.empty()) throw g2c::ValueError("--probe is empty: give it some text");
    const auto probe = torch::tensor(probe_ids, torch::kLong);
    const auto start = std::max<std::int64_t>(0, probe.numel() - config.context_length);
    torch::Tensor logits;  // (V) on the CPU
    {
      torch::NoGradGuard no_grad;
      logits =
          model(probe.narrow(0, start, probe.numel() - start).unsqueeze(0).to(device))[0][-1].to(
              torch::kCPU);
    }
    const std::vector<Setting> warps = {{"model (T = 1)"},
                                        {"T = 0.5", 0.5},
                                        {"T = 1.5", 1.5},
                                        {"top-k 10", 1.0, 10},
                                        {"top-p 0.9", 1.0, std::nullopt, 0.9},
                                        {"T = 0.8, top-k 20, top-p 0.95", 0.8, 20, 0.95}};
    const auto ranks = std::min(config.ranks, config.vocab);
    std::vector<std::int64_t> rank_axis(ranks);
    for (std::int64_t r = 0; r < ranks; ++r) rank_axis[r] = r + 1;
    nlohmann::json distributions = nlohmann::json::array();
    using g2c::exercises::Figure;
    using g2c::exercises::Series;
    auto probabilities =
        Figure::line("decoding_probabilities.png",
                     fmt::format("Next token after {:?}: sorted probabilities", config.probe),
                     "rank", "probability")
            .logy();
    auto mass =
        Figure::line("decoding_cumulative.png", "Probability mass of the most likely tokens",
                     "number of most likely tokens", "cumulative probability");
    fmt::print("\nnext token after {:?}:\n{:<32} {:>9} {:>9}  top tokens\n", config.probe,
               "setting", "survivors", "entropy");
    for (std::size_t i = 0; i < warps.size(); ++i) {
      const auto probs = warped_probabilities(logits, warps[i]);  // (V)
      const auto [sorted, order] = probs.sort(/*dim=*/-1, /*descending=*/true);
      const auto survivors = (probs > 0).sum().item<std::int64_t>();
      const double entropy = -(probs * probs.clamp_min(1e-30).log()).sum().item<double>();
      nlohmann::json top = nlohmann::json::array();
      std::string shown;
      for (std::int64_t r = 0; r < 5; ++r) {
        const auto id = order[r].item<std::int64_t>();
        top.push_back({{"id", id},
                       {"label", tokenizer.token_label(id)},
                       {"probability", sorted[r].item<double>()}});
        shown += fmt::format(" {:?} {:.3f}", tokenizer.token_label(id), sorted[r].item<double>());
      }
      fmt::print("{:<32} {:>9} {:>9.3f} {}\n", warps[i].name, survivors, entropy, shown);
      auto entry = setting_json(warps[i]);
      entry["survivors"] = survivors;
      entry["entropy"] = entropy;
      entry["top_tokens"] = top;
      entry["sorted_probabilities"] = g2c::exercises::vector_json(sorted.narrow(0, 0, ranks));
      entry["cumulative"] = g2c::exercises::vector_json(sorted.cumsum(0).narrow(0, 0, ranks));
      distributions.push_back(entry);
      probabilities.add(Series(warps[i].name, "/ranks",
                               fmt::format("/distributions/{}/sorted_probabilities", i)));
      mass.add(Series(warps[i].name, "/ranks", fmt::format("/distributions/{}/cumulative", i)));
    }

    // Samples: the same prompt and seed under each setting.
    const std::vector<Setting> sampled = {
        {"greedy (T = 0)", 0.0},
        {"T = 0.5", 0.5},
        {"T = 1", 1.0},
        {"T = 1.5", 1.5},
        {"T = 0.5, top-k 20", 0.5, 20},
        {"top-p 0.9", 1.0, std::nullopt, 0.9},
        {"T = 0.8, repetition penalty 1.3", 0.8, std::nullopt, std::nullopt, 1.3}};
    const auto prompt_ids = tokenizer.encode(config.prompt);
    if (prompt_ids.empty()) throw g2c::ValueError("--prompt is empty: give it some text");
    nlohmann::json samples = nlohmann::json::array();
    for (const auto& s : sampled) {
      const auto options_for =
          GenerateOptions()
              .temperature(s.temperature)
              .top_k(s.top_k)
              .top_p(s.top_p)
              .repetition_penalty(s.repetition_penalty)
              .generator(at::make_generator<at::CPUGeneratorImpl>(options.seed + 11));
      const auto begin = std::chrono::steady_clock::now();
      const auto out = g2c::exercises::ids_vector(g2c::sampling::generate(
          model, torch::tensor(prompt_ids, torch::kLong), config.sample_tokens, options_for));
      const double seconds =
          std::chrono::duration<double>(std::chrono::steady_clock::now() - begin).count();
      const double distinct = g2c::exercises::distinct_trigram_ratio(out, prompt_ids.size());
      const auto sample_text = tokenizer.decode(out);
      fmt::print("\n--- {} (distinct trigrams {:.2f}) ---\n{}\n", s.name, distinct, sample_text);
      auto entry = setting_json(s);
      entry["text"] = sample_text;
      entry["ids"] = out;
      entry["distinct_trigram_ratio"] = distinct;
      entry["seconds"] = seconds;
      samples.push_back(entry);
    }

    auto result = g2c::exercises::run_metadata("11_decoding", options, device);
    result["config"] = {{"tokenizer", g2c::exercises::tokenizer_json(tokenizer)},
                        {"vocab_size", config.vocab},
                        {"embedding_dim", config.embedding_dim},
                        {"num_layers", config.num_layers},
                        {"num_heads", config.num_heads},
                        {"max_seq_len", config.context_length},
                        {"batch_size", config.batch_size},
                        {"optimizer", "adamw"},
                        {"lr", config.lr},
                        {"min_lr", config.lr / 10},
                        {"warmup_steps", training["warmup_steps"]},
                        {"grad_clip", 1.0},
                        {"weight_decay", config.weight_decay},
                        {"steps", options.steps},
                        {"log_every", config.log_every},
                        {"probe", config.probe},
                        {"prompt", config.prompt},
                        {"sample_tokens", config.sample_tokens},
                        {"sample_seed", options.seed + 11},
                        {"threads", torch::get_num_threads()}};
    result["model"] = {{"parameters", parameters}, {"source", "trained by this program"}};
    result["training"] = training;
    result["ranks"] = rank_axis;
    result["probe_tokens"] = probe_ids.size();
    result["distributions"] = distributions;
    result["samples"] = samples;
    result["figures"] = g2c::exercises::figures(
        {probabilities, mass,
         Figure::line("decoding_loss.png", "Training loss of the model being sampled", "step",
                      "cross-entropy")
             .add(Series("train", "/training/steps", "/training/train_loss"))
             .hline(ln_vocab, "ln V (uniform guess)")});
    const auto path = g2c::exercises::save_result(options, "decoding.json", result);
    g2c::exercises::plot_result(options, path);
  });
}

}  // namespace exercise_11_decoding
