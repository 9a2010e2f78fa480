// Module 05 — reference solution for g2c/embeddings/similarity.cpp.
#include "g2c/embeddings/similarity.h"

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <fstream>
#include <sstream>

#include <fmt/format.h>

#include "g2c/core/errors.h"
#include "g2c/core/shapes.h"

namespace g2c::embeddings {

torch::Tensor normalized(const torch::Tensor& v) {
  if (!v.defined() || v.dim() == 0) {
    throw ValueError("normalized expects a vector (D) or a batch of vectors (..., D)");
  }
  return v / v.norm(/*p=*/2, /*dim=*/{-1}, /*keepdim=*/true).clamp_min(1e-12);
}

Neighbours nearest_by_cosine(const torch::Tensor& query, const WordVectors& vectors,
                             const std::set<std::string>& exclude, std::int64_t top_k) {
  if (top_k < 1) throw ValueError(fmt::format("top_k must be at least 1, got {}", top_k));
  if (!query.defined() || query.dim() != 1) {
    throw ValueError(fmt::format("nearest_by_cosine expects a query vector (D), got {}",
                                 query.defined() ? describe_shape(query) : "an undefined tensor"));
  }
  const auto q = normalized(query.to(torch::kDouble));  // (D)
  Neighbours scored;
  for (const auto& [word, vector] : vectors) {
    if (exclude.count(word) != 0) continue;
    if (vector.dim() != 1 || vector.size(0) != q.size(0)) {
      throw ValueError(fmt::format("the vector of '{}' has shape {}, the query (D={})", word,
                                   describe_shape(vector), q.size(0)));
    }
    const auto v = normalized(vector.to(q.device(), torch::kDouble));  // (D)
    scored.emplace_back(word, torch::dot(q, v).item<double>());
  }
  std::stable_sort(scored.begin(), scored.end(),
                   [](const auto& a, const auto& b) { return a.second > b.second; });
  if (scored.size() > static_cast<std::size_t>(top_k)) scored.resize(top_k);
  return scored;
}

WordVectors load_glove_subset(const std::filesystem::path& path,
                              const std::set<std::string>& words) {
  std::ifstream file(path);
  if (!file) {
    throw ValueError(
        fmt::format("cannot open GloVe file '{}'; download glove.6B.zip from "
                    "https://nlp.stanford.edu/projects/glove/ and pass e.g. glove.6B.50d.txt",
                    path.string()));
  }
  WordVectors vectors;
  std::int64_t dim = -1;
  std::string line;
  for (std::int64_t line_number = 1; std::getline(file, line); ++line_number) {
    std::istringstream fields(line);
    std::string word;
    if (!(fields >> word) || words.count(word) == 0) continue;  // blank line or unwanted word
    std::vector<float> values;
    for (std::string field; fields >> field;) {
      errno = 0;
      char* end = nullptr;
      const float value = std::strtof(field.c_str(), &end);
      if (end != field.c_str() + field.size() || errno == ERANGE) {
        throw ValueError(fmt::format("{}:{}: '{}' is not a number (word '{}')", path.string(),
                                     line_number, field, word));
      }
      values.push_back(value);
    }
    const auto size = static_cast<std::int64_t>(values.size());
    if (size == 0) {
      throw ValueError(
          fmt::format("{}:{}: word '{}' has no values", path.string(), line_number, word));
    }
    if (dim >= 0 && size != dim) {
      throw ValueError(fmt::format("{}:{}: word '{}' has {} values, earlier words {}",
                                   path.string(), line_number, word, size, dim));
    }
    dim = size;
    vectors.emplace_back(word, torch::tensor(values, torch::kFloat));  // (D)
  }
  return vectors;
}

}  // namespace g2c::embeddings
