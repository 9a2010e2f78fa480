// Beyond module moe — your work: the router's forward pass.
#include "g2c/moe/router.h"
#include "g2c/core/errors.h"

namespace g2c::moe {

RouterOutput RouterImpl::forward(const torch::Tensor& x) {
  // TODO: route N tokens to top_k experts each. x (N, D) (check_input(x) first).
  //   probs = softmax of gate(x) over the experts       (N, E); keep it in last_probs, as it is
  //                                                     (attached: the balance loss needs its grad)
  //   values, indices = the top_k largest probs per row  (N, k) each
  //   weights = values divided by their row's sum        (N, k): each row sums to 1
  // Return {weights, indices}. Operations: torch::softmax, torch::topk, sum(-1, keepdim), division.
  // Hints, one step at a time: scripts/hint.sh moe Router::forward
  throw g2c::todo("Router::forward", "g2c/moe/router.cpp", "moe");
}

}  // namespace g2c::moe
