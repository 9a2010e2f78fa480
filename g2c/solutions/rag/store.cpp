// Module 17, reference: every similarity at once (one matrix-vector product), then one top-k.
#include <algorithm>

#include <fmt/format.h>

#include "g2c/core/errors.h"
#include "g2c/core/shapes.h"
#include "g2c/rag/store.h"

namespace g2c::rag {

std::vector<ScoredChunk> VectorStore::search(const torch::Tensor& query, std::int64_t k) const {
  if (size() == 0)
    throw ValueError("VectorStore.search: cannot search an empty store; add() chunks first");
  if (k <= 0) throw ValueError(fmt::format("VectorStore.search: k must be > 0, got {}", k));
  auto q = query;
  if (q.dim() == 2 && q.size(0) == 1) q = q[0];  // (1, dim) -> (dim,)
  if (q.dim() != 1) {
    throw ValueError(
        fmt::format("VectorStore.search: query must be 1-D (dim,) or 2-D (1, dim); got shape {}",
                    g2c::describe_shape(query)));
  }
  if (q.size(0) != dim_) {
    throw ValueError(
        fmt::format("VectorStore.search: query dim {} != store dim {}", q.size(0), dim_));
  }
  // (N, dim) @ (dim,) -> (N,): cosines, since both sides are unit length.
  const auto similarities = vectors_.matmul(q.to(torch::kCPU, torch::kFloat32));
  const auto [top, indices] = similarities.topk(std::min(k, size()));  // best first
  std::vector<ScoredChunk> results;
  for (std::int64_t i = 0; i < top.size(0); ++i) {
    results.push_back({chunks_[static_cast<std::size_t>(indices[i].item<std::int64_t>())],
                       top[i].item<double>()});
  }
  return results;
}

}  // namespace g2c::rag
