// Module 17, provided: embed the query, search the store, number the results.
#include <fmt/format.h>

#include "g2c/core/errors.h"
#include "g2c/rag/dense_retriever.h"

namespace g2c::rag {

DenseRetriever::DenseRetriever(std::shared_ptr<Embedder> embedder,
                               std::shared_ptr<VectorStore> store)
    : embedder_(std::move(embedder)), store_(std::move(store)) {
  if (!embedder_) throw ValueError("DenseRetriever requires an embedder (got a null pointer)");
  if (!store_) throw ValueError("DenseRetriever requires a store (got a null pointer)");
}

std::vector<RetrievedChunk> DenseRetriever::retrieve(const std::string& query, std::int64_t k) {
  if (query.empty()) throw ValueError("DenseRetriever.retrieve: query must be a non-empty string");
  if (k <= 0) throw ValueError(fmt::format("DenseRetriever.retrieve: k must be > 0, got {}", k));
  const auto vector = embedder_->embed({query})[0];  // (1, dim) -> (dim,)
  std::vector<RetrievedChunk> results;
  std::int64_t rank = 0;
  for (auto& [chunk, similarity] : store_->search(vector, k)) {
    results.push_back({std::move(chunk), similarity, ++rank});
  }
  return results;
}

std::string DenseRetriever::describe() const {
  return fmt::format("DenseRetriever(embedder={}, store={})", embedder_->describe(),
                     store_->describe());
}

}  // namespace g2c::rag
