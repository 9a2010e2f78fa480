// Module 17 course tests: retrieval-augmented generation (g2c/rag), one for one with the Python
// edition's tests/test_rag.py, then this edition's additions (BM25, saved indexes, characters
// beyond ASCII, the Python edition's exact hash). Each test is named "<Class>::<name>" (the Python
// method without "test_"). Suggested order, as the Python file suggests it: chunk_text
// (TestChunkText*), HashEmbedder::embed (TestHashEmbedderEmbed), VectorStore::search
// (TestNumpyVectorStoreSearch, TestVectorStoreSearchEdgeCases), assemble_rag_prompt
// (TestAssembleRAGPrompt*); the retriever and pipeline tests then pass with no more code, since
// they only wire those four together. Tests tagged [clean] pass on the scaffold. A fake embedder
// (vectors registered per text), a fake backend (a scripted answer, the last prompt kept) and a
// fake HTTP transport stand in for models and servers: no model, no network.
#include <cmath>
#include <filesystem>
#include <fstream>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <type_traits>
#include <vector>

#include <unistd.h>
#include <nlohmann/json.hpp>

#include "g2c/core/errors.h"
#include "g2c/inference/backend.h"
#include "g2c/rag/rag.h"
#include "g2c_test.h"

using g2c::inference::Backend;
using g2c::inference::BackendInfo;
using g2c::inference::CompletionOptions;
using g2c::inference::HttpRequest;
using g2c::inference::HttpResponse;
using g2c::inference::InferenceResult;
using g2c::inference::NetworkError;
using g2c::rag::assemble_rag_prompt;
using g2c::rag::Chunk;
using g2c::rag::chunk_text;
using g2c::rag::ChunkOptions;
using g2c::rag::DEFAULT_INSTRUCTION;
using g2c::rag::DEFAULT_OLLAMA_EMBED_MODEL;
using g2c::rag::DEFAULT_OLLAMA_URL;
using g2c::rag::DEFAULT_SYSTEM;
using g2c::rag::DenseRetriever;
using g2c::rag::Embedder;
using g2c::rag::HashEmbedder;
using g2c::rag::HashEmbedderOptions;
using g2c::rag::OllamaEmbedder;
using g2c::rag::OllamaEmbedderOptions;
using g2c::rag::OllamaEmbedError;
using g2c::rag::RAGAnswer;
using g2c::rag::RAGPipeline;
using g2c::rag::RAGPrompt;
using g2c::rag::RetrievedChunk;
using g2c::rag::VectorStore;
using Json = nlohmann::json;

namespace {

Chunk chunk(std::string text, std::string source = "s", std::int64_t start = 0) {
  const auto length = static_cast<std::int64_t>(g2c::rag::character_offsets(text).size()) - 1;
  return Chunk(std::move(text), std::move(source), start, start + length);
}

ChunkOptions sized(std::int64_t size, std::int64_t overlap, std::string source = "s") {
  ChunkOptions options;
  options.source = std::move(source);
  options.chunk_size = size;
  options.chunk_overlap = overlap;
  return options;
}

torch::Tensor rows(std::vector<std::vector<float>> values) {
  const auto n = static_cast<std::int64_t>(values.size());
  const auto d = static_cast<std::int64_t>(values.front().size());
  auto out = torch::zeros({n, d}, torch::kFloat32);
  for (std::int64_t i = 0; i < n; ++i) {
    out[i].copy_(torch::tensor(values[static_cast<std::size_t>(i)], torch::kFloat32));
  }
  return out;
}

torch::Tensor unit_rows(std::vector<std::vector<float>> values) {
  return g2c::rag::l2_normalize_rows(rows(std::move(values)));
}

double row_norm(const torch::Tensor& matrix, std::int64_t i) {
  return matrix[i].norm().item<double>();
}

/// A backend whose complete() returns a scripted answer and keeps the last prompt and settings.
class FakeBackend : public Backend {
 public:
  explicit FakeBackend(std::string scripted_answer = "MOCK ANSWER")
      : scripted_answer(std::move(scripted_answer)) {}
  const BackendInfo& info() const override { return info_; }
  InferenceResult complete(const std::string& prompt, const CompletionOptions& options) override {
    last_prompt = prompt;
    last_options = options;
    return InferenceResult(prompt, scripted_answer, static_cast<std::int64_t>(prompt.size()),
                           static_cast<std::int64_t>(scripted_answer.size()), 1.0, info_);
  }
  std::string scripted_answer;
  std::optional<std::string> last_prompt;
  std::optional<CompletionOptions> last_options;

 private:
  BackendInfo info_{"fake", "fake-model"};
};

/// An embedder whose vectors are registered per text, so the store and the retriever are tested
/// apart from the hash. An unregistered text is an error.
class FakeEmbedder : public Embedder {
 public:
  explicit FakeEmbedder(std::int64_t dim = 4) : dim_(dim) {}
  void register_text(const std::string& text, std::vector<float> vector) {
    if (static_cast<std::int64_t>(vector.size()) != dim_) throw std::invalid_argument("wrong dim");
    table_[text] = std::move(vector);
  }
  std::int64_t dim() const override { return dim_; }
  torch::Tensor embed(const std::vector<std::string>& texts) override {
    auto out = torch::zeros({static_cast<std::int64_t>(texts.size()), dim_}, torch::kFloat32);
    for (std::size_t i = 0; i < texts.size(); ++i) {
      const auto found = table_.find(texts[i]);
      if (found == table_.end()) throw std::out_of_range("FakeEmbedder: unregistered " + texts[i]);
      out[static_cast<std::int64_t>(i)].copy_(torch::tensor(found->second, torch::kFloat32));
    }
    return out;
  }
  Json spec() const override { return {{"kind", "fake"}, {"dim", dim_}}; }
  std::string describe() const override { return "FakeEmbedder"; }

 private:
  std::int64_t dim_;
  std::map<std::string, std::vector<float>> table_;
};

/// The HTTP transport the Python tests' fake urlopen stands for: it records each request and
/// answers with a JSON body, raw bytes, a status, or a network failure.
struct FakeServer {
  std::optional<Json> body = Json::object();
  std::optional<std::string> raw;  // answered as it is (not JSON)
  int status = 200;
  bool unreachable = false;
  std::vector<HttpRequest> requests;

  g2c::inference::HttpTransport transport() {
    return [this](const HttpRequest& request, double) {
      requests.push_back(request);
      if (unreachable) throw NetworkError("connection refused");
      if (raw) return HttpResponse{status, *raw};
      return HttpResponse{status, body->dump()};
    };
  }
};

OllamaEmbedder ollama_with(FakeServer& server, std::int64_t dim = 4,
                           std::string base_url = DEFAULT_OLLAMA_URL) {
  OllamaEmbedderOptions options;
  options.dim = dim;
  options.base_url = std::move(base_url);
  options.transport = server.transport();
  return OllamaEmbedder(DEFAULT_OLLAMA_EMBED_MODEL, options);
}

/// n chunks whose vectors are the rows of the n x n identity.
std::shared_ptr<VectorStore> store_with_eye_vectors(std::int64_t n = 4) {
  auto store = std::make_shared<VectorStore>(n);
  std::vector<Chunk> chunks;
  for (std::int64_t i = 0; i < n; ++i) {
    chunks.emplace_back("chunk-" + std::to_string(i), "s", i * 10, i * 10 + 7);
  }
  store->add(chunks, torch::eye(n, torch::kFloat32));
  return store;
}

std::vector<std::string> texts_of(const std::vector<g2c::rag::ScoredChunk>& results) {
  std::vector<std::string> out;
  for (const auto& r : results) out.push_back(r.chunk.text());
  return out;
}

}  // namespace

// --- Chunk -------------------------------------------------------------------------------------

TEST_CASE("TestChunkBoilerplate::construct_basic", "[clean]") {
  const Chunk c("hello", "doc.md", 0, 5);
  CHECK(c.text() == "hello");
  CHECK(c.source() == "doc.md");
  CHECK(c.start() == 0);
  CHECK(c.end() == 5);
  CHECK(c.metadata() == Json::object());
}

TEST_CASE("TestChunkBoilerplate::metadata_defaults_to_empty_dict", "[clean]") {
  CHECK(Chunk("x", "s", 0, 1).metadata() == Json::object());
}

TEST_CASE("TestChunkBoilerplate::metadata_is_independent_per_chunk", "[clean]") {
  Chunk c1("x", "s", 0, 1);
  const Chunk c2("y", "s", 0, 1);
  c1.metadata()["k"] = 1;
  CHECK_FALSE(c2.metadata().contains("k"));
}

TEST_CASE("TestChunkBoilerplate::metadata_passes_through", "[clean]") {
  CHECK(Chunk("x", "s", 0, 1, {{"page", 7}}).metadata() == Json{{"page", 7}});
}

