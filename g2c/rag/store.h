// Module 17 — the vector store: chunks and their embeddings side by side, searched by cosine
// similarity. This one is flat and exact (the Python edition's NumpyVectorStore, here on LibTorch):
// the whole store is one (N, dim) float32 matrix, and a query is one matrix-vector product and
// one top-k over all N scores,
//
//   scores = V q              (N, dim) @ (dim,) -> (N,): cosines, all rows and q unit length
//   top    = topk(scores, k)  the k best, best first
//
// O(N · dim) per query, a few milliseconds for tens of thousands of chunks. Past a few million, or
// under a millisecond, stores such as FAISS or HNSW indexes trade exactness for sub-linear search;
// the interface here is small enough to swap behind.
//
// The store trusts the embedder's promise of unit-length rows and does not normalise again: with
// vectors that are not unit length the ranking is still that of the dot product, but the scores
// are no longer cosines. The constructor, add() and cosine_similarity are provided; search() is
// yours (g2c/rag/store.cpp).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "g2c/core/torch.h"
#include "g2c/rag/chunk.h"

namespace g2c::rag {

/// One search result: a stored chunk and its similarity to the query.
struct ScoredChunk {
  Chunk chunk;
  double similarity;
};

class VectorStore {
 public:
  /// An empty store of `dim`-dimensional vectors. ValueError for dim <= 0.
  explicit VectorStore(std::int64_t dim);

  std::int64_t dim() const { return dim_; }
  std::int64_t size() const { return static_cast<std::int64_t>(chunks_.size()); }
  const std::vector<Chunk>& chunks() const { return chunks_; }
  /// (size(), dim) float32: row i is chunks()[i]'s vector.
  const torch::Tensor& vectors() const { return vectors_; }

  /// Appends `chunks` and their `vectors` ((chunks.size(), dim), any floating type, stored as
  /// float32). Nothing to add is no change. ValueError for vectors that are not 2-D, a row count
  /// other than chunks.size() (the message says they must match), or another dim.
  void add(const std::vector<Chunk>& chunks, const torch::Tensor& vectors);

  /// Your work. The min(k, size()) chunks most similar to `query` ((dim,) or (1, dim), unit
  /// length), most similar first, by one matrix-vector product and one top-k. ValueError for an
  /// empty store, k <= 0, a query of another shape, or another dim.
  std::vector<ScoredChunk> search(const torch::Tensor& query, std::int64_t k = 5) const;

  /// "VectorStore(dim=512, n=1200)".
  std::string describe() const;

 private:
  std::int64_t dim_;
  std::vector<Chunk> chunks_;
  torch::Tensor vectors_;  // (size(), dim_) float32
};

/// cos(a, b) = a · b / (|a| |b|) for two 1-D vectors of one length, in float64; 0 when either is
/// zero (never NaN). ValueError for inputs that are not 1-D ("1-D") or of different lengths
/// ("dim mismatch"). Provided. Example: cosine_similarity([1, 0], [2, 0]) == 1.
double cosine_similarity(const torch::Tensor& a, const torch::Tensor& b);

}  // namespace g2c::rag
