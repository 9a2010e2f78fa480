// Beyond module moe — your work: the mixture's dispatch and its balance loss.
#include "g2c/moe/layer.h"
#include "g2c/core/errors.h"

namespace g2c::moe {

torch::Tensor MoEFeedForwardImpl::forward(const torch::Tensor& x) {
  // TODO: each token through its top_k experts, weighted. x (…, D) -> (…, D).
  //   1. flat = x as (N, D); {weights, indices} = router(flat), (N, k) each; keep indices in
  //      last_indices.
  //   2. out = zeros like flat. For each expert e: the rows (tokens) whose indices contain e, and
  //      each one's weight for e; skip e when no token chose it; y = experts[e](flat at those rows)
  //      (M, D), scaled by the weights (M, 1); add y into out at those rows
  //      (out = out.index_add(0, rows, y): each expert's contribution lands at its own tokens).
  //   3. Return out in x's shape.
  // Operations: reshape, (indices == e), any(-1), nonzero, index_select, index_add, unsqueeze.
  // Hints, one step at a time: scripts/hint.sh moe MoEFeedForward::forward
  throw g2c::todo("MoEFeedForward::forward", "g2c/moe/layer.cpp", "moe");
}

torch::Tensor MoEFeedForwardImpl::load_balancing_loss() {
  // TODO: the Switch balance loss of the last forward, E · Σ_e f_e · P_e.
  //   Before any forward (router->last_probs or last_indices undefined), throw
  //   g2c::RuntimeError("run forward() before load_balancing_loss()").
  //   f_e = (assignments to e among last_indices' N·k) / (N·k), from the integer indices: counting
  //         has no gradient.                                                            (E)
  //   P_e = router->last_probs (N, E) averaged over the N tokens: this carries the gradient. (E)
  // Uniform routing gives 1, everything on one expert gives E.
  // Operations: torch::bincount (minlength E) or a one-hot sum, to(float), mean(0), sum.
  // Hints, one step at a time: scripts/hint.sh moe MoEFeedForward::load_balancing_loss
  throw g2c::todo("MoEFeedForward::load_balancing_loss", "g2c/moe/layer.cpp", "moe");
}

}  // namespace g2c::moe