TEST_CASE("TestChunkBoilerplate::frozen_no_attribute_assignment", "[clean]") {
  // A chunk's text, source and position have getters and no setters: assigning is a compile error.
  const Chunk c("x", "s", 0, 1);
  STATIC_REQUIRE(std::is_const_v<std::remove_reference_t<decltype(c.text())>>);
  STATIC_REQUIRE(std::is_const_v<std::remove_reference_t<decltype(Chunk("x", "s", 0, 1).text())>>);
  STATIC_REQUIRE(
      std::is_const_v<std::remove_reference_t<decltype(Chunk("x", "s", 0, 1).source())>>);
  STATIC_REQUIRE_FALSE(std::is_lvalue_reference_v<decltype(Chunk("x", "s", 0, 1).start())>);
  CHECK(c.text() == "x");
}

TEST_CASE("TestChunkBoilerplate::empty_text_rejected", "[clean]") {
  CHECK_THROWS_MATCHES(Chunk("", "s", 0, 0), g2c::ValueError, MessageContains("non-empty"));
}

TEST_CASE("TestChunkBoilerplate::negative_start_rejected", "[clean]") {
  CHECK_THROWS_MATCHES(Chunk("x", "s", -1, 0), g2c::ValueError, MessageContains("start"));
}

TEST_CASE("TestChunkBoilerplate::end_must_match_start_plus_len", "[clean]") {
  CHECK_THROWS_MATCHES(Chunk("hello", "s", 0, 3), g2c::ValueError, MessageContains("end"));
}

TEST_CASE("TestChunkBoilerplate::end_correct_with_offset", "[clean]") {
  const Chunk c("abc", "s", 10, 13);
  CHECK(c.start() == 10);
  CHECK(c.end() == 13);
}

TEST_CASE("TestChunkBoilerplate::non_str_source_rejected", "[clean]") {
  // The Python edition refuses source=123 at run time; here a source is a std::string by type.
  STATIC_REQUIRE_FALSE(
      std::is_constructible_v<Chunk, std::string, int, std::int64_t, std::int64_t>);
  STATIC_REQUIRE(
      std::is_constructible_v<Chunk, std::string, std::string, std::int64_t, std::int64_t>);
}

TEST_CASE("TestChunkBoilerplate::equality", "[clean]") {
  const Chunk c1("hi", "s", 0, 2);
  CHECK(c1 == Chunk("hi", "s", 0, 2));
  CHECK(c1 != Chunk("hi", "t", 0, 2));
}

// --- chunk_text: yours -------------------------------------------------------------------------

TEST_CASE("TestChunkText::returns_list_of_chunks") {
  const std::vector<Chunk> result = chunk_text("hello world", sized(100, 0));
  CHECK(result.size() == 1);
}

TEST_CASE("TestChunkText::short_doc_yields_single_chunk") {
  const auto result = chunk_text("hi there", sized(100, 0));
  REQUIRE(result.size() == 1);
  CHECK(result[0].text() == "hi there");
  CHECK(result[0].start() == 0);
  CHECK(result[0].end() == 8);
}

TEST_CASE("TestChunkText::doc_exactly_chunk_size_yields_single_chunk") {
  const auto result = chunk_text("abcde", sized(5, 0));
  REQUIRE(result.size() == 1);
  CHECK(result[0].text() == "abcde");
  CHECK(result[0].end() == 5);
}

TEST_CASE("TestChunkText::two_chunks_no_overlap") {
  const auto result = chunk_text("abcdefghijklmno", sized(10, 0));  // 15 characters
  REQUIRE(result.size() == 2);
  CHECK(result[0].text() == "abcdefghij");
  CHECK(result[0].start() == 0);
  CHECK(result[0].end() == 10);
  CHECK(result[1].text() == "klmno");
  CHECK(result[1].start() == 10);
  CHECK(result[1].end() == 15);
}

TEST_CASE("TestChunkText::chunk_text_overlap_correct") {
  // The stride is chunk_size - chunk_overlap = 7: each chunk starts 7 characters after the last.
  const auto result = chunk_text("abcdefghijklmno", sized(10, 3));
  INFO(
      "chunk_text: stop once a window reaches the end of the text (end == length); one more "
      "stride would add a tail chunk (\"o\", 14..15) already inside the last one");
  REQUIRE(result.size() == 2);
  CHECK(result[0].text() == "abcdefghij");
  CHECK(result[0].start() == 0);
  CHECK(result[0].end() == 10);
  INFO("the second chunk must start chunk_size - chunk_overlap = 7 characters after the first");
  CHECK(result[1].start() == 7);
  CHECK(result[1].text() == "hijklmno");
  CHECK(result[1].end() == 15);
}

TEST_CASE("TestChunkText::chunk_text_covers_full_document") {
  const auto result = chunk_text(std::string(100, 'x'), sized(30, 5));
  REQUIRE_FALSE(result.empty());
  CHECK(result.front().start() == 0);
  INFO("the last chunk must end at the end of the document: nothing is dropped");
  CHECK(result.back().end() == 100);
}

TEST_CASE("TestChunkText::chunk_text_propagates_source") {
  for (const auto& c : chunk_text("hello", sized(100, 0, "docs/foo.md"))) {
    CHECK(c.source() == "docs/foo.md");
  }
}

TEST_CASE("TestChunkText::chunk_text_propagates_metadata") {
  auto options = sized(100, 0);
  options.metadata = {{"lang", "en"}};
  for (const auto& c : chunk_text("hello", options)) CHECK(c.metadata() == Json{{"lang", "en"}});
}

TEST_CASE("TestChunkText::chunk_text_metadata_independence") {
  auto options = sized(10, 0);
  options.metadata = {{"k", 1}};
  std::string text;
  for (int i = 0; i < 100; ++i) text += "abc";
  auto result = chunk_text(text, options);
  REQUIRE(result.size() > 1);
  result[0].metadata()["k"] = 999;
  CHECK(result[1].metadata()["k"] == 1);
}

TEST_CASE("TestChunkText::chunk_text_long_doc") {
  std::string text;
  for (int i = 0; i < 10; ++i) text += "abcdefghij";   // 100 characters
  const auto result = chunk_text(text, sized(20, 5));  // stride 15
  std::vector<std::int64_t> starts;
  for (const auto& c : result) starts.push_back(c.start());
  REQUIRE(starts.size() >= 6);
  CHECK(std::vector<std::int64_t>(starts.begin(), starts.begin() + 6) ==
        std::vector<std::int64_t>{0, 15, 30, 45, 60, 75});
  CHECK(result.back().end() == 100);
}

TEST_CASE("TestChunkText::chunk_text_starts_strictly_increasing") {
  const auto result = chunk_text(std::string(200, 'x'), sized(50, 10));
  for (std::size_t i = 1; i < result.size(); ++i) CHECK(result[i].start() > result[i - 1].start());
}

TEST_CASE("TestChunkTextValidation::rejects_empty_text") {
  CHECK_THROWS_MATCHES(chunk_text("", sized(100, 0)), g2c::ValueError,
                       MessageContains("non-empty"));
}

TEST_CASE("TestChunkTextValidation::rejects_zero_chunk_size") {
  CHECK_THROWS_MATCHES(chunk_text("hello", sized(0, 0)), g2c::ValueError,
                       MessageContains("chunk_size"));
}

TEST_CASE("TestChunkTextValidation::rejects_negative_overlap") {
  CHECK_THROWS_MATCHES(chunk_text("hello", sized(10, -1)), g2c::ValueError,
                       MessageContains("chunk_overlap"));
}

TEST_CASE("TestChunkTextValidation::rejects_overlap_geq_chunk_size") {
  CHECK_THROWS_MATCHES(chunk_text("hello", sized(10, 10)), g2c::ValueError,
                       MessageContains("chunk_overlap"));
}

TEST_CASE("TestChunkTextEdgeCases::unicode_text") {
  const std::string text = "h\xC3\xA9llo w\xC3\xB6rld \xF0\x9F\x8C\x8D";  // "héllo wörld 🌍"
  INFO(
      "chunk_text: sizes and offsets count characters, not bytes: character_offsets(text) "
      "gives each character's byte offset, so cut the text between two of them");
  const auto result = chunk_text(text, sized(100, 0));
  REQUIRE(result.size() == 1);
  CHECK(result[0].text() == text);
  CHECK(result[0].end() == 13);  // characters, not bytes (18)
}

TEST_CASE("TestChunkTextEdgeCases::newlines_preserved") {
  const std::string text = "line one\nline two\nline three";
  CHECK(chunk_text(text, sized(100, 0))[0].text() == text);
}

TEST_CASE("TestChunkTextEdgeCases::chunks_are_a_partition_when_overlap_is_zero") {
  const std::string text(30, 'x');
  std::string joined;
  for (const auto& c : chunk_text(text, sized(10, 0))) joined += c.text();
  CHECK(joined == text);
}

// --- Embedder, HashEmbedder --------------------------------------------------------------------

TEST_CASE("TestEmbedderABC::abstract_cannot_instantiate", "[clean]") {
  STATIC_REQUIRE(std::is_abstract_v<Embedder>);
}

TEST_CASE("TestEmbedderABC::subclass_can_implement", "[clean]") {
  const FakeEmbedder embedder(4);
  CHECK(embedder.dim() == 4);
}

