// Exercise 11 — best-of-8 against a single sample. A TransformerLM continues "KING:" eight times
// from one generator (your best_of_n over your generate), each candidate scored by your
// sequence_log_prob; the pool is ranked twice, by the raw sum of the continuation's
// log-probabilities and by its mean per new token, next to the single sample that generate alone
// draws from the same seed. The candidates stop at the end of a speech (".\n\n"), so their lengths
// differ and the two rankings can disagree. The model is trained here first, for a short while on
// TinyShakespeare by module 10's Trainer as in 11_decoding, or loaded with --model.
#include <algorithm>
#include <chrono>
#include <cmath>

#include <fmt/format.h>

#include "exercises/11-sampling/short_training.h"
#include "exercises/common/cli.h"
#include "exercises/common/corpus.h"
#include "exercises/common/course_tokenizer.h"
#include "exercises/common/data.h"
#include "exercises/common/figures.h"
#include "exercises/common/generation.h"
#include "g2c/core/errors.h"
#include "g2c/sampling/best_of_n.h"
#include "g2c/sampling/text_generation.h"

namespace exercise_11_best_of_n {

namespace {

using g2c::sampling::GenerateOptions;

struct Config {
  std::string model;  // an artifact (name, alias or folder); empty: train one here
  // The model trained when --model is not given: 11_decoding's.
  std::int64_t vocab = 512;
  std::int64_t embedding_dim = 64;
  std::int64_t num_layers = 2;
  std::int64_t num_heads = 4;
  std::int64_t context_length = 64;  // prompt + new tokens must fit: one forward pass scores all
  std::int64_t batch_size = 16;
  double lr = 3e-3;
  double weight_decay = 0.01;
  std::int64_t log_every = 50;
  // The draw.
  std::string prompt = "KING:";
  std::string eos = ".\n\n";  // the end of a speech; empty: every candidate has max_new_tokens
  std::int64_t n = 8;
  std::int64_t new_tokens = 48;
  double temperature = 1.0;
};

/// ValueError unless the prompt and the new tokens fit in the model's positions: sequence_log_prob
/// scores a candidate in one forward pass.
void check_fits(std::size_t prompt_len, std::int64_t new_tokens, std::int64_t max_seq_len) {
  if (prompt_len == 0) throw g2c::ValueError("--prompt is empty: give it some text");
  if (static_cast<std::int64_t>(prompt_len) + new_tokens > max_seq_len) {
    throw g2c::ValueError(fmt::format(
        "the prompt ({} tokens) + --new-tokens {} exceed the model's max_seq_len {}: "
        "sequence_log_prob scores a candidate in one forward pass; ask for fewer new tokens",
        prompt_len, new_tokens, max_seq_len));
  }
}

/// One candidate as the result file records it.
nlohmann::json candidate_json(const g2c::tokenizer::TextTokenizer& tokenizer,
                              const std::vector<std::int64_t>& ids, std::size_t prompt_len,
                              double score, double mean_score) {
  return {{"text", tokenizer.decode(ids)},
          {"ids", ids},
          {"new_tokens", ids.size() - prompt_len},
          {"score", score},
          {"mean_score", mean_score},
          {"distinct_trigram_ratio", g2c::exercises::distinct_trigram_ratio(ids, prompt_len)}};
}

}  // namespace

int main(int argc, char** argv) {
  g2c::CommandLine app{
      "Module 11: best-of-n against a single sample. Draws n continuations of a prompt with\n"
      "best_of_n, scores them with sequence_log_prob, ranks them by the raw sum and by the mean\n"
      "per new token; trains a small TransformerLM first unless --model names an artifact.\n"
      "Writes best_of_n.json and figures."};
  g2c::exercises::CommonOptions options;
  options.out = "results/11-sampling";
  options.steps = 600;
  Config config;
  g2c::exercises::add_common_options(app, options);
  app.add_option("--model", config.model,
                 "Model artifact to load (name, alias or folder), e.g. ShakespeareLM-1M; "
                 "default: train one here")
      .no_default();
  app.add_option("--vocab", config.vocab, "ShakespeareTokenizer vocabulary size (training)")
      .range(257, 4096);
  app.add_option("--dim", config.embedding_dim, "Embedding dimension D (training)");
  app.add_option("--layers", config.num_layers, "Transformer blocks L (training)");
  app.add_option("--heads", config.num_heads, "Attention heads H (training)");
  app.add_option("--context", config.context_length, "Context length = max_seq_len (training)")
      .range(2, 1024);
  app.add_option("--prompt", config.prompt, "Text every candidate continues");
  app.add_option("--eos", config.eos, "Text of one token that ends a candidate (empty: none)");
  app.add_option("-n,--candidates", config.n, "Candidates drawn").positive();
  app.add_option("--new-tokens", config.new_tokens, "At most this many new tokens per candidate")
      .positive();
  app.add_option("--temperature", config.temperature, "Sampling temperature (> 0)").positive();
  return g2c::run_cli(app, argc, argv, [&] {
    const auto device = g2c::exercises::prepare(options);
    g2c::transformer::TransformerLM model{nullptr};
    std::optional<g2c::tokenizer::TextTokenizer> tokenizer;
    nlohmann::json training = nullptr, source;
    if (!config.model.empty()) {
      auto text_model = g2c::sampling::load_text_model(config.model, device);
      model = text_model.artifact.model;
      tokenizer.emplace(std::move(text_model.tokenizer));
      source = {{"artifact", text_model.artifact.dir.string()},
                {"manifest", text_model.artifact.manifest}};
    } else {
      const std::string text = g2c::exercises::load_tinyshakespeare();
      tokenizer.emplace(g2c::exercises::course_tokenizer("bpe", text, config.vocab));
      config.vocab = tokenizer->size();
      const auto corpus =
          g2c::exercises::split_corpus(torch::tensor(tokenizer->encode(text), torch::kLong));
      check_fits(tokenizer->encode(config.prompt).size(), config.new_tokens,
                 config.context_length);  // before the training, not after it
      fmt::print("{}: {} training tokens\n", tokenizer->description(), corpus.train.numel());
      torch::manual_seed(options.seed);
      model = g2c::transformer::TransformerLM(g2c::transformer::TransformerLMOptions(
          config.vocab, config.embedding_dim, config.num_layers, config.num_heads,
          config.context_length));
      model->to(device);
      training = g2c::exercises::train_briefly(model, corpus,
                                               {config.batch_size, config.context_length, config.lr,
                                                config.weight_decay, config.log_every},
                                               options, device);
      fmt::print("trained {} steps in {:.1f}s: train loss {:.3f}, validation loss {:.3f}\n",
                 options.steps, training["seconds"].get<double>(),
                 training["train_loss"].back().get<double>(), training["val_loss"].get<double>());
      source = "trained by this program";
    }
    std::int64_t parameters = 0;
    for (const auto& p : model->parameters()) parameters += p.numel();

    const auto prompt_ids = tokenizer->encode(config.prompt);
    const auto prompt_len = prompt_ids.size();
    check_fits(prompt_len, config.new_tokens, model->max_seq_len);
    auto sampling = GenerateOptions().temperature(config.temperature);
    std::optional<std::int64_t> eos_id;
    if (!config.eos.empty()) {
      const auto eos_ids = tokenizer->encode(config.eos);
      if (eos_ids.size() != 1) {
        throw g2c::ValueError(fmt::format("--eos {:?} is {} tokens for this tokenizer, not one",
                                          config.eos, eos_ids.size()));
      }
      eos_id = eos_ids[0];
      sampling.eos_id(eos_id);
    }
    const auto prompt = torch::tensor(prompt_ids, torch::kLong);
    const auto seeded = [&] { return at::make_generator<at::CPUGeneratorImpl>(options.seed + 11); };

    // One sample: what generate alone draws from the seed.
    auto single_options = sampling;
    single_options.generator(seeded());
    const auto single_ids = g2c::exercises::ids_vector(
        g2c::sampling::generate(model, prompt, config.new_tokens, single_options));
    const double single_score = g2c::sampling::sequence_log_prob(
        model, torch::tensor(single_ids, torch::kLong), static_cast<std::int64_t>(prompt_len));
    const double single_mean = single_score / static_cast<double>(single_ids.size() - prompt_len);

    // Best of n, the same pool ranked two ways: the same seed draws the same candidates.
    const auto begin = std::chrono::steady_clock::now();
    auto raw_options = sampling, mean_options = sampling;
    raw_options.generator(seeded());
    mean_options.generator(seeded());
    const auto raw = g2c::sampling::best_of_n(
        model, prompt, config.new_tokens, g2c::sampling::BestOfNOptions().n(config.n), raw_options);
    const auto mean = g2c::sampling::best_of_n(
        model, prompt, config.new_tokens,
        g2c::sampling::BestOfNOptions().n(config.n).length_normalize(true), mean_options);
    const double seconds =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - begin).count();

    nlohmann::json pool = nlohmann::json::array();
    std::vector<double> scores, mean_scores, distinct, lengths;
    std::size_t best_raw = 0, best_mean = 0;
    bool same_pool = raw.scored.size() == mean.scored.size();
    for (std::size_t i = 0; i < raw.scored.size(); ++i) {
      const auto ids = g2c::exercises::ids_vector(raw.scored[i].ids);
      same_pool = same_pool && torch::equal(raw.scored[i].ids, mean.scored[i].ids);
      auto entry =
          candidate_json(*tokenizer, ids, prompt_len, raw.scored[i].score, mean.scored[i].score);
      scores.push_back(raw.scored[i].score);
      mean_scores.push_back(mean.scored[i].score);
      distinct.push_back(entry["distinct_trigram_ratio"]);
      lengths.push_back(static_cast<double>(ids.size() - prompt_len));
      pool.push_back(entry);
    }
    // Which candidates best_of_n returned (the first of equal sequences).
    for (std::size_t i = raw.scored.size(); i-- > 0;) {
      if (torch::equal(raw.scored[i].ids, raw.best_ids)) best_raw = i;
      if (torch::equal(mean.scored[i].ids, mean.best_ids)) best_mean = i;
    }
    if (!same_pool) {
      fmt::print(stderr, "note: the two best_of_n calls with the same seed drew different pools\n");
    }

    fmt::print("\n{} candidates after {:?} ({} new tokens at most{}), in {:.2f}s:\n", config.n,
               config.prompt, config.new_tokens,
               eos_id ? fmt::format(", ending at {:?}", config.eos) : "", seconds);
    fmt::print("{:>3} {:>6} {:>9} {:>10} {:>9}\n", "#", "tokens", "log p", "per token", "distinct");
    for (std::size_t i = 0; i < pool.size(); ++i) {
      fmt::print("{:>3} {:>6} {:>9.2f} {:>10.3f} {:>9.2f}{}{}\n", i + 1, lengths[i], scores[i],
                 mean_scores[i], distinct[i], i == best_raw ? "  <- best by log p" : "",
                 i == best_mean ? "  <- best per token" : "");
    }
    const auto show = [&](const std::string& title, const std::vector<std::int64_t>& ids,
                          double score, double per_token) {
      fmt::print("\n--- {} (log p {:.2f}, {:.3f} per token) ---\n{}\n", title, score, per_token,
                 tokenizer->decode(ids));
    };
    show("single sample", single_ids, single_score, single_mean);
    show(fmt::format("best of {} by log p: #{}", config.n, best_raw + 1),
         g2c::exercises::ids_vector(raw.best_ids), scores[best_raw], mean_scores[best_raw]);
    show(fmt::format("best of {} per token: #{}", config.n, best_mean + 1),
         g2c::exercises::ids_vector(mean.best_ids), scores[best_mean], mean_scores[best_mean]);

    auto result = g2c::exercises::run_metadata("11_best_of_n", options, device);
    result["config"] = {
        {"model", config.model.empty() ? nlohmann::json(nullptr) : nlohmann::json(config.model)},
        {"vocab_size", model->vocab_size},
        {"max_seq_len", model->max_seq_len},
        {"prompt", config.prompt},
        {"prompt_tokens", prompt_len},
        {"eos", config.eos},
        {"eos_id", eos_id ? nlohmann::json(*eos_id) : nlohmann::json(nullptr)},
        {"n", config.n},
        {"max_new_tokens", config.new_tokens},
        {"temperature", config.temperature},
        {"sample_seed", options.seed + 11},
        {"threads", torch::get_num_threads()}};
    if (config.model.empty()) {
      result["config"]["training"] = {{"tokenizer", g2c::exercises::tokenizer_json(*tokenizer)},
                                      {"embedding_dim", config.embedding_dim},
                                      {"num_layers", config.num_layers},
                                      {"num_heads", config.num_heads},
                                      {"batch_size", config.batch_size},
                                      {"optimizer", "adamw"},
                                      {"lr", config.lr},
                                      {"min_lr", config.lr / 10},
                                      {"grad_clip", 1.0},
                                      {"weight_decay", config.weight_decay},
                                      {"steps", options.steps}};
    }
    result["model"] = {{"parameters", parameters}, {"source", source}};
    result["training"] = training;
    auto single = candidate_json(*tokenizer, single_ids, prompt_len, single_score, single_mean);
    single["same_as_first_candidate"] =
        single_ids == g2c::exercises::ids_vector(raw.scored.front().ids);
    result["single"] = single;
    result["best_raw"] = pool[best_raw];
    result["best_raw"]["index"] = best_raw;
    result["best_normalized"] = pool[best_mean];
    result["best_normalized"]["index"] = best_mean;
    result["rankings_agree"] = best_raw == best_mean;
    result["same_pool"] = same_pool;
    result["pool"] = pool;
    result["series"] = {{"score", scores},
                        {"mean_score", mean_scores},
                        {"distinct_trigram_ratio", distinct},
                        {"new_tokens", lengths}};
    result["seconds"] = seconds;
    using g2c::exercises::Figure;
    using g2c::exercises::Series;
    result["figures"] = g2c::exercises::figures(
        {Figure::scatter("best_of_n_scores.png",
                         fmt::format("{} candidates: log-probability against length", config.n),
                         "new tokens", "log p of the continuation (nats)")
             .add(Series("candidate", "/series/new_tokens", "/series/score"))
             .hline(single_score, "single sample"),
         Figure::scatter("best_of_n_per_token.png",
                         "Mean log-probability per new token against length", "new tokens",
                         "log p per new token (nats)")
             .add(Series("candidate", "/series/new_tokens", "/series/mean_score"))
             .hline(single_mean, "single sample")});
    const auto path = g2c::exercises::save_result(options, "best_of_n.json", result);
    g2c::exercises::plot_result(options, path);
  });
}

}  // namespace exercise_11_best_of_n
