// Beyond module moe — reference solution for g2c/moe/router.cpp.
#include "g2c/moe/router.h"

namespace g2c::moe {

RouterOutput RouterImpl::forward(const torch::Tensor& x) {
  check_input(x);
  last_probs = torch::softmax(gate(x), /*dim=*/-1);  // (N, E), kept attached to the graph
  auto [values, indices] = torch::topk(last_probs, top_k, /*dim=*/-1);     // (N, k) each
  const auto weights = values / values.sum(/*dim=*/-1, /*keepdim=*/true);  // rows sum to 1
  return {weights, indices};
}

}  // namespace g2c::moe