TEST_CASE("TestHashEmbedderBoilerplate::default_construction", "[clean]") {
  const HashEmbedder embedder;
  CHECK(embedder.dim() == 512);
  CHECK(embedder.ngram_range() == std::pair<std::int64_t, std::int64_t>{3, 5});
}

TEST_CASE("TestHashEmbedderBoilerplate::construction_with_args", "[clean]") {
  const HashEmbedder embedder({.dim = 128, .ngram_range = {2, 4}, .seed = 42});
  CHECK(embedder.dim() == 128);
  CHECK(embedder.ngram_range() == std::pair<std::int64_t, std::int64_t>{2, 4});
  CHECK(embedder.seed() == 42);
}

TEST_CASE("TestHashEmbedderBoilerplate::zero_dim_rejected", "[clean]") {
  CHECK_THROWS_MATCHES(HashEmbedder({.dim = 0}), g2c::ValueError, MessageContains("dim"));
}

TEST_CASE("TestHashEmbedderBoilerplate::negative_dim_rejected", "[clean]") {
  CHECK_THROWS_MATCHES(HashEmbedder({.dim = -1}), g2c::ValueError, MessageContains("dim"));
}

TEST_CASE("TestHashEmbedderBoilerplate::inverted_ngram_range_rejected", "[clean]") {
  CHECK_THROWS_MATCHES(HashEmbedder({.ngram_range = {5, 3}}), g2c::ValueError,
                       MessageContains("ngram_range"));
}

TEST_CASE("TestHashEmbedderBoilerplate::zero_ngram_range_rejected", "[clean]") {
  CHECK_THROWS_MATCHES(HashEmbedder({.ngram_range = {0, 3}}), g2c::ValueError,
                       MessageContains("ngram_range"));
}

TEST_CASE("TestHashEmbedderBoilerplate::repr_contains_dim_and_seed", "[clean]") {
  const auto text = HashEmbedder({.dim = 64, .seed = 7}).describe();
  CHECK_THAT(text, Catch::Matchers::Contains("dim=64"));
  CHECK_THAT(text, Catch::Matchers::Contains("seed=7"));
}

TEST_CASE("TestHashEmbedderBoilerplate::bucket_helper_returns_in_range", "[clean]") {
  const HashEmbedder embedder({.dim = 128});
  for (const std::string ngram : {"abc", "the", " of", "xyz", "\xF0\x9F\x8C\x8D\xF0\x9F\x8C\x8D"}) {
    const auto bucket = embedder.bucket(ngram);
    CHECK(bucket >= 0);
    CHECK(bucket < 128);
  }
}

TEST_CASE("TestHashEmbedderEmbed::empty_input_returns_zero_rows") {
  const auto out = HashEmbedder({.dim = 64}).embed({});
  CHECK(out.sizes() == torch::IntArrayRef{0, 64});
  CHECK(out.scalar_type() == torch::kFloat32);
}

TEST_CASE("TestHashEmbedderEmbed::single_text_shape") {
  const auto out = HashEmbedder({.dim = 64}).embed({"hello world"});
  CHECK(out.sizes() == torch::IntArrayRef{1, 64});
  CHECK(out.scalar_type() == torch::kFloat32);
}

TEST_CASE("TestHashEmbedderEmbed::multiple_texts_shape") {
  const auto out =
      HashEmbedder({.dim = 128}).embed({"a quick brown fox", "the lazy dog", "another"});
  CHECK(out.sizes() == torch::IntArrayRef{3, 128});
}

TEST_CASE("TestHashEmbedderEmbed::hash_embedder_rows_are_unit_norm") {
  const auto out = HashEmbedder({.dim = 128}).embed({"hello world from a slightly longer string"});
  INFO("rows must be L2-normalised: the store's dot product is a cosine only for unit vectors");
  CHECK(row_norm(out, 0) == within(1.0, 1e-5));
}

TEST_CASE("TestHashEmbedderEmbed::empty_string_produces_zero_row") {
  CHECK(row_norm(HashEmbedder({.dim = 64}).embed({""}), 0) == 0.0);
}

TEST_CASE("TestHashEmbedderEmbed::very_short_string_below_min_n_produces_zero_row") {
  CHECK(row_norm(HashEmbedder({.dim = 64, .ngram_range = {3, 3}}).embed({"ab"}), 0) == 0.0);
}

TEST_CASE("TestHashEmbedderEmbed::deterministic_same_seed") {
  HashEmbedder embedder({.dim = 64, .seed = 12345});
  CHECK(torch::equal(embedder.embed({"the quick brown fox"}),
                     embedder.embed({"the quick brown fox"})));
}

TEST_CASE("TestHashEmbedderEmbed::deterministic_across_instances") {
  CHECK(torch::equal(HashEmbedder({.dim = 64, .seed = 42}).embed({"sentence"}),
                     HashEmbedder({.dim = 64, .seed = 42}).embed({"sentence"})));
}

TEST_CASE("TestHashEmbedderEmbed::different_seeds_produce_different_vectors") {
  CHECK_FALSE(torch::equal(HashEmbedder({.dim = 64, .seed = 1}).embed({"the quick brown fox"}),
                           HashEmbedder({.dim = 64, .seed = 2}).embed({"the quick brown fox"})));
}

TEST_CASE("TestHashEmbedderEmbed::lowercase_normalization") {
  HashEmbedder embedder({.dim = 64});
  INFO("lowercase the text before cutting n-grams: \"Hello\" and \"hello\" are one word");
  CHECK(torch::allclose(embedder.embed({"Hello"}), embedder.embed({"hello"})));
}

TEST_CASE("TestHashEmbedderEmbed::similar_strings_correlate") {
  const auto out =
      HashEmbedder({.dim = 512}).embed({"running", "runs", "completely different topic"});
  const double close = out[0].dot(out[1]).item<double>();
  const double far = out[0].dot(out[2]).item<double>();
  CHECK(close > far);
}

TEST_CASE("TestHashEmbedderEmbed::identical_strings_produce_identical_rows") {
  const auto out = HashEmbedder({.dim = 64}).embed({"foo", "foo"});
  CHECK(torch::equal(out[0], out[1]));
}

// --- OllamaEmbedder: provided ------------------------------------------------------------------

TEST_CASE("TestOllamaEmbedderBoilerplate::default_construction", "[clean]") {
  const OllamaEmbedder embedder;
  CHECK(embedder.model_id() == DEFAULT_OLLAMA_EMBED_MODEL);
  CHECK(embedder.dim() == 768);
  CHECK(embedder.base_url() == DEFAULT_OLLAMA_URL);
}

TEST_CASE("TestOllamaEmbedderBoilerplate::construction_with_args", "[clean]") {
  OllamaEmbedderOptions options;
  options.dim = 1024;
  options.base_url = "http://example:8080";
  options.timeout = 30.0;
  const OllamaEmbedder embedder("mxbai-embed-large", options);
  CHECK(embedder.model_id() == "mxbai-embed-large");
  CHECK(embedder.dim() == 1024);
  CHECK(embedder.base_url() == "http://example:8080");
}

TEST_CASE("TestOllamaEmbedderBoilerplate::strips_trailing_slash_from_base_url", "[clean]") {
  OllamaEmbedderOptions options;
  options.base_url = "http://example:8080/";
  CHECK(OllamaEmbedder(DEFAULT_OLLAMA_EMBED_MODEL, options).base_url() == "http://example:8080");
}

TEST_CASE("TestOllamaEmbedderBoilerplate::empty_model_id_rejected", "[clean]") {
  CHECK_THROWS_MATCHES(OllamaEmbedder(""), g2c::ValueError, MessageContains("model_id"));
}

TEST_CASE("TestOllamaEmbedderBoilerplate::zero_dim_rejected", "[clean]") {
  OllamaEmbedderOptions options;
  options.dim = 0;
  CHECK_THROWS_MATCHES(OllamaEmbedder(DEFAULT_OLLAMA_EMBED_MODEL, options), g2c::ValueError,
                       MessageContains("dim"));
}

TEST_CASE("TestOllamaEmbedderBoilerplate::empty_base_url_rejected", "[clean]") {
  OllamaEmbedderOptions options;
  options.base_url = "";
  CHECK_THROWS_MATCHES(OllamaEmbedder(DEFAULT_OLLAMA_EMBED_MODEL, options), g2c::ValueError,
                       MessageContains("base_url"));
}

TEST_CASE("TestOllamaEmbedderBoilerplate::zero_timeout_rejected", "[clean]") {
  OllamaEmbedderOptions options;
  options.timeout = 0;
  CHECK_THROWS_MATCHES(OllamaEmbedder(DEFAULT_OLLAMA_EMBED_MODEL, options), g2c::ValueError,
                       MessageContains("timeout"));
}

TEST_CASE("TestOllamaEmbedderBoilerplate::repr_contains_model_id", "[clean]") {
  CHECK_THAT(OllamaEmbedder("nomic-embed-text").describe(),
             Catch::Matchers::Contains("nomic-embed-text"));
}

