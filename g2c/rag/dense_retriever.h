// Module 17, implemented for you — the dense retriever: embed the query with the embedder that
// embedded the chunks, search the vector store, number the results. The lesson is in its parts
// (embed.h, store.h); this is the wiring, and it works as soon as they do.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "g2c/rag/embed.h"
#include "g2c/rag/retriever.h"
#include "g2c/rag/store.h"

namespace g2c::rag {

class DenseRetriever : public Retriever {
 public:
  /// The embedder must be the one that embedded the store's chunks: vectors of two embedders are
  /// not comparable. A store of another dim is refused by its search. ValueError for a null
  /// embedder or store.
  DenseRetriever(std::shared_ptr<Embedder> embedder, std::shared_ptr<VectorStore> store);

  const std::shared_ptr<Embedder>& embedder() const { return embedder_; }
  const std::shared_ptr<VectorStore>& store() const { return store_; }
  std::vector<RetrievedChunk> retrieve(const std::string& query, std::int64_t k = 5) override;
  std::int64_t size() const override { return store_->size(); }
  std::string describe() const override;

 private:
  std::shared_ptr<Embedder> embedder_;
  std::shared_ptr<VectorStore> store_;
};

}  // namespace g2c::rag
