// Beyond module moe, implemented for you — the fast path of the mixture's dispatch: the same
// MoEFeedForward, with the tokens sorted by expert instead of masked once per expert.
//
// The lesson's loop (layer.h) builds, for every expert, a mask over all N·k assignments, finds its
// tokens with nonzero(), gathers them, and adds the expert's output back: E passes over the whole
// batch and E scatters, forward and backward. This path sorts the N·k (token, expert, weight)
// assignments by expert once, gathers the tokens once into one (N·k, D) matrix whose rows come in
// expert order, runs each expert on its contiguous slice, scales, and scatters everything back with
// one index_add:
//   order   = argsort(indices.flatten())            (N·k)   assignments, expert by expert
//   xs      = flat[token_of[order]]                 (N·k, D) one gather
//   ys[i:j] = expert_e(xs[i:j])                     the slice of expert e, counts from bincount
//   out     = zeros.index_add(0, token_of[order], ys · weight_of[order])   one scatter
// The parameters, the router, last_indices and the balance loss are MoEFeedForward's own, so the
// two paths are one model: tests/framework/moe_checks.cpp proves their outputs and gradients equal.
#pragma once

#include <cstdint>

#include "g2c/core/torch.h"
#include "g2c/moe/layer.h"

namespace g2c::moe {

class SortedMoEFeedForwardImpl : public MoEFeedForwardImpl {
 public:
  using MoEFeedForwardImpl::MoEFeedForwardImpl;

  /// x (…, D) -> (…, D), equal to MoEFeedForwardImpl::forward; keeps last_indices likewise.
  torch::Tensor forward(const torch::Tensor& x) override;
};

/// A MoEFeedForward whose forward is the sorted dispatch (MoEFeedForward's arguments).
MoEFeedForward sorted_moe_feed_forward(std::int64_t embedding_dim, std::int64_t num_experts,
                                       std::int64_t top_k, std::int64_t hidden_dim = 0);

}  // namespace g2c::moe