TEST_CASE("TestOllamaEmbedderEmbed::empty_input_returns_zero_rows", "[clean]") {
  FakeServer server;
  auto embedder = ollama_with(server, 8);
  CHECK(embedder.embed({}).sizes() == torch::IntArrayRef{0, 8});
  CHECK(server.requests.empty());  // nothing to embed, nothing sent
}

TEST_CASE("TestOllamaEmbedderEmbed::basic_embed_call", "[clean]") {
  FakeServer server;
  server.body = Json{{"embedding", {1.0, 0.0, 0.0, 0.0}}};
  auto embedder = ollama_with(server);
  CHECK(embedder.embed({"hello"}).sizes() == torch::IntArrayRef{1, 4});
  REQUIRE(server.requests.size() == 1);
  const auto body = Json::parse(server.requests[0].body);
  CHECK(body["model"] == DEFAULT_OLLAMA_EMBED_MODEL);
  CHECK(body["prompt"] == "hello");
}

TEST_CASE("TestOllamaEmbedderEmbed::multiple_calls_one_per_text", "[clean]") {
  FakeServer server;
  server.body = Json{{"embedding", {1.0, 0.0, 0.0, 0.0}}};
  auto embedder = ollama_with(server);
  embedder.embed({"a", "b", "c"});
  CHECK(server.requests.size() == 3);
}

TEST_CASE("TestOllamaEmbedderEmbed::url_is_correct", "[clean]") {
  FakeServer server;
  server.body = Json{{"embedding", {1.0, 0.0, 0.0, 0.0}}};
  auto embedder = ollama_with(server, 4, "http://example:11434");
  embedder.embed({"x"});
  REQUIRE(server.requests.size() == 1);
  CHECK(server.requests[0].url == "http://example:11434/api/embeddings");
}

TEST_CASE("TestOllamaEmbedderEmbed::returns_normalized_rows", "[clean]") {
  FakeServer server;
  server.body = Json{{"embedding", {3.0, 4.0, 0.0, 0.0}}};
  CHECK(row_norm(ollama_with(server).embed({"x"}), 0) == within(1.0, 1e-5));
}

TEST_CASE("TestOllamaEmbedderEmbed::dim_mismatch_raises", "[clean]") {
  FakeServer server;
  server.body = Json{{"embedding", {1.0, 0.0, 0.0}}};
  CHECK_THROWS_MATCHES(ollama_with(server).embed({"x"}), OllamaEmbedError, MessageContains("dim"));
}

TEST_CASE("TestOllamaEmbedderEmbed::missing_embedding_field_raises", "[clean]") {
  FakeServer server;
  server.body = Json{{"other", "noise"}};
  CHECK_THROWS_MATCHES(ollama_with(server).embed({"x"}), OllamaEmbedError,
                       MessageContains("embedding"));
}

TEST_CASE("TestOllamaEmbedderEmbed::bad_json_raises", "[clean]") {
  FakeServer server;
  server.raw = "not valid json {{{";
  CHECK_THROWS_MATCHES(ollama_with(server).embed({"x"}), OllamaEmbedError, MessageContains("JSON"));
}

TEST_CASE("TestOllamaEmbedderEmbed::url_error_wrapped", "[clean]") {
  FakeServer server;
  server.unreachable = true;
  CHECK_THROWS_MATCHES(ollama_with(server).embed({"x"}), OllamaEmbedError,
                       MessageContains("reach"));
}

TEST_CASE("TestOllamaEmbedderEmbed::http_error_wrapped", "[clean]") {
  FakeServer server;
  server.status = 500;
  server.raw = "Internal Server Error";
  CHECK_THROWS_MATCHES(ollama_with(server).embed({"x"}), OllamaEmbedError, MessageContains("500"));
}

// --- VectorStore (the Python edition's NumpyVectorStore) ----------------------------------------

TEST_CASE("TestNumpyVectorStoreBoilerplate::default_construction", "[clean]") {
  const VectorStore store(8);
  CHECK(store.dim() == 8);
  CHECK(store.size() == 0);
}

TEST_CASE("TestNumpyVectorStoreBoilerplate::zero_dim_rejected", "[clean]") {
  CHECK_THROWS_MATCHES(VectorStore(0), g2c::ValueError, MessageContains("dim"));
}

TEST_CASE("TestNumpyVectorStoreBoilerplate::negative_dim_rejected", "[clean]") {
  CHECK_THROWS_MATCHES(VectorStore(-1), g2c::ValueError, MessageContains("dim"));
}

TEST_CASE("TestNumpyVectorStoreBoilerplate::add_basic", "[clean]") {
  VectorStore store(4);
  std::vector<Chunk> chunks;
  for (std::int64_t i = 0; i < 3; ++i) chunks.emplace_back("c" + std::to_string(i), "s", i, i + 2);
  store.add(chunks, torch::eye(3, 4, torch::kFloat32));
  CHECK(store.size() == 3);
}

TEST_CASE("TestNumpyVectorStoreBoilerplate::add_empty_is_noop", "[clean]") {
  VectorStore store(4);
  store.add({}, torch::zeros({0, 4}));
  CHECK(store.size() == 0);
}

TEST_CASE("TestNumpyVectorStoreBoilerplate::add_dim_mismatch_raises", "[clean]") {
  VectorStore store(4);
  CHECK_THROWS_MATCHES(store.add({chunk("x")}, torch::zeros({1, 8})), g2c::ValueError,
                       MessageContains("dim"));
}

TEST_CASE("TestNumpyVectorStoreBoilerplate::add_length_mismatch_raises", "[clean]") {
  VectorStore store(4);
  CHECK_THROWS_MATCHES(store.add({chunk("x")}, torch::zeros({2, 4})), g2c::ValueError,
                       MessageContains("match"));
}

TEST_CASE("TestNumpyVectorStoreBoilerplate::add_appends", "[clean]") {
  VectorStore store(4);
  store.add({chunk("a")}, rows({{1, 0, 0, 0}}));
  store.add({chunk("b")}, rows({{0, 1, 0, 0}}));
  REQUIRE(store.size() == 2);
  CHECK(store.chunks()[0].text() == "a");
  CHECK(store.chunks()[1].text() == "b");
}

TEST_CASE("TestNumpyVectorStoreBoilerplate::repr_includes_dim_and_n", "[clean]") {
  VectorStore store(4);
  store.add({chunk("x")}, torch::zeros({1, 4}));
  const auto text = store.describe();
  CHECK_THAT(text, Catch::Matchers::Contains("dim=4"));
  CHECK_THAT(text, Catch::Matchers::Contains("n=1"));
}

// --- VectorStore::search: yours ----------------------------------------------------------------

TEST_CASE("TestNumpyVectorStoreSearch::search_returns_descending_order") {
  VectorStore store(4);
  // Against the query [1, 0, 0, 0]: far ~0.1, near ~0.99, mid ~0.7 (after normalising).
  store.add({chunk("far"), chunk("near"), chunk("mid")},
            unit_rows({{0.1f, 0.99f, 0, 0}, {0.99f, 0.1f, 0, 0}, {0.7f, 0.7f, 0, 0}}));
  const auto results = store.search(torch::tensor({1.0f, 0.0f, 0.0f, 0.0f}), 3);
  INFO("the most similar chunk comes first: a reversed sort turns retrieval into anti-retrieval");
  CHECK(texts_of(results) == std::vector<std::string>{"near", "mid", "far"});
  for (std::size_t i = 1; i < results.size(); ++i) {
    CHECK(results[i].similarity <= results[i - 1].similarity);
  }
}

TEST_CASE("TestNumpyVectorStoreSearch::search_top_k_truncates") {
  const auto store = store_with_eye_vectors(4);
  CHECK(store->search(torch::tensor({1.0f, 0.0f, 0.0f, 0.0f}), 2).size() == 2);
}

TEST_CASE("TestNumpyVectorStoreSearch::search_returns_tuples") {
  const auto store = store_with_eye_vectors(4);
  const auto results = store->search(torch::eye(4)[0], 1);
  REQUIRE(results.size() == 1);
  // A plain double, not a tensor: a score is ready for JSON and arithmetic.
  STATIC_REQUIRE(std::is_same_v<decltype(results[0].similarity), double>);
  STATIC_REQUIRE(std::is_same_v<decltype(results[0].chunk), Chunk>);
  CHECK(results[0].chunk.text() == "chunk-0");
}

TEST_CASE("TestNumpyVectorStoreSearch::search_query_2d_accepted") {
  const auto store = store_with_eye_vectors(4);
  const auto results = store->search(rows({{1, 0, 0, 0}}), 1);
  REQUIRE(results.size() == 1);
  CHECK(results[0].chunk.text() == "chunk-0");
}

TEST_CASE("TestNumpyVectorStoreSearch::search_k_larger_than_store_returns_all") {
  const auto store = store_with_eye_vectors(3);
  INFO(
      "VectorStore::search: k may be larger than the store; topk needs k <= N, so ask it for "
      "std::min(k, size()) and return every chunk");
  CHECK(store->search(torch::tensor({1.0f, 0.0f, 0.0f}), 100).size() == 3);
}

