// Exercise 05.5 — skip-gram on TinyShakespeare. Every token predicts its neighbours within a
// window; after a few hundred SGD steps, tokens that keep the same company have nearby vectors.
// Tokens come from module 04's ShakespeareTokenizer (characters when its artifact is missing).
#include <algorithm>
#include <chrono>
#include <sstream>

#include <fmt/format.h>

#include "exercises/common/cli.h"
#include "exercises/common/data.h"
#include "exercises/common/figures.h"
#include "g2c/core/errors.h"
#include "g2c/core/progress.h"
#include "g2c/embeddings/similarity.h"
#include "g2c/embeddings/skipgram.h"
#include "g2c/tokenizer/text_tokenizer.h"

namespace exercise_05_skipgram {

namespace {

struct Config {
  std::int64_t chars = 300000;  // a prefix of the corpus: enough pairs, seconds to encode
  std::int64_t vocab_size = 2048;
  std::int64_t embedding_dim = 48;
  std::int64_t window = 2;
  std::int64_t batch_size = 256;
  double lr = 0.5;  // higher than train_skipgram's 0.2: a short run over a 2048-way softmax
  std::int64_t log_every = 50;
  std::int64_t top_k = 5;
  std::vector<std::string> words{"king", "queen", "love", "night", "lord", "good", "father"};
};

/// The id of `word` when the tokenizer keeps it as one token (with or without a leading space).
std::optional<std::int64_t> single_token(const g2c::tokenizer::TextTokenizer& tokenizer,
                                         const std::string& word) {
  for (const auto& form : {" " + word, word}) {
    const auto ids = tokenizer.encode(form);
    if (ids.size() == 1) return ids.front();
  }
  return std::nullopt;
}

}  // namespace

int main(int argc, char** argv) {
  g2c::CommandLine app{"Module 05, exercise 5: skip-gram embeddings of TinyShakespeare tokens"};
  g2c::exercises::CommonOptions options;
  options.out = "results/05-embeddings";
  options.steps = 600;
  Config config;
  g2c::exercises::add_common_options(app, options);
  app.add_option("--chars", config.chars, "Characters of the corpus to use (0: all)");
  app.add_option("--vocab", config.vocab_size, "Tokenizer vocabulary size");
  app.add_option("--dim", config.embedding_dim, "Embedding dimension D");
  app.add_option("--window", config.window, "Context window");
  app.add_option("--batch", config.batch_size, "Pairs per SGD step");
  app.add_option("--lr", config.lr, "SGD learning rate");
  app.add_option("--log-every", config.log_every, "Steps between progress updates");
  app.add_option("--top-k", config.top_k, "Neighbours listed per word");
  app.add_option("--words", config.words, "Words whose neighbours are listed");
  return g2c::run_cli(app, argc, argv, [&] {
    const auto device = g2c::exercises::prepare(options);
    if (config.log_every < 1) throw g2c::ValueError("--log-every must be at least 1");
    std::string text = g2c::exercises::load_tinyshakespeare();
    if (config.chars > 0 && static_cast<std::size_t>(config.chars) < text.size()) {
      text.resize(static_cast<std::size_t>(config.chars));
    }
    const auto tokenizer = g2c::tokenizer::shakespeare_or_characters(
        text, static_cast<std::size_t>(config.vocab_size));
    const auto ids = torch::tensor(tokenizer.encode(text), torch::kLong);  // (N_tokens)
    const auto pairs = g2c::embeddings::make_skipgram_pairs(ids, config.window);
    fmt::print("{}: {} tokens -> {} (centre, context) pairs, window {}\n", tokenizer.description(),
               ids.numel(), pairs.centers.numel(), config.window);

    g2c::embeddings::SkipGramEmbeddingModel model(tokenizer.size(), config.embedding_dim);
    model->to(device);
    auto generator = at::make_generator<at::CPUGeneratorImpl>(options.seed);
    std::vector<double> losses;
    g2c::Progress progress("skip-gram", options.steps, !options.quiet);
    const auto start = std::chrono::steady_clock::now();
    while (static_cast<std::int64_t>(losses.size()) < options.steps) {
      const auto chunk =
          std::min(config.log_every, options.steps - static_cast<std::int64_t>(losses.size()));
      const auto part = g2c::embeddings::train_skipgram(model, pairs.centers, pairs.contexts, chunk,
                                                        config.batch_size, config.lr, generator);
      losses.insert(losses.end(), part.begin(), part.end());
      progress.update(static_cast<std::int64_t>(losses.size()),
                      fmt::format("loss {:.3f}", losses.back()));
    }
    progress.finish(fmt::format("loss {:.3f}", losses.back()));
    const double seconds =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();

    // Every token's vector, labelled for printing; neighbours by cosine.
    const auto table = model->embedding->weight.detach().cpu();  // (V, D)
    g2c::embeddings::WordVectors vectors;
    for (std::int64_t id = 0; id < table.size(0); ++id) {
      vectors.emplace_back(tokenizer.token_label(id), table[id]);
    }
    std::vector<std::int64_t> queries;
    for (const auto& word : config.words) {
      if (const auto id = single_token(tokenizer, word)) queries.push_back(*id);
    }
    if (queries.empty()) {  // a character vocabulary: take the most frequent tokens instead
      const auto counts = torch::bincount(ids, /*weights=*/{}, tokenizer.size());
      const auto top = std::get<1>(counts.topk(std::min<std::int64_t>(6, tokenizer.size())));
      for (std::int64_t i = 0; i < top.numel(); ++i) queries.push_back(top[i].item<std::int64_t>());
      fmt::print("(none of --words is a single token here: using the most frequent tokens)\n");
    }
    nlohmann::json neighbours = nlohmann::json::array();
    for (const auto id : queries) {
      const auto label = tokenizer.token_label(id);
      const auto nearest =
          g2c::embeddings::nearest_by_cosine(table[id], vectors, {label}, config.top_k);
      std::ostringstream line;
      nlohmann::json list = nlohmann::json::array();
      for (const auto& [token, score] : nearest) {
        line << fmt::format("  '{}' {:.2f}", token, score);
        list.push_back({{"token", token}, {"score", score}});
      }
      fmt::print("'{}':{}\n", label, line.str());
      neighbours.push_back({{"token", label}, {"id", id}, {"neighbours", list}});
    }

    auto result = g2c::exercises::run_metadata("05_skipgram", options, device);
    result["config"] = {{"chars", config.chars},
                        {"vocab_size", config.vocab_size},
                        {"embedding_dim", config.embedding_dim},
                        {"window", config.window},
                        {"batch_size", config.batch_size},
                        {"lr", config.lr},
                        {"steps", options.steps},
                        {"top_k", config.top_k},
                        {"words", config.words}};
    result["tokenizer"] = {{"description", tokenizer.description()},
                           {"vocab_size", tokenizer.size()}};
    result["tokens"] = ids.numel();
    result["pairs"] = pairs.centers.numel();
    result["losses"] = losses;
    result["timings"] = {{"train_seconds", seconds}};
    result["neighbours"] = neighbours;
    using g2c::exercises::Figure;
    using g2c::exercises::Series;
    result["figures"] = g2c::exercises::figures(
        {Figure::line("skipgram_loss.png", "Skip-gram training loss (cross-entropy of the context)",
                      "step", "loss")
             .add(Series("", nullptr, "/losses"))});
    const auto path = g2c::exercises::save_result(options, "skipgram.json", result);
    g2c::exercises::plot_result(options, path);
  });
}

}  // namespace exercise_05_skipgram
