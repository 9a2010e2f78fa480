// Module 17, this edition's addition: BM25 over an inverted index (bm25.h has the formula).
#include <algorithm>
#include <cctype>
#include <cmath>

#include <fmt/format.h>

#include "g2c/core/errors.h"
#include "g2c/rag/bm25.h"

namespace g2c::rag {

std::vector<std::string> bm25_words(std::string_view text) {
  std::vector<std::string> words;
  std::string word;
  for (const char c : text) {
    const auto byte = static_cast<unsigned char>(c);
    if (byte < 0x80 && std::isalnum(byte)) {
      word.push_back(static_cast<char>(std::tolower(byte)));
    } else if (!word.empty()) {
      words.push_back(std::exchange(word, std::string()));
    }
  }
  if (!word.empty()) words.push_back(word);
  return words;
}

BM25Retriever::BM25Retriever(BM25Options options) : options_(options) {
  if (!(options_.k1 >= 0))
    throw ValueError(fmt::format("BM25: k1 must be >= 0, got {}", options_.k1));
  if (!(options_.b >= 0 && options_.b <= 1)) {
    throw ValueError(fmt::format("BM25: b must be in [0, 1], got {}", options_.b));
  }
}

void BM25Retriever::add(const std::vector<Chunk>& chunks) {
  for (const auto& chunk : chunks) {
    const auto id = static_cast<std::int32_t>(chunks_.size());
    std::unordered_map<std::string, std::int32_t> counts;
    const auto words = bm25_words(chunk.text());
    for (const auto& word : words) ++counts[word];
    for (auto& [word, count] : counts) postings_[word].push_back({id, count});
    lengths_.push_back(static_cast<std::int32_t>(words.size()));
    total_length_ += static_cast<std::int64_t>(words.size());
    chunks_.push_back(chunk);
  }
}

std::vector<RetrievedChunk> BM25Retriever::retrieve(const std::string& query, std::int64_t k) {
  if (query.empty()) throw ValueError("BM25Retriever.retrieve: query must be a non-empty string");
  if (k <= 0) throw ValueError(fmt::format("BM25Retriever.retrieve: k must be > 0, got {}", k));
  if (chunks_.empty())
    throw ValueError("BM25Retriever.retrieve: cannot search an empty index; add() chunks first");

  const auto n = static_cast<double>(chunks_.size());
  const auto average_length = std::max(1.0, static_cast<double>(total_length_) / n);
  std::vector<double> scores(chunks_.size(), 0.0);
  auto words = bm25_words(query);
  std::sort(words.begin(), words.end());
  words.erase(std::unique(words.begin(), words.end()), words.end());  // a repeated word counts once
  for (const auto& word : words) {
    const auto found = postings_.find(word);
    if (found == postings_.end()) continue;
    const auto holding = static_cast<double>(found->second.size());
    const double idf = std::log(1.0 + (n - holding + 0.5) / (holding + 0.5));
    for (const auto& [chunk, count] : found->second) {
      const double f = count;
      const double norm =
          options_.k1 * (1.0 - options_.b + options_.b * lengths_[chunk] / average_length);
      scores[static_cast<std::size_t>(chunk)] += idf * f * (options_.k1 + 1.0) / (f + norm);
    }
  }

  // The k best, best first; equal scores keep the index's order, so results are reproducible.
  std::vector<std::int32_t> order(chunks_.size());
  for (std::size_t i = 0; i < order.size(); ++i) order[i] = static_cast<std::int32_t>(i);
  const auto take = std::min<std::size_t>(static_cast<std::size_t>(k), order.size());
  std::partial_sort(
      order.begin(), order.begin() + static_cast<std::ptrdiff_t>(take), order.end(),
      [&scores](std::int32_t a, std::int32_t b) {
        return scores[static_cast<std::size_t>(a)] > scores[static_cast<std::size_t>(b)] ||
               (scores[static_cast<std::size_t>(a)] == scores[static_cast<std::size_t>(b)] &&
                a < b);
      });
  std::vector<RetrievedChunk> results;
  results.reserve(take);
  for (std::size_t i = 0; i < take; ++i) {
    const auto index = static_cast<std::size_t>(order[i]);
    results.push_back({chunks_[index], scores[index], static_cast<std::int64_t>(i + 1)});
  }
  return results;
}

std::string BM25Retriever::describe() const {
  return fmt::format("BM25Retriever(k1={}, b={}, n={})", options_.k1, options_.b, chunks_.size());
}

}  // namespace g2c::rag