TEST_CASE("TestNumpyVectorStoreSearch::search_top_result_self_match") {
  const auto store = store_with_eye_vectors(5);
  const auto results = store->search(torch::eye(5)[2], 1);
  REQUIRE(results.size() == 1);
  CHECK(results[0].chunk.text() == "chunk-2");
  CHECK(results[0].similarity == within(1.0, 1e-5));
}

TEST_CASE("TestNumpyVectorStoreSearch::search_descending_scores") {
  const auto store = store_with_eye_vectors(5);
  const auto results = store->search(torch::ones({5}) / std::sqrt(5.0), 5);
  for (std::size_t i = 1; i < results.size(); ++i) {
    CHECK(results[i].similarity <= results[i - 1].similarity);
  }
}

TEST_CASE("TestVectorStoreSearchEdgeCases::empty_store_raises") {
  const VectorStore store(4);
  CHECK_THROWS_MATCHES(store.search(torch::zeros({4})), g2c::ValueError, MessageContains("empty"));
}

TEST_CASE("TestVectorStoreSearchEdgeCases::zero_k_raises") {
  const auto store = store_with_eye_vectors(2);
  CHECK_THROWS_MATCHES(store->search(torch::zeros({2}), 0), g2c::ValueError, MessageContains("k"));
}

TEST_CASE("TestVectorStoreSearchEdgeCases::query_dim_mismatch_raises") {
  const auto store = store_with_eye_vectors(4);
  CHECK_THROWS_MATCHES(store->search(torch::zeros({8}), 1), g2c::ValueError,
                       MessageContains("dim"));
}

TEST_CASE("TestVectorStoreSearchEdgeCases::query_3d_rejected") {
  const auto store = store_with_eye_vectors(4);
  // Naming the shapes accepted (1-D, 2-D) or the shape received tells the user what to fix.
  CHECK_THROWS_MATCHES(
      store->search(torch::zeros({1, 1, 4}), 1), g2c::ValueError,
      MessageContains("1-D") || MessageContains("2-D") || MessageContains("shape"));
}

// --- cosine_similarity: provided ---------------------------------------------------------------

TEST_CASE("TestCosineSimilarityHelper::basic_orthogonal", "[clean]") {
  CHECK(g2c::rag::cosine_similarity(torch::tensor({1.0, 0.0}), torch::tensor({0.0, 1.0})) == 0.0);
}

TEST_CASE("TestCosineSimilarityHelper::basic_parallel", "[clean]") {
  CHECK(g2c::rag::cosine_similarity(torch::tensor({1.0, 0.0}), torch::tensor({2.0, 0.0})) ==
        within(1.0, 1e-9));
}

TEST_CASE("TestCosineSimilarityHelper::basic_antiparallel", "[clean]") {
  CHECK(g2c::rag::cosine_similarity(torch::tensor({1.0, 0.0}), torch::tensor({-1.0, 0.0})) ==
        within(-1.0, 1e-9));
}

TEST_CASE("TestCosineSimilarityHelper::zero_norm_returns_zero", "[clean]") {
  CHECK(g2c::rag::cosine_similarity(torch::tensor({0.0, 0.0}), torch::tensor({1.0, 1.0})) == 0.0);
}

TEST_CASE("TestCosineSimilarityHelper::dim_mismatch_raises", "[clean]") {
  CHECK_THROWS_MATCHES(
      g2c::rag::cosine_similarity(torch::tensor({1.0, 0.0}), torch::tensor({1.0, 0.0, 0.0})),
      g2c::ValueError, MessageContains("dim"));
}

TEST_CASE("TestCosineSimilarityHelper::2d_input_rejected", "[clean]") {
  CHECK_THROWS_MATCHES(g2c::rag::cosine_similarity(torch::tensor({1.0, 0.0}).unsqueeze(0),
                                                   torch::tensor({1.0, 0.0})),
                       g2c::ValueError, MessageContains("1-D"));
}

// --- DenseRetriever: provided, over your embed() and search() ----------------------------------

TEST_CASE("TestDenseRetrieverBoilerplate::construction", "[clean]") {
  const auto embedder = std::make_shared<HashEmbedder>(HashEmbedderOptions{.dim = 32});
  const auto store = std::make_shared<VectorStore>(32);
  const DenseRetriever retriever(embedder, store);
  CHECK(retriever.embedder() == embedder);
  CHECK(retriever.store() == store);
}

TEST_CASE("TestDenseRetrieverBoilerplate::none_embedder_rejected", "[clean]") {
  CHECK_THROWS_MATCHES(DenseRetriever(nullptr, std::make_shared<VectorStore>(4)), g2c::ValueError,
                       MessageContains("embedder"));
}

TEST_CASE("TestDenseRetrieverBoilerplate::none_store_rejected", "[clean]") {
  CHECK_THROWS_MATCHES(
      DenseRetriever(std::make_shared<HashEmbedder>(HashEmbedderOptions{.dim = 4}), nullptr),
      g2c::ValueError, MessageContains("store"));
}

TEST_CASE("TestDenseRetrieve::retrieve_basic_top_1") {
  auto embedder = std::make_shared<FakeEmbedder>(4);
  auto store = std::make_shared<VectorStore>(4);
  const Chunk spain("The capital of Spain is Madrid.", "es.md", 0, 31);
  store->add({spain, Chunk("Bananas are yellow.", "fruit.md", 0, 19)},
             rows({{1, 0, 0, 0}, {0, 1, 0, 0}}));
  embedder->register_text("What is the capital of Spain?", {1, 0, 0, 0});
  DenseRetriever retriever(embedder, store);
  const auto results = retriever.retrieve("What is the capital of Spain?", 1);
  REQUIRE(results.size() == 1);
  CHECK(results[0].chunk.text() == spain.text());
  CHECK(results[0].rank == 1);
}

TEST_CASE("TestDenseRetrieve::retrieve_ranks_assigned_in_order") {
  auto embedder = std::make_shared<FakeEmbedder>(4);
  auto store = std::make_shared<VectorStore>(4);
  store->add({chunk("c0"), chunk("c1"), chunk("c2")},
             unit_rows({{1, 0, 0, 0}, {0.7f, 0.7f, 0, 0}, {0, 1, 0, 0}}));
  embedder->register_text("q", {1, 0, 0, 0});
  const auto results = DenseRetriever(embedder, store).retrieve("q", 3);
  REQUIRE(results.size() == 3);
  CHECK(std::vector<std::int64_t>{results[0].rank, results[1].rank, results[2].rank} ==
        std::vector<std::int64_t>{1, 2, 3});
  CHECK(results[0].chunk.text() == "c0");
  CHECK(results[1].chunk.text() == "c1");
  CHECK(results[2].chunk.text() == "c2");
}

TEST_CASE("TestDenseRetrieve::retrieve_score_is_descending") {
  auto embedder = std::make_shared<FakeEmbedder>(4);
  auto store = std::make_shared<VectorStore>(4);
  store->add({chunk("c0"), chunk("c1"), chunk("c2")},
             unit_rows({{1, 0, 0, 0}, {0.5f, 0.5f, 0, 0}, {0, 0, 1, 0}}));
  embedder->register_text("q", {1, 0, 0, 0});
  const auto results = DenseRetriever(embedder, store).retrieve("q", 3);
  for (std::size_t i = 1; i < results.size(); ++i) CHECK(results[i].score <= results[i - 1].score);
}

TEST_CASE("TestDenseRetrieve::retrieve_empty_query_rejected", "[clean]") {
  auto embedder = std::make_shared<FakeEmbedder>(4);
  auto store = std::make_shared<VectorStore>(4);
  embedder->register_text("x", {1, 0, 0, 0});
  store->add({chunk("x")}, rows({{1, 0, 0, 0}}));
  DenseRetriever retriever(embedder, store);
  CHECK_THROWS_MATCHES(retriever.retrieve("", 1), g2c::ValueError, MessageContains("query"));
}

TEST_CASE("TestDenseRetrieve::retrieve_zero_k_rejected", "[clean]") {
  auto embedder = std::make_shared<FakeEmbedder>(4);
  auto store = std::make_shared<VectorStore>(4);
  embedder->register_text("x", {1, 0, 0, 0});
  store->add({chunk("x")}, rows({{1, 0, 0, 0}}));
  DenseRetriever retriever(embedder, store);
  CHECK_THROWS_MATCHES(retriever.retrieve("x", 0), g2c::ValueError, MessageContains("k"));
}

TEST_CASE("TestRetrievedChunkBoilerplate::construct", "[clean]") {
  const Chunk c = chunk("x");
  const RetrievedChunk retrieved{c, 0.9, 1};
  CHECK(retrieved.chunk == c);
  CHECK(retrieved.score == 0.9);
  CHECK(retrieved.rank == 1);
}

TEST_CASE("TestRetrievedChunkBoilerplate::frozen", "[clean]") {
  // The Python dataclass is frozen; a const RetrievedChunk here cannot be assigned to (a compile
  // error), and the retriever hands results out by value, so no caller changes another's.
  const RetrievedChunk retrieved{chunk("x"), 0.5, 1};
  STATIC_REQUIRE_FALSE(std::is_assignable_v<decltype((retrieved.score)), double>);
  CHECK(retrieved.score == 0.5);
}

