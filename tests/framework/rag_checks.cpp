// Framework checks of module 17 (g2c/rag), against independent oracles: the vector store's top-k
// against a float64 ranking of every chunk, BM25's inverted index against the formula evaluated
// chunk by chunk, and the dense embedder's batches against each text embedded alone (on the real
// SmolLM2-135M-Instruct file; skipped, visibly, without it).
#include <algorithm>
#include <cmath>
#include <map>
#include <numeric>
#include <random>
#include <set>
#include <string>
#include <vector>

#include "g2c/core/errors.h"
#include "g2c/rag/rag.h"
#include "g2c_test.h"
#include "smollm2.h"

using g2c::rag::Chunk;

namespace {

Chunk chunk(const std::string& text, std::int64_t i) {
  const auto length = static_cast<std::int64_t>(g2c::rag::character_offsets(text).size()) - 1;
  return Chunk(text, "doc-" + std::to_string(i), 0, length);
}

}  // namespace

TEST_CASE("vector_store_top_k_is_the_float64_ranking", "[rag]") {
  torch::manual_seed(0);
  const std::int64_t n = 3000, dim = 96;
  const auto vectors = g2c::rag::l2_normalize_rows(torch::randn({n, dim}));
  std::vector<Chunk> chunks;
  for (std::int64_t i = 0; i < n; ++i) chunks.push_back(chunk("c" + std::to_string(i), i));
  g2c::rag::VectorStore store(dim);
  store.add(chunks, vectors);
  for (int trial = 0; trial < 5; ++trial) {
    const auto query = g2c::rag::l2_normalize_rows(torch::randn({1, dim}))[0];
    const auto exact = vectors.to(torch::kFloat64).matmul(query.to(torch::kFloat64));
    const auto order = exact.argsort(0, /*descending=*/true);
    const auto results = store.search(query, 10);
    REQUIRE(results.size() == 10);
    for (std::int64_t r = 0; r < 10; ++r) {
      const auto expected = order[r].item<std::int64_t>();
      CHECK(results[static_cast<std::size_t>(r)].chunk ==
            chunks[static_cast<std::size_t>(expected)]);
      CHECK(results[static_cast<std::size_t>(r)].similarity ==
            within(exact[expected].item<double>(), 1e-5));
    }
  }
}

TEST_CASE("bm25_index_equals_the_formula_chunk_by_chunk", "[rag]") {
  // Random documents over a small vocabulary, scored by the inverted index and by the formula
  // evaluated directly on every chunk.
  std::mt19937 rng(7);
  const std::vector<std::string> vocabulary = {"king",  "queen", "crown", "sword", "love",
                                               "death", "rome",  "night", "blood", "fair"};
  std::vector<Chunk> chunks;
  std::vector<std::vector<std::string>> words;
  for (int i = 0; i < 200; ++i) {
    std::vector<std::string> doc;
    std::string text;
    const int length = 3 + static_cast<int>(rng() % 30);
    for (int w = 0; w < length; ++w) {
      doc.push_back(vocabulary[rng() % vocabulary.size()]);
      text += (w ? " " : "") + doc.back();
    }
    words.push_back(doc);
    chunks.push_back(chunk(text, i));
  }
  g2c::rag::BM25Retriever bm25({.k1 = 1.2, .b = 0.6});
  bm25.add(chunks);
  double average = 0;
  for (const auto& doc : words) average += static_cast<double>(doc.size());
  average /= static_cast<double>(words.size());
  for (const std::string query : {"king", "queen sword", "rome night blood fair", "love love"}) {
    const auto terms = g2c::rag::bm25_words(query);
    const std::set<std::string> unique(terms.begin(), terms.end());
    std::vector<double> expected(chunks.size(), 0.0);
    for (const auto& term : unique) {
      double holding = 0;
      for (const auto& doc : words) holding += std::count(doc.begin(), doc.end(), term) > 0;
      const double idf = std::log(1 + (200 - holding + 0.5) / (holding + 0.5));
      for (std::size_t i = 0; i < words.size(); ++i) {
        const double f = static_cast<double>(std::count(words[i].begin(), words[i].end(), term));
        const double length = static_cast<double>(words[i].size());
        expected[i] += idf * f * 2.2 / (f + 1.2 * (1 - 0.6 + 0.6 * length / average));
      }
    }
    const auto results = bm25.retrieve(query, 20);
    REQUIRE(results.size() == 20);
    std::vector<double> sorted = expected;
    std::sort(sorted.rbegin(), sorted.rend());
    for (std::size_t r = 0; r < results.size(); ++r) {
      const auto index = static_cast<std::size_t>(std::stoi(results[r].chunk.source().substr(4)));
      CHECK(results[r].score == py_approx(expected[index]));
      CHECK(results[r].score == py_approx(sorted[r]));
    }
  }
}

TEST_CASE("dense_embedder_batches_equal_texts_alone", "[rag]") {
  G2C_SKIP_WITHOUT_SMOLLM2();
  auto model = std::make_shared<g2c::pretrained::PretrainedModel>(
      g2c::pretrained::load_pretrained_model("SmolLM2-135M-Instruct"));
  const std::vector<std::string> texts = {"Madrid is the capital of Spain.", "",
                                          "Bananas are yellow and grow in tropical climates.",
                                          "What is the capital of Spain?"};
  g2c::rag::PretrainedEmbedder batched(model, 4);
  g2c::rag::PretrainedEmbedder alone(model, 1);
  const auto together = batched.embed(texts);
  const auto each = alone.embed(texts);
  CHECK(together.sizes() == torch::IntArrayRef{4, 576});
  CHECK(torch::allclose(together, each, 0, 1e-5));       // padding after a text changes nothing
  CHECK(together[1].abs().sum().item<double>() == 0.0);  // no tokens, a zero row
  const auto norms = together.norm(2, 1);
  CHECK(norms[0].item<double>() == within(1.0, 1e-5));
  CHECK(norms[3].item<double>() == within(1.0, 1e-5));
  CHECK(batched.spec() == nlohmann::json{{"kind", "pretrained"},
                                         {"model", "SmolLM2-135M-Instruct"},
                                         {"dim", 576},
                                         {"pooling", "mean"}});
}
