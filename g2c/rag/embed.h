// Module 17 — embedders: texts in, one vector per text out, (n, dim) float32, every row of unit
// length (L2-normalised). That last promise is what lets the vector store compute cosine
// similarity as a plain dot product, q · v = cos(q, v) when |q| = |v| = 1; a zero row (a text with
// nothing to embed) is allowed and is similar to nothing.
//
//   HashEmbedder     character n-grams hashed into buckets: no model, no network, deterministic.
//                    It sees spelling, not meaning ("running" ~ "runs", but "Madrid" !~ "the
//                    capital of Spain"). Its embed() is yours (g2c/rag/embed.cpp).
//   OllamaEmbedder   a model server's /api/embeddings (Ollama's nomic-embed-text, or g2c-serve's
//                    SmolLM2-135M-Instruct): vectors of meaning. Provided.
//   PretrainedEmbedder (pretrained_embedder.h) the same SmolLM2 vectors in this process.
//
// HashEmbedder, step by step, for each text (the Python edition's definition, so the same text
// gives the same vector in both editions — scripts/check_rag_hash.py compares them):
//   1. lowercase it as Python's str.lower() does (python_lower, lowercase.h)
//   2. every run of n consecutive characters (code points), for each n in ngram_range (inclusive)
//   3. bucket = BLAKE2b-64(seed as 8 big-endian bytes + the n-gram's UTF-8) as a big-endian
//      integer, mod dim (bucket(), provided)
//   4. row[bucket] += 1
//   5. L2-normalise the row (l2_normalize_rows, provided)
// A salted cryptographic hash rather than std::hash: std::hash differs between standard
// libraries and Python's hash() between processes, and an index built today must match queries
// embedded tomorrow, on any machine.
#pragma once

#include <cstdint>
#include <stdexcept>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "g2c/core/torch.h"
#include "g2c/inference/http.h"
#include "g2c/inference/ollama.h"

namespace g2c::rag {

/// The interface: dim() is fixed once made; embed(texts) is (texts.size(), dim()) float32 on the
/// CPU with unit-length (or zero) rows, and (0, dim()) for no texts.
class Embedder {
 public:
  virtual ~Embedder() = default;
  virtual std::int64_t dim() const = 0;
  virtual torch::Tensor embed(const std::vector<std::string>& texts) = 0;
  /// What makes its vectors what they are, as JSON ({"kind": "hash", "dim": 512, …}): a saved
  /// index records it, and refuses a query embedder that differs.
  virtual nlohmann::json spec() const = 0;
  /// One line for logs: "HashEmbedder(dim=512, ngram_range=(3, 5), seed=0)".
  virtual std::string describe() const = 0;
};

/// Each row of a (n, dim) matrix divided by its length; a zero row stays zero (no NaN). Provided.
/// Example: {{3, 4}, {0, 0}} -> {{0.6, 0.8}, {0, 0}}.
torch::Tensor l2_normalize_rows(const torch::Tensor& matrix);

struct HashEmbedderOptions {
  std::int64_t dim = 512;                                      // buckets, > 0
  std::pair<std::int64_t, std::int64_t> ngram_range = {3, 5};  // (min n, max n), 1 <= min <= max
  std::uint64_t seed = 0;                                      // the hash's salt
};

class HashEmbedder : public Embedder {
 public:
  /// ValueError for dim <= 0 or an ngram_range without 1 <= min <= max, naming it.
  explicit HashEmbedder(HashEmbedderOptions options = {});

  std::int64_t dim() const override { return options_.dim; }
  std::pair<std::int64_t, std::int64_t> ngram_range() const { return options_.ngram_range; }
  std::uint64_t seed() const { return options_.seed; }
  /// The bucket of one n-gram (its UTF-8 bytes), in [0, dim): step 3 above. Provided.
  std::int64_t bucket(std::string_view ngram) const;
  /// Your work: steps 1-5 above.
  torch::Tensor embed(const std::vector<std::string>& texts) override;
  nlohmann::json spec() const override;
  std::string describe() const override;

 private:
  HashEmbedderOptions options_;
  std::string seed_bytes_;  // the seed as 8 big-endian bytes, the prefix of every hashed n-gram
};

/// The model Ollama embeds with unless told otherwise (768 dimensions; `ollama pull
/// nomic-embed-text`). g2c-serve embeds with "SmolLM2-135M-Instruct" (576).
inline constexpr const char* DEFAULT_OLLAMA_EMBED_MODEL = "nomic-embed-text";
using g2c::inference::DEFAULT_OLLAMA_URL;

/// Any failure between a text and its vector: no server (the NetworkError nested inside), an
/// HTTP error status, an answer that is not JSON, lacks "embedding", or has another length than
/// dim. The message names the URL.
class OllamaEmbedError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

struct OllamaEmbedderOptions {
  std::int64_t dim = 768;                     // what the model returns; checked on every answer
  std::string base_url = DEFAULT_OLLAMA_URL;  // a trailing "/" is dropped
  double timeout = 120.0;                     // seconds per request, > 0
  g2c::inference::HttpTransport transport = g2c::inference::http_send;  // tests give a fake one
  /// 0: one POST /api/embeddings {"model", "prompt"} per text, as the Python edition sends. n > 0:
  /// POST /api/embed {"model", "input": [up to n texts]} — fewer round trips, the same vectors.
  std::int64_t batch = 0;
};

/// An Embedder over a server in Ollama's protocol (Ollama, or g2c-serve). Provided.
class OllamaEmbedder : public Embedder {
 public:
  /// ValueError for an empty model_id or base_url, dim <= 0, timeout <= 0 or batch < 0.
  explicit OllamaEmbedder(std::string model_id = DEFAULT_OLLAMA_EMBED_MODEL,
                          OllamaEmbedderOptions options = {});

  std::int64_t dim() const override { return options_.dim; }
  const std::string& model_id() const { return model_id_; }
  const std::string& base_url() const { return options_.base_url; }
  torch::Tensor embed(const std::vector<std::string>& texts) override;
  nlohmann::json spec() const override;
  std::string describe() const override;

 private:
  /// The vectors of `texts` from one request (to /api/embed when batching), each checked.
  std::vector<std::vector<float>> request(const std::vector<std::string>& texts) const;
  std::string model_id_;
  OllamaEmbedderOptions options_;
};

}  // namespace g2c::rag
