// Beyond module moe — the router: which experts each token goes to, and with what weight.
//
// Dimension legend: N tokens (batch and positions flattened), D embedding_dim, E num_experts,
// k top_k.
//   probs   = softmax(gate(x))              (N, D) -> (N, E), every expert's share of the token
//   top-k   values, indices = topk(probs)   (N, k) each: the k most likely experts, distinct
//   weights = values / values.sum(-1)       (N, k), each row sums to 1
// With k = 1 the one surviving weight is always 1: however confident the router was, the task
// loss cannot tell, so it sends the gate no gradient — only the balance loss (layer.h) trains it.
// With k = 2 the two renormalised weights still depend on the gate's logits, and it learns.
#pragma once

#include <cstdint>
#include <ostream>

#include "g2c/core/torch.h"
#include "g2c/nn/linear.h"

namespace g2c::moe {

/// What Router::forward returns: weights (N, k) floats, each row summing to 1, and indices (N, k)
/// int64, the experts those weights belong to, distinct within a row.
struct RouterOutput {
  torch::Tensor weights;
  torch::Tensor indices;
};

class RouterImpl : public torch::nn::Module {
 public:
  /// gate = Linear(D, E). ValueError for embedding_dim < 1, num_experts < 1 or top_k outside
  /// [1, num_experts], naming the values.
  RouterImpl(std::int64_t embedding_dim, std::int64_t num_experts, std::int64_t top_k);

  /// x (N, D) -> {weights (N, k), indices (N, k)}, as above; keeps softmax(gate(x)) in last_probs
  /// (N, E), still attached to the graph (the balance loss differentiates through it).
  RouterOutput forward(const torch::Tensor& x);

  /// ValueError unless x is (N, D) with this router's D.
  void check_input(const torch::Tensor& x) const;

  void pretty_print(std::ostream& stream) const override;

  std::int64_t embedding_dim;
  std::int64_t num_experts;
  std::int64_t top_k;
  g2c::nn::Linear gate{nullptr};  // W (D, E), b (E)
  torch::Tensor last_probs;       // (N, E) of the last forward; undefined before the first
};
TORCH_MODULE(Router);

}  // namespace g2c::moe
