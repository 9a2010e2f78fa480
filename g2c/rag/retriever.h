// Module 17, implemented for you — the one interface of a retriever: a query in, the k chunks
// that best match it out, best first. The pipeline (pipeline.h), module 19's agent and module
// 20's assistant take a Retriever and never ask how it ranks: by meaning (DenseRetriever over an
// embedder and a vector store, dense_retriever.h) or by shared words (BM25Retriever, bm25.h).
// Plain C++, no LibTorch.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "g2c/rag/chunk.h"

namespace g2c::rag {

class Retriever {
 public:
  virtual ~Retriever() = default;
  /// The top min(k, size()) chunks for `query`, score descending, ranks 1, 2, …. ValueError for an
  /// empty query, k <= 0 or an empty index.
  virtual std::vector<RetrievedChunk> retrieve(const std::string& query, std::int64_t k = 5) = 0;
  /// How many chunks it searches.
  virtual std::int64_t size() const = 0;
  /// One line for logs and result files: "BM25Retriever(k1=1.5, b=0.75, n=1200)".
  virtual std::string describe() const = 0;
};

}  // namespace g2c::rag
