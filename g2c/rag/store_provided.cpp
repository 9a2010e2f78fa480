// Module 17, provided: the store's constructor, add() and the cosine of two vectors.
#include <fmt/format.h>

#include "g2c/core/errors.h"
#include "g2c/core/shapes.h"
#include "g2c/rag/store.h"

namespace g2c::rag {

VectorStore::VectorStore(std::int64_t dim) : dim_(dim) {
  if (dim_ <= 0)
    throw ValueError(fmt::format("VectorStore: dim must be a positive integer, got {}", dim_));
  vectors_ = torch::zeros({0, dim_}, torch::kFloat32);
}

void VectorStore::add(const std::vector<Chunk>& chunks, const torch::Tensor& vectors) {
  if (!vectors.defined() || vectors.dim() != 2) {
    throw ValueError(
        fmt::format("VectorStore.add: vectors must be a 2-D (n, {}) tensor, got shape {}", dim_,
                    vectors.defined() ? g2c::describe_shape(vectors) : "undefined"));
  }
  if (chunks.empty() && vectors.size(0) == 0) return;
  if (static_cast<std::int64_t>(chunks.size()) != vectors.size(0)) {
    throw ValueError(fmt::format(
        "VectorStore.add: chunks and vectors must have matching lengths; got {} chunks and {} rows",
        chunks.size(), vectors.size(0)));
  }
  if (vectors.size(1) != dim_) {
    throw ValueError(
        fmt::format("VectorStore.add: vectors have dim {}, expected {}", vectors.size(1), dim_));
  }
  if (!vectors.is_floating_point()) {
    throw ValueError(fmt::format("VectorStore.add: vectors must be floating point, got {}",
                                 c10::toString(vectors.scalar_type())));
  }
  chunks_.insert(chunks_.end(), chunks.begin(), chunks.end());
  vectors_ = torch::cat({vectors_, vectors.detach().to(torch::kCPU, torch::kFloat32)});
}

std::string VectorStore::describe() const {
  return fmt::format("VectorStore(dim={}, n={})", dim_, size());
}

double cosine_similarity(const torch::Tensor& a, const torch::Tensor& b) {
  if (a.dim() != 1 || b.dim() != 1) {
    throw ValueError(fmt::format("cosine_similarity needs 1-D inputs; got shapes {} and {}",
                                 g2c::describe_shape(a), g2c::describe_shape(b)));
  }
  if (a.size(0) != b.size(0)) {
    throw ValueError(fmt::format("cosine_similarity dim mismatch: {} vs {}", a.size(0), b.size(0)));
  }
  const auto x = a.to(torch::kFloat64);
  const auto y = b.to(torch::kFloat64);
  const double norms = x.norm().item<double>() * y.norm().item<double>();
  if (norms == 0.0) return 0.0;
  return x.dot(y).item<double>() / norms;
}

}  // namespace g2c::rag
