// Module 17 — your work: the chunks most similar to a query, by one product and one top-k.
#include <algorithm>

#include <fmt/format.h>

#include "g2c/core/errors.h"
#include "g2c/core/shapes.h"
#include "g2c/rag/store.h"

namespace g2c::rag {

std::vector<ScoredChunk> VectorStore::search(const torch::Tensor& query, std::int64_t k) const {
  // TODO: The k stored chunks most similar to `query`, best first. Stored rows and query have unit
  // length, so all N cosines are one product, scores = vectors_ · q: (N, dim) @ (dim,) -> (N,),
  // and the answer is one top-k of min(k, N) of them: no loop of dot products, no full sort.
  // Check first, each a ValueError: an empty store (say "empty"), k <= 0 (naming k), a query that
  // is neither (dim,) nor (1, dim) (the message says "1-D", "2-D" or "shape": name the shapes
  // accepted and the one received, g2c::describe_shape), a length other than dim_ (naming both).
  // A (1, dim) query is read as its row; use it as CPU float32, like vectors_. Each result is
  // {the chunk, its score as a double}. Operations: matmul, topk, item.
  // Hints, one step at a time: scripts/hint.sh 17 VectorStore::search
  throw g2c::todo("VectorStore::search", "g2c/rag/store.cpp", "17");
}

}  // namespace g2c::rag