// --- assemble_rag_prompt: yours ----------------------------------------------------------------

namespace {

std::vector<Chunk> numbered_chunks(int n) {
  std::vector<Chunk> out;
  for (int i = 0; i < n; ++i) {
    out.push_back(chunk("This is chunk number " + std::to_string(i) + ".",
                        "doc-" + std::to_string(i) + ".md"));
  }
  return out;
}

bool has(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

}  // namespace

TEST_CASE("TestAssembleRAGPromptBoilerplate::rag_prompt_dataclass_construct", "[clean]") {
  const Chunk c = chunk("x");
  const RAGPrompt prompt{"hello", "q", {c}};
  CHECK(prompt.text == "hello");
  CHECK(prompt.question == "q");
  CHECK(prompt.chunks == std::vector<Chunk>{c});
}

TEST_CASE("TestAssembleRAGPromptBoilerplate::rag_prompt_frozen", "[clean]") {
  // Its fields are const: an assembled prompt cannot be edited after the fact (a compile error).
  RAGPrompt prompt{"t", "q", {}};
  STATIC_REQUIRE_FALSE(std::is_assignable_v<decltype((prompt.text)), std::string>);
  STATIC_REQUIRE_FALSE(std::is_copy_assignable_v<RAGPrompt>);
  CHECK(prompt.text == "t");
}

TEST_CASE("TestAssembleRAGPromptBoilerplate::default_constants_are_strings", "[clean]") {
  STATIC_REQUIRE(std::is_convertible_v<decltype(DEFAULT_SYSTEM), std::string_view>);
  CHECK_FALSE(DEFAULT_SYSTEM.empty());
  CHECK_FALSE(DEFAULT_INSTRUCTION.empty());
}

TEST_CASE("TestAssembleRAGPrompt::returns_rag_prompt") {
  const RAGPrompt prompt = assemble_rag_prompt("Q?", numbered_chunks(2));
  CHECK(prompt.question == "Q?");
}

TEST_CASE("TestAssembleRAGPrompt::text_includes_question") {
  CHECK(has(assemble_rag_prompt("What is the capital of Spain?", numbered_chunks(1)).text,
            "What is the capital of Spain?"));
}

TEST_CASE("TestAssembleRAGPrompt::assemble_rag_prompt_uses_one_based_citations") {
  const auto text = assemble_rag_prompt("Q?", numbered_chunks(3)).text;
  INFO("people cite [1], not [0]: number the chunks from 1\n" << text);
  CHECK(has(text, "[1]"));
  CHECK(has(text, "[2]"));
  CHECK(has(text, "[3]"));
  CHECK_FALSE(has(text, "[0]"));
}

TEST_CASE("TestAssembleRAGPrompt::assemble_rag_prompt_includes_source_label") {
  const auto text = assemble_rag_prompt("Q?", {chunk("Hello.", "docs/foo.md")}).text;
  INFO("each chunk's source is shown, so the answer's citations can name it\n" << text);
  CHECK(has(text, "docs/foo.md"));
}

TEST_CASE("TestAssembleRAGPrompt::chunk_text_appears_in_prompt") {
  CHECK(has(
      assemble_rag_prompt("Q?", {Chunk("Madrid is the capital of Spain.", "es.md", 0, 31)}).text,
      "Madrid is the capital of Spain."));
}

TEST_CASE("TestAssembleRAGPrompt::chunks_attached_to_returned_prompt") {
  const auto chunks = numbered_chunks(2);
  CHECK(assemble_rag_prompt("Q?", chunks).chunks == chunks);
}

TEST_CASE("TestAssembleRAGPrompt::uses_default_system") {
  CHECK(has(assemble_rag_prompt("Q?", numbered_chunks(1)).text, std::string(DEFAULT_SYSTEM)));
}

TEST_CASE("TestAssembleRAGPrompt::uses_default_instruction") {
  CHECK(has(assemble_rag_prompt("Q?", numbered_chunks(1)).text, std::string(DEFAULT_INSTRUCTION)));
}

TEST_CASE("TestAssembleRAGPrompt::custom_system") {
  const auto text =
      assemble_rag_prompt("Q?", numbered_chunks(1), {.system = "CUSTOM SYSTEM HEADER"}).text;
  CHECK(has(text, "CUSTOM SYSTEM HEADER"));
  CHECK_FALSE(has(text, std::string(DEFAULT_SYSTEM)));
}

TEST_CASE("TestAssembleRAGPrompt::custom_instruction") {
  g2c::rag::PromptTemplate custom;
  custom.instruction = "CUSTOM INSTR FOOTER";
  const auto text = assemble_rag_prompt("Q?", numbered_chunks(1), custom).text;
  CHECK(has(text, "CUSTOM INSTR FOOTER"));
  CHECK_FALSE(has(text, std::string(DEFAULT_INSTRUCTION)));
}

TEST_CASE("TestAssembleRAGPrompt::empty_system_omits_leading_paragraph") {
  const auto text = assemble_rag_prompt("Q?", numbered_chunks(1), {"", ""}).text;
  CHECK_FALSE(has(text, std::string(DEFAULT_SYSTEM)));
  INFO("an empty system leaves its paragraph out, blank line and all\n" << text);
  CHECK_FALSE(text.starts_with("\n"));
}

TEST_CASE("TestAssembleRAGPrompt::accepts_retrieved_chunks") {
  std::vector<RetrievedChunk> retrieved;
  std::int64_t rank = 0;
  for (const auto& c : numbered_chunks(2)) retrieved.push_back({c, 0.9, ++rank});
  const auto text = assemble_rag_prompt("Q?", retrieved).text;
  CHECK(has(text, "[1]"));
  CHECK(has(text, "[2]"));
}

TEST_CASE("TestAssembleRAGPrompt::question_round_trips") {
  CHECK(assemble_rag_prompt("My question.", numbered_chunks(1)).question == "My question.");
}

TEST_CASE("TestAssembleRAGPrompt::citations_in_correct_order") {
  const auto text = assemble_rag_prompt("Q?", numbered_chunks(2)).text;
  const auto first = text.find("[1]");
  const auto second = text.find("[2]");
  REQUIRE(first != std::string::npos);
  REQUIRE(second != std::string::npos);
  CHECK(first < second);
}

TEST_CASE("TestAssembleRAGPromptValidation::rejects_non_str_question", "[clean]") {
  // The Python edition refuses question=123 at run time; here the question is a std::string.
  STATIC_REQUIRE_FALSE(
      std::is_invocable_v<decltype(static_cast<RAGPrompt (*)(
                                       const std::string&, const std::vector<Chunk>&,
                                       const g2c::rag::PromptTemplate&)>(&assemble_rag_prompt)),
                          int, std::vector<Chunk>, g2c::rag::PromptTemplate>);
}

TEST_CASE("TestAssembleRAGPromptValidation::rejects_empty_question") {
  CHECK_THROWS_MATCHES(assemble_rag_prompt("", std::vector<Chunk>{}), g2c::ValueError,
                       MessageContains("question"));
}

TEST_CASE("TestAssembleRAGPromptValidation::rejects_invalid_chunk_type", "[clean]") {
  // Chunks or a retriever's results, nothing else: a list of strings does not compile.
  STATIC_REQUIRE_FALSE(
      std::is_invocable_v<decltype(
                              [](const auto& items) -> decltype(assemble_rag_prompt("Q?", items)) {
                                return assemble_rag_prompt("Q?", items);
                              }),
                          std::vector<std::string>>);
  STATIC_REQUIRE(std::is_invocable_v<decltype([](const auto& items) -> decltype(assemble_rag_prompt(
                                                                        "Q?", items)) {
                                       return assemble_rag_prompt("Q?", items);
                                     }),
                                     std::vector<RetrievedChunk>>);
}

TEST_CASE("TestAssembleRAGPromptEdgeCases::empty_chunk_list_still_produces_prompt") {
  const auto prompt = assemble_rag_prompt("Q?", std::vector<Chunk>{});
  CHECK(has(prompt.text, "Q?"));
  CHECK(prompt.chunks.empty());
}

// --- RAGAnswer, RAGPipeline: provided ----------------------------------------------------------

namespace {

struct PipelineFixture {
  std::shared_ptr<FakeBackend> backend = std::make_shared<FakeBackend>("The fact is X. [1]");
  std::shared_ptr<RAGPipeline> pipeline;

