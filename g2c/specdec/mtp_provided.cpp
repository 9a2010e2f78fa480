// Beyond module specdec, implemented for you: the trunk's hidden states, the MTP head's
// construction and checks, the loss's shape checks, and self-speculation's draft.
#include <fmt/format.h>

#include "g2c/core/errors.h"
#include "g2c/core/shapes.h"
#include "g2c/specdec/mtp.h"

namespace g2c::specdec {

torch::Tensor hidden_states(g2c::transformer::TransformerLMImpl& model, const torch::Tensor& ids) {
  torch::NoGradGuard no_grad;
  return model.hidden_states(ids);  // (B, T, D)
}

MTPHeadImpl::MTPHeadImpl(g2c::transformer::TransformerLM base_) : base(std::move(base_)) {
  if (!base) throw ValueError("MTPHead needs a base TransformerLM; got an empty handle");
  const std::int64_t dim = base->embedding_dim;
  combine = register_module("combine", g2c::nn::Linear(2 * dim, dim));
  block = register_module(
      "block", g2c::transformer::Block(g2c::transformer::BlockOptions(dim, base->num_heads)
                                           .hidden_dim(base->hidden_dim)
                                           .causal(true)));
  ln = register_module("ln", g2c::transformer::LayerNorm(dim));
  head_bias = register_parameter("head_bias", torch::zeros({base->vocab_size}));
  to(base->device());
}

void MTPHeadImpl::check_inputs(const torch::Tensor& hidden, const torch::Tensor& next_ids) const {
  if (!hidden.defined() || hidden.dim() != 3 || hidden.size(2) != base->embedding_dim) {
    throw ValueError(fmt::format(
        "MTPHead: hidden must be (B, T', D = {}), the base's hidden states; got {}",
        base->embedding_dim, hidden.defined() ? describe_shape(hidden) : "an undefined tensor"));
  }
  if (!next_ids.defined() || next_ids.dim() != 2 || next_ids.size(0) != hidden.size(0) ||
      next_ids.size(1) != hidden.size(1)) {
    throw ValueError(fmt::format(
        "MTPHead: next_ids must be (B, T') = ({}, {}), the token one after each hidden position "
        "(ids[:, 1:] beside hidden[:, :-1]); got {}",
        hidden.size(0), hidden.size(1),
        next_ids.defined() ? describe_shape(next_ids) : "an undefined tensor"));
  }
}

void MTPHeadImpl::pretty_print(std::ostream& stream) const {
  stream << "g2c::specdec::MTPHead(embedding_dim=" << base->embedding_dim
         << ", num_heads=" << base->num_heads << ", vocab_size=" << base->vocab_size << ")";
}

void check_mtp_loss_inputs(const torch::Tensor& mtp_logits, const torch::Tensor& ids) {
  if (!ids.defined() || ids.dim() != 2 || ids.size(1) < 3) {
    throw ValueError(fmt::format(
        "mtp_loss: ids must be (B, T) with T >= 3 (a position needs a token two ahead); got {}",
        ids.defined() ? describe_shape(ids) : "an undefined tensor"));
  }
  if (!mtp_logits.defined() || mtp_logits.dim() != 3 || mtp_logits.size(0) != ids.size(0) ||
      mtp_logits.size(1) != ids.size(1) - 1) {
    throw ValueError(fmt::format(
        "mtp_loss: mtp_logits must be (B, T - 1, V) = ({}, {}, V), the head's output for "
        "head(hidden[:, :-1], ids[:, 1:]); got {}",
        ids.size(0), ids.size(1) - 1,
        mtp_logits.defined() ? describe_shape(mtp_logits) : "an undefined tensor"));
  }
}

std::pair<std::int64_t, std::int64_t> mtp_propose(g2c::transformer::TransformerLMImpl& base,
                                                  MTPHeadImpl& head, const torch::Tensor& ctx_ids) {
  torch::NoGradGuard no_grad;
  const auto ids = ctx_ids.to(torch::kCPU, torch::kLong);
  const std::int64_t keep = std::min(ids.size(0), base.max_seq_len);
  const auto ctx = ids.narrow(0, ids.size(0) - keep, keep).unsqueeze(0).to(base.device());
  const auto hidden = base.hidden_states(ctx);                // (1, T, D)
  const auto last = hidden.narrow(1, hidden.size(1) - 1, 1);  // (1, 1, D)
  const auto logits1 = torch::matmul(last, base.token_embed->weight.t()) + base.head_bias;
  const auto next1 = logits1[0][0].argmax().item<std::int64_t>();  // the base's own token
  const auto logits2 = head.forward(last, torch::tensor({{next1}}, torch::kLong).to(base.device()));
  return {next1, logits2[0][0].argmax().item<std::int64_t>()};  // (next1, the draft)
}

}  // namespace g2c::specdec
