// Exercise 05.7 — analogies with pretrained GloVe vectors: king − man + woman ≈ queen. Runs only
// when you pass a GloVe text file (--glove PATH); the course does not ship one (they are large).
#include <array>
#include <chrono>
#include <fstream>
#include <set>
#include <sstream>

#include <fmt/format.h>

#include "exercises/common/cli.h"
#include "exercises/common/figures.h"
#include "g2c/core/errors.h"
#include "g2c/embeddings/similarity.h"

namespace exercise_05_glove_analogies {

namespace {

constexpr const char* kHowTo =
    "no GloVe file given. Download glove.6B.zip (822 MB) from "
    "https://nlp.stanford.edu/projects/glove/, unzip it, and run\n"
    "  05_glove_analogies --glove path/to/glove.6B.50d.txt";

/// The first `count` words of a GloVe file (frequency order): the candidate answers.
std::set<std::string> first_words(const std::filesystem::path& path, std::int64_t count) {
  std::ifstream file(path);
  if (!file) throw g2c::ValueError(fmt::format("cannot open GloVe file '{}'", path.string()));
  std::set<std::string> words;
  std::string line;
  while (static_cast<std::int64_t>(words.size()) < count && std::getline(file, line)) {
    std::istringstream fields(line);
    std::string word;
    if (fields >> word) words.insert(word);
  }
  return words;
}

}  // namespace

int main(int argc, char** argv) {
  g2c::CommandLine app{"Module 05, exercise 7: word analogies with GloVe vectors (needs --glove)"};
  g2c::exercises::CommonOptions options;
  options.out = "results/05-embeddings";
  std::filesystem::path glove;
  std::int64_t candidates = 20000;  // the most frequent words, searched for each answer
  std::int64_t top_k = 3;
  std::vector<std::string> analogies{"king:man:woman", "paris:france:italy", "walked:walk:swim",
                                     "bigger:big:small"};
  g2c::exercises::add_common_options(app, options);
  app.add_option("--glove", glove, "A GloVe text file, e.g. glove.6B.50d.txt").no_default();
  app.add_option("--candidates", candidates, "Most frequent words searched for answers");
  app.add_option("--top-k", top_k, "Answers listed per analogy");
  app.add_option("--analogies", analogies, "a:b:c, read as a − b + c (king:man:woman → queen)");
  return g2c::run_cli(app, argc, argv, [&] {
    const auto device = g2c::exercises::prepare(options);
    auto result = g2c::exercises::run_metadata("05_glove_analogies", options, device);
    result["config"] = {{"glove", glove.string()},
                        {"candidates", candidates},
                        {"top_k", top_k},
                        {"analogies", analogies}};
    if (glove.empty()) {
      fmt::print("{}\n", kHowTo);
      result["skipped"] = true;
      result["how_to"] = kHowTo;
      g2c::exercises::save_result(options, "glove_analogies.json", result);
      return;
    }
    std::vector<std::array<std::string, 3>> parsed;
    auto words = first_words(glove, candidates);
    for (const auto& text : analogies) {
      std::array<std::string, 3> parts;
      std::istringstream fields(text);
      for (auto& part : parts) {
        if (!std::getline(fields, part, ':') || part.empty()) {
          throw g2c::ValueError(fmt::format("--analogies '{}': expected a:b:c", text));
        }
        words.insert(part);
      }
      parsed.push_back(parts);
    }
    const auto start = std::chrono::steady_clock::now();
    const auto vectors = g2c::embeddings::load_glove_subset(glove, words);
    const double load_seconds =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    fmt::print("{} vectors loaded from {} in {:.1f}s\n", vectors.size(), glove.string(),
               load_seconds);
    nlohmann::json answers = nlohmann::json::array();
    std::vector<std::string> labels;
    std::vector<double> top_scores;
    for (const auto& [a, b, c] : parsed) {
      nlohmann::json entry = {{"a", a}, {"b", b}, {"c", c}};
      try {
        const auto best = g2c::embeddings::analogy(a, b, c, vectors, top_k);
        nlohmann::json list = nlohmann::json::array();
        std::string line;
        for (const auto& [word, score] : best) {
          list.push_back({{"word", word}, {"score", score}});
          line += fmt::format("  {} {:.3f}", word, score);
        }
        entry["answers"] = list;
        if (!best.empty()) {
          labels.push_back(fmt::format("{}−{}+{}≈{}", a, b, c, best.front().first));
          top_scores.push_back(best.front().second);
        }
        fmt::print("{} − {} + {} ≈{}\n", a, b, c, line);
      } catch (const g2c::ValueError& error) {  // a word missing from this GloVe file
        entry["error"] = error.what();
        fmt::print("{} − {} + {}: {}\n", a, b, c, error.what());
      }
      answers.push_back(entry);
    }
    result["skipped"] = false;
    result["vectors"] = vectors.size();
    result["dim"] = vectors.empty() ? 0 : vectors.front().second.size(0);
    result["timings"] = {{"load_seconds", load_seconds}};
    result["analogies_result"] = answers;
    result["best"] = {{"label", labels}, {"score", top_scores}};
    using g2c::exercises::Figure;
    using g2c::exercises::Series;
    result["figures"] = g2c::exercises::figures(
        {Figure::bar("glove_analogies.png", "Best answer of each analogy and its cosine", "",
                     "cosine")
             .rotate_labels(30)
             .add(Series("", "/best/label", "/best/score"))});
    const auto path = g2c::exercises::save_result(options, "glove_analogies.json", result);
    g2c::exercises::plot_result(options, path);
  });
}

}  // namespace exercise_05_glove_analogies