  PipelineFixture() {
    auto embedder = std::make_shared<FakeEmbedder>(4);
    auto store = std::make_shared<VectorStore>(4);
    std::vector<Chunk> chunks;
    for (int i = 0; i < 3; ++i) {
      chunks.emplace_back("This is fact " + std::to_string(i) + ".",
                          "doc-" + std::to_string(i) + ".md", 0, 15);
    }
    store->add(chunks, torch::eye(3, 4, torch::kFloat32));  // one-hot
    embedder->register_text("q", {1, 0, 0, 0});
    pipeline =
        std::make_shared<RAGPipeline>(std::make_shared<DenseRetriever>(embedder, store), backend);
  }
};

}  // namespace

TEST_CASE("TestRAGAnswerBoilerplate::construct", "[clean]") {
  const Chunk c = chunk("x");
  const BackendInfo info("x", "m");
  const RAGAnswer answer{"q",
                         "a",
                         {{c, 0.5, 1}},
                         RAGPrompt{"t", "q", {c}},
                         InferenceResult("p", "a", 1, 1, 1.0, info)};
  CHECK(answer.question == "q");
  CHECK(answer.answer == "a");
  CHECK(answer.metadata == Json::object());
}

TEST_CASE("TestRAGPipelineBoilerplate::construction", "[clean]") {
  auto retriever = std::make_shared<DenseRetriever>(
      std::make_shared<HashEmbedder>(HashEmbedderOptions{.dim = 32}),
      std::make_shared<VectorStore>(32));
  auto backend = std::make_shared<FakeBackend>();
  const RAGPipeline pipeline(retriever, backend);
  CHECK(pipeline.retriever() == retriever);
  CHECK(pipeline.backend() == backend);
}

TEST_CASE("TestRAGPipelineBoilerplate::none_retriever_rejected", "[clean]") {
  CHECK_THROWS_MATCHES(RAGPipeline(nullptr, std::make_shared<FakeBackend>()), g2c::ValueError,
                       MessageContains("retriever"));
}

TEST_CASE("TestRAGPipelineBoilerplate::none_backend_rejected", "[clean]") {
  auto retriever = std::make_shared<DenseRetriever>(
      std::make_shared<HashEmbedder>(HashEmbedderOptions{.dim = 32}),
      std::make_shared<VectorStore>(32));
  CHECK_THROWS_MATCHES(RAGPipeline(retriever, nullptr), g2c::ValueError,
                       MessageContains("backend"));
}

TEST_CASE("TestRAGPipelineAnswer::returns_rag_answer") {
  PipelineFixture f;
  const RAGAnswer answer = f.pipeline->answer("q", {.k = 1});
  CHECK(answer.question == "q");
  CHECK(answer.answer == "The fact is X. [1]");
}

TEST_CASE("TestRAGPipelineAnswer::retrieved_attached") {
  PipelineFixture f;
  const auto answer = f.pipeline->answer("q", {.k = 2});
  REQUIRE(answer.retrieved.size() == 2);
  CHECK(answer.retrieved[0].rank == 1);
}

TEST_CASE("TestRAGPipelineAnswer::pipeline_propagates_retrieved_chunks_to_prompt") {
  PipelineFixture f;
  const auto answer = f.pipeline->answer("q", {.k = 2});
  std::vector<Chunk> retrieved;
  for (const auto& r : answer.retrieved) retrieved.push_back(r.chunk);
  CHECK(answer.prompt.chunks == retrieved);
  REQUIRE(f.backend->last_prompt.has_value());
  for (const auto& c : answer.prompt.chunks) CHECK(has(*f.backend->last_prompt, c.text()));
}

TEST_CASE("TestRAGPipelineAnswer::pipeline_metadata_records_k") {
  PipelineFixture f;
  const auto answer = f.pipeline->answer("q", {.k = 2});
  CHECK(answer.metadata["k"] == 2);
  CHECK(answer.metadata["n_retrieved"] == 2);
  CHECK(answer.metadata.contains("backend_name"));
}

TEST_CASE("TestRAGPipelineAnswer::pipeline_forwards_sampling_args") {
  PipelineFixture f;
  f.pipeline->answer("q",
                     {.k = 1, .max_new_tokens = 42, .temperature = 0.5, .top_k = 10, .top_p = 0.9});
  REQUIRE(f.backend->last_options.has_value());
  CHECK(f.backend->last_options->to_json() ==
        Json{{"max_new_tokens", 42}, {"temperature", 0.5}, {"top_k", 10}, {"top_p", 0.9}});
}

TEST_CASE("TestRAGPipelineAnswer::empty_question_rejected", "[clean]") {
  PipelineFixture f;
  CHECK_THROWS_MATCHES(f.pipeline->answer("", {.k = 1}), g2c::ValueError,
                       MessageContains("question"));
}

TEST_CASE("TestRAGPipelineAnswer::zero_k_rejected", "[clean]") {
  PipelineFixture f;
  CHECK_THROWS_MATCHES(f.pipeline->answer("q", {.k = 0}), g2c::ValueError, MessageContains("k"));
}

// --- the whole pipeline on the hash embedder ---------------------------------------------------

TEST_CASE("TestIntegrationSmoke::full_pipeline_with_hash_embedder") {
  const std::string text =
      "Madrid is the capital of Spain. The country has a population of about forty seven million "
      "people. Madrid is also the largest city in Spain. It is located in the center of the "
      "country.\n\nBananas are a yellow fruit. They grow in tropical climates and are rich in "
      "potassium. Bananas turn brown when overripe.";
  const auto chunks = chunk_text(text, sized(120, 20, "facts.md"));
  REQUIRE(chunks.size() >= 2);
  auto embedder = std::make_shared<HashEmbedder>(
      HashEmbedderOptions{.dim = 512, .ngram_range = {3, 5}, .seed = 0});
  std::vector<std::string> texts;
  for (const auto& c : chunks) texts.push_back(c.text());
  auto store = std::make_shared<VectorStore>(512);
  store->add(chunks, embedder->embed(texts));
  RAGPipeline pipeline(std::make_shared<DenseRetriever>(embedder, store),
                       std::make_shared<FakeBackend>("grounded answer"));
  const auto answer =
      pipeline.answer("What is the capital of Spain?", {.k = 1, .max_new_tokens = 16});
  REQUIRE(answer.retrieved.size() == 1);
  CHECK(has(answer.retrieved[0].chunk.text(), "Madrid"));
}

TEST_CASE("TestIntegrationSmoke::full_pipeline_returns_normalized_vectors") {
  const auto chunks = chunk_text("Hello world. This is a sentence.", sized(200, 150, "t"));
  std::vector<std::string> texts;
  for (const auto& c : chunks) texts.push_back(c.text());
  const auto vectors = HashEmbedder({.dim = 128}).embed(texts);
  CHECK(torch::allclose(vectors.norm(2, 1), torch::ones({vectors.size(0)}), 0, 1e-5));
}

// --- the module's interface --------------------------------------------------------------------

TEST_CASE("TestModuleExports::public_api_imports", "[clean]") {
  // One include (g2c/rag/rag.h) gives every name; a missing one is a compile error here.
  namespace rag = g2c::rag;
  STATIC_REQUIRE(std::is_abstract_v<rag::Embedder>);
  STATIC_REQUIRE(std::is_abstract_v<rag::Retriever>);
  STATIC_REQUIRE(std::is_base_of_v<rag::Embedder, rag::HashEmbedder>);
  STATIC_REQUIRE(std::is_base_of_v<rag::Embedder, rag::OllamaEmbedder>);
  STATIC_REQUIRE(std::is_base_of_v<rag::Embedder, rag::PretrainedEmbedder>);
  STATIC_REQUIRE(std::is_base_of_v<rag::Retriever, rag::DenseRetriever>);
  STATIC_REQUIRE(std::is_base_of_v<rag::Retriever, rag::BM25Retriever>);
  STATIC_REQUIRE(std::is_base_of_v<std::exception, rag::OllamaEmbedError>);
  STATIC_REQUIRE(std::is_invocable_v<decltype(&rag::chunk_text), std::string, rag::ChunkOptions>);
  STATIC_REQUIRE(
      std::is_invocable_v<decltype(&rag::cosine_similarity), torch::Tensor, torch::Tensor>);
  STATIC_REQUIRE(std::is_invocable_v<decltype(&rag::load_index), std::filesystem::path>);
  CHECK(std::string(rag::DEFAULT_OLLAMA_URL).starts_with("http://"));
  CHECK(std::string(rag::DEFAULT_OLLAMA_EMBED_MODEL) == "nomic-embed-text");
  CHECK_FALSE(rag::DEFAULT_SYSTEM.empty());
  CHECK_FALSE(rag::DEFAULT_INSTRUCTION.empty());
  CHECK(rag::VectorStore(4).describe() == "VectorStore(dim=4, n=0)");
}

TEST_CASE("TestModuleExports::chunk_dataclass_fields", "[clean]") {
  const Chunk c("abc", "s", 3, 6);
  CHECK(c.text() == "abc");
  CHECK(c.source() == "s");
  CHECK(c.start() == 3);
  CHECK(c.end() == 6);
}

TEST_CASE("TestModuleExports::rag_answer_dataclass_fields", "[clean]") {
  STATIC_REQUIRE(std::is_same_v<decltype(RAGAnswer::question), std::string>);
  STATIC_REQUIRE(std::is_same_v<decltype(RAGAnswer::answer), std::string>);
  STATIC_REQUIRE(std::is_same_v<decltype(RAGAnswer::retrieved), std::vector<RetrievedChunk>>);
}

// --- this edition's additions ------------------------------------------------------------------

TEST_CASE("hash_buckets_are_the_python_editions", "[clean]") {
  // Buckets computed with the Python edition's definition (hashlib.blake2b, digest_size=8, the
  // seed as 8 big-endian bytes, int.from_bytes(..., "big") % dim): an index built by either
  // edition answers queries embedded by the other.
  CHECK(HashEmbedder({.dim = 512}).bucket("the") == 47);
  CHECK(HashEmbedder({.dim = 512}).bucket("run") == 441);
  CHECK(HashEmbedder({.dim = 128}).bucket("\xF0\x9F\x8C\x8D\xF0\x9F\x8C\x8D") == 111);  // "🌍🌍"
  CHECK(HashEmbedder({.dim = 1000, .seed = 7}).bucket("\xC3\xA9 l") == 404);            // "é l"
  CHECK(HashEmbedder({.dim = 4096, .seed = 9223372036854775813ull}).bucket("abc") == 2554);
}

TEST_CASE("hash_embedder_counts_characters_as_python_does") {
  // "Ὀδυσσεύς ΣΑΣ Héllo!" with dim 16, n = 2..3, seed 3: the Python edition's counts, before
  // normalising. Lowercasing is Python's (a final capital sigma becomes ς) and n-grams are cut
  // between characters, never inside a character's bytes.
  const std::vector<float> python_counts = {3, 5, 1, 1, 2, 2, 0, 0, 2, 4, 5, 1, 3, 2, 3, 1};
  const auto expected = g2c::rag::l2_normalize_rows(rows({python_counts}));
  const auto out =
      HashEmbedder({.dim = 16, .ngram_range = {2, 3}, .seed = 3})
          .embed({"\xE1\xBD\x88\xCE\xB4\xCF\x85\xCF\x83\xCF\x83\xCE\xB5\xCF\x8D\xCF\x82 "
                  "\xCE\xA3\xCE\x91\xCE\xA3 H\xC3\xA9llo!"});
  INFO(
      "HashEmbedder::embed: python_lower the text, then for every n in ngram_range (both ends "
      "included) every run of n characters adds 1 to its bucket (a count, not a flag); then "
      "l2_normalize_rows.\n  got:      "
      << out << "\n  expected: " << expected);
  CHECK(torch::allclose(out, expected, 0, 1e-6));
}

TEST_CASE("chunk_text_counts_characters_not_bytes") {
  // Ten two-byte characters: chunks of 4 characters with 1 of overlap start at characters 0, 3, 6
  // and never cut a character's bytes.
  std::string text;
  for (int i = 0; i < 10; ++i) text += "\xC3\xA9";  // "é"
  const auto result = chunk_text(text, sized(4, 1));
  REQUIRE(result.size() == 3);
  CHECK(result[0].start() == 0);
  CHECK(result[1].start() == 3);
  CHECK(result[2].start() == 6);
  CHECK(result[2].end() == 10);
  CHECK(result[0].text() == text.substr(0, 8));
}

TEST_CASE("bm25_ranks_rare_shared_words_first", "[clean]") {
  g2c::rag::BM25Retriever bm25;
  bm25.add({chunk("the cat sat on the mat", "a"), chunk("the dog chased the ball", "b"),
            chunk("ShakespeareLM-1M has about one million parameters", "c")});
  const auto results = bm25.retrieve("How many parameters does ShakespeareLM-1M have?", 3);
  REQUIRE(results.size() == 3);
  CHECK(results[0].chunk.source() == "c");
  CHECK(results[0].rank == 1);
  CHECK(results[0].score > 0);
  CHECK(results[1].score == 0.0);  // no shared word
  CHECK(g2c::rag::bm25_words("Top-k, 2x!") == std::vector<std::string>{"top", "k", "2x"});
}

TEST_CASE("bm25_matches_the_formula", "[clean]") {
  // Three chunks; the query word "cat" is in two of them. idf = ln(1 + (3 - 2 + 0.5) / (2 + 0.5)),
  // and for chunk 0 (f = 2, |c| = 4, avgdl = 4): idf · 2 · 2.5 / (2 + 1.5 · (1 - 0.75 + 0.75)).
  g2c::rag::BM25Retriever bm25;
  bm25.add({chunk("cat cat dog eel", "0"), chunk("cat dog eel fox", "1"),
            chunk("dog eel fox gnu", "2")});
  const double idf = std::log(1.0 + 1.5 / 2.5);
  const auto results = bm25.retrieve("cat", 2);
  REQUIRE(results.size() == 2);
  CHECK(results[0].chunk.source() == "0");
  CHECK(results[0].score == py_approx(idf * 2 * 2.5 / (2 + 1.5)));
  CHECK(results[1].score == py_approx(idf * 1 * 2.5 / (1 + 1.5)));
  CHECK_THROWS_MATCHES(bm25.retrieve("", 1), g2c::ValueError, MessageContains("query"));
  CHECK_THROWS_MATCHES(g2c::rag::BM25Retriever().retrieve("cat", 1), g2c::ValueError,
                       MessageContains("empty"));
  CHECK_THROWS_MATCHES(g2c::rag::BM25Retriever({.k1 = 1.5, .b = 2.0}), g2c::ValueError,
                       MessageContains("b must"));
}

TEST_CASE("ollama_embedder_batches_through_api_embed", "[clean]") {
  FakeServer server;
  server.body = Json{{"embeddings", {{3.0, 4.0}, {0.0, 2.0}}}};
  OllamaEmbedderOptions options;
  options.dim = 2;
  options.batch = 2;
  options.transport = server.transport();
  OllamaEmbedder embedder("SmolLM2-135M-Instruct", options);
  const auto out = embedder.embed({"a", "b"});
  REQUIRE(server.requests.size() == 1);
  CHECK(server.requests[0].url == std::string(DEFAULT_OLLAMA_URL) + "/api/embed");
  CHECK(Json::parse(server.requests[0].body)["input"] == Json{"a", "b"});
  CHECK(torch::allclose(out, rows({{0.6f, 0.8f}, {0.0f, 1.0f}})));
  server.body = Json{{"embeddings", {{3.0, 4.0}}}};  // one vector for two texts
  CHECK_THROWS_MATCHES(embedder.embed({"a", "b"}), OllamaEmbedError,
                       MessageContains("1 vectors for 2"));
}

TEST_CASE("saved_index_round_trips_and_refuses_damage", "[clean]") {
  const auto folder =
      std::filesystem::temp_directory_path() / ("g2c-rag-index-" + std::to_string(::getpid()));
  std::filesystem::remove_all(folder);
  const auto path = folder / "course.index";
  HashEmbedder embedder({.dim = 8});
  VectorStore store(8);
  Chunk first("h\xC3\xA9llo", "a.md", 0, 5, {{"section", "intro"}});
  store.add({first, chunk("world", "b.md", 5)},
            unit_rows({{1, 0, 0, 0, 0, 0, 0, 0}, {0, 1, 1, 0, 0, 0, 0, 0}}));
  g2c::rag::save_index(path, store, embedder);

  const auto index = g2c::rag::load_index(path);
  CHECK(index.store->chunks() == store.chunks());
  CHECK(torch::equal(index.store->vectors(), store.vectors()));
  CHECK(index.embedder == embedder.spec());
  CHECK_NOTHROW(g2c::rag::check_embedder_matches(index, embedder));
  CHECK_THROWS_MATCHES(g2c::rag::check_embedder_matches(index, HashEmbedder({.dim = 8, .seed = 1})),
                       g2c::ValueError, MessageContains("not comparable"));

  // A truncated file is refused by name, and a missing one is a FileNotFoundError.
  const auto size = std::filesystem::file_size(path);
  std::filesystem::resize_file(path, size / 2);
  CHECK_THROWS_MATCHES(g2c::rag::load_index(path), g2c::ValueError,
                       MessageContains("course.index"));
  CHECK_THROWS_AS(g2c::rag::load_index(folder / "none.index"), g2c::FileNotFoundError);
  CHECK_THROWS_MATCHES(g2c::rag::save_index(path, store, HashEmbedder({.dim = 16})),
                       g2c::ValueError, MessageContains("16-dim"));
  std::filesystem::remove_all(folder);
}

TEST_CASE("assemble_rag_prompt_lays_out_context_then_question") {
  // The model reads the sources before the question it must answer from them, and each part is a
  // paragraph of its own. The Python tests look for each part, not for their order.
  const auto prompt = assemble_rag_prompt("Q?", {chunk("text a", "a.md"), chunk("text b", "b.md")},
                                          {"SYSTEM", "INSTRUCTION"});
  INFO(
      "assemble_rag_prompt: system, context, question, instruction, in that order, joined by "
      "\"\\n\\n\"; the context is \"Context:\" then each chunk as \"[i] (source: s)\\ntext\", "
      "chunks separated by a blank line (prompt.h)");
  CHECK(prompt.text ==
        "SYSTEM\n\nContext:\n[1] (source: a.md)\ntext a\n\n[2] (source: b.md)\ntext b\n\n"
        "Question: Q?\n\nINSTRUCTION");
}
