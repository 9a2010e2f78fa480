// Module 17 — your work: the chunks most similar to a query, by one product and one top-k.
#include <algorithm>

#include <fmt/format.h>

#include "g2c/core/errors.h"
#include "g2c/core/shapes.h"
#include "g2c/rag/store.h"

namespace g2c::rag {

std::vector<ScoredChunk> VectorStore::search(const torch::Tensor& query, std::int64_t k) const {
  // TODO: ValueError for an empty store ("empty"), k <= 0 (naming k), a query that is neither
  // (dim,) nor (1, dim) (q = query[0] turns (1, dim) into (dim,)), or a query whose size is not
  // dim_ (naming dim). similarities = vectors_.matmul(q.to(torch::kFloat32)): (N, dim) @ (dim,) ->
  // (N,). auto [top, indices] = similarities.topk(std::min(k, size())) gives the best first. Return
  // {chunks_[indices[i]], top[i]} for each i (.item<std::int64_t>() and .item<double>()).
  // Hints, one step at a time: scripts/hint.sh 17 VectorStore::search
  throw g2c::todo("VectorStore::search", "g2c/rag/store.cpp", "17");
}

}  // namespace g2c::rag
