// Module 17, provided: the row normaliser, HashEmbedder's settings and hash, and the embedder over
// a model server.
#include <fmt/format.h>
#include <fmt/ranges.h>

#include "g2c/core/errors.h"
#include "g2c/rag/blake2b.h"
#include "g2c/rag/embed.h"

namespace g2c::rag {

using g2c::inference::HttpRequest;
using g2c::inference::HttpResponse;
using g2c::inference::NetworkError;

torch::Tensor l2_normalize_rows(const torch::Tensor& matrix) {
  // (n, dim) / (n, 1); a zero row is divided by 1 and stays zero.
  const auto norms = matrix.norm(2, /*dim=*/1, /*keepdim=*/true);
  return matrix / torch::where(norms > 0, norms, torch::ones_like(norms));
}

HashEmbedder::HashEmbedder(HashEmbedderOptions options) : options_(options) {
  if (options_.dim <= 0) {
    throw ValueError(
        fmt::format("HashEmbedder: dim must be a positive integer, got {}", options_.dim));
  }
  const auto [min_n, max_n] = options_.ngram_range;
  if (!(1 <= min_n && min_n <= max_n)) {
    throw ValueError(fmt::format(
        "HashEmbedder: ngram_range must be (min, max) with 1 <= min <= max, got ({}, {})", min_n,
        max_n));
  }
  for (int shift = 56; shift >= 0; shift -= 8) {
    seed_bytes_.push_back(static_cast<char>((options_.seed >> shift) & 0xFF));
  }
}

std::int64_t HashEmbedder::bucket(std::string_view ngram) const {
  std::string salted = seed_bytes_;
  salted.append(ngram);
  return static_cast<std::int64_t>(blake2b_64_big_endian(salted) %
                                   static_cast<std::uint64_t>(options_.dim));
}

nlohmann::json HashEmbedder::spec() const {
  return {{"kind", "hash"},
          {"dim", options_.dim},
          {"ngram_range", {options_.ngram_range.first, options_.ngram_range.second}},
          {"seed", options_.seed}};
}

std::string HashEmbedder::describe() const {
  return fmt::format("HashEmbedder(dim={}, ngram_range=({}, {}), seed={})", options_.dim,
                     options_.ngram_range.first, options_.ngram_range.second, options_.seed);
}

OllamaEmbedder::OllamaEmbedder(std::string model_id, OllamaEmbedderOptions options)
    : model_id_(std::move(model_id)), options_(std::move(options)) {
  options_.base_url = g2c::inference::without_trailing_slashes(std::move(options_.base_url));
  if (model_id_.empty()) throw ValueError("OllamaEmbedder requires a non-empty model_id");
  if (options_.dim <= 0) {
    throw ValueError(
        fmt::format("OllamaEmbedder: dim must be a positive integer, got {}", options_.dim));
  }
  if (options_.base_url.empty()) throw ValueError("OllamaEmbedder requires a non-empty base_url");
  if (!(options_.timeout > 0)) {
    throw ValueError(
        fmt::format("OllamaEmbedder: timeout must be > 0 seconds, got {}", options_.timeout));
  }
  if (options_.batch < 0) {
    throw ValueError(fmt::format("OllamaEmbedder: batch must be >= 0, got {}", options_.batch));
  }
  if (!options_.transport)
    throw ValueError("OllamaEmbedder needs an HTTP transport, got an empty one");
}

std::vector<std::vector<float>> OllamaEmbedder::request(
    const std::vector<std::string>& texts) const {
  const bool batched = options_.batch > 0;
  const auto url = options_.base_url + (batched ? "/api/embed" : "/api/embeddings");
  const nlohmann::json body = batched
                                  ? nlohmann::json{{"model", model_id_}, {"input", texts}}
                                  : nlohmann::json{{"model", model_id_}, {"prompt", texts.front()}};
  HttpResponse response;
  try {
    response = options_.transport(
        HttpRequest{"POST", url, {{"Content-Type", "application/json"}}, body.dump()},
        options_.timeout);
  } catch (const NetworkError& error) {
    std::throw_with_nested(
        OllamaEmbedError(fmt::format("Could not reach Ollama at {}: {}", url, error.what())));
  }
  if (response.status < 200 || response.status >= 300) {
    throw OllamaEmbedError(fmt::format("Ollama HTTP error {} at {}: {}", response.status, url,
                                       response.body.substr(0, 200)));
  }
  const auto data = nlohmann::json::parse(response.body, nullptr, /*allow_exceptions=*/false);
  if (data.is_discarded())
    throw OllamaEmbedError("Ollama returned a non-JSON response from " + url);

  const char* field = batched ? "embeddings" : "embedding";
  if (!data.is_object() || !data.contains(field)) {
    std::vector<std::string> keys;
    if (data.is_object()) {
      for (const auto& item : data.items()) keys.push_back(item.key());
    }
    throw OllamaEmbedError(fmt::format("Ollama's answer from {} has no '{}' field (keys: {})", url,
                                       field, fmt::join(keys, ", ")));
  }
  const auto rows = batched ? data[field] : nlohmann::json::array({data[field]});
  if (!rows.is_array() || rows.size() != texts.size()) {
    throw OllamaEmbedError(fmt::format("Ollama's answer from {} holds {} vectors for {} texts", url,
                                       rows.is_array() ? rows.size() : 0, texts.size()));
  }
  std::vector<std::vector<float>> vectors;
  for (const auto& row : rows) {
    if (!row.is_array() ||
        !std::all_of(row.begin(), row.end(), [](const auto& x) { return x.is_number(); })) {
      throw OllamaEmbedError(fmt::format(
          "Ollama's answer from {} has an embedding that is not a list of numbers", url));
    }
    if (static_cast<std::int64_t>(row.size()) != options_.dim) {
      throw OllamaEmbedError(
          fmt::format("Ollama returned a {}-dim vector for model '{}'; this OllamaEmbedder was "
                      "made with dim={}. "
                      "Make it with the model's dim, or check the model name.",
                      row.size(), model_id_, options_.dim));
    }
    vectors.push_back(row.get<std::vector<float>>());
  }
  return vectors;
}

torch::Tensor OllamaEmbedder::embed(const std::vector<std::string>& texts) {
  auto out = torch::zeros({static_cast<std::int64_t>(texts.size()), options_.dim}, torch::kFloat32);
  const auto per_request = options_.batch > 0 ? static_cast<std::size_t>(options_.batch) : 1;
  for (std::size_t first = 0; first < texts.size(); first += per_request) {
    const auto last = std::min(texts.size(), first + per_request);
    const auto rows = request({texts.begin() + static_cast<std::ptrdiff_t>(first),
                               texts.begin() + static_cast<std::ptrdiff_t>(last)});
    for (std::size_t i = 0; i < rows.size(); ++i) {
      out[static_cast<std::int64_t>(first + i)].copy_(torch::tensor(rows[i], torch::kFloat32));
    }
  }
  return l2_normalize_rows(out);
}

nlohmann::json OllamaEmbedder::spec() const {
  return {{"kind", "ollama"}, {"model", model_id_}, {"dim", options_.dim}};
}

std::string OllamaEmbedder::describe() const {
  return fmt::format("OllamaEmbedder(model_id='{}', dim={}, base_url='{}')", model_id_,
                     options_.dim, options_.base_url);
}

}  // namespace g2c::rag
