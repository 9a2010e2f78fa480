// Module 17, this edition's addition — BM25, the lexical retriever search engines ran on before
// embeddings, and still the baseline a dense retriever has to beat. A chunk scores for each query
// word it contains, more for a rare word than a common one, with diminishing returns for
// repeats, and less when the chunk is long:
//
//   score(q, c) = Σ_{w in q} idf(w) · f(w, c) · (k1 + 1) / (f(w, c) + k1 · norm(c))
//   norm(c)     = 1 − b + b · |c| / avgdl
//   idf(w)      = ln(1 + (N − n(w) + 0.5) / (n(w) + 0.5))
//
// f(w, c) how often w occurs in chunk c, |c| the chunk's length in words, avgdl the mean length,
// N the number of chunks, n(w) how many contain w (the "+1" keeps idf positive, as Lucene does).
// k1 = 1.5 and b = 0.75 are the usual settings. Words: lowercase runs of letters and digits
// (ASCII; every other byte separates them). "Madrid" and "the capital of Spain" share no word, so
// BM25 cannot connect them — where a dense embedder can; exact names and numbers
// ("ShakespeareLM-1M", "2,214") are where BM25 is strong. Plain C++, no LibTorch; scoring is one
// pass over the postings of the query's words, not over every chunk.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "g2c/rag/retriever.h"

namespace g2c::rag {

/// Lowercase ASCII words of letters and digits, in order.
/// Example: "Top-k, 2x!" -> {"top", "k", "2x"}.
std::vector<std::string> bm25_words(std::string_view text);

struct BM25Options {
  double k1 = 1.5;  // how fast repeats of a word stop counting, >= 0
  double b = 0.75;  // how much a chunk's length counts against it, in [0, 1]
};

class BM25Retriever : public Retriever {
 public:
  /// ValueError for k1 < 0 or b outside [0, 1].
  explicit BM25Retriever(BM25Options options = {});

  /// Indexes `chunks` after those already there.
  void add(const std::vector<Chunk>& chunks);
  std::vector<RetrievedChunk> retrieve(const std::string& query, std::int64_t k = 5) override;
  std::int64_t size() const override { return static_cast<std::int64_t>(chunks_.size()); }
  std::string describe() const override;
  const std::vector<Chunk>& chunks() const { return chunks_; }

 private:
  struct Posting {
    std::int32_t chunk;
    std::int32_t count;
  };
  BM25Options options_;
  std::vector<Chunk> chunks_;
  std::vector<std::int32_t> lengths_;  // words per chunk
  std::int64_t total_length_ = 0;
  std::unordered_map<std::string, std::vector<Posting>> postings_;  // word -> chunks holding it
};

}  // namespace g2c::rag
